/* operator_health: a tiny HTTP/1.x responder on libuv for /healthz, /readyz and
 * /metrics of operator-controller, over plain TCP or TLS.
 *
 * Why not h2o (as catalogd): the olm_operator target links only the kube/oci/controller
 * libraries, and probes and scrapers need nothing more than "read one GET, answer, close".
 * Each connection serves one request (Connection: close); requests larger than 8 KiB or
 * idle for 10 s are dropped.  TLS (--metrics-bind-address with --tls-cert/--tls-key) runs
 * OpenSSL over memory BIOs, so libuv still does all the I/O; the TLS profile sets versions,
 * ciphers and curves, and a changed certificate or key is taken for the next connections
 * (olm_tls_server.h).
 *
 * Thread affinity: loop thread only; the handler runs on the loop thread. */
#ifndef OLM_OPERATOR_HEALTH_H
#define OLM_OPERATOR_HEALTH_H

#include <uv.h>

#include "olm_error.h"
#include "olm_http_gate.h"
#include "olm_tls_profile.h"
#include "strbuf.h"

/* Fills `body` for a GET or HEAD of `path` (query removed) and returns the HTTP status;
 * *content_type may be left NULL (text/plain). */
typedef int (*operator_health_handler)(const char *path, strbuf *body, const char **content_type, void *data);

typedef struct operator_health operator_health;

typedef struct operator_health_opts {
    const char *host;               /* an IPv4 or IPv6 literal */
    int port;                       /* 0 picks a free one: see operator_health_port */
    const char *tls_cert, *tls_key; /* PEM files: HTTPS when both are set; reloaded when they change */
    const olm_tls_profile *tls_profile; /* NULL: intermediate */
    const char *name;               /* for log lines, e.g. "--metrics-bind-address" */
    operator_health_handler handler;
    void *data;
} operator_health_opts;

/* Binds and listens.  NULL with err on failure (a bad certificate, the port in use); the
 * loop must then run once more to close the failed listener. */
operator_health *operator_health_start(uv_loop_t *loop, const operator_health_opts *opts, olm_error *err);
int operator_health_port(const operator_health *h);
/* From now on every request for /metrics first passes `gate` (copied; its object borrowed
 * until the listener stopped): the metrics filter.  NULL: none. */
void operator_health_set_gate(operator_health *h, const olm_http_gate *gate);
/* Closes the listener and every open connection; frees h, then calls cb (may be NULL). */
void operator_health_stop(operator_health *h, void (*cb)(void *data), void *data);

#endif
