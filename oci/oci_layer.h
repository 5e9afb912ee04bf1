/* oci_layer: blobs to upload and reproducible tar+gzip layers made from a directory. */
#ifndef OLM_OCI_LAYER_H
#define OLM_OCI_LAYER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oci_digest.h"
#include "olm_error.h"

/* ---------------------------------------------------------------- blobs and layers (oci_layer.c) */

/* Content to upload.  Exactly one of `data` or `file` is set.  A blob does not
 * own `data` unless built by this library (see oci_image_free); `file` must be
 * seekable because an upload may be retried after an auth challenge. */
typedef struct oci_blob {
    const char *media_type; /* static string, one of OCI_MT_* */
    char digest[OCI_DIGEST_BUFSZ];
    uint64_t size;
    const unsigned char *data;
    FILE *file;
} oci_blob;

typedef struct oci_layer {
    oci_blob blob;                  /* blob.file is a tmpfile() owned by the layer */
    char diff_id[OCI_DIGEST_BUFSZ]; /* sha256 of the uncompressed tar */
    uint64_t tar_size;              /* bytes of the uncompressed tar */
    size_t entries;                 /* tar entries written */
} oci_layer;

/* Builds a gzip-compressed tar of the tree under `dir`, reproducibly: entries in
 * byte order, parents before children, directories included, mtime 0, uid/gid 0,
 * no user/group names, no xattrs, modes normalised (dirs and executables 0755,
 * other files 0644) so that the same content gives the same digest whatever the
 * umask of the checkout.  Only directories, regular files and symlinks are
 * allowed.  With `prefix` (e.g. "configs"), the tree goes under "<prefix>/" and
 * the prefix directories get entries of their own.  On success *out owns a
 * temporary file (freed by oci_layer_free). */
int oci_layer_from_dir(const char *dir, const char *prefix, oci_layer *out, olm_error *err);
void oci_layer_free(oci_layer *layer);

#endif
