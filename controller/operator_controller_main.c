/* operator-controller: the ClusterExtension controller on one libuv loop.
 *
 *   loop thread:  the ClusterExtension and ClusterCatalog informers (watches over
 *                 kube_uvcurl), the work queue's bookkeeping, the Lease election, the
 *                 health and metrics listeners (h2o), signals.
 *   threadpool:   reconciles (clusterextension_reconcile: REST calls, catalog fetches, bundle pulls,
 *                 render, apply) and nothing else.
 *
 * This file lists what operator-controller runs and with which flags: the ClusterExtension
 * controller (its triggers, caches, drift watcher and metrics are set up beside its
 * reconciler, clusterextension_controller.h) and, on OpenShift, the upgrade check
 * (upgradeable_reconciler.h).  The daemon runtime (daemon_runtime.h) starts them in order,
 * answers /healthz, /readyz and /metrics, holds the Lease and stops everything stage by stage.
 *
 * With --leader-elect the controllers run only while the Lease is held; losing it exits 1 so
 * a fresh start campaigns again (as controller-runtime does).
 *
 * Start-up: the command line (exit 2), then the files it names (TLS pair, CA directories)
 * and the listeners (--health-probe-bind-address, --metrics-bind-address), each failure one
 * line and exit 1 before the loop runs, so nothing is left half-started. */
#include <malloc.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <curl/curl.h>

#include "clusterextension_controller.h"
#include "crdsafety.h"
#include "objectset.h"
#include "daemon_runtime.h"
#include "oci_pull.h"
#include "operator_flags.h"
#include "upgradeable_reconciler.h"
#include "olm_log.h"
#include "olm_malloc_tune.h"
#include "olm_fs.h"

#define LEASE_NAME "9c4404e7.operatorframework.io"

typedef struct app {
    operator_flags f;
    daemon_runtime rt; /* client, loop, transport, listeners, signals, Lease */
    clusterextension_controller ce; /* informers, work queue, reconciler, drift, tokens */
    objectset_controller cos;       /* ClusterObjectSets: only with --feature-gates=BoxcutterRuntime=true */
    olm_ca_set *catalogd_cas, *pull_cas; /* --catalogd-cas-dir (+ --catalogd-ca-file), --pull-cas-dir */
    const char *system_ns;               /* --system-namespace, or the pod's, or olmv1-system */
    upgradeable_reconciler *upg; /* NULL when not OpenShift */
    uv_timer_t trim; /* gives freed heap back to the OS now and then */
} app;

/* Process-wide events; lines about one extension use olm_log with its name. */
static void logf_(olm_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(olm_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    olm_vlog(level, "clusterExtension", NULL, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ controllers */

/* The ClusterExtension controller's series; the runtime adds the shared ones. */
static int write_metrics(void *data, strbuf *out)
{
    return clusterextension_controller_metrics(&((app *)data)->ce, out);
}

static void stop_upgradeable(void *obj, void (*stopped)(void *part), void *part)
{
    upgradeable_reconciler_stop(obj, stopped, part);
}

/* BoxcutterRuntime: the ClusterObjectSet controller acts as the extension's ServiceAccount
 * with the ClusterExtension controller's cached tokens (objectset_token_source), one
 * TokenRequest per ServiceAccount and lifetime instead of one per ClusterObjectSet pass. */
static int cos_token_get(void *data, const char *ns, const char *sa, char **token, olm_error *err)
{
    clusterextension_token t = {0};
    if (clusterextension_token_cache_get(data, ns, sa, &t, err) != 0)
        return -1;
    *token = t.value; /* handed over; the caller zeroes and frees it */
    return 0;
}

static void cos_token_rejected(void *data, const char *ns, const char *sa, const char *token)
{
    clusterextension_token_cache_invalidate(data, ns, sa, token);
}

/* The controllers this daemon runs: ClusterExtensions, and on OpenShift the upgrade check. */
static int start_controllers(void *data, olm_error *err)
{
    app *a = data;
    const char *insecure = a->f.insecure_registries ? a->f.insecure_registries : getenv("OLMV1_INSECURE_REGISTRIES");
    const char *auth = a->f.authfile ? a->f.authfile : getenv("REGISTRY_AUTH_FILE");
    clusterextension_controller_config cfg = {
        .reconciler = {
            .system_namespace = a->system_ns,
            .cache_dir = a->f.cache_path,
            .pull = {.registry = {.insecure_hosts = insecure, .auth_file = auth, .extra_cas = a->pull_cas,
                                  .registries_follow = a->rt.registries, /* auth_store: the controller's */
                                  .timeout_seconds = 900,
                                  .deadline_seconds = (long)(a->f.pull_timeout_ms / 1000)},
                     /* a bundle's metadata is in its layers: no config (labels) GET */
                     .skip_config = 1},
            .repair_interval_ms = a->f.repair_interval_ms,
            .deadline_minute_ms = (uint64_t)a->f.deadline_minute_s * 1000u,
            .cert_mode = a->f.cert_mode,
            .no_watch_namespace = !a->f.gate_single_own_namespace,
            .no_deployment_config = !a->f.gate_deployment_config,
            .ignore_service_account = a->f.ignore_service_account,
            .no_available_condition = !a->f.available_condition,
            .boxcutter = a->f.gate_boxcutter,
            .crd_check = crdsafety_check,
        },
        .catalog_client = {.cas = a->catalogd_cas, .tls = &a->f.common.tls},
        .concurrency = a->f.concurrency,
        .global_pull_secret = a->f.common.global_pull_secret,
        .identity_mode = a->f.identity_mode,
    };
    if (clusterextension_controller_start(&a->ce, &a->rt, &cfg, err) != 0)
        return -1;
    /* BoxcutterRuntime: the ClusterObjectSet controller (objectset.h). */
    if (a->f.gate_boxcutter) {
        objectset_controller_config oc = {.concurrency = a->f.concurrency,
                                          .minute_ms = (uint64_t)a->f.deadline_minute_s * 1000u,
                                          .watched_resync_ms = a->f.repair_interval_ms};
        if (a->ce.tokens)
            oc.tokens = (objectset_token_source){cos_token_get, cos_token_rejected, a->ce.tokens};
        if (objectset_controller_start(&a->cos, &a->rt, &oc, err) != 0)
            return -1;
    }
    /* OpenShift upgrade blocking: off unless config.openshift.io/v1 is served; a failure
     * to start it is logged, it must not take the ClusterExtension controller down. */
    upgradeable_reconcile_opts uo = {.system_namespace = a->system_ns, .revisions = a->f.gate_boxcutter};
    olm_error uerr;
    if (upgradeable_reconciler_start(a->rt.loop, a->rt.client, &uo, &a->upg, &uerr) < 0)
        logf_(OLM_LOG_ERROR, "OpenShift upgradeable check not started: %s", uerr.msg);
    else if (a->upg)
        daemon_runtime_own(&a->rt, DAEMON_STAGE_WATCH, a->upg, &a->upg, stop_upgradeable);
    return 0;
}

/* ------------------------------------------------------------ shutdown */

/* Once no reconcile runs: the reconciler goes before the watches it reads. */
static void after_drain(void *data)
{
    clusterextension_controller_after_drain(&((app *)data)->ce);
    objectset_controller_after_drain(&((app *)data)->cos);
}

/* Reconciles run on up to 8 pool threads, each with its own malloc arena; after a burst
 * (hundreds of installs or uninstalls) the freed memory stays in those arenas, and RSS
 * looked like a leak (15 MB idle, 86 MB after 200 installs were uninstalled again). */
#define TRIM_INTERVAL_MS 10000

static void on_trim(uv_timer_t *t)
{
    app *a = t->data;
    /* Idle after a burst: the pooled keep-alive connections (up to 8 per pool, ~100 KiB of
     * TLS state and buffers each) go too; the next reconcile connects again. */
    if (clusterextension_controller_idle(&a->ce)) {
        if (a->rt.client)
            kube_client_close_idle(a->rt.client);
        catalog_client_close_idle(a->ce.cc); /* the keep-alive connections to catalogd too */
    }
    malloc_trim(0);
}

/* ------------------------------------------------------------ main */

static void before_start(void *data)
{
    app *a = data;
    uv_timer_init(a->rt.loop, &a->trim);
    a->trim.data = a;
    uv_timer_start(&a->trim, on_trim, TRIM_INTERVAL_MS, TRIM_INTERVAL_MS);
    uv_unref((uv_handle_t *)&a->trim); /* never what keeps the loop alive */
    daemon_runtime_own_handle(&a->rt, (uv_handle_t *)&a->trim);
}

static void log_started(void *data)
{
    app *a = data;
    const olm_daemon_flags *c = &a->f.common;
    logf_(OLM_LOG_INFO,
          "running: system namespace %s, cache %s, health %s, metrics %s%s, %u concurrent reconciles, drift repair "
          "every %llu ms",
          a->system_ns, a->f.cache_path, a->rt.listeners.health ? c->health_addr : "off",
          a->rt.listeners.metrics ? c->metrics_addr : "off", a->rt.listeners.metrics && c->tls_cert ? " (https)" : "", a->f.concurrency, (unsigned long long)a->f.repair_interval_ms);
    if (a->rt.listeners.metrics && c->tls_cert)
        logf_(OLM_LOG_INFO, "TLS profile %s%s%s", c->tls.name,
              *c->tls.skipped ? "; curves this OpenSSL lacks, not offered: " : "", c->tls.skipped);
    if (oci_registries_follow_count(a->rt.registries))
        logf_(OLM_LOG_INFO, "registries configuration %s(.d): %zu [[registry]] entries",
              c->registries_conf ? c->registries_conf : OCI_REGISTRIES_CONF_DEFAULT, oci_registries_follow_count(a->rt.registries));
}

/* Returns the exit code; *started tells whether the loop ran (main logs "stopped" then). */
static int run(app *a, bool *started)
{
    daemon_spec spec = {
        .rt = &a->rt, .app = a, .kubeconfig = a->f.kubeconfig, .cache_flag = "--cache-path",
        .cache_dir = a->f.cache_path, .pull_cache = "bundles", .leader_elect = a->f.leader_elect,
        .lease_namespace = a->system_ns, .lease_name = LEASE_NAME, .metrics_name = "operator_controller",
        .before_start = before_start, .start_controllers = start_controllers, .after_drain = after_drain,
        .metrics = write_metrics, .log_started = log_started};
    int rc = daemon_runtime_run(&a->rt, &spec, started);
    return rc == 1 ? 1 : a->rt.exit_code;
}

/* The files operator-controller's own flags name, read before anything starts (the shared
 * ones are daemon_runtime_preflight's): --catalogd-cas-dir and --catalogd-ca-file.  0, or -1
 * with a one-line msg. */
static int preflight(app *a, char *msg, size_t msgsz)
{
    if (a->f.catalogd_cas_dir &&
        olm_daemon_load_cas("--catalogd-cas-dir", a->f.catalogd_cas_dir, true, &a->catalogd_cas, msg, msgsz) != 0)
        return -1;
    if (a->f.catalogd_ca_file &&
        olm_daemon_load_cas("--catalogd-ca-file", a->f.catalogd_ca_file, false, &a->catalogd_cas, msg, msgsz) != 0)
        return -1;
    return 0;
}

/* One WARN line, for operator_flags_unbuilt_gates. */
static void warn_line(const char *line, void *data)
{
    (void)data;
    olm_log(OLM_LOG_WARN, NULL, NULL, "%s", line);
}

static int parse_flags(int argc, char **argv, void *flags, char *msg, size_t msgsz)
{
    return operator_flags_parse(argc, argv, flags, msg, msgsz);
}

/* Everything before the loop that needs no API server: the command line (exit 2 with one
 * line), `version`, --help, --version, --check-flags (exit 0), then preflight() (exit 1 with
 * one line).  Returns -1 to go on. */
static int prepare(app *a, int argc, char **argv)
{
    int rc = olm_daemon_command_line("operator-controller", argc, argv, parse_flags, &a->f, &a->f.common);
    if (rc >= 0)
        return rc;
    char msg[OLM_ERROR_MAX + 256];
    operator_flags_unbuilt_gates(&a->f, warn_line, NULL);
    if ((rc = daemon_runtime_preflight(&a->rt, &a->f.common, &a->pull_cas)) >= 0)
        return rc;
    if (preflight(a, msg, sizeof msg) != 0) {
        fprintf(stderr, "operator-controller: %s\n", msg);
        return 1;
    }
    a->system_ns = a->rt.system_namespace;
    return -1;
}

static void free_cas(app *a)
{
    olm_ca_set_free(a->catalogd_cas);
    olm_ca_set_free(a->pull_cas);
    oci_registries_follow_free(a->rt.registries); /* before the runtime is (prepare's exits) */
    a->rt.registries = NULL;
}

int main(int argc, char **argv)
{
    /* Start again (same PID, a few ms) with glibc's per-thread malloc cache off: after a burst
     * of reconciles the blocks cached in the pool threads pin heap pages malloc_trim cannot
     * give back (olm_malloc_tune.h; 100 installs + uninstalls: idle RSS after 23.4 -> 18.8
     * MiB).  GLIBC_TUNABLES naming tcache_count in the environment opts out. */
    olm_malloc_reexec_tcache_off(argv);
    /* Fixed mmap and trim thresholds (olm_malloc_tune.h): the second arena's freed top kept
     * ~520 KiB after 100 extensions were installed and uninstalled, once glibc had raised
     * its trim threshold past a freed 260 KiB block; now it gives back all but 128 KiB. */
    olm_malloc_fixed_thresholds();
    /* A peer that hangs up (a health probe, catalogd, the apiserver) is an EPIPE on that
     * connection, never a silent SIGPIPE death of the process. */
    signal(SIGPIPE, SIG_IGN);
    app a = {.rt = {.prog = "operator-controller", .log_key = "clusterExtension"}};
    int prc = prepare(&a, argc, argv);
    if (prc >= 0) {
        free_cas(&a);
        return prc;
    }
    /* Reconciles block on HTTP and pulls; give them room before the pool first starts: a
     * thread for each concurrent reconcile (they wait on the apiserver far more than they use
     * a CPU) and two for the rest of the pool's work (the OpenShift upgradeable check). */
    char pool[16];
    snprintf(pool, sizeof pool, "%u", a.f.concurrency + 2 > 8 ? a.f.concurrency + 2 : 8);
    setenv("UV_THREADPOOL_SIZE", pool, 0);
    /* glibc gives each thread that allocates its own arena (up to 8 per core): the
     * pool's reconciles would spread a burst's garbage over eight heaps that each keep
     * their high-water mark.  Two arenas serve the concurrent reconciles and the loop
     * (MALLOC_ARENA_MAX in the environment still wins: glibc reads it at start-up). */
    if (!getenv("MALLOC_ARENA_MAX"))
        mallopt(M_ARENA_MAX, 2);
    /* libcurl's global state must be set up before any thread may use it. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        fprintf(stderr, "operator-controller: curl_global_init failed\n");
        free_cas(&a);
        return 1;
    }
    bool started = false;
    int rc = run(&a, &started);
    clusterextension_controller_free(&a.ce);
    daemon_runtime_free(&a.rt);
    free_cas(&a);
    oci_handle_pool_drain(); /* the pulls' idle connections */
    curl_global_cleanup();
    if (started)
        logf_(OLM_LOG_INFO, "stopped (exit %d)", rc);
    return rc;
}
