/* clustercatalog_reconciler_gc against catalogs created while it waits for the store lock.
 *
 * GC takes the store lock exclusively, so it waits for every store write in flight (a big
 * catalog's takes seconds).  A catalog created meanwhile is reconciled and stored under the
 * shared lock; GC must count it among the living, or it removes the store just written and
 * withdraws it from the server while the status says Serving True. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "clustercatalog_internal.h"
#include "kube_uvcurl.h"

typedef struct removed_log {
    uv_mutex_t lock;
    char names[256];
} removed_log;

static void record_publish(const clustercatalog_publish_event *ev, void *data)
{
    removed_log *l = data;
    if (ev->kind == CC_PUBLISH_REMOVE) {
        uv_mutex_lock(&l->lock);
        size_t n = strlen(l->names);
        snprintf(l->names + n, sizeof l->names - n, "%s,", ev->name);
        uv_mutex_unlock(&l->lock);
    }
    store_view_release(ev->view);
}

static void run_gc(void *arg)
{
    olm_error err;
    assert_int_equal(clustercatalog_reconciler_gc(arg, &err), 0);
}

static json_t *catalog(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "olm.operatorframework.io/v1", "kind",
                     "ClusterCatalog", "metadata", "name", name, "resourceVersion", "1");
}

static void on_closed_uc(void *d)
{
    kube_uvcurl_close(d, NULL, NULL);
}

static void test_gc_keeps_catalog_created_while_waiting(void **state)
{
    (void)state;
    char dir[] = "/tmp/olm-ccgc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs", dir);
    assert_int_equal(mkdir(p, 0755), 0);

    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    assert_non_null(uc);
    kube_config kcfg;
    memset(&kcfg, 0, sizeof kcfg);
    kcfg.server = "http://127.0.0.1:9"; /* never contacted: not started */
    kube_watch_options wo = {.path = "/apis/olm.operatorframework.io/v1/clustercatalogs"};
    kube_informer *inf = kube_informer_new(uc, &kcfg, &wo, NULL, NULL, &err);
    assert_non_null(inf);

    removed_log log = {.names = ""};
    uv_mutex_init(&log.lock);
    clustercatalog_reconciler_config cfg = {
        .informer = inf, .cache_dir = dir, .url_root = "http://x/catalogs", .publish = record_publish,
        .publish_data = &log};
    clustercatalog_reconciler *r = clustercatalog_reconciler_new(&cfg, &err);
    assert_non_null(r);

    /* Another catalog's store write is in flight: GC has to wait for it. */
    uv_rwlock_rdlock(&r->store_lock);
    uv_thread_t gc;
    assert_int_equal(uv_thread_create(&gc, run_gc, r), 0);
    usleep(300 * 1000); /* GC reaches the lock; were it not there yet, the test could only pass */

    /* Meanwhile "fresh" is created and its reconcile stores it (under the shared lock). */
    json_t *obj = catalog("fresh");
    kube_informer_apply(inf, KUBE_WATCH_ADDED, obj);
    json_decref(obj);
    snprintf(p, sizeof p, "%s/catalogs/fresh", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/catalogs/fresh/catalog.jsonl", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"schema\":\"olm.package\",\"name\":\"p\"}\n", f);
    fclose(f);
    uv_rwlock_rdunlock(&r->store_lock);
    uv_thread_join(&gc);

    struct stat st;
    assert_int_equal(stat(p, &st), 0); /* the new store is still there */
    assert_string_equal(log.names, ""); /* and was never withdrawn from the server */

    clustercatalog_reconciler_free(r);
    uv_mutex_destroy(&log.lock);
    kube_informer_stop(inf, on_closed_uc, uc);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    unlink(p);
    snprintf(p, sizeof p, "%s/catalogs/fresh", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/catalogs", dir);
    rmdir(p);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gc_keeps_catalog_created_while_waiting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
