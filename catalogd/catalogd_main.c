/* catalogd: the ClusterCatalog controller and catalog server on one libuv loop.
 *
 *   loop thread:  h2o catalog server (+ optional health, metrics and webhook listeners), the
 *                 ClusterCatalog informer (watch over kube_uvcurl), the work queue's
 *                 bookkeeping, the Lease election, the GC timer, signals, and the publish
 *                 queue (below).
 *   threadpool:   reconciles (clustercatalog_reconcile: REST calls, pull, load, validate, store) and GC.
 *
 * This file lists what catalogd runs and with which flags; the daemon runtime
 * (daemon_runtime.h) starts it in order, answers the health and metrics listeners and stops
 * everything stage by stage; the controller's setup sits beside its reconciler
 * (clustercatalog_controller.h).
 *
 * Reconciles never touch the server: they hand "serve this view / drop this catalog /
 * record this unpack" to the publisher (catalog_publish.h), which queues them under a mutex
 * and wakes the loop; the loop thread applies them to the server.
 *
 * At start every store already in <cache-dir>/catalogs is opened and served before the
 * loop runs, so a restarted catalogd serves at once, before its first reconcile (and even
 * when the API server is unreachable).  With --leader-elect the controller (informer, work
 * queue, GC) runs only while the Lease catalogd-operator-lock is held; the server runs on
 * every replica.  Losing the Lease stops the process (exit 1) so a fresh start campaigns
 * again, as controller-runtime does.
 *
 * /healthz, /readyz and /metrics are answered by the catalog server;
 * --health-probe-bind-address and --metrics-bind-address add listeners of their own (the
 * runtime's, the same as operator-controller's; /metrics there shows the catalog server's
 * series too), for probes and scrapers that must not share the catalogs' port.  Every
 * listener is bound before the loop runs, and the files the flags name are read before
 * that: a bad start is one line and exit 1 with nothing half-started. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "catalog_publish.h"
#include "catalog_server.h"
#include "catalog_webhook.h"
#include "catalogd_flags.h"
#include "catalogd_log.h"
#include "clustercatalog_controller.h"
#include "daemon_runtime.h"
#include "oci_pull.h"
#include "olm_parse.h"
#include "olm_fs.h"
#include "olm_malloc_tune.h"

#define LEASE_NAME "catalogd-operator-lock"

typedef struct app {
    catalogd_flags f;
    daemon_runtime rt; /* client, loop, transport, listeners, signals, Lease */
    char url_root[1100];
    clustercatalog_controller ctl; /* informer, work queue, reconciler, GC */
    catalog_server *srv;
    olm_http_server *webhook; /* the mutating webhook upstream's manifests register, or NULL */
    olm_ca_set *pull_cas;   /* --pull-cas-dir, or NULL */
    const char *system_ns;  /* --system-namespace, or the pod's, or olmv1-system */
    catalog_publisher pub; /* reconciles -> the server (catalog_publish.h) */
} app;

/* ------------------------------------------------------------ stored catalogs at start */

/* Serves every store present in <cache>/catalogs (temp dirs start with '.').  Before the
 * loop runs, so the blocking opens are fine. */
static void serve_stored(app *a)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/catalogs", a->f.cache_dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (!store_is_durable(a->f.cache_dir, e->d_name)) {
            /* It may be torn; its reconcile stores it again (clustercatalog_unpack). */
            catalogd_log(CATALOGD_LOG_WARN, e->d_name, "not serving the stored catalog: the previous run stopped "
                                                       "before it was all on disk");
            continue;
        }
        olm_error err;
        store_view *v = store_open(a->f.cache_dir, e->d_name, &err);
        if (!v) {
            catalogd_log(CATALOGD_LOG_WARN, e->d_name, "not serving the stored catalog: %s", err.msg);
            continue;
        }
        if (catalog_server_set_catalog(a->srv, e->d_name, v) == 0)
            catalogd_log(CATALOGD_LOG_INFO, e->d_name, "serving the stored catalog from a previous run");
        store_view_release(v);
    }
    closedir(d);
}

/* ------------------------------------------------------------ the controller */

/* On every replica: the controller, following the leader until this replica leads. */
static int start_on_every_replica(void *data, olm_error *err)
{
    app *a = data;
    const char *insecure = a->f.insecure_registries ? a->f.insecure_registries : getenv("OLMV1_INSECURE_REGISTRIES");
    const char *auth = a->f.authfile ? a->f.authfile : getenv("REGISTRY_AUTH_FILE");
    clustercatalog_controller_config cfg = {
        .reconciler = {
            .cache_dir = a->f.cache_dir,
            .url_root = a->url_root,
            .pull = {.registry = {.insecure_hosts = insecure, .auth_file = auth, .extra_cas = a->pull_cas,
                                  .registries_follow = a->rt.registries, /* auth_store: the controller's */
                                  .timeout_seconds = 900,
                                  .deadline_seconds = (long)(a->f.pull_timeout_ms / 1000)}},
            .poll_override_ms = a->f.poll_override_ms,
            .publish = catalog_publisher_publish,
            .publish_data = &a->pub,
        },
        .concurrency = a->f.concurrency,
        .gc_interval_ms = a->f.gc_interval_ms,
        .global_pull_secret = a->f.common.global_pull_secret,
    };
    return clustercatalog_controller_start(&a->ctl, &cfg, err);
}

/* This replica leads (or runs alone): it resolves and writes status. */
static int start_controllers(void *data, olm_error *err)
{
    (void)err;
    clustercatalog_controller_lead(&((app *)data)->ctl);
    return 0;
}

/* ------------------------------------------------------------ shutdown */

/* The runtime's stop signature for the catalog server. */
static void catalog_server_stopped(void *part, bool clean)
{
    (void)clean; /* not clean: the server logged it; the process exits */
    daemon_part_stopped(part);
}

#define SERVER_GRACE_MS 5000 /* open connections get this long at shutdown */

static void stop_catalog_server(void *obj, void (*stopped)(void *part), void *part)
{
    (void)stopped; /* daemon_part_stopped, through catalog_server_stopped */
    catalog_server_stop(obj, SERVER_GRACE_MS, catalog_server_stopped, part);
}

/* Once no reconcile or GC runs: nothing more is published, the reconciler goes. */
static void after_drain(void *data)
{
    app *a = data;
    catalog_publisher_close(&a->pub);
    clustercatalog_controller_after_drain(&a->ctl);
}

/* ------------------------------------------------------------ main */

/* The catalog server's own series (while it exists); the runtime adds the shared ones. */
static int catalog_server_series(void *data, strbuf *out)
{
    app *a = data;
    return a->srv ? catalog_server_render_metrics(a->srv, out) : -1;
}

/* /metrics on the catalog server's port: the same text as on the listeners. */
static int catalog_metrics_text(strbuf *out, void *data)
{
    return daemon_runtime_metrics(&((app *)data)->rt, out);
}

static bool serves(const char *name, const char **source, void *data)
{
    app *a = data;
    return a->srv && catalog_server_serves(a->srv, name, source);
}

/* /readyz, on the health listener and the catalog server alike: this replica serves the
 * current content of every Serving catalog (leader or follower), so that the Service never
 * sends a catalog request to a replica that would answer 404 or old content. */
static bool catalog_ready(void *data, strbuf *why)
{
    app *a = data;
    return clustercatalog_controller_ready(&a->ctl, serves, a, why);
}

/* The catalog server's /readyz: the runtime's answer (503 once shutting down), which asks
 * catalog_ready otherwise. */
static bool server_ready(void *data, strbuf *why)
{
    return daemon_runtime_ready(&((app *)data)->rt, why);
}

/* The webhook listener: POST of an AdmissionReview on its path; nothing else is there. */
static int webhook_get(const char *path, strbuf *body, const char **ctype, void *data)
{
    (void)path, (void)ctype, (void)data;
    strbuf_puts(body, "404 page not found\n");
    return 404;
}

static int webhook_post(const char *path, const char *in, size_t len, strbuf *body, const char **ctype, void *data)
{
    (void)data;
    if (strcmp(path, CATALOG_WEBHOOK_PATH) != 0) {
        strbuf_puts(body, "404 page not found\n");
        return 404;
    }
    char msg[512];
    if (catalog_webhook_review(in, len, body, msg, sizeof msg) < 0) {
        catalogd_log(CATALOGD_LOG_WARN, NULL, "webhook: bad admission review: %s", msg);
        strbuf_reset(body);
        strbuf_printf(body, "%s\n", msg);
        return 400;
    }
    *ctype = "application/json";
    return 200;
}

/* Upstream's webhook on --webhook-server-port, HTTPS with the serving certificate, on the host
 * of --catalogs-server-addr.  Not fatal when it cannot listen: only a cluster that registers
 * the webhook (upstream's manifests) needs it, and the reconciler sets the label anyway. */
static void start_webhook(app *a)
{
    const olm_daemon_flags *c = &a->f.common;
    if (!c->tls_cert || !c->tls_key || a->f.webhook_port == 0)
        return;
    char host[256];
    int port;
    olm_parse_listen_addr(a->f.server_addr, host, sizeof host, &port);
    olm_http_server_opts o = {.host = host, .port = (int)a->f.webhook_port, .tls_cert = c->tls_cert,
                              .tls_key = c->tls_key, .tls_profile = &c->tls, .name = "--webhook-server-port",
                              .log_key = "catalog", .text = webhook_get, .post = webhook_post,
                              .max_body = 1 << 20, .arg = a};
    olm_error err;
    if (!(a->webhook = olm_http_server_start(a->rt.loop, &o, &err)))
        catalogd_log(CATALOGD_LOG_WARN, NULL, "no ClusterCatalog webhook (--webhook-server-port %u): %s",
                     a->f.webhook_port, err.msg);
    daemon_runtime_own_server(&a->rt, &a->webhook);
}

/* The catalog server and the webhook, bound before anything else runs (daemon_spec), so
 * that a port in use is one line and exit 1 with nothing started; msg names the flag and the
 * address. */
static int start_servers(void *data, char *msg, size_t msgsz)
{
    app *a = data;
    const olm_daemon_flags *c = &a->f.common;
    char host[256];
    int port;
    olm_parse_listen_addr(a->f.server_addr, host, sizeof host, &port); /* checked by the flag parser */
    /* With --metrics-bind-address, /metrics is served there only, behind its filter. */
    catalog_server_opts o = {.host = host, .port = port, .tls_cert = c->tls_cert, .tls_key = c->tls_key,
                             .tls_profile = &c->tls, .name = "--catalogs-server-addr",
                             .access_log = a->f.access_log ? stderr : NULL, .metrics = catalog_metrics_text,
                             .metrics_arg = a, .no_metrics = !olm_listen_off(c->metrics_addr),
                             .no_metas = !a->f.gate_metas, .graphql_501 = a->f.gate_graphql,
                             .ready = server_ready, .ready_arg = a};
    olm_error err;
    if (!(a->srv = catalog_server_start(a->rt.loop, &o, &err))) {
        snprintf(msg, msgsz, "--catalogs-server-addr %s: %s", a->f.server_addr, err.msg);
        return -1;
    }
    daemon_runtime_own(&a->rt, DAEMON_STAGE_SERVE, a->srv, &a->srv, stop_catalog_server);
    start_webhook(a);
    return 0;
}

/* status.urls.base = <scheme>://<external address>/catalogs/<name>. */
static void build_url_root(app *a)
{
    const char *scheme = a->f.common.tls_cert ? "https" : "http";
    if (a->f.external_addr) {
        snprintf(a->url_root, sizeof a->url_root, "%s://%s/catalogs", scheme, a->f.external_addr);
        return;
    }
    char host[256];
    int port;
    olm_parse_listen_addr(a->f.server_addr, host, sizeof host, &port);
    if (strcmp(host, OLM_ANY_HOST) == 0)
        snprintf(host, sizeof host, "localhost");
    bool v6 = strchr(host, ':') != NULL;
    snprintf(a->url_root, sizeof a->url_root, "%s://%s%s%s:%d/catalogs", scheme, v6 ? "[" : "", host, v6 ? "]" : "",
             catalog_server_port(a->srv));
}

/* After the listeners, before the API server: what the loop runs besides, and the stored
 * catalogs served at once. */
static void before_start(void *data)
{
    app *a = data;
    olm_error err;
    if (catalog_publisher_init(&a->pub, a->rt.loop, &a->srv, &err) != 0)
        catalogd_log(CATALOGD_LOG_ERROR, NULL, "%s", err.msg); /* then nothing new is served: fail loudly */
    clustercatalog_controller_init(&a->ctl, &a->rt);
    serve_stored(a);
    build_url_root(a);
}

static void log_started(void *data)
{
    app *a = data;
    const olm_daemon_flags *c = &a->f.common;
    catalogd_log(CATALOGD_LOG_INFO, NULL,
                 "serving catalogs on %s://%s (port %d), urls.base %s/<name>, cache %s, health %s, metrics %s, "
                 "system namespace %s",
                 c->tls_cert ? "https" : "http", a->f.server_addr, catalog_server_port(a->srv), a->url_root,
                 a->f.cache_dir, a->rt.listeners.health ? c->health_addr : "(catalog server only)",
                 a->rt.listeners.metrics ? c->metrics_addr : "(catalog server only)", a->system_ns);
    if (c->tls_cert)
        catalogd_log(CATALOGD_LOG_INFO, NULL, "TLS profile %s%s%s", c->tls.name,
                     *c->tls.skipped ? "; curves this OpenSSL lacks, not offered: " : "", c->tls.skipped);
    if (oci_registries_follow_count(a->rt.registries))
        catalogd_log(CATALOGD_LOG_INFO, NULL, "registries configuration %s(.d): %zu [[registry]] entries",
                     c->registries_conf ? c->registries_conf : OCI_REGISTRIES_CONF_DEFAULT,
                     oci_registries_follow_count(a->rt.registries));
}

/* Returns the exit code; *started tells whether the loop ran (main logs "stopped" then). */
static int run(app *a, bool *started)
{
    daemon_spec spec = {
        .rt = &a->rt, .app = a, .kubeconfig = a->f.kubeconfig, .cache_flag = "--cache-dir",
        .cache_dir = a->f.cache_dir, .pull_cache = "unpack", .leader_elect = a->f.leader_elect,
        .lease_namespace = a->f.lease_namespace ? a->f.lease_namespace : a->system_ns, .lease_name = LEASE_NAME,
        .metrics_name = "catalogd", .unready_before_stop_ms = a->f.shutdown_delay_ms, .start_servers = start_servers, .before_start = before_start,
        .start_on_every_replica = start_on_every_replica, .start_controllers = start_controllers, .after_drain = after_drain, .ready = catalog_ready,
        .metrics = catalog_server_series, .log_started = log_started};
    int rc = daemon_runtime_run(&a->rt, &spec, started);
    if (rc == 1)
        return 1;
    if (rc == 0)
        catalog_publisher_destroy(&a->pub);
    return a->rt.exit_code;
}

static int parse_flags(int argc, char **argv, void *flags, char *msg, size_t msgsz)
{
    return catalogd_flags_parse(argc, argv, flags, msg, msgsz);
}

/* Everything before the loop that needs no API server: the command line (exit 2 with one
 * line), `version`, --help, --version, --check-flags (exit 0), then the files the flags name
 * (exit 1 with one line).  Returns -1 to go on. */
static int prepare(app *a, int argc, char **argv)
{
    int rc = olm_daemon_command_line("catalogd", argc, argv, parse_flags, &a->f, &a->f.common);
    if (rc >= 0)
        return rc;
    if (a->f.gate_graphql)
        catalogd_log(CATALOGD_LOG_WARN, NULL, "--feature-gates GraphQLCatalogQueries=true: GraphQL catalog queries are "
                                              "not built here; /catalogs/<name>/api/v1/graphql answers 501 (use "
                                              "/api/v1/all or /api/v1/metas)");
    if ((rc = daemon_runtime_preflight(&a->rt, &a->f.common, &a->pull_cas)) >= 0)
        return rc;
    a->system_ns = a->rt.system_namespace;
    return -1;
}

int main(int argc, char **argv)
{
    /* glibc's per-thread malloc cache stays on here (operator-controller turns it off,
     * olm_malloc_tune.h).  Without it each of libyaml's ~2 million mallocs and frees in a
     * certified-operators load takes its arena's lock: 12% more CPU on the way to Serving
     * (0.208 -> 0.241 s on 2 threads), for 0.0-0.3 MiB less steady RSS (10.5 MiB). */
    /* A client that hangs up mid-response must cost one connection, not the process: the
     * write then fails with EPIPE (h2o closes the connection and the access log says
     * aborted=true) instead of SIGPIPE killing catalogd without a word. */
    signal(SIGPIPE, SIG_IGN);
    /* glibc raises its mmap threshold to the largest block freed (the 18 MiB jsonl buffer of a
     * load) and its trim threshold to twice that, after which a load's freed heap stays in
     * the process.  Fixed thresholds keep big buffers in their own mappings (gone on free) and
     * give freed heap tops back: certified-operators steady RSS 22.0 -> 18.1 MiB. */
    olm_malloc_fixed_thresholds();
    app a = {.rt = {.prog = "catalogd", .log_key = "catalog"}};
    int prc = prepare(&a, argc, argv);
    if (prc >= 0)
        return prc;
    /* Reconciles, GC and store I/O share libuv's threadpool (4 threads by default); size it
     * before its first use so a slow pull cannot starve the others. */
    setenv("UV_THREADPOOL_SIZE", "8", 0);
    /* libcurl's global state must be set up before any thread may use it. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        fprintf(stderr, "catalogd: curl_global_init failed\n");
        olm_ca_set_free(a.pull_cas);
        return 1;
    }
    bool started = false;
    int rc = run(&a, &started);
    daemon_runtime_free(&a.rt);
    olm_ca_set_free(a.pull_cas);
    oci_handle_pool_drain(); /* the pulls' idle connections */
    curl_global_cleanup();
    if (started)
        catalogd_log(CATALOGD_LOG_INFO, NULL, "stopped (exit %d)", rc);
    return rc;
}
