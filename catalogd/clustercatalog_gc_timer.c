/* clustercatalog_gc_timer: when §4.5's garbage collection runs (clustercatalog_reconcile.h):
 * first when the ClusterCatalog cache has synced (before, an empty cache would read as "every
 * catalog was deleted"), then every interval, on the threadpool, one run at a time, and
 * never once a shutdown has begun. */
#include "catalogd_log.h"
#include "clustercatalog_reconcile.h"

static void gc_work(uv_work_t *w)
{
    clustercatalog_gc_timer *t = w->data;
    olm_error err;
    if (clustercatalog_reconciler_gc(t->rec, &err) != 0)
        catalogd_log(CATALOGD_LOG_WARN, NULL, "garbage collection: %s", err.msg);
}

static void gc_done(uv_work_t *w, int status)
{
    (void)status;
    clustercatalog_gc_timer *t = w->data;
    t->running = false;
    if (t->stopping && t->idle)
        t->idle(t->idle_data);
}

static void run(clustercatalog_gc_timer *t)
{
    if (t->running || t->stopping || !t->rec)
        return;
    t->work.data = t;
    if (uv_queue_work(t->timer.loop, &t->work, gc_work, gc_done) == 0)
        t->running = true;
}

static void on_tick(uv_timer_t *h)
{
    run(h->data);
}

void clustercatalog_gc_timer_init(clustercatalog_gc_timer *t, uv_loop_t *loop)
{
    *t = (clustercatalog_gc_timer){0};
    uv_timer_init(loop, &t->timer);
    t->timer.data = t;
}

void clustercatalog_gc_timer_start(clustercatalog_gc_timer *t, clustercatalog_reconciler *rec, uint64_t interval_ms)
{
    if (t->started || t->stopping)
        return;
    t->started = true;
    t->rec = rec;
    run(t);
    uv_timer_start(&t->timer, on_tick, interval_ms, interval_ms);
}

bool clustercatalog_gc_timer_stop(clustercatalog_gc_timer *t, void (*idle)(void *data), void *data)
{
    if (!t->stopping) {
        t->stopping = true;
        uv_timer_stop(&t->timer);
        uv_close((uv_handle_t *)&t->timer, NULL);
    }
    t->idle = idle;
    t->idle_data = data;
    return t->running;
}
