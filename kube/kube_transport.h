/* kube_transport: the REST client object and raw HTTP requests to the API server
 * (TLS and credentials from kube_config, connection reuse, timeouts), and turning a
 * failed response into a kube_result and a message.  It knows nothing of kinds,
 * resources or paths: kube_discovery and kube_verbs build on it, never the reverse.
 *
 * Threading: a client is safe to use from several threads at once.  Every call
 * uses its own CURL easy handle, taken from a small mutex-guarded pool of idle
 * handles (so keep-alive connections are reused, but never by two threads at
 * once) or created fresh; DNS and TLS sessions are shared through a CURLSH with
 * mutexes.  Clients made by kube_client_new_for_token() from one base share one such
 * pool between them (see there).  The configuration is immutable after kube_client_new().  Calls block:
 * run them on a worker thread (the libuv threadpool), never on an event loop.
 *
 * Ownership: json_t ** outputs are new references the caller json_decref()s;
 * char ** outputs are malloc'd and freed by the caller. */
#ifndef OLM_KUBE_TRANSPORT_H
#define OLM_KUBE_TRANSPORT_H

#include <jansson.h>
#include <stddef.h>

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
/* A client for base's API server that authenticates only with `token` (a ServiceAccount
 * token): base's server, CA and TLS verification, no client certificate, no token file.
 * All clients made from one base share DNS, TLS sessions and idle keep-alive connections
 * (a pool kept apart from base's own), so a client per reconcile costs no new TLS
 * handshake.  Sharing connections between identities is safe because a bearer token is
 * sent per request (each request of this client carries only this client's token) and
 * none of these clients ever presents a client certificate, the one credential that is
 * bound to a connection.  base may be freed before the clients made from it. */
kube_client *kube_client_new_for_token(kube_client *base, const char *token, const kube_client_options *opts,
                                       olm_error *err);
/* `token` may also be an impersonation credential (KUBE_IMPERSONATION_PREFIX, kube_config.h):
 * the client then sends base's own credentials with Impersonate-User, over base's own pool,
 * and names base's credential files: base must outlive it. */
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

/* Closes the idle keep-alive connections `c` holds for its next calls: its own and, for a
 * base client, those its ServiceAccount clients share.  Each is TLS state and buffers
 * (about 100 KiB), worth giving back when a controller goes idle after a burst; the next
 * call connects again, resuming the TLS session.  Any thread. */
void kube_client_close_idle(kube_client *c);

/* One HTTP request.  `path` starts with '/' and is already escaped; `query` is an
 * already-escaped query string without '?' (or NULL); content_type and body may
 * be NULL.  Returns the HTTP status (any status, including 4xx/5xx; *resp holds
 * the body) or -1 with err set when no HTTP response arrived (the message names
 * the server and curl's error).  A 429 or 5xx with a Retry-After of whole seconds is
 * sent again after that wait (at most 10 s each, 10 times, as client-go does); the
 * last answer is returned. */
long kube_request(kube_client *c, const char *method, const char *path, const char *query,
                  const char *content_type, const char *body, size_t body_len,
                  kube_response *resp, olm_error *err);

/* Turns a failed response into an actionable message in err and returns the
 * kube_result.  Understands metav1.Status bodies; otherwise quotes the body. */
kube_result kube_status_error(long http_status, const char *body, size_t body_len,
                              const char *method, const char *path, olm_error *err);

/* kube_request, then for a 2xx answer its JSON body decoded into *out (when out is
 * not NULL); any other status goes through kube_status_error.  body is a C string
 * (or NULL).  Returns KUBE_OK or a negative kube_result with err set. */
int kube_request_json(kube_client *c, const char *method, const char *path, const char *query,
                      const char *content_type, const char *body, json_t **out, olm_error *err);

#endif
