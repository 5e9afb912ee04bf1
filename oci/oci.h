/* oci: image references, digests, image building and a registry v2 client.
 *
 * Layout (one job per file):
 *   oci_ref.c       parse/format image references the way docker/containers do
 *   oci_digest.c    sha256 digests ("sha256:<hex>") of buffers, files and streams
 *   oci_layer.c     deterministic tar+gzip layer from a directory (libarchive)
 *   oci_image.c     image config and OCI manifest JSON; one-layer image from a dir
 *   oci_bundle.c    registry+v1 bundle checks and labels from metadata/annotations.yaml
 *   oci_auth.c      WWW-Authenticate parsing, docker config "auths" credentials
 *   oci_registry.c  one registry host: scheme choice, requests, token/basic auth, errors
 *   oci_push.c      blob upload (monolithic or chunked) and manifest PUT
 *   (pull side: resolve, fetch, verify, unpack and the unpack cache: oci_pull.h)
 *
 * Errors follow util/olm_error.h: functions return 0 / -1 (or a pointer / NULL)
 * and fill the caller's olm_error with a message a user can act on.  Nothing here
 * keeps global state; an oci_registry handle is not thread-safe (one per thread). */
#ifndef OLM_OCI_H
#define OLM_OCI_H

#include <stdint.h>
#include <stdio.h>

#include "olm_error.h"

/* ---------------------------------------------------------------- media types, labels */

#define OCI_MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define OCI_MT_INDEX "application/vnd.oci.image.index.v1+json"
#define OCI_MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define OCI_MT_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define OCI_MT_LAYER_TAR "application/vnd.oci.image.layer.v1.tar"
#define OCI_MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define OCI_MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define OCI_MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define OCI_MT_DOCKER_LAYER "application/vnd.docker.image.rootfs.diff.tar.gzip"

/* catalogd extracts only the directory this config label names (spec §4.2). */
#define OCI_LABEL_CATALOG_CONFIGS "operators.operatorframework.io.index.configs.v1"
#define OCI_LABEL_BUNDLE_MEDIATYPE "operators.operatorframework.io.bundle.mediatype.v1"
#define OCI_LABEL_BUNDLE_MANIFESTS "operators.operatorframework.io.bundle.manifests.v1"
#define OCI_LABEL_BUNDLE_METADATA "operators.operatorframework.io.bundle.metadata.v1"
#define OCI_LABEL_BUNDLE_PACKAGE "operators.operatorframework.io.bundle.package.v1"
#define OCI_LABEL_BUNDLE_CHANNELS "operators.operatorframework.io.bundle.channels.v1"
#define OCI_LABEL_BUNDLE_DEFAULT_CHANNEL "operators.operatorframework.io.bundle.channel.default.v1"

/* ---------------------------------------------------------------- references (oci_ref.c) */

#define OCI_DEFAULT_REGISTRY "docker.io"
#define OCI_DEFAULT_TAG "latest"

/* A parsed, normalised reference.  All strings are owned by the struct and
 * released by oci_ref_free.  After a successful parse, registry and repository
 * are set; tag is set unless the input had only a digest; digest is NULL unless
 * the input had "@sha256:...". */
typedef struct oci_ref {
    char *registry;   /* "docker.io", "quay.io", "127.0.0.1:5000", "[::1]:5000" */
    char *repository; /* "library/busybox", "ns/app" (lowercase path components) */
    char *tag;        /* "latest", "v1.2.3", or NULL */
    char *digest;     /* "sha256:<64 hex>" or NULL */
} oci_ref;

/* Parses `[registry[:port]/]repo[:tag][@sha256:hex]` with the docker rules:
 * the first path component is a registry only if it contains '.' or ':' or is
 * "localhost"; otherwise the registry is docker.io, where a one-component name
 * gets "library/"; "index.docker.io" becomes "docker.io"; no tag and no digest
 * means tag "latest".  On failure *out is left zeroed and err says why. */
int oci_ref_parse(const char *s, oci_ref *out, olm_error *err);
void oci_ref_free(oci_ref *ref);

/* "registry/repository" (the name).  Caller frees.  NULL on OOM. */
char *oci_ref_name(const oci_ref *ref);
/* Full normalised form: "registry/repository[:tag][@digest]".  Caller frees. */
char *oci_ref_string(const oci_ref *ref);
/* "registry/repository@<digest>": the canonical digest reference.  Caller frees. */
char *oci_ref_with_digest(const oci_ref *ref, const char *digest);
/* What goes after /manifests/: the digest if there is one, else the tag.  Borrowed. */
const char *oci_ref_manifest_id(const oci_ref *ref);
/* True for hosts that are served over plain HTTP by default: localhost,
 * 127.0.0.0/8 and [::1], with or without a port. */
int oci_registry_is_loopback(const char *registry);

/* ---------------------------------------------------------------- digests (oci_digest.c) */

/* "sha256:" + 64 lowercase hex + NUL */
#define OCI_DIGEST_BUFSZ 72

/* A streaming sha256.  Owned by the caller: oci_sha256_new, then _update any
 * number of times, then _final (which may be called once), then _free. */
typedef struct oci_sha256 oci_sha256;
oci_sha256 *oci_sha256_new(void); /* NULL on OOM */
int oci_sha256_update(oci_sha256 *h, const void *data, size_t len);
int oci_sha256_final(oci_sha256 *h, char out[OCI_DIGEST_BUFSZ]);
void oci_sha256_free(oci_sha256 *h);

int oci_sha256_buf(const void *data, size_t len, char out[OCI_DIGEST_BUFSZ]);
/* Digest of a file's content; *size_out (if not NULL) gets its length. */
int oci_sha256_file(const char *path, char out[OCI_DIGEST_BUFSZ], uint64_t *size_out,
                    olm_error *err);
/* Digest of a stream from its current position to EOF. */
int oci_sha256_stream(FILE *f, char out[OCI_DIGEST_BUFSZ], uint64_t *size_out, olm_error *err);
/* Accepts exactly "sha256:" + 64 lowercase hex (the only algorithm we produce or verify). */
int oci_digest_validate(const char *digest, olm_error *err);

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

/* ---------------------------------------------------------------- images (oci_image.c) */

typedef struct oci_label {
    const char *key;
    const char *value;
} oci_label;

/* A one-layer image ready to push.  Everything is owned by the struct. */
typedef struct oci_image {
    oci_layer layer;
    oci_blob config;   /* config.data is the JSON below */
    char *config_json; /* compact, keys sorted */
    char *manifest_json;
    size_t manifest_len;
    char manifest_digest[OCI_DIGEST_BUFSZ];
} oci_image;

/* The image config JSON: architecture amd64, os linux, config.Labels (later
 * labels with the same key win), rootfs.diff_ids, one history entry with
 * `created_by`, created at the epoch (so builds are reproducible).  Keys sorted,
 * compact.  Caller frees. */
char *oci_image_config_json(const oci_label *labels, size_t nlabels, const char *diff_id,
                            const char *created_by, olm_error *err);
/* The OCI image manifest for one config and n layers.  Caller frees. */
char *oci_image_manifest_json(const oci_blob *config, const oci_blob *const *layers,
                              size_t nlayers, olm_error *err);
/* Layer from `dir` (under `prefix` if not NULL), config with `labels`, manifest. */
int oci_image_build(const char *dir, const char *prefix, const oci_label *labels, size_t nlabels,
                    const char *created_by, oci_image *out, olm_error *err);
void oci_image_free(oci_image *img);

/* ---------------------------------------------------------------- bundles (oci_bundle.c) */

/* A label list whose strings it owns. */
typedef struct oci_labels {
    oci_label *items; /* keys and values are malloc'd and owned */
    size_t len;
    size_t cap;
} oci_labels;

/* Adds or replaces key=value (copies both). */
int oci_labels_set(oci_labels *l, const char *key, const char *value, olm_error *err);
/* Parses "K=V" (K non-empty) and adds it. */
int oci_labels_set_kv(oci_labels *l, const char *kv, olm_error *err);
const char *oci_labels_get(const oci_labels *l, const char *key);
void oci_labels_free(oci_labels *l);

/* Checks that `dir` is a registry+v1 bundle (manifests/ and
 * metadata/annotations.yaml exist) and adds the bundle labels: the three
 * standard ones, then every entry of the `annotations:` map of annotations.yaml
 * (package, channels, ...), which is how operator-sdk builds bundle images. */
int oci_bundle_labels(const char *dir, oci_labels *labels, olm_error *err);

/* ---------------------------------------------------------------- auth (oci_auth.c) */

/* One authentication challenge from a WWW-Authenticate header. */
typedef struct oci_auth_challenge {
    char scheme[16]; /* lowercased: "bearer", "basic" */
    char *realm;     /* owned, may be NULL */
    char *service;
    char *scope;
} oci_auth_challenge;

/* Parses a WWW-Authenticate value (which may list several challenges) and keeps
 * the most useful one: Bearer, else Basic, else the first. */
int oci_auth_parse_challenge(const char *header, oci_auth_challenge *out, olm_error *err);
void oci_auth_challenge_free(oci_auth_challenge *c);

typedef struct oci_credentials {
    char *username; /* owned; both NULL when there are none */
    char *password;
} oci_credentials;

/* Looks up `registry` in a docker config JSON ({"auths":{"host":{"auth":
 * base64(user:pass)} or {"username","password"}}}).  Keys match as "host",
 * "http(s)://host" or "http(s)://host/v1/..."; docker.io also matches
 * index.docker.io.  No entry is not an error (*out stays empty); an unreadable
 * or malformed file is. */
int oci_credentials_from_file(const char *auth_file, const char *registry, oci_credentials *out,
                              olm_error *err);
void oci_credentials_free(oci_credentials *c);

/* ---------------------------------------------------------------- registry (oci_registry.c) */

typedef struct oci_registry_opts {
    int insecure;                /* plain HTTP for every registry (--insecure) */
    const char *insecure_hosts;  /* comma-separated registries served over HTTP
                                    (OLMV1_INSECURE_REGISTRIES); may be NULL */
    const char *auth_file;       /* docker config JSON with "auths", or NULL */
    const char *ca_path;         /* extra CA directory for TLS, or NULL */
    long timeout_seconds;        /* whole-request limit; 0 = none */
    uint64_t chunk_size;         /* blobs above this go up in PATCH chunks of this
                                    size; 0 = OCI_DEFAULT_CHUNK_SIZE */
    void (*progress)(void *ctx, const char *msg); /* optional human progress */
    void *progress_ctx;
} oci_registry_opts;

#define OCI_DEFAULT_CHUNK_SIZE ((uint64_t)64 * 1024 * 1024)

/* One registry host and its connection, credentials and cached bearer tokens. */
typedef struct oci_registry oci_registry;

/* `registry` as in oci_ref.registry.  The opts strings are copied.  Caller frees
 * with oci_registry_free. */
oci_registry *oci_registry_new(const char *registry, const oci_registry_opts *opts,
                               olm_error *err);
void oci_registry_free(oci_registry *reg);
/* "http" or "https", as chosen for this registry.  Borrowed. */
const char *oci_registry_scheme(const oci_registry *reg);

/* One response.  Owned by the caller; release with oci_response_free. */
typedef struct oci_response {
    long status;
    char *body; /* NUL-terminated (not for HEAD or when streamed to `sink`) */
    size_t body_len;
    char *location;       /* Location header, or NULL */
    char *content_type;   /* Content-Type header, or NULL */
    char *docker_digest;  /* Docker-Content-Digest header, or NULL */
    uint64_t content_length; /* Content-Length, 0 if absent */
} oci_response;
void oci_response_free(oci_response *r);

/* A request against the registry.  `url_or_path` is either a path starting with
 * "/v2/" or an absolute URL (an upload Location).  `repository` and `actions`
 * ("pull" or "pull,push") name the token scope to ask for on a Bearer challenge.
 * The body comes from `body` (may be NULL) between body_offset and
 * body_offset+body_len.  With `sink`, a 2xx response body is written there
 * instead of being kept (for blob pulls); only the final response's body reaches
 * the sink, never that of a 401 that was retried.  A 401 is answered
 * once by fetching a token / using basic credentials and retrying.  Returns 0
 * when an HTTP response arrived (any status), -1 on transport errors. */
typedef struct oci_request {
    const char *method; /* "GET", "HEAD", "POST", "PUT", "PATCH" */
    const char *url_or_path;
    const char *repository;
    const char *actions;
    const char *const *headers; /* NULL-terminated "Name: value" list, or NULL */
    const oci_blob *body;
    uint64_t body_offset;
    uint64_t body_len;
    size_t (*sink)(const void *data, size_t len, void *ctx); /* returns len, or less to abort */
    void *sink_ctx;
} oci_request;

int oci_registry_do(oci_registry *reg, const oci_request *req, oci_response *resp,
                    olm_error *err);

/* Formats a registry error response: "<status> CODE: message[; CODE: message]"
 * from {"errors":[{"code":..,"message":..}]}, or "<status> <short body>", or
 * "<status> <reason>" when there is no body.  Always NUL-terminates `out`. */
void oci_format_registry_error(long status, const char *body, size_t body_len, char *out,
                               size_t out_size);

/* ---------------------------------------------------------------- push (oci_push.c) */

/* 1 if the blob is in the repository, 0 if not, -1 on error. */
int oci_blob_exists(oci_registry *reg, const char *repository, const char *digest,
                    olm_error *err);
/* Uploads a blob unless it exists: POST an upload, then one PUT ?digest=, or
 * PATCH chunks of opts.chunk_size and a final PUT when it is bigger. */
int oci_blob_push(oci_registry *reg, const char *repository, const oci_blob *blob,
                  olm_error *err);
/* PUTs a manifest under `reference` (tag or digest). */
int oci_manifest_push(oci_registry *reg, const char *repository, const char *reference,
                      const char *media_type, const char *manifest, size_t len,
                      const char *expected_digest, olm_error *err);
/* Pushes layer, config and manifest of `img` to `ref` (by tag, or by digest
 * when the reference has one, which must then match the image). */
int oci_image_push(oci_registry *reg, const oci_ref *ref, const oci_image *img, olm_error *err);

#endif
