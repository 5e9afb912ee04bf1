/* Tests of kube_leader against a fake Lease API (the streaming mode of testsupport's HTTP fake)
 * that implements GET/POST/PUT of one Lease with resourceVersion checks (409 on
 * a stale write), like the API server.  Short durations keep it quick; the
 * assertions are on order and state, not on timing. */
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
#include <jansson.h>

#include "fake_http_server.h"
#include "kube_leader.h"

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/sys/leases/lock"

typedef struct fake_lease {
    json_t *lease; /* NULL: absent */
    int rv;
    int puts, posts, conflicts;
    int fail_puts_after; /* >0: PUTs after this many answer 500 */
    bool conflict_next_put;
    /* hold_next_put: the next PUT is applied, then its response waits (put_held)
     * until the test sets gate_open and broadcasts `gate` (initialised by the test
     * that sets gate_used).  Lets a test stop a leader while a renewal the server
     * has already applied is still in flight. */
    bool hold_next_put, put_held, gate_open, gate_used;
    pthread_cond_t gate;
} fake_lease;

static void lease_handler(fake_http_conn *c, const fake_http_request *req, void *user)
{
    fake_lease *f = user;
    char *out = NULL;
    int status = 200;
    pthread_mutex_lock(&c->s->lock);
    if (strcmp(req->method, "GET") == 0 && strcmp(req->target, LEASE_PATH) == 0) {
        if (f->lease)
            out = json_dumps(f->lease, JSON_COMPACT);
        else
            status = 404;
    } else if (strcmp(req->method, "POST") == 0 &&
               strcmp(req->target, "/apis/coordination.k8s.io/v1/namespaces/sys/leases") == 0) {
        f->posts++;
        if (f->lease) {
            status = 409;
        } else {
            f->lease = json_loads(req->body, 0, NULL);
            char rvs[16];
            snprintf(rvs, sizeof rvs, "%d", ++f->rv);
            json_object_set_new(json_object_get(f->lease, "metadata"), "resourceVersion", json_string(rvs));
            out = json_dumps(f->lease, JSON_COMPACT);
            status = 201;
        }
    } else if (strcmp(req->method, "PUT") == 0 && strcmp(req->target, LEASE_PATH) == 0) {
        f->puts++;
        json_t *nl = json_loads(req->body, 0, NULL);
        const char *sent = json_string_value(json_object_get(json_object_get(nl, "metadata"), "resourceVersion"));
        char cur[16];
        snprintf(cur, sizeof cur, "%d", f->rv);
        if (f->fail_puts_after && f->puts > f->fail_puts_after) {
            status = 500;
            json_decref(nl);
        } else if (f->conflict_next_put || !f->lease || !sent || strcmp(sent, cur) != 0) {
            f->conflict_next_put = false;
            f->conflicts++;
            status = 409;
            json_decref(nl);
        } else {
            json_decref(f->lease);
            f->lease = nl;
            snprintf(cur, sizeof cur, "%d", ++f->rv);
            json_object_set_new(json_object_get(f->lease, "metadata"), "resourceVersion", json_string(cur));
            out = json_dumps(f->lease, JSON_COMPACT);
            if (f->hold_next_put) {
                f->hold_next_put = false;
                f->put_held = true;
                while (!f->gate_open)
                    pthread_cond_wait(&f->gate, &c->s->lock);
            }
        }
    } else {
        status = 400;
    }
    pthread_mutex_unlock(&c->s->lock);
    fake_http_respond(c, status, out ? out : "{\"kind\":\"Status\"}");
    free(out);
}

static const char *spec_str(fake_lease *f, const char *field)
{
    return json_string_value(json_object_get(json_object_get(f->lease, "spec"), field));
}

static json_int_t spec_int(fake_lease *f, const char *field)
{
    return json_integer_value(json_object_get(json_object_get(f->lease, "spec"), field));
}

/* ---------------------------------------------------------------- harness */

typedef struct cand {
    const char *id;
    kube_leader *l;
    int started, stopped;
    struct world *w;
} cand;

typedef struct world {
    uv_loop_t loop;
    kube_uvcurl *uc;
    kube_config cfg;
    fake_http_server srv;
    fake_lease f;
    uv_timer_t tick, guard;
    int step;
    int open; /* leaders not yet closed */
    void (*on_tick)(struct world *w);
    cand a, b;
} world;

static void c_started(void *d)
{
    ((cand *)d)->started++;
}

static void c_stopped(void *d)
{
    ((cand *)d)->stopped++;
}

static void on_guard(uv_timer_t *t)
{
    (void)t;
    fail_msg("leader scenario did not finish within 60 s");
}

static void on_leader_closed(void *d)
{
    world *w = d;
    if (--w->open == 0) {
        uv_close((uv_handle_t *)&w->tick, NULL);
        uv_close((uv_handle_t *)&w->guard, NULL);
        kube_uvcurl_close(w->uc, NULL, NULL);
    }
}

static void on_tick(uv_timer_t *t)
{
    world *w = t->data;
    w->on_tick(w);
}

static kube_leader *mk(world *w, cand *c, const char *id, uint64_t duration_ms, uint64_t renew_ms, uint64_t retry_ms)
{
    c->id = id;
    c->w = w;
    kube_leader_options o = {"sys", "lock", id, duration_ms, renew_ms, retry_ms};
    kube_leader_callbacks cb = {c_started, c_stopped, NULL, NULL};
    olm_error err;
    c->l = kube_leader_new(w->uc, &w->cfg, &o, &cb, c, &err);
    assert_non_null(c->l);
    assert_int_equal(kube_leader_start(c->l, &err), 0);
    w->open++;
    return c->l;
}

static void world_run(world *w, void (*tick)(world *w))
{
    uv_loop_init(&w->loop);
    olm_error err;
    w->uc = kube_uvcurl_new(&w->loop, &err);
    memset(&w->cfg, 0, sizeof w->cfg);
    w->cfg.server = w->srv.url;
    w->on_tick = tick;
    uv_timer_init(&w->loop, &w->tick);
    w->tick.data = w;
    uv_timer_start(&w->tick, on_tick, 5, 5);
    uv_timer_init(&w->loop, &w->guard);
    uv_timer_start(&w->guard, on_guard, 60000, 0);
}

static void open_gate(world *w)
{
    pthread_mutex_lock(&w->srv.lock);
    w->f.gate_open = true;
    if (w->f.gate_used)
        pthread_cond_broadcast(&w->f.gate);
    pthread_mutex_unlock(&w->srv.lock);
}

static void world_finish(world *w)
{
    assert_int_equal(uv_run(&w->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&w->loop), 0);
    open_gate(w); /* a held response must not keep fake_http_stop from joining its thread */
    fake_http_stop(&w->srv);
}

static int locked_int(world *w, int *p)
{
    pthread_mutex_lock(&w->srv.lock);
    int v = *p;
    pthread_mutex_unlock(&w->srv.lock);
    return v;
}

/* ---------------------------------------------------------------- scenarios */

/* A creates the Lease, renews it, B waits; A releases on stop and B takes over. */
static void handover_tick(world *w)
{
    switch (w->step) {
    case 0:
        if (w->a.started == 1 && w->b.l && locked_int(w, &w->f.puts) >= 3) { /* A renewed a few times */
            assert_true(kube_leader_is_leader(w->a.l));
            assert_false(kube_leader_is_leader(w->b.l));
            assert_int_equal(w->b.started, 0);
            kube_leader_stop(w->a.l, on_leader_closed, w);
            w->step = 1;
        }
        break;
    case 1:
        if (w->b.started == 1) {
            assert_int_equal(w->a.stopped, 1);
            assert_true(kube_leader_is_leader(w->b.l)); /* w->a.l is gone once released */
            kube_leader_stop(w->b.l, on_leader_closed, w);
            w->step = 2;
        }
        break;
    }
}

static void test_create_renew_release_handover(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof *w);
    assert_int_equal(fake_http_start_streaming(&w->srv, lease_handler, &w->f), 0);
    world_run(w, handover_tick);
    mk(w, &w->a, "alpha", 60000, 40000, 20);
    /* B starts a little later so that A is the one that creates the Lease. */
    uv_run(&w->loop, UV_RUN_ONCE);
    while (w->a.started == 0)
        uv_run(&w->loop, UV_RUN_ONCE);
    mk(w, &w->b, "beta", 60000, 40000, 20);
    world_finish(w);
    assert_int_equal(w->f.posts, 1);
    assert_int_equal(w->a.started, 1);
    assert_int_equal(w->a.stopped, 1);
    assert_int_equal(w->b.started, 1);
    assert_int_equal(w->b.stopped, 1);
    /* B released last: empty holder, 1 s duration; one transition (alpha → beta). */
    assert_string_equal(spec_str(&w->f, "holderIdentity"), "");
    assert_int_equal(spec_int(&w->f, "leaseDurationSeconds"), 1);
    assert_int_equal(spec_int(&w->f, "leaseTransitions"), 1);
    json_decref(w->f.lease);
    free(w);
}

/* Stop while a renewal is in flight that the server has already applied: the
 * release must still succeed.  Cancelling the renewal left the leader with the
 * previous resourceVersion, so its release got 409, the Lease kept naming it for
 * the whole lease duration, and a successor (the handover test) hung. */
static void inflight_tick(world *w)
{
    switch (w->step) {
    case 0:
        if (w->a.started == 1) {
            pthread_mutex_lock(&w->srv.lock);
            w->f.hold_next_put = true;
            pthread_mutex_unlock(&w->srv.lock);
            w->step = 1;
        }
        break;
    case 1: {
        pthread_mutex_lock(&w->srv.lock);
        bool held = w->f.put_held;
        pthread_mutex_unlock(&w->srv.lock);
        if (held) {
            kube_leader_stop(w->a.l, on_leader_closed, w);
            w->step = 2;
        }
        break;
    }
    case 2:
        open_gate(w); /* a tick later: stop has run with the renewal still in flight */
        w->step = 3;
        break;
    }
}

static void test_release_after_stop_during_renewal(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof *w);
    pthread_cond_init(&w->f.gate, NULL);
    w->f.gate_used = true;
    assert_int_equal(fake_http_start_streaming(&w->srv, lease_handler, &w->f), 0);
    world_run(w, inflight_tick);
    mk(w, &w->a, "alpha", 60000, 40000, 20);
    world_finish(w);
    pthread_cond_destroy(&w->f.gate);
    assert_int_equal(w->a.started, 1);
    assert_int_equal(w->a.stopped, 1);
    assert_int_equal(w->f.conflicts, 0);
    assert_string_equal(spec_str(&w->f, "holderIdentity"), "");
    assert_int_equal(spec_int(&w->f, "leaseDurationSeconds"), 1);
    assert_int_equal(spec_int(&w->f, "leaseTransitions"), 0);
    json_decref(w->f.lease);
    free(w);
}

/* A Lease held by a holder that never renews is taken over after our lease
 * duration of local observation; a 409 on the first attempt is retried. */
static void expiry_tick(world *w)
{
    if (w->step == 0 && w->a.started == 1) {
        kube_leader_stop(w->a.l, on_leader_closed, w);
        w->step = 1;
    }
}

static void test_takeover_after_expiry_with_conflict(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof *w);
    w->f.lease = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion",
                           "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", "lock", "namespace", "sys",
                           "resourceVersion", "7", "spec", "holderIdentity", "ghost", "leaseDurationSeconds", 1,
                           "acquireTime", "2020-01-01T00:00:00.000000Z", "renewTime", "2020-01-01T00:00:00.000000Z",
                           "leaseTransitions", 4);
    w->f.rv = 7;
    w->f.conflict_next_put = true;
    assert_int_equal(fake_http_start_streaming(&w->srv, lease_handler, &w->f), 0);
    world_run(w, expiry_tick);
    uint64_t t0 = uv_hrtime();
    mk(w, &w->a, "alpha", 150, 100, 20);
    world_finish(w);
    /* Not before the ghost's record sat unchanged for our lease duration. */
    assert_true((uv_hrtime() - t0) / 1000000 + 1 >= 150);
    assert_int_equal(w->f.conflicts, 1);
    assert_int_equal(w->a.started, 1);
    assert_int_equal(w->a.stopped, 1);
    assert_int_equal(spec_int(&w->f, "leaseTransitions"), 5);
    json_decref(w->f.lease);
    free(w);
}

/* Renewals that keep failing past the renew deadline end leadership. */
static void lost_tick(world *w)
{
    if (w->step == 0 && w->a.stopped == 1) {
        assert_false(kube_leader_is_leader(w->a.l));
        kube_leader_stop(w->a.l, on_leader_closed, w);
        w->step = 1;
    }
}

static void test_lost_lease_after_renew_deadline(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof *w);
    w->f.fail_puts_after = 2;
    assert_int_equal(fake_http_start_streaming(&w->srv, lease_handler, &w->f), 0);
    world_run(w, lost_tick);
    mk(w, &w->a, "alpha", 300, 100, 20);
    world_finish(w);
    assert_int_equal(w->a.started, 1);
    assert_int_equal(w->a.stopped, 1);
    assert_string_equal(spec_str(&w->f, "holderIdentity"), "alpha"); /* never released: it was lost */
    json_decref(w->f.lease);
    free(w);
}

/* A candidate reads again at the moment the holder's Lease would expire, not at its next
 * retry tick: with a retry period (3 s) longer than the lease duration (1 s), a dead holder
 * is replaced after about 1 s of observation, where reading on the retry tick alone took 3 s.
 * That is what bounds a failover by lease duration + retry period after the last renewal
 * (kube_leader.h).  The duration is the one the holder wrote in the Lease (1 s), not the
 * candidate's own (300 ms): a holder with longer timings is not taken over early. */
static uint64_t expiry_started_ms;
static void expiry_on_time_tick(world *w)
{
    if (w->step == 0 && w->a.started == 1) {
        expiry_started_ms = uv_hrtime() / 1000000;
        kube_leader_stop(w->a.l, on_leader_closed, w);
        w->step = 1;
    }
}

static void test_takeover_read_timed_to_expiry(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof *w);
    w->f.lease = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion",
                           "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", "lock", "namespace", "sys",
                           "resourceVersion", "3", "spec", "holderIdentity", "ghost", "leaseDurationSeconds", 1,
                           "acquireTime", "2020-01-01T00:00:00.000000Z", "renewTime", "2020-01-01T00:00:00.000000Z",
                           "leaseTransitions", 0);
    w->f.rv = 3;
    assert_int_equal(fake_http_start_streaming(&w->srv, lease_handler, &w->f), 0);
    world_run(w, expiry_on_time_tick);
    uint64_t t0 = uv_hrtime() / 1000000;
    mk(w, &w->a, "alpha", 300, 200, 3000);
    world_finish(w);
    assert_int_equal(w->a.started, 1);
    uint64_t took = expiry_started_ms - t0;
    assert_true(took + 1 >= 1000); /* never before the ghost's record sat unchanged for its 1 s */
    assert_true(took < 2500);      /* the retry tick would have been at 3000 ms */
    assert_string_equal(spec_str(&w->f, "holderIdentity"), ""); /* released on stop */
    assert_int_equal(spec_int(&w->f, "leaseTransitions"), 1);
    json_decref(w->f.lease);
    free(w);
}

/* A renewal whose response never comes (the server applied it, then the connection hung)
 * ends leadership at the renew deadline, counted from when the last successful renewal
 * was sent, instead of after the 10 s request timeout: a leader must not outlive the
 * moment a candidate may take the Lease over. */
static uint64_t hung_held_ms, hung_stopped_ms;
static void hung_tick(world *w)
{
    switch (w->step) {
    case 0:
        if (w->a.started == 1 && locked_int(w, &w->f.puts) >= 2) {
            pthread_mutex_lock(&w->srv.lock);
            w->f.hold_next_put = true;
            pthread_mutex_unlock(&w->srv.lock);
            w->step = 1;
        }
        break;
    case 1: {
        pthread_mutex_lock(&w->srv.lock);
        bool held = w->f.put_held;
        pthread_mutex_unlock(&w->srv.lock);
        if (held) {
            hung_held_ms = uv_hrtime() / 1000000;
            w->step = 2;
        }
        break;
    }
    case 2:
        if (w->a.stopped == 1) {
            hung_stopped_ms = uv_hrtime() / 1000000;
            assert_false(kube_leader_is_leader(w->a.l));
            open_gate(w);
            kube_leader_stop(w->a.l, on_leader_closed, w);
            w->step = 3;
        }
        break;
    }
}

static void test_hung_renewal_ends_leadership_at_the_deadline(void **state)
{
    (void)state;
    world *w = calloc(1, sizeof *w);
    pthread_cond_init(&w->f.gate, NULL);
    w->f.gate_used = true;
    assert_int_equal(fake_http_start_streaming(&w->srv, lease_handler, &w->f), 0);
    world_run(w, hung_tick);
    mk(w, &w->a, "alpha", 5000, 300, 50);
    world_finish(w);
    pthread_cond_destroy(&w->f.gate);
    assert_int_equal(w->a.started, 1);
    assert_int_equal(w->a.stopped, 1);
    /* Within the 300 ms deadline of the hold (plus slack for a loaded machine), far from
     * the 10 s request timeout. */
    assert_true(hung_stopped_ms - hung_held_ms < 3000);
    assert_string_equal(spec_str(&w->f, "holderIdentity"), "alpha"); /* not released: it was lost */
    json_decref(w->f.lease);
    free(w);
}

static void test_microtime_format(void **state)
{
    (void)state;
    char buf[40];
    kube_leader_format_microtime(buf, sizeof buf);
    assert_int_equal(strlen(buf), 27);
    assert_int_equal(buf[4], '-');
    assert_int_equal(buf[10], 'T');
    assert_int_equal(buf[19], '.');
    assert_int_equal(buf[26], 'Z');
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_microtime_format),
        cmocka_unit_test(test_create_renew_release_handover),
        cmocka_unit_test(test_release_after_stop_during_renewal),
        cmocka_unit_test(test_takeover_after_expiry_with_conflict),
        cmocka_unit_test(test_lost_lease_after_renew_deadline),
        cmocka_unit_test(test_takeover_read_timed_to_expiry),
        cmocka_unit_test(test_hung_renewal_ends_leadership_at_the_deadline),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
