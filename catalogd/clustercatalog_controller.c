/* clustercatalog_controller: see the header. */
#include "clustercatalog_controller.h"

#include <stdlib.h>
#include <string.h>

#include "catalogd_log.h"
#include "kube_object.h"

#define CLUSTERCATALOGS_PATH "/apis/olm.operatorframework.io/v1/clustercatalogs"

/* ------------------------------------------------------------ informer → work queue */

static void enqueue(clustercatalog_controller *c, json_t *obj)
{
    if (!c->wq || c->rt->stopping)
        return;
    char *key = kube_object_key(obj);
    olm_error err;
    if (!key || kube_workqueue_add(c->wq, key, &err) != 0)
        catalogd_log(CATALOGD_LOG_ERROR, key, "could not queue: %s", key ? err.msg : "out of memory");
    free(key);
}

static void on_add(json_t *obj, void *data)
{
    enqueue(data, obj);
}

static void on_update(json_t *old_obj, json_t *new_obj, void *data)
{
    (void)old_obj;
    enqueue(data, new_obj);
}

static void on_delete(json_t *obj, void *data)
{
    enqueue(data, obj);
}

static void on_synced(void *data)
{
    clustercatalog_controller *c = data;
    if (c->gc.started || c->rt->stopping)
        return;
    catalogd_log(CATALOGD_LOG_INFO, NULL, "ClusterCatalog cache synced (%zu catalogs)", kube_informer_count(c->inf));
    clustercatalog_gc_timer_start(&c->gc, c->rec, c->gc_interval_ms);
}

/* A failure the watch gets past by itself (a relist after 410 Gone, a restarting apiserver) is
 * a warning; one that needs someone to act (RBAC, a missing CRD, a lost event) an error. */
static void on_informer_error(const char *msg, void *data)
{
    clustercatalog_controller *c = data;
    catalogd_log(kube_informer_error_is_transient(c->inf) ? CATALOGD_LOG_WARN : CATALOGD_LOG_ERROR, NULL,
                 "ClusterCatalog watch: %s", msg);
}

/* Every catalog pulls again now rather than at its next poll or retry: a catalog that failed
 * for want of credentials recovers as soon as they arrive. */
static void pull_secret_loaded(void *data)
{
    clustercatalog_controller *c = data;
    json_t *all = c->inf ? kube_informer_list(c->inf) : NULL;
    size_t i;
    json_t *obj;
    json_array_foreach(all, i, obj) enqueue(c, obj);
    json_decref(all);
}

/* ------------------------------------------------------------ start and stop */

static void stop_gc(void *obj, void (*stopped)(void *part), void *part)
{
    if (!clustercatalog_gc_timer_stop(obj, stopped, part))
        stopped(part); /* no run in progress */
}

void clustercatalog_controller_init(clustercatalog_controller *c, daemon_runtime *rt)
{
    *c = (clustercatalog_controller){.rt = rt};
    clustercatalog_gc_timer_init(&c->gc, rt->loop);
    daemon_runtime_own(rt, DAEMON_STAGE_DRAIN, &c->gc, NULL, stop_gc);
}

int clustercatalog_controller_start(clustercatalog_controller *c, const clustercatalog_controller_config *cfg,
                                    olm_error *err)
{
    daemon_runtime *rt = c->rt;
    c->gc_interval_ms = cfg->gc_interval_ms;
    kube_watch_options wo = {.path = CLUSTERCATALOGS_PATH};
    kube_informer_handlers h = {on_add, on_update, on_delete, on_synced, on_informer_error};
    if (!(c->inf = kube_informer_new(rt->uc, kube_client_config(rt->client), &wo, &h, c, err)))
        return -1;
    daemon_runtime_own_informer(rt, &c->inf);
    if (daemon_runtime_watch_pull_secret(rt, cfg->global_pull_secret, pull_secret_loaded, c, err) != 0)
        return -1;
    clustercatalog_reconciler_config rc = cfg->reconciler;
    rc.client = rt->client;
    rc.pull.registry.auth_store = rt->pull_secret; /* made by the watch just started */
    rc.informer = c->inf;
    if (!(c->rec = clustercatalog_reconciler_new(&rc, err)))
        return -1;
    kube_workqueue_options qo = {.concurrency = cfg->concurrency};
    if (!(c->wq = kube_workqueue_new(rt->loop, &qo, clustercatalog_reconcile, c->rec, err)))
        return -1;
    daemon_runtime_own_workqueue(rt, &c->wq, "clustercatalog");
    return kube_informer_start(c->inf, err);
}

void clustercatalog_controller_lead(clustercatalog_controller *c)
{
    if (!c->rec || clustercatalog_reconciler_leading(c->rec))
        return;
    clustercatalog_reconciler_lead(c->rec);
    pull_secret_loaded(c); /* every catalog again, now as the leader */
}

bool clustercatalog_controller_ready(clustercatalog_controller *c,
                                     bool (*serves)(const char *name, const char **source, void *data), void *data,
                                     strbuf *why)
{
    if (!c->inf || !kube_informer_has_synced(c->inf)) {
        strbuf_puts(why, "ClusterCatalog cache not synced");
        return false;
    }
    json_t *all = kube_informer_list(c->inf);
    bool ready = true;
    size_t i;
    json_t *obj;
    json_array_foreach(all, i, obj) {
        const char *want = clustercatalog_followed_ref(obj, NULL);
        const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        const char *have = NULL;
        if (!want || !name || (serves(name, &have, data) && have && strcmp(have, want) == 0))
            continue;
        strbuf_printf(why, "catalog %s: serving %s, not yet %s", name, have ? have : "nothing", want);
        ready = false;
        break;
    }
    json_decref(all);
    return ready;
}

void clustercatalog_controller_after_drain(clustercatalog_controller *c)
{
    clustercatalog_reconciler_free(c->rec);
    c->rec = NULL;
}
