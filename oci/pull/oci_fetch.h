/* oci_fetch: resolving tags to digests, and downloading manifests and blobs, each checked
 * against the digest that names it (see oci_pull.h for the trust model). */
#ifndef OLM_OCI_FETCH_H
#define OLM_OCI_FETCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oci_digest.h"
#include "oci_manifest.h"
#include "oci_ref.h"
#include "oci_registry.h"
#include "olm_error.h"

/* ---------------------------------------------------------------- fetching (oci_fetch.c) */

/* Resolves `ref` to the digest of its manifest (or index): a digest reference as
 * is (no request); a tag with HEAD (Docker-Content-Digest), or GET and the
 * sha256 of the body when HEAD gives no digest.  Every call asks the registry. */
int oci_resolve_digest(oci_registry *reg, const oci_ref *ref, char digest[OCI_DIGEST_BUFSZ],
                       olm_error *err);
/* Convenience for one-shot callers: parses `ref`, opens the registry with
 * `opts` (may be NULL) and returns "registry/repository@sha256:..." (caller
 * frees), or NULL with err set. */
char *oci_resolve(const char *ref, const oci_registry_opts *opts, olm_error *err);

/* GETs the manifest `reference` (tag or digest) of `repository`.  The body's
 * sha256 goes to digest_out; it must equal a sha256 Docker-Content-Digest header
 * and, when `reference` is a digest, the reference itself.  *body (NUL-terminated)
 * and *content_type (may be NULL) are owned by the caller. */
int oci_manifest_fetch(oci_registry *reg, const char *repository, const char *reference,
                       char **body, size_t *len, char **content_type,
                       char digest_out[OCI_DIGEST_BUFSZ], olm_error *err);

/* GETs blob `desc` and writes it to `out` (a file positioned where the blob should
 * go), hashing while it streams; fails if more than desc->size or max_size bytes
 * arrive, fewer than desc->size arrive, or the sha256 differs from desc->digest. */
int oci_blob_fetch_file(oci_registry *reg, const char *repository, const oci_descriptor *desc,
                        uint64_t max_size, FILE *out, olm_error *err);
/* The same into memory (NUL-terminated, caller frees) for configs. */
int oci_blob_fetch_mem(oci_registry *reg, const char *repository, const oci_descriptor *desc,
                       size_t max_size, char **data, size_t *len, olm_error *err);

#endif
