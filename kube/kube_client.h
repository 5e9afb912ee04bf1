/* kube_client: synchronous REST calls to the Kubernetes API server.
 *
 * Threading: a client is safe to use from several threads at once.  Every call
 * uses its own CURL easy handle, taken from a small mutex-guarded pool of idle
 * handles (so keep-alive connections are reused, but never by two threads at
 * once) or created fresh; DNS and TLS sessions are shared through a CURLSH with
 * mutexes, and the discovery cache has its own mutex.  The configuration is
 * immutable after kube_client_new().  Calls block: run them on a worker thread
 * (the libuv threadpool), never on an event loop.
 *
 * Return convention of the typed helpers: 0 (KUBE_OK) on success, otherwise one
 * of the negative kube_result codes with `err` filled from the API server's Status
 * (e.g. `deployments.apps "x" is forbidden: User "system:serviceaccount:ns:sa"
 * cannot get resource "deployments" ... (HTTP 403 Forbidden)`).  Every negative
 * code is a failure, so `if (rc < 0)` is always a correct check; the distinct
 * codes let callers re-GET and retry on KUBE_CONFLICT, treat KUBE_NOT_FOUND on
 * delete as done, and so on.
 *
 * Ownership: json_t ** outputs are new references the caller json_decref()s;
 * char ** outputs are malloc'd and freed by the caller.  Input objects are
 * borrowed and never modified. */
#ifndef OLM_KUBE_CLIENT_H
#define OLM_KUBE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kube_config.h"
#include "olm_error.h"

typedef enum kube_result {
    KUBE_OK = 0,
    KUBE_ERROR = -1,          /* transport, protocol, local or any other error */
    KUBE_NOT_FOUND = -2,      /* 404 */
    KUBE_CONFLICT = -3,       /* 409 (stale resourceVersion, failed precondition, apply conflict) */
    KUBE_ALREADY_EXISTS = -4, /* 409 with reason AlreadyExists (create) */
    KUBE_FORBIDDEN = -5,      /* 403 */
    KUBE_UNAUTHORIZED = -6,   /* 401 */
    KUBE_INVALID = -7,        /* 422 and 400 */
    KUBE_GONE = -8,           /* 410: expired continue token / resourceVersion */
    KUBE_UNAVAILABLE = -9,    /* 429, 500, 503, 504: worth retrying later */
} kube_result;

/* Maps an HTTP status (and the Status reason, may be NULL) to a kube_result. */
kube_result kube_result_from_http(long http_status, const char *reason);
const char *kube_result_name(kube_result r);

typedef struct kube_client kube_client;

typedef struct kube_client_options {
    long connect_timeout_ms; /* 0: 10 s */
    long timeout_ms;         /* whole request; 0: 60 s */
    const char *user_agent;  /* NULL: "olmv1" (copied) */
} kube_client_options;

/* Creates a client.  On success the client takes over the contents of *cfg (which
 * is zeroed; do not kube_config_free it); on failure *cfg is left untouched.
 * opts may be NULL.  Free with kube_client_free(). */
kube_client *kube_client_new(kube_config *cfg, const kube_client_options *opts, olm_error *err);
void kube_client_free(kube_client *c);
/* Borrowed; valid while the client lives. */
const kube_config *kube_client_config(const kube_client *c);
/* How many responses of this client were HTTP 401 Unauthorized (any thread).  Lets a
 * caller whose credentials may have been revoked (a cached ServiceAccount token) tell
 * "the token is no good" apart from every other failure without parsing messages. */
unsigned kube_client_unauthorized_count(kube_client *c);

/* ------------------------------------------------------------ raw requests */

typedef struct kube_response {
    long status;       /* HTTP status */
    char *body;        /* NUL-terminated (may contain NULs before body_len); caller frees */
    size_t body_len;
    char *content_type; /* or NULL; caller frees */
} kube_response;

void kube_response_free(kube_response *r);

/* One HTTP request.  `path` starts with '/' and is already escaped; `query` is an
 * already-escaped query string without '?' (or NULL); content_type and body may
 * be NULL.  Returns the HTTP status (any status, including 4xx/5xx; *resp holds
 * the body) or -1 with err set when no HTTP response arrived (the message names
 * the server and curl's error). */
long kube_request(kube_client *c, const char *method, const char *path, const char *query,
                  const char *content_type, const char *body, size_t body_len,
                  kube_response *resp, olm_error *err);

/* Turns a failed response into an actionable message in err and returns the
 * kube_result.  Understands metav1.Status bodies; otherwise quotes the body. */
kube_result kube_status_error(long http_status, const char *body, size_t body_len,
                              const char *method, const char *path, olm_error *err);

/* ------------------------------------------------------------ paths and discovery */

typedef struct kube_resource_info {
    char group[128];    /* "" for the core group */
    char version[64];
    char resource[128]; /* plural, e.g. "deployments" */
    bool namespaced;
} kube_resource_info;

/* kind -> resource: a built-in table of common kinds first, then discovery
 * (GET /api/v1 or /apis/<group>/<version>, cached per client; a miss in the cache
 * refreshes that group/version once so freshly created CRDs are found). */
int kube_resolve_kind(kube_client *c, const char *api_version, const char *kind,
                      kube_resource_info *out, olm_error *err);
/* Lookup in the built-in table only (no I/O); false when the kind is not there. */
bool kube_builtin_kind(const char *api_version, const char *kind, kube_resource_info *out);
/* Drops the discovery cache (e.g. after installing CRDs). */
void kube_discovery_reset(kube_client *c);
/* Whether the server serves `group/version` ("v1" for core): *served set, 0 returned;
 * -1 with err only for transport or server errors. */
int kube_group_version_served(kube_client *c, const char *api_version, bool *served, olm_error *err);

/* Builds "/apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>[/<sub>]]"
 * into a malloc'd string (caller frees).  ns is ignored for cluster-scoped
 * resources; a namespaced resource with a name needs ns.  name/sub may be NULL. */
char *kube_resource_path(const kube_resource_info *ri, const char *ns, const char *name,
                         const char *subresource, olm_error *err);

/* Appends "key=value" (value percent-escaped, '&' between pairs) to a malloc'd
 * query string; *query may be NULL initially.  Returns -1 on out of memory. */
int kube_query_add(char **query, const char *key, const char *value);

/* ------------------------------------------------------------ typed verbs */

int kube_get(kube_client *c, const char *api_version, const char *kind, const char *ns,
             const char *name, json_t **out, olm_error *err);
/* GET of a resource already resolved (e.g. through another client's discovery cache):
 * no discovery on `c`.  A resource the server no longer serves answers 404: KUBE_NOT_FOUND. */
int kube_get_resource(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name, json_t **out,
                      olm_error *err);

typedef struct kube_list_options {
    const char *label_selector;
    const char *field_selector;
    long limit;                   /* 0: no limit */
    const char *continue_token;   /* from metadata.continue of the previous page */
    const char *resource_version; /* NULL: most recent */
} kube_list_options;

/* ns NULL lists a namespaced kind across all namespaces.  *out is the List object
 * (items, metadata.resourceVersion, metadata.continue).  opts may be NULL. */
int kube_list(kube_client *c, const char *api_version, const char *kind, const char *ns,
              const kube_list_options *opts, json_t **out, olm_error *err);

/* POST; kind/namespace/name from obj.  *out (may be NULL) receives the created object. */
int kube_create(kube_client *c, const json_t *obj, json_t **out, olm_error *err);
/* PUT of the whole object; send metadata.resourceVersion for optimistic
 * concurrency: a stale one yields KUBE_CONFLICT (re-GET, re-apply, retry). */
int kube_update(kube_client *c, const json_t *obj, json_t **out, olm_error *err);
/* PUT .../status. */
int kube_update_status(kube_client *c, const json_t *obj, json_t **out, olm_error *err);

typedef enum kube_patch_type {
    KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
    KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
} kube_patch_type;

/* subresource may be NULL or e.g. "status". */
int kube_patch(kube_client *c, const char *api_version, const char *kind, const char *ns,
               const char *name, const char *subresource, kube_patch_type type, const char *patch,
               json_t **out, olm_error *err);

/* Server-side apply: PATCH application/apply-patch+yaml with obj as JSON (JSON is
 * YAML) and ?fieldManager=<field_manager>[&force=true].  Creates the object when
 * absent.  subresource may be NULL or "status". */
int kube_apply(kube_client *c, const json_t *obj, const char *field_manager, bool force,
               const char *subresource, json_t **out, olm_error *err);
/* The query kube_apply sends (exposed for tests); caller frees. */
char *kube_apply_query(const char *field_manager, bool force);

typedef struct kube_delete_options {
    const char *propagation_policy;      /* "Foreground", "Background", "Orphan" or NULL */
    const char *precondition_uid;        /* NULL: none */
    const char *precondition_resource_version;
    long grace_period_seconds;           /* <0: server default */
} kube_delete_options;

/* DELETE; a missing object is KUBE_NOT_FOUND (callers wanting idempotence treat
 * it as done).  opts may be NULL. */
int kube_delete(kube_client *c, const char *api_version, const char *kind, const char *ns,
                const char *name, const kube_delete_options *opts, olm_error *err);

/* TokenRequest for ServiceAccount ns/sa.  expiration_seconds must be >= 600 (the
 * API server's minimum); audiences is a NULL-terminated list or NULL for the
 * server default.  *token is malloc'd (caller frees, ideally after
 * explicit_bzero); *expires is the expirationTimestamp (UTC), may be NULL. */
int kube_token_request(kube_client *c, const char *ns, const char *sa, int64_t expiration_seconds,
                       const char *const *audiences, char **token, time_t *expires, olm_error *err);

/* Parses an RFC 3339 UTC timestamp ("2024-01-02T03:04:05Z"); -1 on bad input. */
int kube_parse_time(const char *s, time_t *out);

#endif
