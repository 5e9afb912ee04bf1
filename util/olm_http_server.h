/* olm_http_server: one HTTP/1.1 listener, plain or TLS, served by h2o on a caller's libuv
 * loop: what catalogd's catalog server and both daemons' health and metrics listeners share.
 *
 *   - the listener: an IPv4 or IPv6 literal and a port (0 picks a free one);
 *   - TLS when a certificate and key are given, through olm_tls_server (the TLS profile of
 *     --tls-profile; rotated files are taken for new connections); HTTP/1.1 only, also over
 *     ALPN, as upstream (NextProtos ["http/1.1"]);
 *   - h2o set up as upstream's Go servers behave: no Server header, 5 s to read a request
 *     (ReadTimeout), request bodies over 4 KiB refused with 413 (nothing served takes one);
 *   - the metrics filter: requests for /metrics pass the gate set with
 *     olm_http_server_set_gate (TokenReview + SubjectAccessReview, kube_authz) first, and a
 *     denial is answered as controller-runtime's filter does (http.Error);
 *   - what is served: the caller's own h2o handlers (`configure`: catalogd's catalogs), or
 *     small text responses from a callback (`text`: /healthz, /readyz, /metrics);
 *   - stopping lets open connections finish for a grace period.
 *
 * Thread affinity: the loop thread only; handlers run on it. */
#ifndef OLMV1_OLM_HTTP_SERVER_H
#define OLMV1_OLM_HTTP_SERVER_H

#include <stdbool.h>
#include <uv.h>

#include <h2o.h>

#include "olm_error.h"
#include "olm_http_gate.h"
#include "olm_tls_profile.h"
#include "strbuf.h"

typedef struct olm_http_server olm_http_server;

/* The response to a GET or HEAD of `path` (without the query): returns the status and fills
 * `body`; *content_type may be left NULL (text/plain; charset=utf-8). */
typedef int (*olm_http_text_handler)(const char *path, strbuf *body, const char **content_type, void *data);

/* The response to a POST of `path` with the request body `in` (len bytes): returns the status
 * and fills `body` (an admission webhook).  *content_type as above. */
typedef int (*olm_http_post_handler)(const char *path, const char *in, size_t len, strbuf *body,
                                     const char **content_type, void *data);

typedef struct olm_http_server_opts {
    const char *host;                   /* an IPv4 or IPv6 literal */
    int port;                           /* 0 picks a free one: see olm_http_server_port */
    const char *tls_cert, *tls_key;     /* PEM files: HTTPS when both are set */
    const olm_tls_profile *tls_profile; /* NULL: intermediate */
    const char *name;                   /* names the listener in log lines, e.g. "--metrics-bind-address" */
    const char *log_key;                /* the daemon's log key ("catalog", "clusterExtension"); NULL: "-" */
    /* One of the two: */
    void (*configure)(h2o_pathconf_t *root, void *arg); /* registers handlers on the path "/" */
    olm_http_text_handler text;
    olm_http_post_handler post; /* with `text`: POSTs go here (NULL: 405) */
    size_t max_body;            /* of a POST; 0: 4 KiB (nothing but GET and HEAD is expected) */
    void *arg; /* for either */
} olm_http_server_opts;

/* Binds, listens and serves.  NULL with err on failure ("listen address X is not an IP
 * address", "listen on H:P: <why>", a TLS pair that does not load); the loop must then run
 * once more to close the failed listener. */
olm_http_server *olm_http_server_start(uv_loop_t *loop, const olm_http_server_opts *opts, olm_error *err);

int olm_http_server_port(const olm_http_server *s);

/* From now on every request for /metrics first passes `gate` (copied).  Its object is borrowed
 * until olm_http_server_stop: from then on /metrics is answered 503 "shutting down", and the
 * owner may free the gate's object once the checks already running have ended (kube_authz_free
 * ends them with 503).  NULL: none. */
void olm_http_server_set_gate(olm_http_server *s, const olm_http_gate *gate);

/* For `configure` handlers: serves `req` through `serve` (returns what it returns), after the
 * gate when one is set and the path is /metrics.  A denied request is answered here. */
int olm_http_server_guard(olm_http_server *s, h2o_req_t *req, int (*serve)(h2o_req_t *req, void *arg), void *arg);

/* net/http's http.Error: text/plain, nosniff, `msg` and a newline (copied). */
int olm_http_send_error(h2o_req_t *req, int status, const char *msg);

/* "Not Found" and so on for the statuses these servers send. */
const char *olm_http_reason(int status);

/* Stops accepting, lets open connections finish for up to `grace_ms` (idle keep-alive ones
 * end within the 5 s read timeout), then frees the server and calls done(arg, true).  With
 * connections still open at the deadline the h2o context cannot be torn down safely:
 * a log line, done(arg, false), and the server stays allocated (the caller is expected to exit).
 * A second stop while the first drains does nothing. */
void olm_http_server_stop(olm_http_server *s, unsigned grace_ms, void (*done)(void *arg, bool clean), void *arg);

#endif
