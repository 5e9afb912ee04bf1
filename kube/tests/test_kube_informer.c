/* Tests of kube_informer: cache add/update/delete with handlers, concurrent
 * readers on other threads, and synthetic deletes after a 410 relist (through
 * testsupport's HTTP fake in its streaming mode on 127.0.0.1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_http_server.h"
#include "kube_informer.h"

typedef struct log {
    char text[4096];
    int synced;
    int transforms;
    int errors, transient_errors; /* on_error calls; kube_informer_error_is_transient said so */
    kube_informer *inf;
    kube_uvcurl *uc;
    uv_timer_t guard;
} log_t;

static void logf_(log_t *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(log_t *l, const char *fmt, ...)
{
    size_t used = strlen(l->text);
    if (used)
        l->text[used++] = ',';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text + used, sizeof l->text - used, fmt, ap);
    va_end(ap);
}

static const char *nm(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}

static const char *rv(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

static void h_add(json_t *o, void *d)
{
    logf_(d, "add %s@%s", nm(o), rv(o));
}

static void h_update(json_t *old, json_t *o, void *d)
{
    logf_(d, "update %s@%s->%s", nm(o), rv(old), rv(o));
}

static void h_delete(json_t *o, void *d)
{
    logf_(d, "delete %s@%s", nm(o), rv(o));
}

static void h_synced(void *d)
{
    log_t *l = d;
    l->synced++;
    logf_(d, "synced");
}

static json_t *obj(const char *ns, const char *name, const char *rv_)
{
    return ns ? json_pack("{s:{s:s, s:s, s:s}}", "metadata", "namespace", ns, "name", name, "resourceVersion", rv_)
              : json_pack("{s:{s:s, s:s}}", "metadata", "name", name, "resourceVersion", rv_);
}

static void apply(kube_informer *inf, kube_watch_event_type t, json_t *o)
{
    kube_informer_apply(inf, t, o);
    json_decref(o);
}

static void on_closed_uc(void *d)
{
    kube_uvcurl_close(d, NULL, NULL);
}

static void test_cache_and_handlers(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = "http://127.0.0.1:9"; /* never contacted: not started */
    log_t l;
    memset(&l, 0, sizeof l);
    kube_informer_handlers h = {h_add, h_update, h_delete, h_synced, NULL};
    kube_watch_options o = {.path = "/api/v1/configmaps"};
    kube_informer *inf = kube_informer_new(uc, &cfg, &o, &h, &l, &err);
    assert_non_null(inf);
    assert_false(kube_informer_has_synced(inf));
    apply(inf, KUBE_WATCH_ADDED, obj("ns1", "a", "1"));
    apply(inf, KUBE_WATCH_ADDED, obj(NULL, "c", "2"));
    apply(inf, KUBE_WATCH_MODIFIED, obj("ns1", "a", "3"));
    assert_int_equal(kube_informer_count(inf), 2);
    json_t *a = kube_informer_get(inf, "ns1/a");
    assert_non_null(a);
    assert_string_equal(rv(a), "3");
    assert_null(kube_informer_get(inf, "a"));
    json_t *c = kube_informer_get(inf, "c");
    assert_non_null(c);
    apply(inf, KUBE_WATCH_DELETED, obj("ns1", "a", "4"));
    assert_null(kube_informer_get(inf, "ns1/a"));
    /* A reference handed out earlier stays valid after the cache dropped it. */
    assert_string_equal(rv(a), "3");
    json_decref(a);
    json_decref(c);
    json_t *all = kube_informer_list(inf);
    assert_int_equal(json_array_size(all), 1);
    json_decref(all);
    assert_string_equal(l.text, "add a@1,add c@2,update a@1->3,delete a@4");
    kube_informer_stop(inf, on_closed_uc, uc);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* What the transform keeps: the name and a "spec" (no resourceVersion, so a status
 * write keeps an equal object); NULL, as out of memory would, for a spec "fail". */
static json_t *slim(const json_t *o, void *d)
{
    ((log_t *)d)->transforms++; /* d: the handlers' data */
    const json_t *spec = json_object_get(o, "spec");
    if (strcmp(json_string_value(spec), "fail") == 0)
        return NULL;
    return json_pack("{s:{s:O}, s:O?}", "metadata", "name", json_object_get(json_object_get(o, "metadata"), "name"),
                     "spec", spec);
}

static json_t *full(const char *name, const char *rv_, const char *spec)
{
    return json_pack("{s:{s:s, s:s, s:s}, s:s, s:{s:s}}", "metadata", "namespace", "ns", "name", name,
                     "resourceVersion", rv_, "spec", spec, "status", "phase", rv_);
}

static void u_add(json_t *o, void *d)
{
    logf_(d, "add %s:%s", nm(o), json_string_value(json_object_get(o, "spec")));
}

static void u_update(json_t *old, json_t *o, void *d)
{
    logf_(d, "update %s:%s->%s%s", nm(o), json_string_value(json_object_get(old, "spec")),
          json_string_value(json_object_get(o, "spec")), json_equal(old, o) ? " (equal)" : "");
}

static void u_delete(json_t *o, void *d)
{
    logf_(d, "delete %s:%s", nm(o), json_string_value(json_object_get(o, "spec")));
}

static void u_error(const char *msg, void *d)
{
    (void)msg;
    log_t *l = d;
    logf_(d, kube_informer_error_is_transient(l->inf) ? "transient error" : "error"); /* a lost event: not */
}

/* The cache keeps what the transform returns (not the watch's object), the handlers see
 * it (on_update the held and the new one, so equal slim copies compare equal), and a
 * transform that fails loses the event: counted, reported, nothing else changes. */
static void test_transform(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = "http://127.0.0.1:9"; /* never contacted: not started */
    log_t l;
    memset(&l, 0, sizeof l);
    kube_informer_handlers h = {u_add, u_update, u_delete, h_synced, u_error};
    kube_watch_options o = {.path = "/api/v1/configmaps"};
    kube_informer *inf = kube_informer_new(uc, &cfg, &o, &h, &l, &err);
    assert_non_null(inf);
    l.inf = inf;
    kube_informer_set_transform(inf, slim);
    json_t *a1 = full("a", "1", "x");
    kube_informer_apply(inf, KUBE_WATCH_ADDED, a1);
    json_t *cached = kube_informer_get(inf, "ns/a"); /* keyed by the watch's object */
    assert_non_null(cached);
    assert_ptr_not_equal(cached, a1);
    json_t *want = json_pack("{s:{s:s}, s:s}", "metadata", "name", "a", "spec", "x");
    assert_true(json_equal(cached, want)); /* only the slim object is kept */
    assert_int_equal(a1->refcount, 1);     /* the informer holds no reference to the full one */
    json_decref(want);
    json_decref(cached);
    json_decref(a1);
    apply(inf, KUBE_WATCH_MODIFIED, full("a", "2", "x")); /* a status write */
    apply(inf, KUBE_WATCH_MODIFIED, full("a", "3", "y"));
    assert_int_equal(kube_informer_lost_events(inf), 0);
    apply(inf, KUBE_WATCH_MODIFIED, full("a", "4", "fail"));
    assert_int_equal(kube_informer_lost_events(inf), 1);
    cached = kube_informer_get(inf, "ns/a"); /* the lost event changed nothing */
    assert_string_equal(json_string_value(json_object_get(cached, "spec")), "y");
    json_decref(cached);
    apply(inf, KUBE_WATCH_DELETED, full("a", "5", "z"));
    assert_null(kube_informer_get(inf, "ns/a"));
    assert_string_equal(l.text, "add a:x,update a:x->x (equal),update a:x->y,error,delete a:z");
    assert_int_equal(l.transforms, 5); /* every event, the delete too */
    kube_informer_stop(inf, on_closed_uc, uc);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* kube_informer_list_by_key: the apiserver's list order, whatever order events came in. */
static void test_list_by_key(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = "http://127.0.0.1:9";
    kube_watch_options o = {.path = "/api/v1/configmaps"};
    kube_informer *inf = kube_informer_new(uc, &cfg, &o, NULL, NULL, &err);
    json_t *empty = kube_informer_list_by_key(inf);
    assert_int_equal(json_array_size(empty), 0);
    json_decref(empty);
    const char *names[] = {"m", "b", "z", "a", "q"};
    for (size_t i = 0; i < 5; i++)
        apply(inf, KUBE_WATCH_ADDED, obj("ns", names[i], "1"));
    apply(inf, KUBE_WATCH_ADDED, obj("another", "z", "1"));
    json_t *all = kube_informer_list_by_key(inf);
    assert_int_equal(json_array_size(all), 6);
    const char *want[] = {"another/z", "ns/a", "ns/b", "ns/m", "ns/q", "ns/z"};
    for (size_t i = 0; i < 6; i++) {
        char *key = kube_object_key(json_array_get(all, i));
        assert_string_equal(key, want[i]);
        free(key);
    }
    json_decref(all);
    kube_informer_stop(inf, on_closed_uc, uc);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Readers on other threads while the loop thread writes: run under ASan/TSan
 * this catches unlocked access and reference-count mistakes. */
typedef struct reader_arg {
    kube_informer *inf;
    atomic_bool stop;
    atomic_long reads; /* three threads count here */
} reader_arg;

static void reader(void *p)
{
    reader_arg *a = p;
    while (!atomic_load(&a->stop)) {
        json_t *o = kube_informer_get(a->inf, "ns/k3");
        if (o) {
            if (!rv(o)) /* cmocka asserts are not for other threads */
                abort();
            json_decref(o);
        }
        json_t *all = kube_informer_list(a->inf);
        json_decref(all);
        atomic_fetch_add(&a->reads, 1);
    }
}

static void test_concurrent_readers(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = "http://127.0.0.1:9";
    kube_watch_options o = {.path = "/api/v1/configmaps"};
    kube_informer *inf = kube_informer_new(uc, &cfg, &o, NULL, NULL, &err);
    reader_arg ra = {.inf = inf};
    uv_thread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(uv_thread_create(&th[i], reader, &ra), 0);
    /* The writes below must overlap reads: on a busy machine the readers may not have
     * been scheduled yet, so wait (at most 10 s) until they are reading. */
    for (int waited = 0; atomic_load(&ra.reads) == 0 && waited < 10000; waited++)
        uv_sleep(1);
    char name[16], rvs[16];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "k%d", i % 10);
        snprintf(rvs, sizeof rvs, "%d", i);
        apply(inf, i % 7 == 6 ? KUBE_WATCH_DELETED : KUBE_WATCH_MODIFIED, obj("ns", name, rvs));
    }
    atomic_store(&ra.stop, true);
    for (int i = 0; i < 3; i++)
        uv_thread_join(&th[i]);
    assert_true(atomic_load(&ra.reads) > 0);
    kube_informer_stop(inf, on_closed_uc, uc);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---------------------------------------------------------------- over HTTP */

#define OBJ(name, rv) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"n\",\"resourceVersion\":\"" rv "\"}}"
#define EV(type, o) "{\"type\":\"" type "\",\"object\":" o "}\n"

static void relist_handler(fake_http_conn *c, const fake_http_request *req, void *user)
{
    (void)user;
    switch (req->seq) {
    case 0:
        fake_http_respond(c, 200, "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[" OBJ("a", "1") "," OBJ("b", "2") ","
                            OBJ("c", "3") "]}");
        break;
    case 1:
        fake_http_chunked_begin(c, 200);
        fake_http_chunks_cut(c, EV("MODIFIED", OBJ("a", "6")) EV("ERROR", "{\"code\":410}"), 10);
        fake_http_hold_open(c);
        break;
    case 2: /* while we were away: b deleted, c modified, e added */
        fake_http_respond(c, 200, "{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[" OBJ("a", "6") "," OBJ("c", "8") ","
                            OBJ("e", "7") "]}");
        break;
    case 3:
        fake_http_chunked_begin(c, 200);
        fake_http_chunks_cut(c, EV("ADDED", OBJ("z", "10")), 5);
        fake_http_hold_open(c);
        break;
    default:
        fake_http_respond(c, 500, "{}");
    }
}

static void on_guard(uv_timer_t *t)
{
    (void)t;
    fail_msg("informer scenario did not finish within 60 s");
}

static void h_error(const char *msg, void *d)
{
    (void)msg;
    log_t *l = d;
    l->errors++;
    if (kube_informer_error_is_transient(l->inf))
        l->transient_errors++;
}

static void on_inf_closed(void *d)
{
    log_t *l = d;
    uv_close((uv_handle_t *)&l->guard, NULL);
    kube_uvcurl_close(l->uc, NULL, NULL);
}

static void h_add_stop(json_t *o, void *d)
{
    log_t *l = d;
    h_add(o, d);
    if (strcmp(nm(o), "z") == 0) {
        /* Everything before z is in the cache now. */
        assert_true(kube_informer_has_synced(l->inf));
        assert_int_equal(kube_informer_count(l->inf), 4);
        json_t *b = kube_informer_get(l->inf, "n/b");
        assert_null(b);
        json_t *cobj = kube_informer_get(l->inf, "n/c");
        assert_string_equal(rv(cobj), "8");
        json_decref(cobj);
        kube_informer_stop(l->inf, on_inf_closed, l);
    }
}

static void test_relist_synthetic_deletes(void **state)
{
    (void)state;
    log_t l;
    memset(&l, 0, sizeof l);
    fake_http_server srv;
    assert_int_equal(fake_http_start_streaming(&srv, relist_handler, NULL), 0);
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    l.uc = kube_uvcurl_new(&loop, &err);
    kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = srv.url;
    kube_informer_handlers h = {h_add_stop, h_update, h_delete, h_synced, h_error};
    kube_watch_options o = {.path = "/api/v1/namespaces/n/configmaps", .backoff_initial_ms = 10};
    l.inf = kube_informer_new(l.uc, &cfg, &o, &h, &l, &err);
    assert_non_null(l.inf);
    uv_timer_init(&loop, &l.guard);
    uv_timer_start(&l.guard, on_guard, 60000, 0);
    assert_int_equal(kube_informer_start(l.inf, &err), 0);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    fake_http_stop(&srv);
    assert_string_equal(l.text, "add a@1,add b@2,add c@3,synced,"
                                "update a@1->6,"
                                "delete b@2,update c@3->8,add e@7,synced,"
                                "add z@10");
    assert_int_equal(l.synced, 2);
    /* The relist after 410 Gone was told, as a failure the watch got past by itself. */
    assert_true(l.errors >= 1);
    assert_int_equal(l.transient_errors, l.errors);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_and_handlers),
        cmocka_unit_test(test_transform),
        cmocka_unit_test(test_list_by_key),
        cmocka_unit_test(test_concurrent_readers),
        cmocka_unit_test(test_relist_synthetic_deletes),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
