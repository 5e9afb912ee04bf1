/* daemon_runtime: the parts of a daemon's life that catalogd and operator-controller live the
 * same way, as controller-runtime's Manager does for upstream's two binaries: the API client
 * and the request metrics every call counts into, the watch transport on the loop, the health
 * and metrics listeners with their answers (readiness, the series both daemons export) and the
 * filter in front of /metrics, SIGTERM/SIGINT, the leader election with its log lines, the
 * watches both run for every pull (registries.conf, --global-pull-secret), and the ordered
 * shutdown: each daemon hands the runtime what it starts (work queues, informers, servers,
 * its own watches: daemon_runtime_own*) and the runtime stops them stage by stage, closing
 * the watch transport only after everything on it has stopped.  Each daemon keeps its own
 * app struct and embeds one of these; its main lists its controllers, its servers and its
 * flags (daemon_spec).
 *
 * Loop thread only, like everything it holds. */
#ifndef OLMV1_DAEMON_RUNTIME_H
#define OLMV1_DAEMON_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "kube_authz.h"
#include "kube_client.h"
#include "kube_informer.h"
#include "kube_leader.h"
#include "kube_request_metrics.h"
#include "kube_uvcurl.h"
#include "kube_workqueue.h"
#include "olm_error.h"
#include "oci_auth_store.h"
#include "oci_registries_follow.h"
#include "daemon_listeners.h"
#include "daemon_flags.h"
#include "pull_secret_watch.h"

struct daemon_spec;

enum daemon_part_kind { DAEMON_PART_OTHER, DAEMON_PART_WORKQUEUE, DAEMON_PART_INFORMER, DAEMON_PART_SERVER };

/* Something a daemon started and the runtime stops at shutdown (daemon_runtime_own). */
typedef struct daemon_part {
    struct daemon_runtime *rt;
    int stage;                                            /* daemon_stage */
    int kind;                                             /* daemon_part_kind */
    void *obj;                                            /* what stop is called with */
    void *slot;                                           /* the daemon's `T *` to clear once stopped, or NULL */
    void (*stop)(void *obj, void (*stopped)(void *part), void *part);
    const char *metrics_name;                             /* a work queue's controller label */
} daemon_part;

#define DAEMON_PARTS_MAX 16

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
    const struct daemon_spec *spec;     /* daemon_runtime_run's */
    int exit_code;                      /* daemon_runtime_shutdown's */
    daemon_part parts[DAEMON_PARTS_MAX];
    size_t nparts;
    int draining;                       /* drain-stage stops still pending (+1 while they are issued) */
    bool terminating;                   /* SIGTERM seen, serving unready until the delay ends */
    uv_timer_t unready_timer;

    const olm_daemon_flags *flags;      /* the shared flags (daemon_runtime_preflight's) */
    const char *system_namespace;       /* --system-namespace, the Pod's, or olmv1-system (preflight) */
    char ns_buf[64];
} daemon_runtime;

/* The checks both daemons make before anything starts: the files the shared flags name (TLS
 * pair, --pull-cas-dir into *pull_cas), registries.conf (followed from now on) and the system
 * namespace; it also keeps the Lease timings for daemon_runtime_campaign.  -1 to go on; else
 * 1, with "<prog>: <why>" on stderr. */
int daemon_runtime_preflight(daemon_runtime *rt, const olm_daemon_flags *common, olm_ca_set **pull_cas);

/* A daemon as daemon_runtime_run starts it: where it keeps its cache, how it leads, what it
 * answers, and its hooks (each called with `app`, the daemon's own struct). */
typedef struct daemon_spec {
    daemon_runtime *rt;
    void *app;
    const char *kubeconfig;        /* --kubeconfig, or NULL */
    const char *cache_flag;        /* "--cache-dir": named when it cannot be created */
    const char *cache_dir;
    const char *pull_cache;        /* <cache_dir>/<pull_cache>: interrupted pulls swept at start */
    bool leader_elect;
    const char *lease_namespace, *lease_name;
    const char *metrics_name;      /* build_info's binary label ("catalogd", "operator_controller") */
    /* After SIGTERM/SIGINT, how long the servers keep answering while /readyz says 503, before
     * the ordered shutdown: the endpoints controller and every node's kube-proxy drop this
     * replica first, so no client is sent to a server that has stopped.  0: stop at once.  A
     * second signal stops at once. */
    uint64_t unready_before_stop_ms;
    /* The daemon's own servers (catalogd's catalog server), bound before the health and metrics
     * listeners and before anything else runs, each owned (DAEMON_STAGE_SERVE) so that a
     * failure closes those already up.  0, or -1 with msg saying why.  May be NULL. */
    int (*start_servers)(void *app, char *msg, size_t msgsz);
    /* Loop handles and content that need the servers but no API server; may be NULL. */
    void (*before_start)(void *app);
    /* What runs on every replica, leader or not, each part owned (catalogd: its followers
     * serve the leader's content).  Before the campaign; may be NULL. */
    int (*start_on_every_replica)(void *app, olm_error *err);
    /* Informers, work queue, reconcilers, each owned: at start, or when this replica leads. */
    int (*start_controllers)(void *app, olm_error *err);
    /* Once no reconcile runs (the drain stage is over), before the watches stop: frees what
     * the reconciles used.  May be NULL. */
    void (*after_drain)(void *app);
    /* /readyz: true, or false with why in `why`.  NULL: ready once the controllers run and
     * every owned informer has synced, or while standing by without the Lease. */
    bool (*ready)(void *app, strbuf *why);
    /* The daemon's own /metrics series (the runtime adds the work queues', the API requests',
     * the election's, the process's and build_info).  -1 answers 503.  May be NULL. */
    int (*metrics)(void *app, strbuf *out);
    void (*log_started)(void *app);
} daemon_spec;

/* Runs the daemon: connects (kubeconfig), creates the cache directory, sweeps interrupted
 * pulls, binds the daemon's servers and the health and metrics listeners, watches
 * SIGTERM/SIGINT, starts the watch transport, then campaigns for the Lease (controllers start
 * on becoming leader) or starts the controllers, and runs the loop until the shutdown has
 * stopped everything.  *started tells whether the loop ran (the daemon logs "stopped" then).
 * Returns 1 when it could not start, else 0 (the exit code is rt->exit_code); -1 when the
 * loop was left to the OS with a server still open.  `s` must outlive the call. */
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

/* ------------------------------------------------------------ the ordered shutdown */

/* The stages of a shutdown, in this order.  Everything in a stage is stopped at once, and the
 * next stage begins when the last of them has said so. */
typedef enum daemon_stage {
    DAEMON_STAGE_DRAIN, /* threadpool work that uses the reconcilers: work queues (running reconciles), GC */
    DAEMON_STAGE_WATCH, /* informers and watches on the transport, which closes after the last */
    DAEMON_STAGE_SERVE, /* servers, last: probes and clients are answered until the end */
} daemon_stage;

/* The runtime stops `obj` at shutdown, in `stage`, in the order owned: stop(obj, stopped,
 * part) must call stopped(part) on the loop once obj has stopped (or at once).  When slot is
 * not NULL it is the address of the daemon's own pointer to obj (a `T **`), set to NULL
 * then, so that nothing reaches a stopped part.  Parts are owned at start or on becoming
 * leader; more than DAEMON_PARTS_MAX, or one owned once the shutdown has begun, is a
 * programming error that aborts. */
void daemon_runtime_own(daemon_runtime *rt, daemon_stage stage, void *obj, void *slot,
                       void (*stop)(void *obj, void (*stopped)(void *part), void *part));
/* The common parts: a work queue (drained: running reconciles end; its metrics carry
 * controller="<metrics_name>"), an informer (its sync counts in the default readiness), an
 * HTTP server (open connections get a grace period; a NULL *slot is none), a loop handle
 * (closed when the shutdown begins, e.g. a timer). */
void daemon_runtime_own_workqueue(daemon_runtime *rt, kube_workqueue **slot, const char *metrics_name);
void daemon_runtime_own_informer(daemon_runtime *rt, kube_informer **slot);
void daemon_runtime_own_server(daemon_runtime *rt, olm_http_server **slot);
void daemon_runtime_own_handle(daemon_runtime *rt, uv_handle_t *handle);
/* A part's stop is over (the `stopped` its stop was given). */
void daemon_part_stopped(void *part);

/* Begins the ordered shutdown, once (later calls do nothing): signals and owned handles
 * closed; the drain stage; spec->after_drain; the watch stage, the pull-secret watch and the
 * election (which releases the Lease); the serve stage; the metrics filter.  The loop ends
 * when all of it has closed.  exit_code goes to rt->exit_code. */
void daemon_runtime_shutdown(daemon_runtime *rt, int exit_code);

/* The Lease was lost while leading: exit 1 at once, without the ordered shutdown, as
 * controller-runtime does (no graceful timeout then).  Waiting for the running reconciles would
 * let one of them write after a successor has taken over (a slow pull can outlast the margin
 * between this replica's renew deadline and the Lease's expiry); a fresh start campaigns again. */
void daemon_runtime_lost_lease(daemon_runtime *rt) __attribute__((noreturn));

/* Stops the serve stage alone: a start that fails before the loop runs. */
void daemon_runtime_stop_servers(daemon_runtime *rt);

/* SIGTERM or SIGINT: with spec->unready_before_stop_ms, /readyz turns 503 ("shutting down")
 * and the shutdown (exit 0) follows that long after; else, or on a second signal, at once. */
void daemon_runtime_terminate(daemon_runtime *rt);

/* Whether an owned server is still open (after the loop: then it is left to the OS). */
bool daemon_runtime_servers_open(const daemon_runtime *rt);

/* The listeners' answers (daemon_answers.c): /readyz as the spec says, and /metrics, the
 * daemon's series then the shared ones.  Exposed for the tests. */
bool daemon_runtime_ready(daemon_runtime *rt, strbuf *why);
int daemon_runtime_metrics(daemon_runtime *rt, strbuf *out);
/* The same as the listeners' handlers (data: the runtime). */
int daemon_runtime_health_answer(const char *path, strbuf *body, void *data);
int daemon_runtime_metrics_answer(strbuf *body, void *data);

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
