/* objectset_setup: the ClusterObjectSet controller's wiring: an informer on ClusterObjectSets
 * whose changes (a new resourceVersion, as upstream's ResourceVersionChangedPredicate) queue the
 * name, the watches of the applied objects (objectset_watch.c: a change of one queues the set
 * that controls it, as upstream's tracking cache does), and the work queue that runs
 * objectset_reconcile.  Besides, a revision waiting for probes on objects of a type that is
 * not watched (its watch starting, or refused: 403) is re-probed every poll_ms, and every
 * revision is re-applied and re-probed every resync_ms, or watched_resync_ms when its types
 * are watched (objectset.h). */
#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "objectset.h"
#include "objectset_watch.h"
#include "olm_log.h"

static void enqueue(objectset_controller *c, const json_t *obj)
{
    const char *name = kube_object_string(obj, "metadata.name");
    olm_error err;
    if (name && c->wq && !c->rt->stopping && kube_workqueue_add(c->wq, name, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", name, "could not queue: %s", err.msg);
}

static void on_add(json_t *obj, void *data)
{
    enqueue(data, obj);
}

static void on_update(json_t *old_obj, json_t *new_obj, void *data)
{
    objectset_controller *c = data;
    const char *a = kube_object_string(old_obj, "metadata.resourceVersion");
    const char *b = kube_object_string(new_obj, "metadata.resourceVersion");
    if (a && b && strcmp(a, b) == 0)
        return;
    /* The echo of our own status or finalizer write: the pass that made it saw all of it. */
    if (objectset_reconciler_own_write(c->rec, kube_object_string(new_obj, "metadata.name"), b))
        return;
    enqueue(c, new_obj);
}

static void on_delete(json_t *obj, void *data)
{
    objectset_controller *c = data;
    objectset_reconciler_forget(c->rec, kube_object_string(obj, "metadata.name"));
    objectset_watches_forget_set(c->watches, kube_object_string(obj, "metadata.uid"),
                                 kube_object_string(obj, "metadata.name"));
    enqueue(c, obj);
}

static void on_error(const char *msg, void *data)
{
    objectset_controller *c = data;
    olm_log(kube_informer_error_is_transient(c->sets) ? OLM_LOG_WARN : OLM_LOG_ERROR, "clusterObjectSet", NULL,
            "watch: %s", msg);
}

static void object_changed(const char *name, void *data)
{
    objectset_controller *c = data;
    olm_error err;
    if (c->wq && !c->rt->stopping && kube_workqueue_add(c->wq, name, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", name, "could not queue: %s", err.msg);
}

typedef struct watches_stop {
    objectset_watches *ws;
    void (*stopped)(void *part);
    void *part;
} watches_stop;

static void watches_closed(void *data)
{
    watches_stop *st = data;
    objectset_watches_free(st->ws);
    st->stopped(st->part);
    free(st);
}

static void stop_watches(void *obj, void (*stopped)(void *part), void *part)
{
    watches_stop *st = malloc(sizeof *st);
    if (!st)
        abort(); /* a shutdown that cannot finish otherwise */
    *st = (watches_stop){obj, stopped, part};
    objectset_watches_stop(obj, watches_closed, st);
}

/* What the cache keeps of a ClusterObjectSet: what finding a revision's siblings reads (its
 * identity, labels, deletion, spec.revision and spec.lifecycleState), not its phases, which
 * the reconcile reads fresh from the API. */
static void cache_form(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
    json_t *m = json_object(), *s = json_object();
    const char *mk[] = {"name", "uid", "labels", "resourceVersion", "deletionTimestamp", "generation"};
    for (size_t i = 0; m && i < sizeof mk / sizeof *mk; i++)
        if (json_object_get(md, mk[i]))
            json_object_set(m, mk[i], json_object_get(md, mk[i]));
    const char *sk[] = {"revision", "lifecycleState"};
    for (size_t i = 0; s && i < sizeof sk / sizeof *sk; i++)
        if (json_object_get(spec, sk[i]))
            json_object_set(s, sk[i], json_object_get(spec, sk[i]));
    kube_object_reduce(obj, m, s);
}

int objectset_controller_start(objectset_controller *c, daemon_runtime *rt, const objectset_controller_config *cfg,
                               olm_error *err)
{
    *c = (objectset_controller){.rt = rt};
    kube_watch_options wo = {.path = OBJECTSET_PATH, .drop_managed_fields = true, .transform = cache_form};
    kube_informer_handlers h = {on_add, on_update, on_delete, NULL, on_error};
    if (!(c->sets = kube_informer_new(rt->uc, kube_client_config(rt->client), &wo, &h, c, err)))
        return -1;
    daemon_runtime_own_informer(rt, &c->sets);
    if (!(c->watches = objectset_watches_new(rt->loop, rt->uc, kube_client_config(rt->client), object_changed, c, err)))
        return -1;
    daemon_runtime_own(rt, DAEMON_STAGE_WATCH, c->watches, &c->watches, stop_watches);
    objectset_reconciler_config rc = {.admin = rt->client, .sets = c->sets, .minute_ms = cfg->minute_ms,
                                      .watches = c->watches, .tokens = cfg->tokens,
                                      .watched_resync_ms = cfg->watched_resync_ms};
    if (!(c->rec = objectset_reconciler_new(&rc, err)))
        return -1;
    kube_workqueue_options qo = {.concurrency = cfg->concurrency ? cfg->concurrency : 1};
    if (!(c->wq = kube_workqueue_new(rt->loop, &qo, objectset_reconcile, c->rec, err)))
        return -1;
    daemon_runtime_own_workqueue(rt, &c->wq, "clusterobjectset");
    return kube_informer_start(c->sets, err);
}

void objectset_controller_after_drain(objectset_controller *c)
{
    objectset_reconciler_free(c->rec);
    c->rec = NULL;
}
