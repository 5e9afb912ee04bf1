/* Private to the pull side (oci_pull.c, oci_pull_cache.c) and its tests: one pull into
 * a directory, shared by oci_pull and the cache. */
#ifndef OLM_OCI_PULL_INTERNAL_H
#define OLM_OCI_PULL_INTERNAL_H

#include <stdbool.h>

#include "oci_pull.h"

/* What the manifest and config said about an image being pulled. */
typedef struct oci_image_meta {
    char top_digest[OCI_DIGEST_BUFSZ]; /* what the reference names (index or manifest) */
    oci_manifest manifest;
    char *labels_json; /* owned */
    char *prefix;      /* owned: the catalog label (raw) or a copy of opts->prefix; may be NULL */
    /* The top manifest as the tag gave it, when the caller fetched it to learn its digest
     * (oci_pull_cache.c, a cold cache: no HEAD first); owned, taken by oci_pull_to. */
    char *known_manifest, *known_type;
    size_t known_len;
} oci_image_meta;
void oci_image_meta_free(oci_image_meta *m);

/* Pulls `ref` (by `digest` when not NULL, else its tag or digest) into `dest`
 * through a temp dir beside it; fills m (caller frees with oci_image_meta_free). */
int oci_pull_to(oci_registry *reg, const oci_ref *ref, const char *digest, const char *dest,
                const oci_pull_opts *opts, oci_image_meta *m, olm_error *err);
int oci_pull_fill_result(const oci_ref *ref, const char *digest, const char *dest,
                         const char *labels_json, const char *prefix, const oci_pull_opts *opts,
                         oci_pull_result *r, olm_error *err);
/* One attempt of a pull at one source (`src` is the reference there; `mirror` says it is
 * not the primary location).  0 on success. */
typedef int (*oci_source_fn)(oci_registry *reg, const oci_ref *src, bool mirror, void *ctx, olm_error *err);
/* Tries the sources registries.conf gives for `ref` (opts->registry.registries; none:
 * `ref` itself) in order until `fn` succeeds, each with its own registry handle, all
 * within the one deadline.  A blocked registry fails before any request; when every
 * source fails the error lists each one's. */
int oci_pull_each_source(const oci_ref *ref, const oci_pull_opts *opts, oci_source_fn fn, void *ctx, olm_error *err);
const oci_pull_opts *oci_pull_opts_or_default(const oci_pull_opts *opts);
/* Fetches layer `d` and unpacks it into `u` at once (the unpacker on a second thread
 * reading a pipe the download writes), the digest checked over every byte; 0 when both
 * the fetch and the unpack succeeded, else the fetch's error first.  An unpack that fails
 * while the layer downloads stops the download, and its own error is the one reported
 * (oci_layer_stream.c says which error wins when). */
int oci_layer_fetch_apply(oci_registry *reg, const char *repository, const oci_descriptor *d,
                          uint64_t max, oci_unpacker *u, const char *label, olm_error *err);
/* Best-effort recursive removal of a path (no symlinks followed). */
void oci_remove_path(const char *path);

#endif
