/* oci pull side: resolve a reference to a digest, fetch and verify manifests,
 * configs and layers, and unpack layers safely into a directory.
 *
 * Layout (one job per file):
 *   oci_manifest.c  manifest / index JSON parsing, platform selection (no I/O)
 *   oci_fetch.c     digest resolution, verified manifest and blob downloads
 *   oci_unpack.c    applying tar layers under a root dir fd (paths, links, whiteouts)
 *   oci_fsutil.c    fd-relative helpers: walk parents without symlinks, remove trees
 *   oci_pull.c      oci_pull / oci_pull_cached / oci_pull_catalog (temp dir + rename)
 *
 * Trust model: nothing the registry sends is trusted.  Every manifest and blob
 * is checked against the digest that names it (the Docker-Content-Digest header
 * is only compared, never believed alone), sizes are bounded before and while
 * downloading, and the unpacker never follows a symlink, never writes outside
 * the root and never creates device nodes. */
#ifndef OLM_OCI_PULL_H
#define OLM_OCI_PULL_H

#include "oci.h"

#define OCI_MT_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"
#define OCI_MT_DOCKER_MANIFEST_V1 "application/vnd.docker.distribution.manifest.v1+prettyjws"

/* Every manifest type we can use, for the Accept header of manifest requests. */
#define OCI_MANIFEST_ACCEPT                                                                   \
    "Accept: " OCI_MT_MANIFEST ", " OCI_MT_INDEX ", " OCI_MT_DOCKER_MANIFEST ", "             \
    OCI_MT_DOCKER_LIST

/* Manifests and configs are small; a bigger one is refused rather than buffered. */
#define OCI_MAX_MANIFEST_SIZE ((size_t)4 * 1024 * 1024)
#define OCI_MAX_CONFIG_SIZE ((size_t)8 * 1024 * 1024)

/* ---------------------------------------------------------------- manifests (oci_manifest.c) */

typedef struct oci_platform {
    char os[32];      /* "linux" */
    char arch[32];    /* "amd64", "arm64", "arm", "ppc64le", "s390x", "386" */
    char variant[16]; /* "v7", "v8", or "" */
} oci_platform;

/* The platform of the running process (linux + uname machine mapped to the
 * GOARCH names; arm gets a variant from the machine name, arm64 gets "v8"). */
int oci_platform_host(oci_platform *out, olm_error *err);
/* Parses "os/arch[/variant]" (e.g. "linux/arm/v7"). */
int oci_platform_parse(const char *s, oci_platform *out, olm_error *err);

typedef struct oci_descriptor {
    char *media_type; /* owned; may be NULL for index entries without one */
    char digest[OCI_DIGEST_BUFSZ];
    uint64_t size;
    oci_platform platform; /* index entries only; zeroed otherwise */
} oci_descriptor;

/* An image manifest (OCI or Docker v2 schema 2).  Owned; oci_manifest_free. */
typedef struct oci_manifest {
    oci_descriptor config;
    oci_descriptor *layers; /* nlayers entries, in application order */
    size_t nlayers;
} oci_manifest;

typedef enum { OCI_KIND_MANIFEST = 1, OCI_KIND_INDEX = 2 } oci_manifest_kind;

/* Which kind of document `json` is: its mediaType field, else the response
 * Content-Type (may be NULL), else its shape ("manifests" vs "layers").
 * Docker schema 1 and unknown types are errors. */
int oci_manifest_kind_of(const char *json, size_t len, const char *content_type,
                         oci_manifest_kind *out, olm_error *err);
/* Parses an image manifest; every digest is validated and every layer media
 * type must be a tar layer (plain, gzip, zstd; OCI or Docker). */
int oci_manifest_parse(const char *json, size_t len, oci_manifest *out, olm_error *err);
void oci_manifest_free(oci_manifest *m);

/* Picks the manifest for `want` from an OCI index / Docker manifest list:
 * os and arch must be equal; an exact variant is best, then an entry without a
 * variant, then (arm only) an older variant the CPU also runs (v7 runs v6, v5).
 * When nothing fits the error lists what the index offers.  out is owned by the
 * caller (free out->media_type). */
int oci_index_select(const char *json, size_t len, const oci_platform *want,
                     oci_descriptor *out, olm_error *err);

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

/* ---------------------------------------------------------------- unpacking (oci_unpack.c) */

#define OCI_UNPACK_DEFAULT_MAX_BYTES ((uint64_t)2 * 1024 * 1024 * 1024)
#define OCI_UNPACK_DEFAULT_MAX_FILES ((uint64_t)200000)
#define OCI_UNPACK_DEFAULT_MAX_PATH ((size_t)4096)

/* Zero fields mean the defaults above. */
typedef struct oci_unpack_limits {
    uint64_t max_bytes; /* regular-file bytes written, all layers together;
                           also bounds each compressed layer download */
    uint64_t max_files; /* tar entries read, all layers together */
    size_t max_path;    /* bytes of an entry path (or link target) */
} oci_unpack_limits;

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
/* Counters so far. */
uint64_t oci_unpacker_bytes(const oci_unpacker *u);
uint64_t oci_unpacker_entries(const oci_unpacker *u);
uint64_t oci_unpacker_skipped(const oci_unpacker *u); /* devices, fifos, sockets */
void oci_unpacker_free(oci_unpacker *u);

/* Removes `name` (a file, symlink or whole tree) under the directory fd
 * `dirfd`, never following symlinks.  A missing name is not an error. */
int oci_remove_tree_at(int dirfd, const char *name, olm_error *err);

/* ---------------------------------------------------------------- pulling (oci_pull.c) */

typedef struct oci_pull_opts {
    oci_registry_opts registry; /* insecure, auth_file, ca_path, timeout, progress */
    const char *prefix;         /* extract only this dir (see oci_unpacker_new), or NULL */
    int strip_prefix;
    int catalog;                /* catalog image: the prefix is the configs label,
                                   which must be present; `prefix` is ignored */
    const char *platform;       /* "os/arch[/variant]" for indexes; NULL = this host */
    oci_unpack_limits limits;
} oci_pull_opts;

/* What a pull produced.  Strings owned; oci_pull_result_free. */
typedef struct oci_pull_result {
    char *digest_ref;  /* "registry/repository@sha256:..." (of the index for multi-arch) */
    char *labels_json; /* the config's Labels as a compact JSON object ("{}" if none) */
    char *dir;         /* the unpacked tree */
    char *fbc_root;    /* catalog pulls: dir + the label's path; else NULL */
    int cache_hit;     /* oci_pull_cached: 1 when nothing was downloaded */
} oci_pull_result;
void oci_pull_result_free(oci_pull_result *r);

/* Pulls `ref` and unpacks it into `dest`, which must not exist or be an empty
 * dir.  Everything is built in a temp dir next to `dest` and renamed into
 * place only on success: a failed pull leaves no partial tree. */
int oci_pull(const char *ref, const char *dest, const oci_pull_opts *opts,
             oci_pull_result *result, olm_error *err);

/* Cache-first pull into <base>/<owner>/<digest>/ (`owner` is one path
 * component, e.g. a ClusterCatalog name).  The tag is resolved on every call;
 * an existing entry for the digest is returned without downloading (cache_hit).
 * After a successful pull, other digests of that owner are removed.  The config
 * labels are kept beside the tree in <base>/<owner>/<digest>.json. */
int oci_pull_cached(const char *base, const char *owner, const char *ref,
                    const oci_pull_opts *opts, oci_pull_result *result, olm_error *err);

/* oci_pull_cached for catalog images (opts->catalog forced on): only the dir the
 * configs label names is extracted, and result->fbc_root points at it. */
int oci_pull_catalog(const char *base, const char *owner, const char *ref,
                     const oci_pull_opts *opts, oci_pull_result *result, olm_error *err);

#endif
