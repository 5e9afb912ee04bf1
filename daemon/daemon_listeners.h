/* olm_http_listeners: a daemon's health and metrics listeners (--health-probe-bind-address,
 * --metrics-bind-address), the same in catalogd and operator-controller, as controller-runtime
 * gives both upstream daemons:
 *
 *   health listener   plain HTTP; /healthz and /readyz (the daemon's answers), and /metrics
 *                     too when there is no metrics listener;
 *   metrics listener  /metrics only; HTTPS with --tls-cert/--tls-key (the TLS profile, rotated
 *                     files taken for new connections); guarded by the metrics filter once the
 *                     daemon sets a gate (olm_http_server_set_gate on `metrics`);
 *   anything else     404 "404 page not found", as Go's mux.
 *
 * Thread affinity: the loop thread only. */
#ifndef OLMV1_OLM_HTTP_LISTENERS_H
#define OLMV1_OLM_HTTP_LISTENERS_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "daemon_flags.h"
#include "olm_http_server.h"
#include "strbuf.h"

typedef struct olm_http_listeners_opts {
    const olm_daemon_flags *flags; /* the addresses, TLS pair and profile (checked by the flag parser) */
    const char *log_key;           /* the daemon's log key ("catalog", "clusterExtension") */
    /* /healthz or /readyz: the status, with `body` filled. */
    int (*health)(const char *path, strbuf *body, void *arg);
    /* /metrics: the Prometheus text into `body`; -1 answers 503. */
    int (*metrics)(strbuf *body, void *arg);
    void *arg;
} olm_http_listeners_opts;

typedef struct olm_http_listeners {
    olm_http_server *health;  /* NULL: off, or stopped */
    olm_http_server *metrics; /* NULL: off, or stopped */
    olm_http_listeners_opts opts; /* private: what the handlers call */
    bool metrics_listener;        /* private: /metrics is served on its own listener */
} olm_http_listeners;

/* Binds the listeners the flags ask for, into *l (which must stay where it is while they run).
 * 0, or -1 with msg "<flag> <address>: <why>" and the listeners already up stopping: the
 * caller runs the loop until they have closed. */
int olm_http_listeners_start(uv_loop_t *loop, const olm_http_listeners_opts *opts, olm_http_listeners *l, char *msg,
                             size_t msgsz);

/* Stops both; each slot becomes NULL once its server has stopped (open connections get up to
 * grace_ms; a server abandoned with connections still open is logged and left to the exit). */
void olm_http_listeners_stop(olm_http_listeners *l, unsigned grace_ms);

/* Stops *slot (when not NULL) as above: the slot becomes NULL once it has stopped. */
void olm_http_server_stop_slot(olm_http_server **slot, unsigned grace_ms);

#endif
