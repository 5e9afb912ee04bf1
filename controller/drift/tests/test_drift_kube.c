/* drift_kube: the drift watcher's production backend (kube_watch on a kube_uvcurl) against
 * a fake apiserver on testsupport's HTTP fake in its streaming mode: the watch lists and watches
 * the extension's collection with its owner selector, a recorded object deleted on the
 * cluster asks for a reconcile of its extension, and a 403 reaches the watcher with its
 * status (it gives the watch up, instead of retrying forever).
 *
 * Mutation checks (production line broken, test seen failing, line restored):
 *   drift_kube.c:24  events not passed on        -> test_deleted_object_asks_for_a_reconcile
 *   drift_kube.c:30  the sync not passed on      -> test_deleted_object_asks_for_a_reconcile
 *   drift_kube.c:36  the HTTP status passed as 0 -> test_forbidden_watch_is_given_up */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drift.h"
#include "fake_http_server.h"

#define CM "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ops\"," \
           "\"resourceVersion\":\"%s\",\"labels\":{\"olm.operatorframework.io/owner-kind\":\"ClusterExtension\"," \
           "\"olm.operatorframework.io/owner-name\":\"ext\"}}}"

typedef struct server_state {
    bool forbid;        /* answer every request 403 */
    atomic_bool release; /* the WATCH sends its DELETED event only once this is set */
    char targets[8][512]; /* the first requests' targets */
    unsigned n;
} server_state;

static void apiserver(fake_http_conn *c, const fake_http_request *req, void *user)
{
    server_state *st = user;
    pthread_mutex_lock(&c->s->lock);
    if (st->n < 8)
        snprintf(st->targets[st->n], sizeof st->targets[0], "%.500s", req->target);
    st->n++;
    bool forbid = st->forbid;
    pthread_mutex_unlock(&c->s->lock);
    char obj[512];
    if (forbid) {
        fake_http_respond(c, 403, "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"configmaps is "
                            "forbidden: User \\\"sa\\\" cannot list resource \\\"configmaps\\\"\"}");
    } else if (!strstr(req->target, "watch=")) { /* the LIST: the recorded object is there */
        char list[1024];
        snprintf(obj, sizeof obj, CM, "5");
        snprintf(list, sizeof list, "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[%s]}", obj);
        fake_http_respond(c, 200, list);
    } else { /* the WATCH: it is deleted, then the stream stays open */
        char ev[1024];
        snprintf(obj, sizeof obj, CM, "11");
        snprintf(ev, sizeof ev, "{\"type\":\"DELETED\",\"object\":%s}\n", obj);
        fake_http_chunked_begin(c, 200);
        while (!atomic_load(&st->release) && !atomic_load(&c->s->stop))
            usleep(5000);
        fake_http_chunk(c, ev, strlen(ev));
        fake_http_hold_open(c);
    }
}

typedef struct outcome {
    char enqueued[64]; /* the extension a reconcile was asked for */
    char log[1024];
    uv_timer_t poll;
    drift_watcher *d;
    bool give_up_seen;
    server_state *st;
    char before_delete[64]; /* what was enqueued before the DELETED event was let go */
    int ticks;
    size_t active_at_end; /* drift_watcher_active when the loop ended */
} outcome;

static void enqueue_after(const char *extension, uint64_t delay_ms, void *data)
{
    (void)delay_ms;
    outcome *o = data;
    snprintf(o->enqueued, sizeof o->enqueued, "%s", extension);
}

static void log_line(const char *extension, const char *line, void *data)
{
    outcome *o = data;
    size_t n = strlen(o->log);
    snprintf(o->log + n, sizeof o->log - n, "%s: %s\n", extension, line);
}

/* Ends the loop once the outcome is in (or after 5 s). */
static void on_poll(uv_timer_t *t)
{
    outcome *o = t->data;
    /* 300 ms after the start the LIST has long been seen: only then is the object deleted. */
    if (o->ticks == 30) {
        snprintf(o->before_delete, sizeof o->before_delete, "%s", o->enqueued);
        atomic_store(&o->st->release, true);
    }
    bool done = (o->ticks > 30 && o->enqueued[0]) || (o->give_up_seen && drift_watcher_active(o->d) == 0);
    if (done || ++o->ticks > 500)
        uv_stop(t->loop);
}

static int builtin(void *data, const char *api_version, const char *kind, kube_resource_info *out, olm_error *err)
{
    (void)data;
    return kube_builtin_kind(api_version, kind, out) ? 0 : olm_error_set(err, "unknown kind %s", kind);
}

static void on_closed_uc(void *data)
{
    kube_uvcurl_close(data, NULL, NULL);
}

/* Watches ext's ConfigMap ops/cm as the token "t" through the kube backend until the
 * outcome is in; the server's state says what the apiserver answers. */
static void run(server_state *st, outcome *o)
{
    fake_http_server srv;
    assert_int_equal(fake_http_start_streaming(&srv, apiserver, st), 0);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    assert_non_null(uc);
    kube_config base = {0};
    base.server = srv.url;
    drift_backend backend = drift_backend_kube(uc);
    drift_callbacks cb = {.enqueue_after = enqueue_after, .log = log_line, .data = o};
    drift_watcher_options opts = {.coalesce_ms = 1, .per_extension_only = true};
    o->d = drift_watcher_new(&loop, &base, &backend, &cb, &opts, &err);
    assert_non_null(o->d);

    install_object_ref refs[] = {{"v1", "ConfigMap", "ops", "cm", 0}};
    install_record rec = {.objects = refs, .nobjects = 1};
    drift_spec spec = {.extension = strdup("ext"), .ns = strdup("ops"), .sa = strdup("installer"),
                       .token = strdup("t")};
    assert_int_equal(drift_spec_paths(&spec, &rec, NULL, NULL, builtin, NULL, &err), 0);
    assert_int_equal(drift_watcher_post(o->d, &spec, &err), 0);
    drift_watcher_flush(o->d);
    o->give_up_seen = st->forbid;
    o->st = st;
    uv_timer_init(&loop, &o->poll);
    o->poll.data = o;
    uv_timer_start(&o->poll, on_poll, 10, 10);
    uv_run(&loop, UV_RUN_DEFAULT);

    o->active_at_end = drift_watcher_active(o->d);
    uv_close((uv_handle_t *)&o->poll, NULL);
    drift_watcher_stop(o->d, on_closed_uc, uc);
    o->d = NULL;
    fake_http_stop(&srv); /* lets the held-open watch go */
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_deleted_object_asks_for_a_reconcile(void **state)
{
    (void)state;
    server_state st = {0};
    outcome o = {0};
    run(&st, &o);
    assert_string_equal(o.before_delete, ""); /* the LIST had the object: nothing to repair */
    assert_string_equal(o.enqueued, "ext");
    /* The LIST, then the WATCH from its resourceVersion, both in the one namespace with the
     * owner selector. */
    assert_true(st.n >= 2);
    assert_non_null(strstr(st.targets[0], "/api/v1/namespaces/ops/configmaps?"));
    assert_non_null(strstr(st.targets[0], "labelSelector=olm.operatorframework.io%2Fowner-kind%3DClusterExtension%2C"
                                          "olm.operatorframework.io%2Fowner-name%3Dext"));
    assert_null(strstr(st.targets[0], "watch="));
    assert_non_null(strstr(st.targets[1], "watch=1"));
    assert_non_null(strstr(st.targets[1], "resourceVersion=10"));
}

static void test_forbidden_watch_is_given_up(void **state)
{
    (void)state;
    server_state st = {.forbid = true};
    outcome o = {0};
    run(&st, &o);
    assert_string_equal(o.enqueued, "");
    assert_int_equal(o.active_at_end, 0);
    /* The backend handed the watcher the HTTP status of the failure, not just its text. */
    if (!strstr(o.log, "ServiceAccount ops/installer may not list /api/v1/namespaces/ops/configmaps (HTTP 403)"))
        fail_msg("log: %s", o.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deleted_object_asks_for_a_reconcile),
        cmocka_unit_test(test_forbidden_watch_is_given_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
