/* kube_authz: controller-runtime's metrics filter (WithAuthenticationAndAuthorization) on a
 * libuv loop.  A request's bearer token is checked with a TokenReview, then the user it names
 * with a SubjectAccessReview for (verb, non-resource path), e.g. get /metrics, so the
 * `*-metrics-reader` ClusterRoles decide who may scrape:
 *
 *   no bearer token, or the apiserver says the token is not authenticated   401 "Unauthorized"
 *   not allowed                                   403 "Authorization denied for user <name>"
 *   a review failed (apiserver unreachable, our identity may not create reviews)
 *                      500 "Authentication failed" / "Authorization for user <name> failed"
 *   more than max_pending reviews waiting         503
 *
 * Decisions are cached as the upstream delegating authenticator/authorizer do: token
 * reviews (either answer) authn_ttl_ms, allowed authz_allow_ttl_ms, denied authz_deny_ttl_ms.
 * Tokens are kept only as SHA-256 digests.  The caches hold at most KUBE_AUTHZ_CACHE_MAX
 * entries each (then the entry closest to expiry goes), so random tokens cannot grow them.
 *
 * Thread affinity: loop thread only (the kube_uvcurl's loop); callbacks run there. */
#ifndef OLM_KUBE_AUTHZ_H
#define OLM_KUBE_AUTHZ_H

#include <stddef.h>
#include <stdint.h>

#include "kube_config.h"
#include "kube_uvcurl.h"
#include "olm_error.h"
#include "olm_http_gate.h"

#define KUBE_AUTHZ_CACHE_MAX 1024

typedef struct kube_authz kube_authz;
typedef struct kube_authz_pending kube_authz_pending;

typedef struct kube_authz_options {
    uint64_t authn_ttl_ms;       /* 0: 60 s (controller-runtime's CacheTTL) */
    uint64_t authz_allow_ttl_ms; /* 0: 5 min */
    uint64_t authz_deny_ttl_ms;  /* 0: 30 s */
    long review_timeout_ms;      /* one review request; 0: 10 s */
    unsigned max_pending;        /* checks waiting for the apiserver at once; 0: 64 */
} kube_authz_options;

/* The decision: status 200, 401, 403, 500 or 503; `msg` the response body's text (one line,
 * no newline); `detail` a line for the log when the status is 500 (why a review failed), else
 * NULL.  Both borrowed for the call. */
typedef olm_http_gate_done kube_authz_cb;

/* `uc` and `cfg` (the daemon's own identity, which needs create on tokenreviews and
 * subjectaccessreviews) are borrowed and must outlive the authorizer.  `opts` may be NULL.
 * NULL with err when out of memory. */
kube_authz *kube_authz_new(kube_uvcurl *uc, const kube_config *cfg, const kube_authz_options *opts, olm_error *err);

/* Ends every pending check with cb(503, "shutting down") and frees az. */
void kube_authz_free(kube_authz *az);

/* Checks a request: `authorization` is its Authorization header (NULL when absent), `verb`
 * the lower-case HTTP method, `path` the URL path without the query.  Returns the status at
 * once when no review is needed (no token, cached decisions, too many pending; msg filled),
 * or 0 when a review runs: cb then runs once, later, and *pending is the handle for
 * kube_authz_cancel until then (it is freed right after cb returns: forget it there). */
int kube_authz_check(kube_authz *az, const char *authorization, const char *verb, const char *path, kube_authz_cb cb,
                     void *data, kube_authz_pending **pending, char *msg, size_t msgsz);

/* Stops a pending check (its client went away); cb will not run. */
void kube_authz_cancel(kube_authz_pending *p);

/* The authorizer as a server's gate (olm_http_gate.h), checking every request as it comes. */
olm_http_gate kube_authz_gate(kube_authz *az);

/* Reviews sent to the apiserver so far (cache misses), for tests and metrics. */
unsigned long long kube_authz_reviews(const kube_authz *az);

#endif
