/* clusterextension_setup: the ClusterExtension controller's wiring, started the way
 * operator-controller starts it (clusterextension_controller_start on a daemon_runtime whose
 * client talks to testsupport's fake apiserver) and stopped by the runtime's ordered shutdown,
 * so that every test is also a leak check under ASan.
 *
 * One test per decision of the wiring: the informers list the ClusterExtension and
 * ClusterCatalog collections and a queued key reaches the reconciler with the runtime's
 * client; a ClusterExtension add, generation change or delete queues that key alone, a
 * status-only update queues nothing; a ClusterCatalog add, or an update that changes what a
 * resolution reads, requeues every extension, a bookkeeping update does not; a deleted
 * ClusterCatalog is forgotten by the catalog client (that catalog only) and requeues every
 * extension; the ClusterCatalog cache's first sync requeues every extension, the
 * ClusterExtension cache's does not; new --global-pull-secret credentials requeue every
 * extension; once the shutdown has begun nothing is queued (and nothing logged); the metrics
 * text has the operator_controller_* series and olm_clusterextension_info per cached
 * extension.  Apart from the first test the informers' own LISTs are refused by the fake
 * (403), so that only the events a test applies (kube_informer_apply) reach the handlers.
 *
 * Mutation checks: each test was seen to fail with its line broken on purpose (the
 * production line edited, the test run, the line restored):
 *   clusterextension_setup.c:50  `if (clusterextension_update_needs_reconcile(..))` -> `if (1)`
 *       -> test_extension_events_queue_that_key (the status-only update queued)
 *   clusterextension_setup.c:50  the same -> `if (0)` -> test_extension_events_queue_that_key
 *   clusterextension_setup.c:45  extension_added queues nothing -> test_extension_events_queue_that_key,
 *       test_start_wires_informers_and_reconciler, test_nothing_queued_once_stopping, test_metrics_text
 *   clusterextension_setup.c:56  extension_deleted queues nothing -> test_extension_events_queue_that_key
 *   clusterextension_setup.c:62  catalog_added requeues nothing -> test_catalog_add_and_update_requeue_every_extension
 *   clusterextension_setup.c:67  `if (catalog_resolution_inputs_changed(..))` -> `if (1)`, and -> `if (0)`
 *       -> test_catalog_add_and_update_requeue_every_extension
 *   clusterextension_setup.c:76  catalog_client_forget dropped -> test_catalog_delete_forgets_it_and_requeues
 *   clusterextension_setup.c:77  enqueue_all dropped from catalog_deleted -> test_catalog_delete_forgets_it_and_requeues
 *   clusterextension_setup.c:95  catalogs_synced requeues nothing -> test_catalog_cache_first_sync_requeues_all
 *   clusterextension_setup.c:100 pull_secret_loaded requeues nothing -> test_pull_secret_credentials_requeue_all
 *   clusterextension_setup.c:20  `!c->rt->stopping` dropped -> test_nothing_queued_once_stopping
 *   clusterextension_setup.c:141 the ClusterExtension informer on CC_PATH -> test_start_wires_informers_and_reconciler
 *   clusterextension_setup.c:218 olm_clusterextension_info not rendered -> test_metrics_text
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clusterextension_controller.h"
#include "fake_apiserver.h"
#include "stderr_capture.h"
#include "fake_http_server.h"
#include "olm_base64.h"

#define API "/apis/olm.operatorframework.io/v1"
#define PULL_SECRET "sys/pull"

typedef struct fx {
    fake_apiserver *api;
    fake_http_server catalogd; /* serves package "pkg" of any catalog */
    char kubeconfig[64], cache_dir[64];
    uv_loop_t loop;
    daemon_runtime rt;
    daemon_spec spec;
    clusterextension_controller c;
    int after_drain_calls;
} fx;

/* ------------------------------------------------------------ setup and teardown */

static void after_drain(void *app)
{
    fx *f = app;
    f->after_drain_calls++;
    clusterextension_controller_after_drain(&f->c);
}

static void catalogd(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    (void)s;
    resp->status = 200;
    resp->content_type = "application/jsonl";
    resp->body = strstr(req->target, "schema=olm.package") ? "{\"schema\":\"olm.package\",\"name\":\"pkg\"}\n" : "";
}

static void write_kubeconfig(fx *f)
{
    snprintf(f->kubeconfig, sizeof f->kubeconfig, "/tmp/ce-setup-kubeconfig-XXXXXX");
    int fd = mkstemp(f->kubeconfig);
    assert_true(fd >= 0);
    char kc[512];
    int n = snprintf(kc, sizeof kc,
                     "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                     "clusters:\n- name: k\n  cluster:\n    server: %s\n"
                     "users:\n- name: u\n  user:\n    token: admin\n"
                     "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n",
                     fake_apiserver_url(f->api));
    assert_int_equal(write(fd, kc, (size_t)n), n);
    close(fd);
}

/* The controller on a runtime over the fake apiserver; `by_hand`: the informers' LISTs are
 * refused, so their caches hold what the test applies and nothing else. */
static int start(void **state, bool by_hand, const char *pull_secret)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->api = fake_apiserver_start();
    assert_non_null(f->api);
    if (by_hand) {
        fake_apiserver_fail(f->api, "GET", API "/clusterextensions?", NULL, 403, "fed by the test", -1);
        fake_apiserver_fail(f->api, "GET", API "/clustercatalogs?", NULL, 403, "fed by the test", -1);
    }
    assert_int_equal(fake_http_start(&f->catalogd), 0);
    pthread_mutex_lock(&f->catalogd.lock);
    f->catalogd.handler = catalogd;
    pthread_mutex_unlock(&f->catalogd.lock);
    write_kubeconfig(f);
    snprintf(f->cache_dir, sizeof f->cache_dir, "/tmp/ce-setup-XXXXXX");
    assert_non_null(mkdtemp(f->cache_dir));

    assert_int_equal(uv_loop_init(&f->loop), 0);
    f->rt = (daemon_runtime){.prog = "operator-controller", .log_key = "clusterExtension", .loop = &f->loop};
    f->spec = (daemon_spec){.rt = &f->rt, .app = f, .after_drain = after_drain};
    f->rt.spec = &f->spec;
    assert_int_equal(daemon_runtime_connect(&f->rt, f->kubeconfig), 0);
    olm_error err;
    assert_int_equal(daemon_runtime_start_transport(&f->rt, &err), 0);
    clusterextension_controller_config cfg = {
        .reconciler = {.system_namespace = "sys", .cache_dir = f->cache_dir},
        .concurrency = 1,
        .global_pull_secret = pull_secret,
    };
    if (clusterextension_controller_start(&f->c, &f->rt, &cfg, &err) != 0)
        fail_msg("clusterextension_controller_start: %s", err.msg);
    *state = f;
    return 0;
}

static int start_by_hand(void **state)
{
    return start(state, true, NULL);
}

static int start_listing(void **state)
{
    return start(state, false, NULL);
}

static int start_with_pull_secret(void **state)
{
    return start(state, true, PULL_SECRET);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The runtime's shutdown stops every part the controller started; the loop then runs dry. */
static int stop(void **state)
{
    fx *f = *state;
    daemon_runtime_shutdown(&f->rt, 0);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->after_drain_calls, 1);
    assert_null(f->c.wq);
    assert_null(f->c.rec);
    assert_null(f->c.extensions);
    assert_null(f->c.catalogs);
    assert_null(f->c.drift);
    assert_null(f->rt.secret_watch);
    assert_null(f->rt.uc);
    clusterextension_controller_free(&f->c);
    assert_null(f->c.cc);
    assert_null(f->c.tokens);
    daemon_runtime_free(&f->rt);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    fake_http_stop(&f->catalogd);
    fake_apiserver_stop(f->api);
    unlink(f->kubeconfig);
    nftw(f->cache_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* ------------------------------------------------------------ helpers */

/* Keys that became pending in the work queue so far (deduplicated as the queue does). */
static unsigned long long adds(fx *f)
{
    return kube_workqueue_get_stats(f->c.wq)->adds;
}

/* Runs the loop until nothing is queued, running or waiting (the reconciles of extensions the
 * fake does not hold end at once: gone). */
static void drain(fx *f)
{
    uint64_t deadline = uv_hrtime() + 30ull * 1000000000ull;
    while (!clusterextension_controller_idle(&f->c) || kube_workqueue_waiting(f->c.wq) > 0) {
        uv_run(&f->loop, UV_RUN_ONCE);
        if (uv_hrtime() > deadline)
            fail_msg("the work queue did not drain within 30 s");
    }
}

/* A ClusterExtension of package "pkg"; `extra` (JSON text, or NULL) merged in. */
static json_t *extension(const char *name, int generation, const char *rv, const char *extra)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:i, s:s}, s:{s:s, s:{s:s}, s:{s:s, s:{s:s}}}}", "apiVersion",
                          "olm.operatorframework.io/v1", "kind", "ClusterExtension", "metadata", "name", name,
                          "generation", generation, "resourceVersion", rv, "spec", "namespace", "ns",
                          "serviceAccount", "name", "sa", "source", "sourceType", "Catalog", "catalog",
                          "packageName", "pkg");
    assert_non_null(o);
    if (extra) {
        json_t *x = json_loads(extra, 0, NULL);
        assert_non_null(x);
        json_object_update_recursive(o, x);
        json_decref(x);
    }
    return o;
}

/* A serving ClusterCatalog with content at `ref`, fetched from the fake catalogd. */
static json_t *catalog(fx *f, const char *name, const char *rv, const char *ref, const char *last_unpacked)
{
    char base[256];
    snprintf(base, sizeof base, "%s/catalogs/%s", f->catalogd.url, name);
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:{s:s}}}, "
                          "s:{s:[{s:s, s:s}], s:{s:s, s:{s:s}}, s:{s:s}, s:s}}",
                          "apiVersion", "olm.operatorframework.io/v1", "kind", "ClusterCatalog", "metadata", "name",
                          name, "resourceVersion", rv, "spec", "source", "type", "Image", "image", "ref", "reg/cat:1",
                          "status", "conditions", "type", "Serving", "status", "True", "resolvedSource", "type",
                          "Image", "image", "ref", ref, "urls", "base", base, "lastUnpacked", last_unpacked);
    assert_non_null(o);
    return o;
}

static void apply(kube_informer *inf, kube_watch_event_type type, json_t *obj)
{
    kube_informer_apply(inf, type, obj);
    json_decref(obj);
}

/* Extensions a and b in the cache, their first reconciles over. */
static void two_extensions(fx *f)
{
    apply(f->c.extensions, KUBE_WATCH_ADDED, extension("a", 1, "1", NULL));
    apply(f->c.extensions, KUBE_WATCH_ADDED, extension("b", 1, "2", NULL));
    drain(f);
}

/* What stderr receives while `fn(f)` runs (the caller frees it). */
static char *capture_stderr(void (*fn)(fx *f), fx *f)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    fn(f);
    return stderr_capture_end(&c, 8192);
}

/* ------------------------------------------------------------ the tests */

/* Over real LISTs: the informers list both collections, and a ClusterExtension the fake holds
 * is reconciled with the runtime's client (its first step, our finalizer, is written as
 * "admin"). */
static void test_start_wires_informers_and_reconciler(void **state)
{
    fx *f = *state;
    fake_apiserver_put(f->api, API "/clusterextensions/demo", extension("demo", 1, "1", NULL));
    uint64_t deadline = uv_hrtime() + 30ull * 1000000000ull;
    while (!kube_informer_has_synced(f->c.extensions) || !kube_informer_has_synced(f->c.catalogs) ||
           fake_apiserver_count(f->api, "PATCH", API "/clusterextensions/demo", "admin") == 0) {
        uv_run(&f->loop, UV_RUN_ONCE);
        if (uv_hrtime() > deadline)
            fail_msg("no sync or no reconcile within 30 s");
    }
    assert_true(fake_apiserver_count(f->api, "GET", API "/clusterextensions?limit=", NULL) >= 1);
    assert_true(fake_apiserver_count(f->api, "GET", API "/clustercatalogs?limit=", NULL) >= 1);
    assert_int_equal(kube_informer_count(f->c.extensions), 1);
    assert_int_equal(kube_informer_count(f->c.catalogs), 0);
    json_t *cached = kube_informer_get(f->c.extensions, "demo");
    assert_non_null(cached);
    json_decref(cached);
}

/* Add, generation change and delete queue the key itself (not every extension); a
 * status-only update (our own status writes) queues nothing. */
static void test_extension_events_queue_that_key(void **state)
{
    fx *f = *state;
    two_extensions(f);
    assert_int_equal(adds(f), 2);
    assert_true(clusterextension_controller_idle(&f->c));

    apply(f->c.extensions, KUBE_WATCH_MODIFIED,
          extension("a", 1, "3", "{\"status\":{\"conditions\":[{\"type\":\"Progressing\",\"status\":\"True\"}]}}"));
    assert_int_equal(adds(f), 2);
    assert_int_equal(kube_workqueue_len(f->c.wq) + kube_workqueue_running(f->c.wq), 0);

    apply(f->c.extensions, KUBE_WATCH_MODIFIED, extension("a", 2, "4", NULL));
    assert_int_equal(adds(f), 3);
    assert_false(clusterextension_controller_idle(&f->c));
    drain(f);
    assert_int_equal(fake_apiserver_count(f->api, "GET", API "/clusterextensions/a", "admin"), 2);
    assert_int_equal(fake_apiserver_count(f->api, "GET", API "/clusterextensions/b", "admin"), 1);

    json_t *gone = kube_informer_get(f->c.extensions, "b");
    assert_non_null(gone);
    apply(f->c.extensions, KUBE_WATCH_DELETED, gone);
    assert_int_equal(adds(f), 4);
    drain(f);
    assert_int_equal(fake_apiserver_count(f->api, "GET", API "/clusterextensions/b", "admin"), 2);
    assert_int_equal(fake_apiserver_count(f->api, "GET", API "/clusterextensions/a", "admin"), 2);
}

/* A ClusterCatalog added, or changed where a resolution looks (its content), requeues every
 * extension; catalogd's bookkeeping (lastUnpacked) requeues none. */
static void test_catalog_add_and_update_requeue_every_extension(void **state)
{
    fx *f = *state;
    two_extensions(f);
    unsigned long long before = adds(f);
    apply(f->c.catalogs, KUBE_WATCH_ADDED, catalog(f, "cat", "10", "reg/cat@sha256:01", "2024-01-01T00:00:00Z"));
    assert_int_equal(adds(f), before + 2);
    drain(f);

    apply(f->c.catalogs, KUBE_WATCH_MODIFIED, catalog(f, "cat", "11", "reg/cat@sha256:01", "2024-01-02T00:00:00Z"));
    assert_int_equal(adds(f), before + 2);
    assert_true(clusterextension_controller_idle(&f->c));

    apply(f->c.catalogs, KUBE_WATCH_MODIFIED, catalog(f, "cat", "12", "reg/cat@sha256:02", "2024-01-02T00:00:00Z"));
    assert_int_equal(adds(f), before + 4);
    drain(f);
}

static size_t cache_package(fx *f, const char *name)
{
    json_t *cat = kube_informer_get(f->c.catalogs, name);
    assert_non_null(cat);
    catalog_package *p = NULL;
    olm_error err;
    if (catalog_client_get_package(f->c.cc, cat, "pkg", &p, &err) != 0)
        fail_msg("catalog %s: %s", name, err.msg);
    catalog_package_release(p);
    json_decref(cat);
    return catalog_client_cached(f->c.cc);
}

/* A deleted ClusterCatalog: the catalog client forgets what it cached of that catalog (not
 * of the others), and every extension is requeued (one may have resolved from it). */
static void test_catalog_delete_forgets_it_and_requeues(void **state)
{
    fx *f = *state;
    two_extensions(f);
    apply(f->c.catalogs, KUBE_WATCH_ADDED, catalog(f, "cat", "10", "reg/cat@sha256:01", "2024-01-01T00:00:00Z"));
    apply(f->c.catalogs, KUBE_WATCH_ADDED, catalog(f, "other", "11", "reg/other@sha256:01", "2024-01-01T00:00:00Z"));
    drain(f);
    assert_int_equal(cache_package(f, "cat"), 1);
    assert_int_equal(cache_package(f, "other"), 2);
    unsigned long long before = adds(f);

    json_t *cat = kube_informer_get(f->c.catalogs, "cat");
    apply(f->c.catalogs, KUBE_WATCH_DELETED, cat);
    assert_int_equal(catalog_client_cached(f->c.cc), 1);
    assert_int_equal(adds(f), before + 2);
    drain(f);
    strbuf m = STRBUF_INIT;
    assert_int_equal(clusterextension_controller_metrics(&f->c, &m), 0);
    assert_non_null(strstr(strbuf_str(&m), "\noperator_controller_catalog_cache_entries 1\n"));
    strbuf_free(&m);
}

/* Resolutions that ran before the ClusterCatalog cache synced saw no catalogs: its first sync
 * requeues every extension.  The ClusterExtension cache's own sync queues nothing (its adds
 * did). */
static void test_catalog_cache_first_sync_requeues_all(void **state)
{
    fx *f = *state;
    two_extensions(f);
    unsigned long long before = adds(f);
    kube_informer_mark_synced(f->c.extensions);
    assert_int_equal(adds(f), before);
    assert_true(clusterextension_controller_idle(&f->c));
    kube_informer_mark_synced(f->c.catalogs);
    assert_int_equal(adds(f), before + 2);
    drain(f);
}

/* --global-pull-secret: credentials arriving requeue every extension (one that failed for
 * want of them retries).  The extensions are put in the cache with the queue out of reach, so
 * that the Secret's arrival is the only thing that queues them. */
static void test_pull_secret_credentials_requeue_all(void **state)
{
    fx *f = *state;
    const char *cfg = "{\"auths\":{\"reg.local\":{\"auth\":\"dXNlcjpwYXNz\"}}}";
    olm_error err;
    char *b64 = olm_base64_encode(cfg, strlen(cfg), NULL, &err);
    assert_non_null(b64);
    json_t *secret = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Secret",
                               "metadata", "name", "pull", "namespace", "sys", "type",
                               "kubernetes.io/dockerconfigjson", "data", ".dockerconfigjson", b64);
    free(b64);
    fake_apiserver_put(f->api, "/api/v1/namespaces/sys/secrets/pull", secret);
    assert_non_null(f->rt.pull_secret);
    assert_non_null(f->rt.secret_watch);

    kube_workqueue *wq = f->c.wq;
    f->c.wq = NULL;
    apply(f->c.extensions, KUBE_WATCH_ADDED, extension("a", 1, "1", NULL));
    apply(f->c.extensions, KUBE_WATCH_ADDED, extension("b", 1, "2", NULL));
    f->c.wq = wq;
    assert_int_equal(adds(f), 0);

    uint64_t deadline = uv_hrtime() + 30ull * 1000000000ull;
    while (!oci_auth_store_loaded(f->rt.pull_secret)) {
        uv_run(&f->loop, UV_RUN_ONCE);
        if (uv_hrtime() > deadline)
            fail_msg("the pull secret was not loaded within 30 s");
    }
    assert_int_equal(adds(f), 2);
    drain(f);
    assert_int_equal(adds(f), 2);
    assert_true(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/sys/secrets?", "admin") >= 1);
}

static void catalog_added_while_stopping(fx *f)
{
    apply(f->c.catalogs, KUBE_WATCH_ADDED, catalog(f, "cat", "10", "reg/cat@sha256:01", "2024-01-01T00:00:00Z"));
}

/* Once the shutdown has begun (the queue is draining a reconcile still running), events queue
 * nothing and say nothing: the queue refuses adds, which is no error then. */
static void test_nothing_queued_once_stopping(void **state)
{
    fx *f = *state;
    apply(f->c.extensions, KUBE_WATCH_ADDED, extension("a", 1, "1", NULL));
    apply(f->c.extensions, KUBE_WATCH_ADDED, extension("b", 1, "2", NULL));
    assert_int_equal(kube_workqueue_running(f->c.wq), 1); /* its result waits for the loop */
    daemon_runtime_shutdown(&f->rt, 0);
    assert_non_null(f->c.wq);
    assert_non_null(f->c.catalogs);
    unsigned long long before = adds(f);
    char *err = capture_stderr(catalog_added_while_stopping, f);
    assert_int_equal(adds(f), before);
    assert_null(strstr(err, "could not queue"));
    free(err);
}

/* The controller's series: extensions and installed ones from the cache, the queue depth, the
 * reconciles counted by the reconciler, and olm_clusterextension_info per cached extension. */
static void test_metrics_text(void **state)
{
    fx *f = *state;
    apply(f->c.extensions, KUBE_WATCH_ADDED,
          extension("a", 1, "1",
                    "{\"status\":{\"install\":{\"bundle\":{\"name\":\"pkg.v1.0.0\",\"version\":\"1.0.0\"}},"
                    "\"conditions\":[{\"type\":\"Installed\",\"status\":\"True\"}]}}"));
    apply(f->c.extensions, KUBE_WATCH_ADDED, extension("b", 1, "2", NULL));
    strbuf m = STRBUF_INIT;
    assert_int_equal(clusterextension_controller_metrics(&f->c, &m), 0);
    const char *t = strbuf_str(&m);
    assert_non_null(strstr(t, "\noperator_controller_clusterextensions 2\n"));
    assert_non_null(strstr(t, "\noperator_controller_installed_extensions 1\n"));
    assert_non_null(strstr(t, "\noperator_controller_workqueue_depth 1\n")); /* a runs, b waits */
    assert_non_null(strstr(t, "# TYPE olm_clusterextension_info gauge\n"));
    assert_non_null(strstr(t, "olm_clusterextension_info{name=\"a\",package=\"pkg\",version=\"1.0.0\",catalog=\"\"} 1\n"));
    assert_non_null(strstr(t, "olm_clusterextension_info{name=\"b\",package=\"pkg\",version=\"\",catalog=\"\"} 1\n"));
    drain(f);
    strbuf_reset(&m);
    assert_int_equal(clusterextension_controller_metrics(&f->c, &m), 0);
    t = strbuf_str(&m);
    assert_non_null(strstr(t, "\noperator_controller_reconcile_total 2\n"));
    assert_non_null(strstr(t, "\noperator_controller_workqueue_depth 0\n"));
    assert_non_null(strstr(t, "operator_controller_reconcile_duration_seconds_count 2\n"));
    strbuf_free(&m);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_start_wires_informers_and_reconciler, start_listing, stop),
        cmocka_unit_test_setup_teardown(test_extension_events_queue_that_key, start_by_hand, stop),
        cmocka_unit_test_setup_teardown(test_catalog_add_and_update_requeue_every_extension, start_by_hand, stop),
        cmocka_unit_test_setup_teardown(test_catalog_delete_forgets_it_and_requeues, start_by_hand, stop),
        cmocka_unit_test_setup_teardown(test_catalog_cache_first_sync_requeues_all, start_by_hand, stop),
        cmocka_unit_test_setup_teardown(test_pull_secret_credentials_requeue_all, start_with_pull_secret, stop),
        cmocka_unit_test_setup_teardown(test_nothing_queued_once_stopping, start_by_hand, stop),
        cmocka_unit_test_setup_teardown(test_metrics_text, start_by_hand, stop),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
