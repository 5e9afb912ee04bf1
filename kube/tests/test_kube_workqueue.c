/* Tests of kube_workqueue on a real libuv loop and threadpool: dedupe, per-key
 * exclusion while processing, back-off schedule and cap, forget, add_after,
 * requeue-after / terminal results, shutdown with and without drain.
 * Timing is only checked as lower bounds (a timer never fires early); order and
 * counts carry the assertions, so a loaded machine cannot make them flaky. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube_workqueue.h"

#define MAX_RUNS 64

typedef struct rec {
    uv_mutex_t mu;
    char order[MAX_RUNS][16];
    uint64_t at_ms[MAX_RUNS]; /* uv_hrtime in ms of each call */
    int runs;
    /* per-test behaviour */
    int fail_first;           /* return ERROR for the first N calls */
    int requeue_first;        /* return REQUEUE_AFTER 10 for the first N calls */
    bool terminal;
    atomic_int inflight_a;    /* concurrent reconciles of key "a" */
    atomic_int max_inflight_a;
    uv_sem_t release;         /* the first reconcile of "a" waits on it when block_a */
    bool block_a;
    atomic_bool a_started;
    bool done;
} rec;

static kube_wq_result reconcile(const char *key, void *data)
{
    rec *r = data;
    if (strcmp(key, "a") == 0) {
        int n = atomic_fetch_add(&r->inflight_a, 1) + 1;
        int m = atomic_load(&r->max_inflight_a);
        while (n > m && !atomic_compare_exchange_weak(&r->max_inflight_a, &m, n))
            ;
    }
    uv_mutex_lock(&r->mu);
    int i = r->runs++;
    if (i < MAX_RUNS) {
        snprintf(r->order[i], sizeof r->order[i], "%s", key);
        r->at_ms[i] = uv_hrtime() / 1000000;
    }
    uv_mutex_unlock(&r->mu);
    if (strcmp(key, "a") == 0 && r->block_a && i == 0) {
        atomic_store(&r->a_started, true);
        uv_sem_wait(&r->release);
    }
    if (strcmp(key, "a") == 0)
        atomic_fetch_sub(&r->inflight_a, 1);
    kube_wq_result res = {.kind = KUBE_WQ_OK, .requeue_after_ms = 0};
    if (i < r->fail_first)
        res.kind = KUBE_WQ_ERROR;
    else if (i < r->requeue_first)
        res = (kube_wq_result){.kind = KUBE_WQ_REQUEUE_AFTER, .requeue_after_ms = 10};
    else if (r->terminal)
        res.kind = KUBE_WQ_TERMINAL;
    return res;
}

static void rec_init(rec *r)
{
    memset(r, 0, sizeof *r);
    uv_mutex_init(&r->mu);
    uv_sem_init(&r->release, 0);
}

static void rec_free(rec *r)
{
    uv_mutex_destroy(&r->mu);
    uv_sem_destroy(&r->release);
}

static void on_done(void *data)
{
    ((rec *)data)->done = true;
}

static const char *joined(rec *r)
{
    static char buf[1024];
    buf[0] = '\0';
    for (int i = 0; i < r->runs && i < MAX_RUNS; i++) {
        if (i)
            strcat(buf, ",");
        strcat(buf, r->order[i]);
    }
    return buf;
}

/* Runs the loop until the queue is idle (nothing queued, running or waiting),
 * then shuts it down and runs until it is freed. */
static void idle_check(uv_idle_t *h);
typedef struct runner {
    uv_idle_t idle;
    kube_workqueue *q;
    rec *r;
    strbuf *metrics; /* when set: the queue's metrics, rendered just before the shutdown */
} runner;

static void idle_check(uv_idle_t *h)
{
    runner *rn = h->data;
    if (kube_workqueue_len(rn->q) || kube_workqueue_running(rn->q) || kube_workqueue_waiting(rn->q))
        return;
    uv_idle_stop(h);
    uv_close((uv_handle_t *)h, NULL);
    if (rn->metrics)
        assert_int_equal(kube_workqueue_render_metrics(rn->q, "things", rn->metrics), 0);
    kube_workqueue_shutdown(rn->q, true, on_done, rn->r);
}

static void run_until_idle_metrics(uv_loop_t *loop, kube_workqueue *q, rec *r, strbuf *metrics)
{
    runner rn = {.q = q, .r = r, .metrics = metrics};
    uv_idle_init(loop, &rn.idle);
    rn.idle.data = &rn;
    uv_idle_start(&rn.idle, idle_check);
    assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
    assert_true(r->done);
}

static void run_until_idle(uv_loop_t *loop, kube_workqueue *q, rec *r)
{
    run_until_idle_metrics(loop, q, r, NULL);
}

/* controller-runtime's and client-go's names, counted as they count. */
static void test_metrics(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    r.fail_first = 2; /* "a" fails twice (two retries), then succeeds */
    olm_error err;
    kube_workqueue_options o = {.concurrency = 3, .base_delay_ms = 1};
    kube_workqueue *q = kube_workqueue_new(&loop, &o, reconcile, &r, &err);
    assert_int_equal(kube_workqueue_add(q, "a", &err), 0);
    assert_int_equal(kube_workqueue_add(q, "a", &err), 0); /* while "a" runs: dirty, run again after */
    strbuf m = STRBUF_INIT;
    run_until_idle_metrics(&loop, q, &r, &m);
    const char *t = strbuf_str(&m);
    /* Usually 3 runs (error, error, success).  A retry that comes due while the second run
     * is still going (a slow machine: the back-off is 1 ms) marks "a" dirty again and costs
     * one more successful run, as in client-go; every run is still preceded by one add. */
    int runs = r.runs;
    assert_true(runs == 3 || runs == 4);
    char success[160], buckets[160], count[160], adds[160], qcount[160], wcount[160];
    snprintf(success, sizeof success,
             "controller_runtime_reconcile_total{controller=\"things\",result=\"success\"} %d\n", runs - 2);
    snprintf(buckets, sizeof buckets,
             "controller_runtime_reconcile_time_seconds_bucket{controller=\"things\",le=\"60\"} %d\n", runs);
    snprintf(count, sizeof count, "controller_runtime_reconcile_time_seconds_count{controller=\"things\"} %d\n", runs);
    /* the first add, the second add while it runs (dirty: one more run), and the retries */
    snprintf(adds, sizeof adds, "workqueue_adds_total{name=\"things\"} %d\n", runs);
    snprintf(qcount, sizeof qcount, "workqueue_queue_duration_seconds_count{name=\"things\"} %d\n", runs);
    snprintf(wcount, sizeof wcount, "workqueue_work_duration_seconds_count{name=\"things\"} %d\n", runs);
    const char *want[] = {
        "# TYPE controller_runtime_reconcile_total counter\n",
        "controller_runtime_reconcile_total{controller=\"things\",result=\"error\"} 2\n",
        success,
        "controller_runtime_reconcile_total{controller=\"things\",result=\"requeue_after\"} 0\n",
        "controller_runtime_reconcile_errors_total{controller=\"things\"} 2\n",
        "controller_runtime_reconcile_panics_total{controller=\"things\"} 0\n",
        buckets,
        count,
        "controller_runtime_max_concurrent_reconciles{controller=\"things\"} 3\n",
        "controller_runtime_active_workers{controller=\"things\"} 0\n",
        "workqueue_depth{name=\"things\"} 0\n",
        adds,
        "workqueue_retries_total{name=\"things\"} 2\n",
        qcount,
        "workqueue_work_duration_seconds_bucket{name=\"things\",le=\"1e-08\"} 0\n",
        wcount,
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(t, want[i]))
            fail_msg("missing %s in:\n%s", want[i], t);
    strbuf_free(&m);
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

/* An error with requeue_after_ms: retried by then even when the back-off would wait longer. */
static kube_wq_result fail_with_deadline(const char *key, void *data)
{
    rec *r = data;
    uv_mutex_lock(&r->mu);
    int i = r->runs++;
    if (i < MAX_RUNS)
        r->at_ms[i] = uv_hrtime() / 1000000;
    uv_mutex_unlock(&r->mu);
    (void)key;
    return i == 0 ? (kube_wq_result){.kind = KUBE_WQ_ERROR, .requeue_after_ms = 20}
                  : (kube_wq_result){.kind = KUBE_WQ_OK, .requeue_after_ms = 0};
}

static void test_error_with_deadline(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    olm_error err;
    kube_workqueue_options o = {.base_delay_ms = 60000}; /* a back-off far beyond the test */
    kube_workqueue *q = kube_workqueue_new(&loop, &o, fail_with_deadline, &r, &err);
    assert_int_equal(kube_workqueue_add(q, "k", &err), 0);
    run_until_idle(&loop, q, &r);
    assert_int_equal(r.runs, 2);
    assert_true(r.at_ms[1] - r.at_ms[0] >= 20 && r.at_ms[1] - r.at_ms[0] < 30000);
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

/* Two controllers in one daemon: each family's HELP and TYPE once, both controllers' samples
 * under it (a second HELP line is a parse error for Prometheus' text parser). */
static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_metrics_of_two_queues_share_headers(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r1, r2;
    rec_init(&r1);
    rec_init(&r2);
    olm_error err;
    kube_workqueue_options o = {.concurrency = 1, .base_delay_ms = 1};
    kube_workqueue *qs[2] = {kube_workqueue_new(&loop, &o, reconcile, &r1, &err),
                             kube_workqueue_new(&loop, &o, reconcile, &r2, &err)};
    const char *names[2] = {"clusterextension", "clusterobjectset"};
    strbuf m = STRBUF_INIT;
    assert_int_equal(kube_workqueues_render_metrics((const kube_workqueue *const *)qs, names, 2, &m), 0);
    const char *t = strbuf_str(&m);
    const char *families[] = {"controller_runtime_reconcile_total ", "controller_runtime_reconcile_errors_total ",
                              "controller_runtime_reconcile_time_seconds ", "workqueue_depth ",
                              "workqueue_work_duration_seconds "};
    for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
        char help[96], type[96];
        snprintf(help, sizeof help, "# HELP %s", families[i]);
        snprintf(type, sizeof type, "# TYPE %s", families[i]);
        if (count_of(t, help) != 1 || count_of(t, type) != 1)
            fail_msg("%s: %zu HELP, %zu TYPE lines in\n%s", families[i], count_of(t, help), count_of(t, type), t);
    }
    assert_non_null(strstr(t, "controller_runtime_reconcile_total{controller=\"clusterextension\",result=\"success\"} 0"));
    assert_non_null(strstr(t, "controller_runtime_reconcile_total{controller=\"clusterobjectset\",result=\"success\"} 0"));
    assert_non_null(strstr(t, "workqueue_depth{name=\"clusterobjectset\"} 0"));
    /* All samples of a family follow its header: the second queue's depth comes before the next family. */
    assert_true(strstr(t, "workqueue_depth{name=\"clusterobjectset\"}") < strstr(t, "# HELP workqueue_adds_total"));
    strbuf_free(&m);
    for (int i = 0; i < 2; i++)
        kube_workqueue_shutdown(qs[i], true, on_done, i ? &r2 : &r1);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r1);
    rec_free(&r2);
}

static void test_dedupe_and_order(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    olm_error err;
    kube_workqueue_options o = {.concurrency = 1};
    kube_workqueue *q = kube_workqueue_new(&loop, &o, reconcile, &r, &err);
    assert_non_null(q);
    /* "x" is dispatched at once (idle worker); the rest wait in order, deduplicated. */
    assert_int_equal(kube_workqueue_add(q, "x", &err), 0);
    assert_int_equal(kube_workqueue_add(q, "b", &err), 0);
    assert_int_equal(kube_workqueue_add(q, "c", &err), 0);
    assert_int_equal(kube_workqueue_add(q, "b", &err), 0);
    assert_int_equal(kube_workqueue_add(q, "c", &err), 0);
    assert_int_equal(kube_workqueue_add(q, "b", &err), 0);
    assert_int_equal(kube_workqueue_len(q), 2);
    assert_int_equal(kube_workqueue_running(q), 1);
    run_until_idle(&loop, q, &r);
    assert_string_equal(joined(&r), "x,b,c");
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

/* While "a" is processing, adds only mark it dirty; it runs exactly once more
 * after, never twice at once, even with spare workers. */
typedef struct excl {
    uv_timer_t t;
    kube_workqueue *q;
    rec *r;
    int phase;
} excl;

static void excl_tick(uv_timer_t *t)
{
    excl *e = t->data;
    if (!atomic_load(&e->r->a_started))
        return;
    uv_timer_stop(t);
    uv_close((uv_handle_t *)t, NULL);
    olm_error err;
    assert_int_equal(kube_workqueue_add(e->q, "a", &err), 0);
    assert_int_equal(kube_workqueue_add(e->q, "a", &err), 0);
    assert_int_equal(kube_workqueue_add(e->q, "b", &err), 0);
    /* "a" is dirty but not handed out: nothing queued for it, b runs meanwhile. */
    assert_true(kube_workqueue_running(e->q) >= 1);
    uv_sem_post(&e->r->release);
}

static void test_exclusion_while_processing(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    r.block_a = true;
    olm_error err;
    kube_workqueue_options o = {.concurrency = 4};
    kube_workqueue *q = kube_workqueue_new(&loop, &o, reconcile, &r, &err);
    assert_int_equal(kube_workqueue_add(q, "a", &err), 0);
    excl e = {.q = q, .r = &r};
    uv_timer_init(&loop, &e.t);
    e.t.data = &e;
    uv_timer_start(&e.t, excl_tick, 1, 1);
    run_until_idle(&loop, q, &r);
    int a_runs = 0;
    for (int i = 0; i < r.runs; i++)
        a_runs += strcmp(r.order[i], "a") == 0;
    assert_int_equal(a_runs, 2);
    assert_int_equal(r.runs, 3);
    assert_int_equal(atomic_load(&r.max_inflight_a), 1);
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

static void test_backoff_function(void **state)
{
    (void)state;
    uint64_t want[] = {5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560};
    for (unsigned i = 0; i < 10; i++)
        assert_int_equal(kube_workqueue_backoff_ms(5, 1000000, i), want[i]);
    assert_int_equal(kube_workqueue_backoff_ms(5, 1000000, 17), 655360);
    assert_int_equal(kube_workqueue_backoff_ms(5, 1000000, 18), 1000000); /* capped at 1000 s */
    assert_int_equal(kube_workqueue_backoff_ms(5, 1000000, 4000000000u), 1000000); /* no overflow */
    assert_int_equal(kube_workqueue_backoff_ms(5, 20, 3), 20);
}

/* Errors are retried with 5, 10, 20, 40 ms (lower bounds), then success forgets. */
static void test_backoff_on_loop(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    r.fail_first = 5;
    olm_error err;
    kube_workqueue_options o = {.concurrency = 2, .max_delay_ms = 30};
    kube_workqueue *q = kube_workqueue_new(&loop, &o, reconcile, &r, &err);
    assert_int_equal(kube_workqueue_add(q, "k", &err), 0);
    run_until_idle(&loop, q, &r);
    assert_int_equal(r.runs, 6);
    uint64_t want[] = {5, 10, 20, 30, 30}; /* capped at 30 by the options */
    for (int i = 1; i < 6; i++)
        assert_true(r.at_ms[i] - r.at_ms[i - 1] + 1 >= want[i - 1]);
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

static void test_forget_and_requeues(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    olm_error err;
    kube_workqueue *q = kube_workqueue_new(&loop, NULL, reconcile, &r, &err);
    assert_int_equal(kube_workqueue_num_requeues(q, "k"), 0);
    assert_int_equal(kube_workqueue_add_rate_limited(q, "k", &err), 0);
    assert_int_equal(kube_workqueue_add_rate_limited(q, "k", &err), 0);
    assert_int_equal(kube_workqueue_add_rate_limited(q, "k", &err), 0);
    assert_int_equal(kube_workqueue_num_requeues(q, "k"), 3);
    assert_int_equal(kube_workqueue_waiting(q), 1); /* one wake-up, the earliest */
    kube_workqueue_forget(q, "k");
    assert_int_equal(kube_workqueue_num_requeues(q, "k"), 0);
    run_until_idle(&loop, q, &r);
    assert_string_equal(joined(&r), "k");
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

static void test_add_after_order(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    olm_error err;
    kube_workqueue_options o = {.concurrency = 1};
    kube_workqueue *q = kube_workqueue_new(&loop, &o, reconcile, &r, &err);
    /* add_after counts from the loop's time, cached at uv_loop_init: refreshed after t0, so
     * that a pause before this line (a busy machine) cannot put the deadlines before t0 + N. */
    uint64_t t0 = uv_hrtime() / 1000000;
    uv_update_time(&loop);
    assert_int_equal(kube_workqueue_add_after(q, "late", 120, &err), 0);
    assert_int_equal(kube_workqueue_add_after(q, "mid", 60, &err), 0);
    assert_int_equal(kube_workqueue_add_after(q, "x", 200, &err), 0);
    assert_int_equal(kube_workqueue_add_after(q, "x", 30, &err), 0); /* earlier wins */
    assert_int_equal(kube_workqueue_add_after(q, "x", 500, &err), 0); /* later is ignored */
    /* the same time as one waiting: after it (first come, first served), in the middle and
     * at the tail (which "x" left when it moved to the front) */
    assert_int_equal(kube_workqueue_add_after(q, "tie", 60, &err), 0);
    assert_int_equal(kube_workqueue_add_after(q, "end", 120, &err), 0);
    assert_int_equal(kube_workqueue_add(q, "now", &err), 0);
    assert_int_equal(kube_workqueue_waiting(q), 5);
    run_until_idle(&loop, q, &r);
    assert_string_equal(joined(&r), "now,x,mid,tie,late,end");
    assert_true(r.at_ms[1] + 1 - t0 >= 30);
    assert_true(r.at_ms[4] + 1 - t0 >= 120);
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

static void test_requeue_after_and_terminal(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    r.requeue_first = 2;
    olm_error err;
    kube_workqueue *q = kube_workqueue_new(&loop, NULL, reconcile, &r, &err);
    assert_int_equal(kube_workqueue_add(q, "k", &err), 0);
    run_until_idle(&loop, q, &r);
    assert_string_equal(joined(&r), "k,k,k");
    uv_loop_close(&loop);
    rec_free(&r);

    uv_loop_init(&loop);
    rec_init(&r);
    r.terminal = true;
    q = kube_workqueue_new(&loop, NULL, reconcile, &r, &err);
    assert_int_equal(kube_workqueue_add(q, "k", &err), 0);
    run_until_idle(&loop, q, &r);
    assert_string_equal(joined(&r), "k");
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

/* A key whose object is gone: the requeue its earlier reconcile scheduled (a minute away) is
 * dropped, and the queue keeps nothing for the key (it goes idle at once, after 2 runs). */
typedef struct gone_rec {
    atomic_int runs;
    kube_workqueue *q;
    uv_idle_t idle;
    bool added_again, done;
} gone_rec;

static kube_wq_result reconcile_then_gone(const char *key, void *data)
{
    (void)key;
    gone_rec *g = data;
    if (atomic_fetch_add(&g->runs, 1) == 0)
        return (kube_wq_result){.kind = KUBE_WQ_REQUEUE_AFTER, .requeue_after_ms = 60000};
    return (kube_wq_result){.kind = KUBE_WQ_OK, .gone = true};
}

static void gone_done(void *data)
{
    ((gone_rec *)data)->done = true;
}

static void gone_check(uv_idle_t *h)
{
    gone_rec *g = h->data;
    if (kube_workqueue_running(g->q) || kube_workqueue_len(g->q))
        return;
    if (!g->added_again) {
        /* The first run scheduled its requeue; the object is then deleted (an event adds it). */
        assert_int_equal(atomic_load(&g->runs), 1);
        assert_int_equal(kube_workqueue_waiting(g->q), 1);
        g->added_again = true;
        olm_error err;
        assert_int_equal(kube_workqueue_add(g->q, "gone", &err), 0);
        return;
    }
    assert_int_equal(kube_workqueue_waiting(g->q), 0);
    uv_idle_stop(h);
    uv_close((uv_handle_t *)h, NULL);
    kube_workqueue_shutdown(g->q, true, gone_done, g);
}

static void test_gone_drops_the_scheduled_requeue(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    gone_rec g = {0};
    olm_error err;
    g.q = kube_workqueue_new(&loop, NULL, reconcile_then_gone, &g, &err);
    assert_non_null(g.q);
    assert_int_equal(kube_workqueue_add(g.q, "gone", &err), 0);
    uv_idle_init(&loop, &g.idle);
    g.idle.data = &g;
    uv_idle_start(&g.idle, gone_check);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_true(g.done);
    assert_int_equal(atomic_load(&g.runs), 2);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_shutdown_drains(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    olm_error err;
    kube_workqueue_options o = {.concurrency = 1};
    kube_workqueue *q = kube_workqueue_new(&loop, &o, reconcile, &r, &err);
    const char *keys[] = {"k1", "k2", "k3", "k4", "k5"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(kube_workqueue_add(q, keys[i], &err), 0);
    assert_int_equal(kube_workqueue_add_after(q, "never", 600000, &err), 0);
    kube_workqueue_shutdown(q, true, on_done, &r);
    assert_true(kube_workqueue_shutting_down(q));
    assert_int_equal(kube_workqueue_add(q, "late", &err), -1);
    assert_non_null(strstr(err.msg, "shutting down"));
    assert_int_equal(kube_workqueue_add_rate_limited(q, "late", &err), -1);
    assert_false(r.done);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_true(r.done);
    assert_true(uv_hrtime() - t0 < 60ull * 1000000000ull); /* did not wait for "never" */
    assert_string_equal(joined(&r), "k1,k2,k3,k4,k5");
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

static void test_shutdown_without_drain(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec r;
    rec_init(&r);
    olm_error err;
    kube_workqueue_options o = {.concurrency = 1};
    kube_workqueue *q = kube_workqueue_new(&loop, &o, reconcile, &r, &err);
    for (int i = 0; i < 5; i++)
        assert_int_equal(kube_workqueue_add(q, (const char *[]){"k1", "k2", "k3", "k4", "k5"}[i], &err), 0);
    /* k1 is already on a worker; the queued rest are dropped. */
    kube_workqueue_shutdown(q, false, on_done, &r);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_true(r.done);
    assert_string_equal(joined(&r), "k1");
    assert_int_equal(uv_loop_close(&loop), 0);
    rec_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedupe_and_order),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_metrics_of_two_queues_share_headers),
        cmocka_unit_test(test_error_with_deadline),
        cmocka_unit_test(test_exclusion_while_processing),
        cmocka_unit_test(test_backoff_function),
        cmocka_unit_test(test_backoff_on_loop),
        cmocka_unit_test(test_forget_and_requeues),
        cmocka_unit_test(test_add_after_order),
        cmocka_unit_test(test_requeue_after_and_terminal),
        cmocka_unit_test(test_gone_drops_the_scheduled_requeue),
        cmocka_unit_test(test_shutdown_drains),
        cmocka_unit_test(test_shutdown_without_drain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
