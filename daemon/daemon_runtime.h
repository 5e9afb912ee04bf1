/* daemon_runtime: the parts of a daemon's life that catalogd and operator-controller live the
 * same way, as controller-runtime's Manager does for upstream's two binaries: the API client
 * and the request metrics every call counts into, the watch transport on the loop, the filter
 * in front of the metrics listener, SIGTERM/SIGINT, the leader election with its log lines,
 * the watches both run for every pull (registries.conf, --global-pull-secret) and the close
 * count-down that lets the watch transport go only after everything on it has stopped.  Each
 * daemon keeps its own app struct and embeds one of these; what differs (its controllers, its
 * listeners, the order it stops them in) stays in its main.
 *
 * Loop thread only, like everything it holds. */
#ifndef OLMV1_DAEMON_RUNTIME_H
#define OLMV1_DAEMON_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "kube_authz.h"
#include "kube_client.h"
#include "kube_leader.h"
#include "kube_request_metrics.h"
#include "kube_uvcurl.h"
#include "olm_error.h"
#include "oci_auth_store.h"
#include "oci_registries_follow.h"
#include "daemon_listeners.h"
#include "daemon_flags.h"
#include "pull_secret_watch.h"

typedef struct daemon_runtime {
    const char *prog;                   /* "catalogd": the user agent and the Lease identity's default host */
    const char *log_key;                /* olm_log key of its process-wide lines ("catalog", ...) */
    kube_client *client;                /* REST, as the daemon's own identity */
    kube_request_metrics *rest_metrics; /* rest_client_requests_total of every API request */
    uv_loop_t *loop;
    kube_uvcurl *uc;                    /* watches, the election, the metrics filter's reviews */
    olm_http_listeners listeners;       /* --health-probe-bind-address, --metrics-bind-address */
    kube_authz *authz;                  /* the metrics listener's filter, or NULL */
    kube_leader *leader;                /* with --leader-elect, while it runs */
    uv_signal_t sigterm, sigint;
    bool signals_on;
    bool stopping;                      /* set by the daemon when its shutdown begins */
    struct {                            /* daemon_runtime_campaign's */
        void (*started)(void *data);
        void (*stopped)(void *data);
        void *data;
        const char *lease;              /* a literal of the daemon's */
        /* The Lease timings of the flags (daemon_runtime_preflight copies them). */
        uint64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    } election;
    void (*on_signal)(void *data, int signum);
    void *signal_data;
    int closing;                        /* stops still pending before the watch transport may close */
    oci_registries_follow *registries;  /* registries.conf, followed (mirrors, blocked) */
    oci_auth_store *pull_secret;        /* --global-pull-secret's credentials, or NULL */
    pull_secret_watch *secret_watch;    /* the watch on that Secret, while it runs */
    bool controllers_started;           /* set by daemon_runtime_run once start_controllers succeeded */
    const char *system_namespace;       /* --system-namespace, the Pod's, or olmv1-system (preflight) */
    char ns_buf[64];
} daemon_runtime;

/* The checks both daemons make before anything starts: the files the shared flags name (TLS
 * pair, --pull-cas-dir into *pull_cas), registries.conf (followed from now on) and the system
 * namespace; it also keeps the Lease timings for daemon_runtime_campaign.  -1 to go on; else
 * 1, with "<prog>: <why>" on stderr. */
int daemon_runtime_preflight(daemon_runtime *rt, const olm_daemon_flags *common, olm_ca_set **pull_cas);

/* A daemon as daemon_runtime_run starts it: where it keeps its cache, how it leads, and its
 * hooks (each called with `app`, the daemon's own struct). */
typedef struct daemon_spec {
    daemon_runtime *rt;
    void *app;
    const char *kubeconfig;        /* --kubeconfig, or NULL */
    const char *cache_flag;        /* "--cache-dir": named when it cannot be created */
    const char *cache_dir;
    const char *pull_cache;        /* <cache_dir>/<pull_cache>: interrupted pulls swept at start */
    bool leader_elect;
    const char *lease_namespace, *lease_name;
    /* Binds every listener before anything else runs (a port in use is one line and exit 1);
     * on failure closes those already up and says why in msg. */
    int (*start_listeners)(void *app, char *msg, size_t msgsz);
    /* Loop handles and content that need the listeners but no API server; may be NULL. */
    void (*before_start)(void *app);
    /* Informers, work queue, reconcilers: at start, or when this replica becomes leader. */
    int (*start_controllers)(void *app, olm_error *err);
    /* The daemon's ordered stop (signals: exit 0; a lost Lease or a failed start: 1). */
    void (*begin_shutdown)(void *app, int exit_code);
    void (*log_started)(void *app);
    /* After the loop: whether a listener is still open (then the loop is left to the OS). */
    bool (*listeners_open)(void *app);
} daemon_spec;

/* Runs the daemon: connects (kubeconfig), creates the cache directory, sweeps interrupted
 * pulls, binds the listeners, watches SIGTERM/SIGINT, starts the watch transport, then
 * campaigns for the Lease (controllers start on becoming leader) or starts the controllers,
 * and runs the loop until the daemon's shutdown has stopped everything.  *started tells
 * whether the loop ran (the daemon logs "stopped" then).  Returns 1 when it could not start,
 * else 0 (the exit code is the daemon's, from its shutdown); -1 when the loop was left to
 * the OS with a listener open.  `s` must outlive the call. */
int daemon_runtime_run(daemon_runtime *rt, const daemon_spec *s, bool *started);

/* Loads the kubeconfig (`path`, else $KUBECONFIG, else in-cluster), makes the request metrics
 * and the REST client with prog as its user agent.  0, or -1 with one ERROR line logged. */
int daemon_runtime_connect(daemon_runtime *rt, const char *kubeconfig_path);

/* On rt->loop (set by the caller, listeners already up): the watch transport, counted in the
 * request metrics, and, when a metrics listener runs, its filter: only callers whose token may
 * get /metrics (TokenReview, then SubjectAccessReview; the *-metrics-reader ClusterRoles), as
 * controller-runtime's.  0, or -1 with err. */
int daemon_runtime_start_transport(daemon_runtime *rt, olm_error *err);

/* SIGTERM and SIGINT on rt->loop call cb(data, signum); daemon_runtime_close_signals closes
 * both handles (at shutdown; idempotent). */
void daemon_runtime_watch_signals(daemon_runtime *rt, void (*cb)(void *data, int signum), void *data);
void daemon_runtime_close_signals(daemon_runtime *rt);

/* Campaigns for Lease ns/name as "<hostname>_<pid>_<random>".  started/stopped are the
 * daemon's (start the controllers; shut down with exit 1 when the Lease is lost, so that a
 * fresh start campaigns again, as controller-runtime does).  The runtime logs "campaigning
 * ...", "became leader", the current leader, "leader election lost; exiting" and the
 * election's errors (WARN: it retries), and calls neither hook once rt->stopping is set (a
 * shutdown releases the Lease, which is no loss).  0, or -1 with err. */
int daemon_runtime_campaign(daemon_runtime *rt, const char *ns, const char *lease, void (*started)(void *data),
                            void (*stopped)(void *data), void *data, olm_error *err);

/* The Lease holder's identity: "<host>_<pid>_<8 hex digits>", host from gethostname() or
 * `fallback_host`.  Separate so it can be tested. */
void daemon_leader_identity(const char *fallback_host, char *buf, size_t bufsz);

/* registries.conf (`path`, else the default; a missing default is no error), followed while
 * the daemon runs: every pull reads rt->registries.  Before the loop (preflight): 0, or -1
 * with a one-line msg. */
int daemon_runtime_follow_registries(daemon_runtime *rt, const char *path, char *msg, size_t msgsz);

/* --global-pull-secret NS/NAME (NULL: none, 0): its credentials go to rt->pull_secret, which
 * every pull reads; on_loaded(data) when new ones arrive (re-queue what failed for want of
 * them).  After daemon_runtime_start_transport.  0, or -1 with err. */
int daemon_runtime_watch_pull_secret(daemon_runtime *rt, const char *ref, void (*on_loaded)(void *data), void *data,
                                     olm_error *err);

/* The close count-down.  Informers, watches and the election stop asynchronously, and the
 * watch transport under them may close only once the last has.  A daemon's shutdown calls
 * begin (one hold of its own), add before each stop it starts, done in each stop's callback
 * and once more for its hold when all are started; the last done closes the transport
 * (rt->uc becomes NULL). */
void daemon_runtime_closing_begin(daemon_runtime *rt);
void daemon_runtime_closing_add(daemon_runtime *rt);
void daemon_runtime_closing_done(daemon_runtime *rt);

/* Between closing_begin and the daemon's last done: stops what the runtime runs on the
 * transport (the pull-secret watch, the election, which releases the Lease), each counted. */
void daemon_runtime_stop_watches(daemon_runtime *rt);

/* At exit, after the loop ran dry: frees the client and the request metrics, the followed
 * registries.conf and the pull-secret credentials. */
void daemon_runtime_free(daemon_runtime *rt);

#endif
