/* kube_workqueue: client-go work queue semantics on libuv (see kube_workqueue.h). */
#include "kube_workqueue.h"
#include "olm_hash.h"

#include <stdlib.h>
#include <string.h>

#include "olm_stack.h"

/* Per-key state.  An item lives while any of its flags or counters is set, so the
 * failure count survives between reconciles until forget(). */
typedef struct wq_item {
    char *key;
    struct wq_item *hnext;           /* hash chain */
    struct wq_item *qnext;           /* ready FIFO */
    struct wq_item *wprev, *wnext;   /* waiting list, sorted by ready_at */
    bool dirty;       /* needs a reconcile (queued, or re-added while processing) */
    bool queued;      /* in the ready FIFO */
    bool processing;  /* a reconcile is running on a worker */
    unsigned failures;
    uint64_t ready_at; /* loop time (ms) it becomes ready; 0: not waiting */
    uint64_t added_ns; /* uv_hrtime when it last became dirty: workqueue_queue_duration */
} wq_item;

typedef struct wq_work {
    uv_work_t req;
    struct kube_workqueue *q;
    wq_item *item;
    kube_wq_result res;
    uint64_t started_ns;   /* handed to the pool (loop thread) */
    double reconcile_s;    /* the reconcile function's own time (worker thread) */
} wq_work;

struct kube_workqueue {
    uv_loop_t *loop;
    kube_workqueue_reconcile_fn reconcile;
    void *data;
    unsigned concurrency;
    uint64_t base_ms, max_ms;

    wq_item **buckets;
    size_t nbuckets, nitems;

    wq_item *qhead, *qtail;
    size_t qlen;
    wq_item *waiting, *waiting_tail;
    size_t nwaiting;
    uv_timer_t timer; /* fires for the head of `waiting` */
    unsigned running;

    bool shutting, drain, closing;
    void (*done_cb)(void *data);
    void *done_data;
    kube_workqueue_stats st;
};

const double kube_wq_reconcile_bounds[KUBE_WQ_RECONCILE_NBOUNDS] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5,
    1.75,  2.0,  2.5,   3.0,  3.5, 4.0,  4.5, 5,    6,   7,    8,   9,    10,  15,  20,  25,  30,  40,  50,  60};
const double kube_wq_latency_bounds[KUBE_WQ_LATENCY_NBOUNDS] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                                                1e-2, 1e-1, 1,    10,   100,  1000};

/* ---------------------------------------------------------------- key table */

static size_t hash_key(const char *s)
{
    return (size_t)olm_fnv1a_str(OLM_FNV1A_OFFSET, s);
}

static wq_item *item_find(kube_workqueue *q, const char *key)
{
    for (wq_item *it = q->buckets[hash_key(key) & (q->nbuckets - 1)]; it; it = it->hnext)
        if (strcmp(it->key, key) == 0)
            return it;
    return NULL;
}

static int table_grow(kube_workqueue *q)
{
    size_t n = q->nbuckets * 2;
    wq_item **b = calloc(n, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < q->nbuckets; i++) {
        wq_item *it = q->buckets[i];
        while (it) {
            wq_item *next = it->hnext;
            size_t j = hash_key(it->key) & (n - 1);
            it->hnext = b[j];
            b[j] = it;
            it = next;
        }
    }
    free(q->buckets);
    q->buckets = b;
    q->nbuckets = n;
    return 0;
}

static wq_item *item_get(kube_workqueue *q, const char *key)
{
    wq_item *it = item_find(q, key);
    if (it)
        return it;
    if (q->nitems >= q->nbuckets && table_grow(q) != 0)
        return NULL;
    it = calloc(1, sizeof *it);
    if (!it)
        return NULL;
    it->key = strdup(key);
    if (!it->key) {
        free(it);
        return NULL;
    }
    size_t j = hash_key(key) & (q->nbuckets - 1);
    it->hnext = q->buckets[j];
    q->buckets[j] = it;
    q->nitems++;
    return it;
}

/* Frees the item once nothing refers to it any more. */
static void item_release(kube_workqueue *q, wq_item *it)
{
    if (it->dirty || it->queued || it->processing || it->failures || it->ready_at)
        return;
    wq_item **pp = &q->buckets[hash_key(it->key) & (q->nbuckets - 1)];
    while (*pp != it)
        pp = &(*pp)->hnext;
    *pp = it->hnext;
    q->nitems--;
    free(it->key);
    free(it);
}

/* ---------------------------------------------------------------- waiting list */

static void waiting_unlink(kube_workqueue *q, wq_item *it)
{
    if (it->wprev)
        it->wprev->wnext = it->wnext;
    else
        q->waiting = it->wnext;
    if (it->wnext)
        it->wnext->wprev = it->wprev;
    else
        q->waiting_tail = it->wprev;
    it->wprev = it->wnext = NULL;
    it->ready_at = 0;
    q->nwaiting--;
}

static void on_timer(uv_timer_t *t);

static void arm_timer(kube_workqueue *q)
{
    if (!q->waiting) {
        uv_timer_stop(&q->timer);
        return;
    }
    uint64_t now = uv_now(q->loop);
    uint64_t at = q->waiting->ready_at;
    uv_timer_start(&q->timer, on_timer, at > now ? at - now : 0, 0);
}

/* ---------------------------------------------------------------- dispatch */

static void dispatch(kube_workqueue *q);
static void maybe_finish(kube_workqueue *q);

static void enqueue(kube_workqueue *q, wq_item *it)
{
    it->queued = true;
    it->qnext = NULL;
    if (q->qtail)
        q->qtail->qnext = it;
    else
        q->qhead = it;
    q->qtail = it;
    q->qlen++;
}

static void mark_dirty(kube_workqueue *q, wq_item *it)
{
    if (it->dirty)
        return; /* already pending: dedupe */
    it->dirty = true;
    it->added_ns = uv_hrtime();
    q->st.adds++;
    if (!it->processing)
        enqueue(q, it);
}

static void on_timer(uv_timer_t *t)
{
    kube_workqueue *q = t->data;
    uint64_t now = uv_now(q->loop);
    while (q->waiting && q->waiting->ready_at <= now) {
        wq_item *it = q->waiting;
        waiting_unlink(q, it);
        mark_dirty(q, it);
    }
    arm_timer(q);
    dispatch(q);
}

static void work_run(uv_work_t *req)
{
    wq_work *w = req->data;
    uint64_t t0 = uv_hrtime();
    w->res = w->q->reconcile(w->item->key, w->q->data);
    w->reconcile_s = (double)(uv_hrtime() - t0) / 1e9;
    /* This pool thread may sit idle for long now: what the reconcile's deepest calls
     * touched of its stack is given back (a madvise; the next reconcile faults in what
     * it needs). */
    olm_stack_release_unused();
}

static void apply_result(kube_workqueue *q, wq_item *it, kube_wq_result res)
{
    switch (res.kind) {
    case KUBE_WQ_ERROR:
        kube_workqueue_add_rate_limited(q, it->key, NULL);
        if (res.requeue_after_ms) /* a deadline the caller must not miss (add_after keeps the earliest) */
            kube_workqueue_add_after(q, it->key, res.requeue_after_ms, NULL);
        break;
    case KUBE_WQ_REQUEUE_AFTER:
        it->failures = 0;
        kube_workqueue_add_after(q, it->key, res.requeue_after_ms, NULL);
        break;
    case KUBE_WQ_OK:
    case KUBE_WQ_TERMINAL:
        it->failures = 0;
        if (res.kind == KUBE_WQ_OK && res.gone && it->ready_at) {
            bool first = q->waiting == it;
            waiting_unlink(q, it);
            if (first)
                arm_timer(q);
        }
        break;
    }
}

static void work_done(uv_work_t *req, int status)
{
    wq_work *w = req->data;
    kube_workqueue *q = w->q;
    wq_item *it = w->item;
    kube_wq_result res = w->res;
    if (status != 0)
        res.kind = KUBE_WQ_ERROR;
    olm_histogram_observe(&q->st.work_seconds, (double)(uv_hrtime() - w->started_ns) / 1e9);
    olm_histogram_observe(&q->st.reconcile_seconds, w->reconcile_s);
    if ((unsigned)res.kind < sizeof q->st.results / sizeof q->st.results[0])
        q->st.results[res.kind]++;
    free(w);
    /* Like controller-runtime: apply the result, then Done(). */
    apply_result(q, it, res);
    it->processing = false;
    q->running--;
    if (it->dirty) {
        if (q->shutting && !q->drain)
            it->dirty = false;
        else
            enqueue(q, it);
    }
    item_release(q, it);
    dispatch(q);
    maybe_finish(q);
}

static void dispatch(kube_workqueue *q)
{
    if (q->closing)
        return;
    while (q->qhead && q->running < q->concurrency) {
        wq_item *it = q->qhead;
        wq_work *w = calloc(1, sizeof *w);
        if (!w)
            return; /* try again on the next completion or add */
        q->qhead = it->qnext;
        if (!q->qhead)
            q->qtail = NULL;
        q->qlen--;
        it->qnext = NULL;
        it->queued = false;
        it->dirty = false;
        it->processing = true;
        q->running++;
        w->started_ns = uv_hrtime();
        olm_histogram_observe(&q->st.queue_seconds, (double)(w->started_ns - it->added_ns) / 1e9);
        w->q = q;
        w->item = it;
        w->req.data = w;
        if (uv_queue_work(q->loop, &w->req, work_run, work_done) != 0) {
            /* Cannot happen with valid callbacks; keep the contract anyway. */
            w->res.kind = KUBE_WQ_ERROR;
            work_done(&w->req, 0);
            return;
        }
    }
}

/* ---------------------------------------------------------------- public API */

uint64_t kube_workqueue_backoff_ms(uint64_t base_ms, uint64_t max_ms, unsigned failures)
{
    uint64_t d = base_ms;
    for (unsigned i = 0; i < failures && d < max_ms; i++)
        d = d > UINT64_MAX / 2 ? UINT64_MAX : d * 2;
    return d > max_ms ? max_ms : d;
}

kube_workqueue *kube_workqueue_new(uv_loop_t *loop, const kube_workqueue_options *opts,
                                   kube_workqueue_reconcile_fn reconcile, void *data, olm_error *err)
{
    kube_workqueue_options o = {0};
    if (opts)
        o = *opts;
    kube_workqueue *q = calloc(1, sizeof *q);
    if (!q) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    q->nbuckets = 64;
    q->buckets = calloc(q->nbuckets, sizeof *q->buckets);
    if (!q->buckets) {
        free(q);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    int rc = uv_timer_init(loop, &q->timer);
    if (rc != 0) {
        free(q->buckets);
        free(q);
        olm_error_set(err, "uv_timer_init: %s", uv_strerror(rc));
        return NULL;
    }
    q->timer.data = q;
    q->loop = loop;
    q->reconcile = reconcile;
    q->data = data;
    q->concurrency = o.concurrency ? o.concurrency : 1;
    q->base_ms = o.base_delay_ms ? o.base_delay_ms : 5;
    q->max_ms = o.max_delay_ms ? o.max_delay_ms : 1000000;
    olm_histogram_init(&q->st.queue_seconds, kube_wq_latency_bounds, KUBE_WQ_LATENCY_NBOUNDS);
    olm_histogram_init(&q->st.work_seconds, kube_wq_latency_bounds, KUBE_WQ_LATENCY_NBOUNDS);
    olm_histogram_init(&q->st.reconcile_seconds, kube_wq_reconcile_bounds, KUBE_WQ_RECONCILE_NBOUNDS);
    return q;
}

int kube_workqueue_add(kube_workqueue *q, const char *key, olm_error *err)
{
    if (q->shutting)
        return olm_error_set(err, "work queue is shutting down");
    wq_item *it = item_get(q, key);
    if (!it)
        return olm_error_set(err, "out of memory");
    mark_dirty(q, it);
    dispatch(q);
    return 0;
}

int kube_workqueue_add_after(kube_workqueue *q, const char *key, uint64_t delay_ms, olm_error *err)
{
    if (q->shutting)
        return olm_error_set(err, "work queue is shutting down");
    if (delay_ms == 0)
        return kube_workqueue_add(q, key, err);
    wq_item *it = item_get(q, key);
    if (!it)
        return olm_error_set(err, "out of memory");
    uint64_t at = uv_now(q->loop) + delay_ms;
    if (it->ready_at && it->ready_at <= at)
        return 0; /* an earlier wake-up is already scheduled */
    if (it->ready_at)
        waiting_unlink(q, it);
    it->ready_at = at;
    /* From the tail: delays are mostly the same few (requeue, repair interval), so a new
     * wake-up is usually the latest, and the walk stops at once (from the head it crossed
     * every waiting extension).  After any with the same time: first come, first served. */
    wq_item *prev = q->waiting_tail;
    while (prev && prev->ready_at > at)
        prev = prev->wprev;
    wq_item *next = prev ? prev->wnext : q->waiting;
    it->wprev = prev;
    it->wnext = next;
    if (prev)
        prev->wnext = it;
    else
        q->waiting = it;
    if (next)
        next->wprev = it;
    else
        q->waiting_tail = it;
    q->nwaiting++;
    if (q->waiting == it)
        arm_timer(q);
    return 0;
}

int kube_workqueue_add_rate_limited(kube_workqueue *q, const char *key, olm_error *err)
{
    if (q->shutting)
        return olm_error_set(err, "work queue is shutting down");
    wq_item *it = item_get(q, key);
    if (!it)
        return olm_error_set(err, "out of memory");
    uint64_t d = kube_workqueue_backoff_ms(q->base_ms, q->max_ms, it->failures);
    it->failures++;
    q->st.retries++;
    return kube_workqueue_add_after(q, key, d, err);
}

void kube_workqueue_forget(kube_workqueue *q, const char *key)
{
    wq_item *it = item_find(q, key);
    if (!it)
        return;
    it->failures = 0;
    item_release(q, it);
}

unsigned kube_workqueue_num_requeues(kube_workqueue *q, const char *key)
{
    wq_item *it = item_find(q, key);
    return it ? it->failures : 0;
}

size_t kube_workqueue_len(const kube_workqueue *q)
{
    return q->qlen;
}

unsigned kube_workqueue_running(const kube_workqueue *q)
{
    return q->running;
}

size_t kube_workqueue_waiting(const kube_workqueue *q)
{
    return q->nwaiting;
}

const kube_workqueue_stats *kube_workqueue_get_stats(const kube_workqueue *q)
{
    return &q->st;
}

unsigned kube_workqueue_concurrency(const kube_workqueue *q)
{
    return q->concurrency;
}

bool kube_workqueue_shutting_down(const kube_workqueue *q)
{
    return q->shutting;
}

static void on_closed(uv_handle_t *h)
{
    kube_workqueue *q = h->data;
    void (*cb)(void *) = q->done_cb;
    void *data = q->done_data;
    for (size_t i = 0; i < q->nbuckets; i++) {
        wq_item *it = q->buckets[i];
        while (it) {
            wq_item *next = it->hnext;
            free(it->key);
            free(it);
            it = next;
        }
    }
    free(q->buckets);
    free(q);
    if (cb)
        cb(data);
}

static void maybe_finish(kube_workqueue *q)
{
    if (!q->shutting || q->closing || q->running > 0 || q->qhead)
        return;
    q->closing = true;
    uv_timer_stop(&q->timer);
    uv_close((uv_handle_t *)&q->timer, on_closed);
}

void kube_workqueue_shutdown(kube_workqueue *q, bool drain, void (*done_cb)(void *data), void *data)
{
    if (q->shutting)
        return;
    q->shutting = true;
    q->drain = drain;
    q->done_cb = done_cb;
    q->done_data = data;
    while (q->waiting) {
        wq_item *it = q->waiting;
        waiting_unlink(q, it);
        item_release(q, it);
    }
    uv_timer_stop(&q->timer);
    if (!drain) {
        while (q->qhead) {
            wq_item *it = q->qhead;
            q->qhead = it->qnext;
            it->qnext = NULL;
            it->queued = false;
            it->dirty = false;
            q->qlen--;
            item_release(q, it);
        }
        q->qtail = NULL;
    }
    maybe_finish(q);
}
