/* oci_unpack: applying tar layers safely under a root directory (paths, links,
 * whiteouts), and removing trees without following symlinks. */
#ifndef OLM_OCI_UNPACK_H
#define OLM_OCI_UNPACK_H

#include <stddef.h>
#include <stdint.h>

#include "oci_unpack_limits.h"
#include "olm_error.h"

/* State of one image unpack (several layers into one root).  Owned by the
 * caller; oci_unpacker_free closes the root fd but leaves the tree. */
typedef struct oci_unpacker oci_unpacker;

/* `root_dir` must exist (normally empty).  `prefix` (may be NULL or "/"): only
 * entries at or under it are extracted ("/configs", "configs/" and "configs"
 * are the same; ".." is refused); with `strip_prefix` they land relative to the
 * root without it, otherwise under root/<prefix>/. */
oci_unpacker *oci_unpacker_new(const char *root_dir, const char *prefix, int strip_prefix,
                               const oci_unpack_limits *limits, olm_error *err);
/* Applies one tar layer (plain, gzip or zstd: detected) read from `fd` (not
 * closed).  `label` names it in errors, e.g. "layer sha256:ab12cd34ef56".  On
 * an error the tree may hold part of the layer: callers unpack into a temp dir
 * and throw it away (oci_pull does). */
int oci_unpacker_apply_fd(oci_unpacker *u, int fd, const char *label, olm_error *err);
int oci_unpacker_apply_mem(oci_unpacker *u, const void *data, size_t len, const char *label,
                           olm_error *err);
/* Tells `fn` of each regular file as soon as it is complete in the tree: `path` is where it
 * is (root_dir/...), `rel` its path below the prefix dir (below the root without a prefix).
 * fn(ctx, NULL, NULL) says that a file told before may have been replaced or removed since
 * (an entry over an existing one, a whiteout): nothing told so far can be trusted.  Called
 * on the thread that applies the layers.  fn NULL: nobody is told. */
typedef void (*oci_unpack_file_fn)(void *ctx, const char *path, const char *rel);
void oci_unpacker_observe(oci_unpacker *u, oci_unpack_file_fn fn, void *ctx);
/* Counters so far. */
uint64_t oci_unpacker_bytes(const oci_unpacker *u);
uint64_t oci_unpacker_entries(const oci_unpacker *u);
uint64_t oci_unpacker_skipped(const oci_unpacker *u); /* devices, fifos, sockets */
uint64_t oci_unpacker_skipped_bytes(const oci_unpacker *u); /* see max_skipped_bytes */
void oci_unpacker_free(oci_unpacker *u);

/* Removes `name` (a file, symlink or whole tree) under the directory fd
 * `dirfd`, never following symlinks.  A missing name is not an error. */
int oci_remove_tree_at(int dirfd, const char *name, olm_error *err);

#endif
