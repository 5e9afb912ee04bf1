/* operator-controller: the ClusterExtension controller on one libuv loop.
 *
 *   loop thread:  the ClusterExtension and ClusterCatalog informers (watches over
 *                 kube_uvcurl), the work queue's bookkeeping, the Lease election, the
 *                 health and metrics listeners (h2o, olm_http_listeners.h), signals.
 *   threadpool:   reconciles (clusterextension_reconcile: REST calls, catalog fetches, bundle pulls,
 *                 render, apply) and nothing else.
 *
 * Triggers: ClusterExtension create/delete and updates that change the generation,
 * deletionTimestamp or finalizers (our own status writes do not retrigger); ClusterCatalog
 * create/delete and resolvedSource changes requeue every ClusterExtension (§2.1).
 * Drift: after a successful reconcile the drift watcher (drift.h)
 * watches the installed objects' kinds with the extension's ServiceAccount token; a
 * deletion or change enqueues the key and the reconcile re-applies the recorded objects
 * (applier_repair).  As a backstop (kinds the ServiceAccount may not watch, changes
 * while a watch is re-created) the key is also requeued after --drift-repair-interval.
 * ServiceAccount tokens are cached between reconciles (clusterextension.h).
 *
 * With --leader-elect the informers and the queue run only while the Lease is held;
 * losing it exits 1 so a fresh start campaigns again (as controller-runtime does).
 *
 * Start-up: the command line (exit 2), then the files it names (TLS pair, CA directories)
 * and the listeners (--health-probe-bind-address, --metrics-bind-address), each failure one
 * line and exit 1 before the loop runs, so nothing is left half-started. */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "catalog.h"
#include "clusterextension.h"
#include "crdsafety.h"
#include "daemon_runtime.h"
#include "kube_informer.h"
#include "kube_object.h"
#include "kube_workqueue.h"
#include "daemon_listeners.h"
#include "oci_pull.h"
#include "operator_flags.h"
#include "strbuf.h"
#include "upgradeable_reconciler.h"
#include "olm_log.h"
#include "olm_malloc_tune.h"
#include "olm_metrics.h"
#include "olm_process_metrics.h"
#include "olm_fs.h"

#define LEASE_NAME "9c4404e7.operatorframework.io"
#define CE_PATH "/apis/olm.operatorframework.io/v1/clusterextensions"
#define CC_PATH "/apis/olm.operatorframework.io/v1/clustercatalogs"

typedef struct app {
    operator_flags f;
    daemon_runtime rt; /* client, loop, transport, listeners, signals, Lease */
    kube_informer *clusterextension_inf, *clustercatalog_inf;
    kube_workqueue *wq;
    catalog_client *cc;
    clusterextension_reconciler *rec;
    clusterextension_token_cache *tokens;
    drift_watcher *drift;
    olm_ca_set *catalogd_cas, *pull_cas; /* --catalogd-cas-dir (+ --catalogd-ca-file), --pull-cas-dir */
    const char *system_ns;               /* --system-namespace, or the pod's, or olmv1-system */
    upgradeable_reconciler *upg; /* NULL when not OpenShift */
    uv_timer_t trim; /* gives freed heap back to the OS now and then */
    int exit_code;
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

/* ------------------------------------------------------------ events → queue */

static void enqueue_key(app *a, const char *key)
{
    olm_error err;
    if (a->wq && !a->rt.stopping && kube_workqueue_add(a->wq, key, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", key, "could not queue: %s", err.msg);
}

static void enqueue_obj(app *a, const json_t *obj)
{
    char *key = kube_object_key(obj);
    if (key)
        enqueue_key(a, key);
    free(key);
}

static void enqueue_all(app *a)
{
    if (!a->clusterextension_inf)
        return;
    json_t *all = kube_informer_list(a->clusterextension_inf);
    size_t i;
    json_t *o;
    json_array_foreach(all, i, o) enqueue_obj(a, o);
    json_decref(all);
}

static void clusterextension_add(json_t *obj, void *data)
{
    enqueue_obj(data, obj);
}

static void clusterextension_update(json_t *old_obj, json_t *new_obj, void *data)
{
    if (clusterextension_update_needs_reconcile(old_obj, new_obj))
        enqueue_obj(data, new_obj);
}

static void clusterextension_delete(json_t *obj, void *data)
{
    enqueue_obj(data, obj);
}

static void clustercatalog_add(json_t *obj, void *data)
{
    enqueue_all(data);
}

static void clustercatalog_update(json_t *old_obj, json_t *new_obj, void *data)
{
    if (catalog_resolution_inputs_changed(old_obj, new_obj))
        enqueue_all(data);
}

static void clustercatalog_delete(json_t *obj, void *data)
{
    app *a = data;
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    if (name && a->cc)
        catalog_client_forget(a->cc, name);
    enqueue_all(a);
}

static void on_watch_error(const char *msg, void *data)
{
    logf_(OLM_LOG_ERROR, "watch: %s", msg);
}

static void on_ce_synced(void *data)
{
    app *a = data;
    logf_(OLM_LOG_INFO, "ClusterExtension cache synced (%zu)", kube_informer_count(a->clusterextension_inf));
}

static void on_cc_synced(void *data)
{
    app *a = data;
    /* Resolutions that ran before the catalogs were known saw none: run them again. */
    enqueue_all(a);
}

/* ------------------------------------------------------------ health and metrics */


/* The names upstream's dashboards and alerts use: controller-runtime's controller and
 * workqueue metrics, client-go's rest_client_requests_total, leader election, the process. */
static void write_upstream_metrics(app *a, const clusterextension_metrics_sources *src, strbuf *b)
{
    if (a->wq)
        kube_workqueue_render_metrics(a->wq, "clusterextension", b);
    if (a->rt.rest_metrics)
        kube_request_metrics_render(a->rt.rest_metrics, b);
    if (a->f.leader_elect) {
        olm_metrics_header(b, "leader_election_master_status",
                           "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
                           "indicates master. 'name' is the string used to identify the lease.",
                           "gauge");
        olm_metrics_sample(b, "leader_election_master_status", "name", LEASE_NAME,
                           a->rt.leader && kube_leader_is_leader(a->rt.leader) ? 1 : 0);
    }
    clusterextension_info_metrics_render(src, b);
    olm_process_metrics_render(b);
    olm_build_info_render(b, "operator_controller");
}

/* What the ClusterExtension controller's metrics read, from the parts this process runs. */
static clusterextension_metrics_sources metrics_sources(app *a, json_t *extensions)
{
    return (clusterextension_metrics_sources){
        .extensions = extensions,
        .rec = a->rec,
        .catalog_cache_entries = a->cc ? catalog_client_cached(a->cc) : 0,
        .queue_depth = a->wq ? kube_workqueue_len(a->wq) : 0,
        .drift_watches = a->drift ? drift_watcher_active(a->drift) : 0,
        .drift_extensions = a->drift ? drift_watcher_extensions(a->drift) : 0,
        .tokens_requested = a->tokens ? (unsigned long long)clusterextension_token_cache_mints(a->tokens) : 0ULL,
    };
}

static void write_metrics(app *a, strbuf *b)
{
    json_t *all = a->clusterextension_inf ? kube_informer_list(a->clusterextension_inf) : NULL;
    clusterextension_metrics_sources src = metrics_sources(a, all);
    clusterextension_metrics_render(&src, b);
    write_upstream_metrics(a, &src, b);
    json_decref(all);
}

/* /healthz and /readyz of the health listener. */
static int on_health(const char *path, strbuf *body, void *data)
{
    app *a = data;
    if (strcmp(path, "/healthz") == 0) {
        strbuf_puts(body, "ok\n");
        return 200;
    }
    /* Ready once this replica reconciles with full caches, or stands by as a non-leader (it
     * cannot do more until it leads). */
    bool ready = a->f.leader_elect && !a->rt.controllers_started;
    if (a->rt.controllers_started)
        ready = kube_informer_has_synced(a->clusterextension_inf) && kube_informer_has_synced(a->clustercatalog_inf);
    strbuf_puts(body, ready ? "ok\n" : "informers not synced\n");
    return ready ? 200 : 503;
}

/* /metrics, on the metrics listener (behind its filter) or else on the health listener. */
static int on_metrics(strbuf *body, void *data)
{
    write_metrics(data, body);
    return 0;
}

/* ------------------------------------------------------------ controllers */

static void drift_enqueue(const char *extension, uint64_t delay_ms, void *data)
{
    app *a = data;
    olm_error err;
    if (a->wq && !a->rt.stopping && kube_workqueue_add_after(a->wq, extension, delay_ms, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", extension, "could not queue: %s", err.msg);
}

static void drift_token_rejected(const char *ns, const char *sa, const char *token, void *data)
{
    app *a = data;
    if (a->tokens)
        clusterextension_token_cache_invalidate(a->tokens, ns, sa, token);
}

static void drift_log(const char *extension, const char *line, void *data)
{
    olm_log(OLM_LOG_WARN, "clusterExtension", extension, "%s", line);
}

/* ------------------------------------------------------------ the global pull secret */

static void pull_secret_loaded(void *data)
{
    enqueue_all(data); /* an extension that failed for want of credentials retries now */
}

static int start_controllers(void *data, olm_error *err)
{
    app *a = data;
    const kube_config *cfg = kube_client_config(a->rt.client);
    /* Nothing reads managedFields from these caches. */
    kube_watch_options cco = {.path = CC_PATH, .drop_managed_fields = true};
    kube_informer_handlers cch = {clustercatalog_add, clustercatalog_update, clustercatalog_delete, on_cc_synced, on_watch_error};
    a->clustercatalog_inf = kube_informer_new(a->rt.uc, cfg, &cco, &cch, a, err);
    kube_watch_options ceo = {.path = CE_PATH, .drop_managed_fields = true, .transform = clusterextension_cache_form};
    kube_informer_handlers ceh = {clusterextension_add, clusterextension_update, clusterextension_delete, on_ce_synced, on_watch_error};
    a->clusterextension_inf = a->clustercatalog_inf ? kube_informer_new(a->rt.uc, cfg, &ceo, &ceh, a, err) : NULL;
    if (!a->clusterextension_inf)
        return -1;
    catalog_client_options co = {.cas = a->catalogd_cas, .tls = &a->f.common.tls};
    a->cc = catalog_client_new(&co, err);
    if (!a->cc)
        return -1;
    if (daemon_runtime_watch_pull_secret(&a->rt, a->f.common.global_pull_secret, pull_secret_loaded, a, err) != 0)
        return -1;
    const char *insecure = a->f.insecure_registries ? a->f.insecure_registries : getenv("OLMV1_INSECURE_REGISTRIES");
    const char *auth = a->f.authfile ? a->f.authfile : getenv("REGISTRY_AUTH_FILE");
    clusterextension_token_cache_options to = {.mint = clusterextension_token_mint_kube, .mint_data = a->rt.client};
    a->tokens = clusterextension_token_cache_new(&to, err);
    if (!a->tokens)
        return -1;
    drift_backend be = drift_backend_kube(a->rt.uc);
    drift_callbacks dcb = {drift_enqueue, drift_token_rejected, drift_log, a};
    a->drift = drift_watcher_new(a->rt.loop, cfg, &be, &dcb, NULL, err);
    if (!a->drift)
        return -1;
    clusterextension_reconciler_config rc = {
        .admin = a->rt.client,
        .catalogs = a->clustercatalog_inf,
        .catalog_client = a->cc,
        .system_namespace = a->system_ns,
        .cache_dir = a->f.cache_path,
        .pull = {.registry = {.insecure_hosts = insecure, .auth_file = auth, .extra_cas = a->pull_cas,
                              .auth_store = a->rt.pull_secret, .registries_follow = a->rt.registries,
                              .timeout_seconds = 900, .deadline_seconds = (long)(a->f.pull_timeout_ms / 1000)}},
        .repair_interval_ms = a->f.repair_interval_ms,
        .deadline_minute_ms = (uint64_t)a->f.deadline_minute_s * 1000u,
        .cert_mode = a->f.cert_mode,
        .no_watch_namespace = !a->f.gate_single_own_namespace,
        .no_deployment_config = !a->f.gate_deployment_config,
        .ignore_service_account = a->f.ignore_service_account,
        .tokens = a->tokens,
        .drift = a->drift,
        .crd_check = crdsafety_check,
    };
    a->rec = clusterextension_reconciler_new(&rc, err);
    if (!a->rec)
        return -1;
    kube_workqueue_options qo = {.concurrency = a->f.concurrency};
    a->wq = kube_workqueue_new(a->rt.loop, &qo, clusterextension_reconcile, a->rec, err);
    if (!a->wq)
        return -1;
    if (kube_informer_start(a->clustercatalog_inf, err) != 0 || kube_informer_start(a->clusterextension_inf, err) != 0)
        return -1;
    /* OpenShift upgrade blocking: off unless config.openshift.io/v1 is served; a failure
     * to start it is logged, it must not take the ClusterExtension controller down. */
    upgradeable_reconcile_opts uo = {.system_namespace = a->system_ns};
    olm_error uerr;
    if (upgradeable_reconciler_start(a->rt.loop, a->rt.client, &uo, &a->upg, &uerr) < 0)
        logf_(OLM_LOG_ERROR, "OpenShift upgradeable check not started: %s", uerr.msg);
    return 0;
}

/* ------------------------------------------------------------ shutdown */

static void clusterextension_inf_closed(void *data)
{
    ((app *)data)->clusterextension_inf = NULL;
    daemon_runtime_closing_done(&((app *)data)->rt);
}

static void clustercatalog_inf_closed(void *data)
{
    ((app *)data)->clustercatalog_inf = NULL;
    daemon_runtime_closing_done(&((app *)data)->rt);
}

static void upgradeable_closed(void *data)
{
    ((app *)data)->upg = NULL;
    daemon_runtime_closing_done(&((app *)data)->rt);
}

static void drift_closed(void *data)
{
    ((app *)data)->drift = NULL;
    daemon_runtime_closing_done(&((app *)data)->rt);
}

/* Connections still open get this long; probes and scrapers send one request a connection. */
#define LISTENER_GRACE_MS 5000

static void stop_listeners(app *a)
{
    olm_http_listeners_stop(&a->rt.listeners, LISTENER_GRACE_MS);
}

/* Phase 2, once no reconcile runs: stop the watches, the election and the responder. */
static void shutdown_phase2(app *a)
{
    clusterextension_reconciler_free(a->rec);
    a->rec = NULL;
    daemon_runtime_closing_begin(&a->rt); /* held until every stop was issued */
    if (a->clusterextension_inf) {
        daemon_runtime_closing_add(&a->rt);
        kube_informer_stop(a->clusterextension_inf, clusterextension_inf_closed, a);
    }
    if (a->clustercatalog_inf) {
        daemon_runtime_closing_add(&a->rt);
        kube_informer_stop(a->clustercatalog_inf, clustercatalog_inf_closed, a);
    }
    daemon_runtime_stop_watches(&a->rt); /* the pull-secret watch; the election releases the Lease */
    if (a->upg) {
        daemon_runtime_closing_add(&a->rt);
        upgradeable_reconciler_stop(a->upg, upgradeable_closed, a);
    }
    if (a->drift) {
        daemon_runtime_closing_add(&a->rt);
        drift_watcher_stop(a->drift, drift_closed, a);
    }
    stop_listeners(a); /* /metrics answers 503 from now on; reviews still running end with 503 */
    kube_authz_free(a->rt.authz);
    a->rt.authz = NULL;
    daemon_runtime_closing_done(&a->rt);
}

static void wq_done(void *data)
{
    app *a = data;
    a->wq = NULL;
    shutdown_phase2(a);
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
    if (a->wq && kube_workqueue_len(a->wq) == 0 && kube_workqueue_running(a->wq) == 0 && a->rt.client)
        kube_client_close_idle(a->rt.client);
    malloc_trim(0);
}

static void begin_shutdown(void *data, int exit_code)
{
    app *a = data;
    if (a->rt.stopping)
        return;
    a->rt.stopping = true;
    a->exit_code = exit_code;
    daemon_runtime_close_signals(&a->rt);
    uv_close((uv_handle_t *)&a->trim, NULL);
    if (a->wq)
        kube_workqueue_shutdown(a->wq, false, wq_done, a); /* waits for running reconciles */
    else
        shutdown_phase2(a);
}

/* ------------------------------------------------------------ main */

/* Binds every listener before anything else runs, so that a port in use is one line and
 * exit 1 with nothing started; on failure the listeners already up are closed again. */
static int start_listeners(void *data, char *msg, size_t msgsz)
{
    app *a = data;
    olm_http_listeners_opts o = {.flags = &a->f.common, .log_key = "clusterExtension", .health = on_health,
                                 .metrics = on_metrics, .arg = a};
    if (olm_http_listeners_start(a->rt.loop, &o, &a->rt.listeners, msg, msgsz) == 0)
        return 0;
    uv_run(a->rt.loop, UV_RUN_DEFAULT); /* lets the listeners close */
    return -1;
}

static void before_start(void *data)
{
    app *a = data;
    uv_timer_init(a->rt.loop, &a->trim);
    a->trim.data = a;
    uv_timer_start(&a->trim, on_trim, TRIM_INTERVAL_MS, TRIM_INTERVAL_MS);
    uv_unref((uv_handle_t *)&a->trim); /* never what keeps the loop alive */
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

static bool listeners_open(void *data)
{
    app *a = data;
    return a->rt.listeners.health || a->rt.listeners.metrics;
}

/* Returns the exit code; *started tells whether the loop ran (main logs "stopped" then). */
static int run(app *a, bool *started)
{
    daemon_spec spec = {
        .rt = &a->rt, .app = a, .kubeconfig = a->f.kubeconfig, .cache_flag = "--cache-path",
        .cache_dir = a->f.cache_path, .pull_cache = "bundles", .leader_elect = a->f.leader_elect,
        .lease_namespace = a->system_ns, .lease_name = LEASE_NAME, .start_listeners = start_listeners,
        .before_start = before_start, .start_controllers = start_controllers, .begin_shutdown = begin_shutdown,
        .log_started = log_started, .listeners_open = listeners_open};
    int rc = daemon_runtime_run(&a->rt, &spec, started);
    return rc == 1 ? 1 : a->exit_code;
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
    /* Reconciles block on HTTP and pulls; give them room before the pool first starts. */
    setenv("UV_THREADPOOL_SIZE", "8", 0);
    /* glibc gives each thread that allocates its own arena (up to 8 per core): the
     * pool's reconciles would spread a burst's garbage over eight heaps that each keep
     * their high-water mark.  Two arenas serve four concurrent reconciles and the loop
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
    catalog_client_free(a.cc);
    clusterextension_token_cache_free(a.tokens);
    daemon_runtime_free(&a.rt);
    free_cas(&a);
    curl_global_cleanup();
    if (started)
        logf_(OLM_LOG_INFO, "stopped (exit %d)", rc);
    return rc;
}
