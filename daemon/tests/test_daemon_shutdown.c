/* The runtime's ordered shutdown and its listeners' answers (daemon_shutdown.c,
 * daemon_answers.c), with parts that record when they are stopped and say when they are done:
 * the drain stage ends before after_drain, which comes before any watch stops; servers stop
 * after the watches were told to; the watch transport closes only after the last watch;
 * slots are cleared once (and only once) a part is done; a part the daemon let go is left
 * alone; a second shutdown does nothing.  Readiness: standing by without the Lease, an
 * informer that has not synced, the daemon's own answer; /metrics: the daemon's series, then
 * the shared ones, and 503 when the daemon cannot answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon_runtime.h"
#include "test_kubeconfig.h"

typedef struct fake_part fake_part;

typedef struct recorder {
    char events[1024];
    daemon_runtime *rt;
} recorder;

struct fake_part {
    const char *name;
    bool later;              /* says it is done on a later loop turn (else at once) */
    recorder *rec;
    uv_timer_t timer;
    void (*stopped)(void *);
    void *part;
    bool transport_open_when_done; /* the watch transport was still there when it was done */
};

static void record(recorder *r, const char *what, const char *name)
{
    char line[128];
    snprintf(line, sizeof line, "%s%s%s;", what, *name ? " " : "", name);
    strncat(r->events, line, sizeof r->events - strlen(r->events) - 1);
}

static void finish(fake_part *f)
{
    record(f->rec, "done", f->name);
    f->transport_open_when_done = f->rec->rt->uc != NULL;
    f->stopped(f->part);
}

static void on_timer(uv_timer_t *t)
{
    fake_part *f = t->data;
    uv_close((uv_handle_t *)t, NULL);
    finish(f);
}

static void fake_stop(void *obj, void (*stopped)(void *part), void *part)
{
    fake_part *f = obj;
    record(f->rec, "stop", f->name);
    f->stopped = stopped;
    f->part = part;
    if (!f->later) {
        finish(f);
        return;
    }
    uv_timer_init(f->rec->rt->loop, &f->timer);
    f->timer.data = f;
    uv_timer_start(&f->timer, on_timer, 1, 0);
}

typedef struct app {
    recorder rec;
    fake_part *queue, *gc, *informer, *drift, *server, *gone;
    int after_drain_calls;
} app;

static void after_drain(void *data)
{
    app *a = data;
    a->after_drain_calls++;
    record(&a->rec, "after_drain", "");
    /* every drain-stage slot is cleared by now */
    assert_null(a->queue);
    assert_null(a->gc);
    assert_non_null(a->informer);
}

static void test_stages_run_in_order(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    daemon_runtime rt = {.prog = "t", .log_key = "t", .loop = &loop};
    olm_error err;
    rt.uc = kube_uvcurl_new(&loop, &err);
    assert_non_null(rt.uc);
    app a = {.rec = {.rt = &rt}};
    fake_part queue = {.name = "queue", .later = true, .rec = &a.rec};
    fake_part gc = {.name = "gc", .rec = &a.rec};
    fake_part informer = {.name = "informer", .later = true, .rec = &a.rec};
    fake_part drift = {.name = "drift", .rec = &a.rec};
    fake_part server = {.name = "server", .later = true, .rec = &a.rec};
    fake_part gone = {.name = "gone", .rec = &a.rec};
    a.queue = &queue, a.gc = &gc, a.informer = &informer, a.drift = &drift, a.server = &server, a.gone = &gone;
    daemon_spec spec = {.rt = &rt, .app = &a, .after_drain = after_drain};
    rt.spec = &spec;
    /* owned out of stage order on purpose: the stage decides, then the order owned */
    daemon_runtime_own(&rt, DAEMON_STAGE_SERVE, &server, &a.server, fake_stop);
    daemon_runtime_own(&rt, DAEMON_STAGE_WATCH, &informer, &a.informer, fake_stop);
    daemon_runtime_own(&rt, DAEMON_STAGE_DRAIN, &queue, &a.queue, fake_stop);
    daemon_runtime_own(&rt, DAEMON_STAGE_WATCH, &drift, &a.drift, fake_stop);
    daemon_runtime_own(&rt, DAEMON_STAGE_DRAIN, &gc, &a.gc, fake_stop);
    daemon_runtime_own(&rt, DAEMON_STAGE_WATCH, &gone, &a.gone, fake_stop);
    uv_timer_t tick;
    uv_timer_init(&loop, &tick);
    daemon_runtime_own_handle(&rt, (uv_handle_t *)&tick);
    a.gone = NULL; /* the daemon let it go already: not stopped again */

    daemon_runtime_shutdown(&rt, 7);
    assert_true(rt.stopping);
    assert_int_equal(rt.exit_code, 7);
    assert_true(uv_is_closing((uv_handle_t *)&tick));
    /* the queue drains on a later turn: nothing of the next stages has started */
    assert_string_equal(a.rec.events, "stop queue;stop gc;done gc;");
    assert_int_equal(a.after_drain_calls, 0);
    daemon_runtime_shutdown(&rt, 1); /* once */
    assert_int_equal(rt.exit_code, 7);

    uv_run(&loop, UV_RUN_DEFAULT);
    assert_string_equal(a.rec.events, "stop queue;stop gc;done gc;done queue;after_drain;stop informer;stop drift;"
                                      "done drift;stop server;done informer;done server;");
    assert_int_equal(a.after_drain_calls, 1);
    assert_true(informer.transport_open_when_done); /* the last watch: the transport closed after it */
    assert_null(rt.uc);
    assert_null(a.informer);
    assert_null(a.drift);
    assert_null(a.server);
    assert_false(daemon_runtime_servers_open(&rt));
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Without parts the shutdown goes straight through, and the transport closes. */
static void test_shutdown_with_nothing_owned(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    daemon_runtime rt = {.prog = "t", .log_key = "t", .loop = &loop};
    olm_error err;
    rt.uc = kube_uvcurl_new(&loop, &err);
    daemon_runtime_shutdown(&rt, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_null(rt.uc);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A server that has not stopped by the end is reported open (the loop is then left to the OS). */
static void test_servers_open_until_stopped(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    daemon_runtime rt = {.prog = "t", .log_key = "t", .loop = &loop};
    recorder rec = {.rt = &rt};
    fake_part server = {.name = "server", .later = true, .rec = &rec};
    fake_part *slot = &server;
    daemon_runtime_own(&rt, DAEMON_STAGE_SERVE, &server, &slot, fake_stop);
    assert_true(daemon_runtime_servers_open(&rt));
    daemon_runtime_stop_servers(&rt);
    assert_true(daemon_runtime_servers_open(&rt)); /* stopping, not stopped */
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_false(daemon_runtime_servers_open(&rt));
    assert_null(slot);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A lost Lease ends the process at once with 1: nothing else runs after it (not even a part
 * the ordered shutdown would stop first). */
static void test_lost_lease_exits_at_once(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uv_loop_t loop;
        uv_loop_init(&loop);
        daemon_runtime rt = {.prog = "t", .log_key = "t", .loop = &loop};
        recorder rec = {.rt = &rt};
        fake_part queue = {.name = "queue", .rec = &rec};
        fake_part *slot = &queue;
        daemon_runtime_own(&rt, DAEMON_STAGE_DRAIN, &queue, &slot, fake_stop);
        daemon_runtime_lost_lease(&rt);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
}

/* SIGTERM with a delay: not ready at once ("shutting down") while everything keeps running,
 * the ordered shutdown (exit 0) once the delay is over; a second signal does not wait. */
static void test_terminate_is_unready_first(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    daemon_runtime rt = {.prog = "t", .log_key = "t", .loop = &loop};
    daemon_spec spec = {.rt = &rt, .unready_before_stop_ms = 150};
    rt.spec = &spec;
    rt.controllers_started = true;
    recorder rec = {.rt = &rt};
    fake_part server = {.name = "server", .rec = &rec};
    fake_part *slot = &server;
    daemon_runtime_own(&rt, DAEMON_STAGE_SERVE, &server, &slot, fake_stop);
    strbuf why = STRBUF_INIT;
    assert_true(daemon_runtime_ready(&rt, &why));
    daemon_runtime_terminate(&rt);
    assert_false(daemon_runtime_ready(&rt, &why));
    assert_string_equal(strbuf_str(&why), "shutting down");
    assert_false(rt.stopping);
    assert_non_null(slot); /* still serving */
    uv_run(&loop, UV_RUN_DEFAULT); /* the delay's timer, then the shutdown (no timing asserted) */
    assert_true(rt.stopping);
    assert_int_equal(rt.exit_code, 0);
    assert_null(slot);
    assert_int_equal(uv_loop_close(&loop), 0);

    /* a second signal: now */
    uv_loop_init(&loop);
    daemon_runtime rt2 = {.prog = "t", .log_key = "t", .loop = &loop};
    daemon_spec spec2 = {.rt = &rt2, .unready_before_stop_ms = 60000};
    rt2.spec = &spec2;
    daemon_runtime_terminate(&rt2);
    assert_false(rt2.stopping);
    daemon_runtime_terminate(&rt2);
    assert_true(rt2.stopping);
    uv_run(&loop, UV_RUN_DEFAULT); /* returns at once: the 60 s timer is closed */
    assert_int_equal(uv_loop_close(&loop), 0);

    /* no delay: at once */
    uv_loop_init(&loop);
    daemon_runtime rt3 = {.prog = "t", .log_key = "t", .loop = &loop};
    daemon_spec spec3 = {.rt = &rt3};
    rt3.spec = &spec3;
    daemon_runtime_terminate(&rt3);
    assert_true(rt3.stopping);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    strbuf_free(&why);
}

/* ------------------------------------------------------------ answers */

static bool never_ready(void *data, strbuf *why)
{
    (void)data;
    strbuf_puts(why, "catalogs not served yet");
    return false;
}

static int own_series(void *data, strbuf *out)
{
    int *fail = data;
    if (*fail)
        return -1;
    strbuf_puts(out, "# own series\nown_total 3\n");
    return 0;
}

static void test_health_answers(void **state)
{
    (void)state;
    daemon_runtime rt = {.prog = "t", .log_key = "t"};
    daemon_spec spec = {.rt = &rt, .leader_elect = true};
    rt.spec = &spec;
    strbuf b = STRBUF_INIT;
    assert_int_equal(daemon_runtime_health_answer("/healthz", &b, &rt), 200);
    assert_string_equal(strbuf_str(&b), "ok");
    /* standing by without the Lease: ready (it can do nothing more until it leads) */
    strbuf_reset(&b);
    assert_int_equal(daemon_runtime_health_answer("/readyz", &b, &rt), 200);
    /* without leader election, not yet started: not ready */
    spec.leader_elect = false;
    strbuf_reset(&b);
    assert_int_equal(daemon_runtime_health_answer("/readyz", &b, &rt), 503);
    assert_string_equal(strbuf_str(&b), "controllers not started");
    rt.controllers_started = true;
    strbuf_reset(&b);
    assert_int_equal(daemon_runtime_health_answer("/readyz", &b, &rt), 200); /* no informer to wait for */
    /* the daemon's own answer wins */
    spec.ready = never_ready;
    strbuf_reset(&b);
    assert_int_equal(daemon_runtime_health_answer("/readyz", &b, &rt), 503);
    assert_string_equal(strbuf_str(&b), "catalogs not served yet");
    strbuf_free(&b);
}

static kube_wq_result no_reconcile(const char *key, void *data)
{
    (void)key, (void)data;
    return (kube_wq_result){KUBE_WQ_OK};
}

/* An informer that has not synced keeps the default readiness at 503; the work queue's and
 * the API requests' series follow the daemon's own, then build_info with the spec's name. */
static void test_informer_readiness_and_metrics(void **state)
{
    (void)state;
    char path[] = "/tmp/daemon-shutdown-kubeconfig-XXXXXX";
    test_kubeconfig_write(path, "http://127.0.0.1:1");
    uv_loop_t loop;
    uv_loop_init(&loop);
    daemon_runtime rt = {.prog = "t", .log_key = "t", .loop = &loop};
    int fail = 0;
    daemon_spec spec = {.rt = &rt, .app = &fail, .leader_elect = true, .lease_name = "the-lease",
                        .metrics_name = "my_daemon", .metrics = own_series};
    rt.spec = &spec;
    assert_int_equal(daemon_runtime_connect(&rt, path), 0);
    olm_error err;
    assert_int_equal(daemon_runtime_start_transport(&rt, &err), 0);
    kube_watch_options wo = {.path = "/api/v1/namespaces"};
    kube_informer_handlers h = {0};
    kube_informer *inf = kube_informer_new(rt.uc, kube_client_config(rt.client), &wo, &h, NULL, &err);
    assert_non_null(inf);
    daemon_runtime_own_informer(&rt, &inf);
    kube_workqueue_options qo = {.concurrency = 1};
    kube_workqueue *wq = kube_workqueue_new(&loop, &qo, no_reconcile, NULL, &err);
    assert_non_null(wq);
    daemon_runtime_own_workqueue(&rt, &wq, "widget");
    rt.controllers_started = true;

    strbuf b = STRBUF_INIT;
    assert_int_equal(daemon_runtime_health_answer("/readyz", &b, &rt), 503);
    assert_string_equal(strbuf_str(&b), "informers not synced");

    strbuf_reset(&b);
    assert_int_equal(daemon_runtime_metrics_answer(&b, &rt), 0);
    const char *text = strbuf_str(&b);
    const char *own = strstr(text, "own_total 3");
    const char *queue = strstr(text, "controller=\"widget\"");
    const char *lease = strstr(text, "leader_election_master_status{name=\"the-lease\"} 0");
    const char *build = strstr(text, "my_daemon_build_info");
    assert_non_null(own);
    assert_non_null(queue);
    assert_non_null(lease);
    assert_non_null(build);
    assert_true(own < queue && queue < lease && lease < build);
    fail = 1; /* the daemon cannot answer: 503 */
    strbuf_reset(&b);
    assert_int_equal(daemon_runtime_metrics_answer(&b, &rt), -1);
    strbuf_free(&b);

    daemon_runtime_shutdown(&rt, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_null(inf);
    assert_null(wq);
    assert_null(rt.uc);
    assert_int_equal(uv_loop_close(&loop), 0);
    daemon_runtime_free(&rt);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stages_run_in_order),
        cmocka_unit_test(test_shutdown_with_nothing_owned),
        cmocka_unit_test(test_servers_open_until_stopped),
        cmocka_unit_test(test_lost_lease_exits_at_once),
        cmocka_unit_test(test_terminate_is_unready_first),
        cmocka_unit_test(test_health_answers),
        cmocka_unit_test(test_informer_readiness_and_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
