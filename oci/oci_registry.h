/* oci_registry: a registry v2 client for one host (scheme choice, requests, token and
 * basic auth, error messages) and pushing blobs, manifests and images with it.
 * A registry handle is not thread-safe: one per thread. */
#ifndef OLM_OCI_REGISTRY_H
#define OLM_OCI_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "oci_auth_store.h"
#include "oci_image.h"
#include "oci_ref.h"
#include "oci_registries_conf.h"
#include "oci_registries_follow.h"
#include "olm_error.h"
#include "olm_tls.h"

/* ---------------------------------------------------------------- registry (oci_registry.c) */

typedef struct oci_registry_opts {
    int insecure;                /* every registry insecure (--insecure): TLS without
                                    certificate verification, and plain HTTP when TLS does
                                    not connect (containers/image's meaning) */
    const char *insecure_hosts;  /* comma-separated insecure registries, as above
                                    (OLMV1_INSECURE_REGISTRIES); may be NULL.  A loopback
                                    registry not named here speaks plain HTTP. */
    const char *auth_file;       /* docker config JSON with "auths", or NULL */
    oci_auth_store *auth_store;  /* credentials that change at run time (--global-pull-secret),
                                    consulted before auth_file; borrowed, or NULL */
    const oci_registries_conf *registries; /* mirrors, blocked and insecure registries
                                    (registries.conf) for pulls; borrowed, or NULL */
    oci_registries_follow *registries_follow; /* the same, re-read when it changes on disk
                                    (daemons); borrowed, or NULL; used instead of registries */
    const char *ca_path;         /* extra CA directory for TLS, or NULL */
    const olm_ca_set *extra_cas; /* trusted in addition to the system store (--pull-cas-dir),
                                    or NULL; borrowed: it must outlive the registry */
    long timeout_seconds;        /* whole-request limit; 0 = none */
    long deadline_seconds;       /* everything done through the handle (a pull: resolve,
                                    manifests, config, layers, tokens) must end within this
                                    many seconds of oci_registry_new; 0 = none */
    long min_bytes_per_second;   /* a transfer slower than this ... */
    long stall_seconds;          /* ... for this long fails (0: 1024 B/s for 60 s) */
    uint64_t chunk_size;         /* blobs above this go up in PATCH chunks of this
                                    size; 0 = OCI_DEFAULT_CHUNK_SIZE */
    void (*progress)(void *ctx, const char *msg); /* optional human progress */
    void *progress_ctx;
} oci_registry_opts;

#define OCI_DEFAULT_CHUNK_SIZE ((uint64_t)64 * 1024 * 1024)
/* The stall guard: a 1 B/s drip passes "under 1 B/s for 60 s" for ever. */
#define OCI_DEFAULT_MIN_BYTES_PER_SECOND 1024L
#define OCI_DEFAULT_STALL_SECONDS 60L
/* The default pull deadline of the daemons and the CLI (--pull-timeout). */
#define OCI_DEFAULT_PULL_TIMEOUT_SECONDS 600L

/* One registry host and its connection, credentials and cached bearer tokens. */
typedef struct oci_registry oci_registry;

/* `registry` as in oci_ref.registry.  The opts strings are copied.  Caller frees
 * with oci_registry_free. */
oci_registry *oci_registry_new(const char *registry, const oci_registry_opts *opts,
                               olm_error *err);
void oci_registry_free(oci_registry *reg);

/* A freed registry's libcurl handle stays, idle with its keep-alive connections, for the next
 * oci_registry of the same registry (oci_handle_pool.c: at most 8, the oldest closed first).
 * oci_handle_pool_drain closes them all (at exit, or to start from nothing).
 * oci_connections_opened counts the connections this process's registry exchanges opened. */
void oci_handle_pool_drain(void);
long oci_connections_opened(void);
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
