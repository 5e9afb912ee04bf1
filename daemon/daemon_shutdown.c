/* The ordered shutdown (daemon_runtime.h): what a daemon owns, stopped stage by stage.
 *
 * Why stages: a reconcile running on the threadpool uses the reconciler, the informers'
 * caches and the transport, so the work queues drain first and only then is the reconciler
 * freed (after_drain); the informers, watches and the election stop next, all at once, and the
 * watch transport under them closes after the last (the close count-down); the servers stop
 * last, so probes and catalog clients are answered until the process is nearly gone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_runtime.h"
#include "olm_log.h"

/* Connections still open get this long; probes and scrapers send one request a connection. */
#define SERVER_GRACE_MS 5000

/* A daemon owns a fixed, small set of parts, all at start or on becoming leader, before any
 * shutdown can begin: anything else is a programming error, and stops the process at once
 * rather than leaving a part that nothing would stop. */
static daemon_part *own(daemon_runtime *rt, daemon_stage stage, int kind, void *obj, void *slot,
                        void (*stop)(void *, void (*)(void *), void *))
{
    if (rt->stopping || rt->nparts == DAEMON_PARTS_MAX) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "internal error: part %zu owned %s", rt->nparts,
                rt->stopping ? "after the shutdown began" : "past DAEMON_PARTS_MAX");
        abort();
    }
    daemon_part *p = &rt->parts[rt->nparts++];
    *p = (daemon_part){.rt = rt, .stage = stage, .kind = kind, .obj = obj, .slot = slot, .stop = stop};
    return p;
}

void daemon_runtime_own(daemon_runtime *rt, daemon_stage stage, void *obj, void *slot,
                        void (*stop)(void *obj, void (*stopped)(void *part), void *part))
{
    own(rt, stage, DAEMON_PART_OTHER, obj, slot, stop);
}

static void stop_workqueue(void *obj, void (*stopped)(void *), void *part)
{
    kube_workqueue_shutdown(obj, false, stopped, part); /* waits for the running reconciles */
}

static void stop_informer(void *obj, void (*stopped)(void *), void *part)
{
    kube_informer_stop(obj, stopped, part);
}

static void server_stopped(void *part, bool clean)
{
    (void)clean; /* not clean: logged by the server; the process exits */
    daemon_part_stopped(part);
}

static void stop_server(void *obj, void (*stopped)(void *), void *part)
{
    (void)stopped; /* daemon_part_stopped, through server_stopped's signature */
    olm_http_server_stop(obj, SERVER_GRACE_MS, server_stopped, part);
}

void daemon_runtime_own_workqueue(daemon_runtime *rt, kube_workqueue **slot, const char *metrics_name)
{
    own(rt, DAEMON_STAGE_DRAIN, DAEMON_PART_WORKQUEUE, *slot, slot, stop_workqueue)->metrics_name = metrics_name;
}

void daemon_runtime_own_informer(daemon_runtime *rt, kube_informer **slot)
{
    own(rt, DAEMON_STAGE_WATCH, DAEMON_PART_INFORMER, *slot, slot, stop_informer);
}

void daemon_runtime_own_server(daemon_runtime *rt, olm_http_server **slot)
{
    if (*slot)
        own(rt, DAEMON_STAGE_SERVE, DAEMON_PART_SERVER, *slot, slot, stop_server);
}

static void close_handle(void *obj, void (*stopped)(void *), void *part)
{
    if (!uv_is_closing(obj))
        uv_close(obj, NULL);
    stopped(part);
}

void daemon_runtime_own_handle(daemon_runtime *rt, uv_handle_t *handle)
{
    own(rt, DAEMON_STAGE_DRAIN, DAEMON_PART_OTHER, handle, NULL, close_handle);
}

/* The daemon's pointer to a part: read and cleared through memcpy, because the slot is a
 * `T **` of the part's own type T, which must not be accessed as a `void **`. */
static void *slot_value(const daemon_part *p)
{
    void *v = NULL;
    if (p->slot)
        memcpy(&v, p->slot, sizeof v);
    return v;
}

static void clear_slot(daemon_part *p)
{
    void *null = NULL;
    if (p->slot)
        memcpy(p->slot, &null, sizeof null);
    p->obj = NULL;
}

static void watch_stage(daemon_runtime *rt);

static void drain_done(daemon_runtime *rt)
{
    if (--rt->draining > 0)
        return;
    watch_stage(rt);
}

void daemon_part_stopped(void *data)
{
    daemon_part *p = data;
    daemon_runtime *rt = p->rt;
    clear_slot(p);
    if (p->stage == DAEMON_STAGE_DRAIN)
        drain_done(rt);
    else if (p->stage == DAEMON_STAGE_WATCH)
        daemon_runtime_closing_done(rt);
}

/* Stops every part of `stage` still running, in the order owned. */
static void stop_stage(daemon_runtime *rt, daemon_stage stage)
{
    for (size_t i = 0; i < rt->nparts; i++) {
        daemon_part *p = &rt->parts[i];
        if (p->stage != (int)stage || !p->obj)
            continue;
        if (p->slot && !slot_value(p)) { /* the daemon let it go already */
            p->obj = NULL;
            continue;
        }
        if (stage == DAEMON_STAGE_DRAIN)
            rt->draining++;
        else if (stage == DAEMON_STAGE_WATCH)
            daemon_runtime_closing_add(rt);
        p->stop(p->obj, daemon_part_stopped, p);
    }
}

static void watch_stage(daemon_runtime *rt)
{
    if (rt->spec && rt->spec->after_drain)
        rt->spec->after_drain(rt->spec->app);
    daemon_runtime_closing_begin(rt); /* held until every stop was issued */
    stop_stage(rt, DAEMON_STAGE_WATCH);
    daemon_runtime_stop_watches(rt); /* the pull-secret watch; the election releases the Lease */
    /* /metrics answers 503 from now on; a request still waiting for its review ends with 503
     * when the filter goes, before the transport does, and its connection can drain. */
    stop_stage(rt, DAEMON_STAGE_SERVE);
    kube_authz_free(rt->authz);
    rt->authz = NULL;
    daemon_runtime_closing_done(rt);
}

void daemon_runtime_shutdown(daemon_runtime *rt, int exit_code)
{
    if (rt->stopping)
        return;
    rt->stopping = true;
    rt->exit_code = exit_code;
    daemon_runtime_close_signals(rt);
    rt->draining = 1; /* held until every drain was issued: a stop may finish at once */
    stop_stage(rt, DAEMON_STAGE_DRAIN);
    drain_done(rt);
}

static void unready_timer_closed(uv_handle_t *h)
{
    (void)h;
}

static void unready_over(uv_timer_t *t)
{
    daemon_runtime *rt = t->data;
    uv_close((uv_handle_t *)t, unready_timer_closed);
    daemon_runtime_shutdown(rt, 0);
}

void daemon_runtime_terminate(daemon_runtime *rt)
{
    uint64_t delay = rt->spec ? rt->spec->unready_before_stop_ms : 0;
    if (rt->stopping)
        return;
    if (rt->terminating) { /* a second signal: now */
        uv_timer_stop(&rt->unready_timer);
        uv_close((uv_handle_t *)&rt->unready_timer, unready_timer_closed);
        daemon_runtime_shutdown(rt, 0);
        return;
    }
    if (!delay) {
        daemon_runtime_shutdown(rt, 0);
        return;
    }
    rt->terminating = true;
    olm_log(OLM_LOG_INFO, rt->log_key, NULL,
            "not ready; serving %.1f s more so that clients are sent elsewhere first (a second signal stops now)",
            (double)delay / 1000.0);
    uv_timer_init(rt->loop, &rt->unready_timer);
    rt->unready_timer.data = rt;
    uv_timer_start(&rt->unready_timer, unready_over, delay, 0);
}

void daemon_runtime_lost_lease(daemon_runtime *rt)
{
    (void)rt; /* the election logged "leader election lost; exiting" */
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

void daemon_runtime_stop_servers(daemon_runtime *rt)
{
    stop_stage(rt, DAEMON_STAGE_SERVE);
}

bool daemon_runtime_servers_open(const daemon_runtime *rt)
{
    for (size_t i = 0; i < rt->nparts; i++)
        if (rt->parts[i].stage == DAEMON_STAGE_SERVE && rt->parts[i].obj)
            return true;
    return false;
}
