/* kube_verbs: typed calls on objects: GET, LIST, POST, PUT, PATCH, server-side apply,
 * DELETE and TokenRequest.  Kinds are resolved with kube_discovery, paths built with
 * kube_path, requests sent with kube_transport.
 *
 * Return convention: 0 (KUBE_OK) on success, otherwise one of the negative
 * kube_result codes with `err` filled from the API server's Status (e.g.
 * `deployments.apps "x" is forbidden: User "system:serviceaccount:ns:sa" cannot get
 * resource "deployments" ... (HTTP 403 Forbidden)`).  Every negative code is a
 * failure, so `if (rc < 0)` is always a correct check; the distinct codes let
 * callers re-GET and retry on KUBE_CONFLICT, treat KUBE_NOT_FOUND on delete as
 * done, and so on.
 *
 * Ownership: json_t ** outputs are new references the caller json_decref()s;
 * char ** outputs are malloc'd and freed by the caller.  Input objects are
 * borrowed and never modified. */
#ifndef OLM_KUBE_VERBS_H
#define OLM_KUBE_VERBS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "kube_path.h"
#include "kube_transport.h"

int kube_get(kube_client *c, const char *api_version, const char *kind, const char *ns,
             const char *name, json_t **out, olm_error *err);
/* GET of a resource already resolved (e.g. through another client's discovery cache):
 * no discovery on `c`.  A resource the server no longer serves answers 404: KUBE_NOT_FOUND. */
int kube_get_resource(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name, json_t **out,
                      olm_error *err);
/* The same GET with resourceVersion=0: any version the apiserver holds, answered from its
 * watch cache instead of a quorum read of etcd (a 404 costs the apiserver half, etcd nothing),
 * at most as old as that cache's lag behind etcd (milliseconds, unless the apiserver is cut
 * off from etcd). */
int kube_get_resource_cached(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name,
                             json_t **out, olm_error *err);

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

/* What a SelfSubjectAccessReview asks: may this client `verb` `resource` of API `group`
 * ("" or NULL: the core group), in `namespace` (NULL: in every namespace)? */
typedef struct kube_access {
    const char *verb, *group, *resource, *namespace;
} kube_access;
/* *allowed is the API server's answer for the client's own identity. */
int kube_self_allowed(kube_client *c, const kube_access *a, bool *allowed, olm_error *err);

/* Parses an RFC 3339 UTC timestamp ("2024-01-02T03:04:05Z"); -1 on bad input. */
int kube_parse_time(const char *s, time_t *out);

#endif
