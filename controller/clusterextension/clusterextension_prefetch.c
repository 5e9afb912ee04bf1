/* clusterextension_prefetch: what a restart's first reconciles read, in two LISTs.
 *
 * A restarted operator-controller reconciles every extension once, and each of those
 * reconciles read its ClusterExtension and its install record with a GET each: 2,000
 * requests for 1,000 extensions, nearly all of what a restart asked of the apiserver.
 * Instead, the first reconcile of the process lists every ClusterExtension and every record
 * Secret of the system namespace (label INSTALL_RECORD_LABEL=true) once, and each
 * extension's first reconcile takes its two objects from those lists.  Each entry is taken
 * once: later reconciles read with GETs as always.  An object the LIST did not hold (created
 * since, or a first install's record) is read with a GET too.
 *
 * Why a listed record is as good as a GET: records are written only by operator-controller
 * (its own identity, applier_record.c), one extension's only by that extension's reconciles,
 * which the work queue never runs two at a time; the record an extension's first reconcile
 * takes is therefore the newest one, unless a previous leader was still writing it after
 * this process took the Lease (the same race a GET a moment later has).
 *
 * Why a listed ClusterExtension is: it is taken only when the informer's cache holds it at
 * the same resourceVersion, i.e. no change reached the watch since the LIST; one made since
 * is read with a GET.  A change the watch has not delivered yet could be missed by a GET
 * made at the same moment just as well, and its event queues the extension again.  A status
 * write from a copy that is not the newest any more is refused (409) and retried, as one
 * from a GET would be. */
#include <stdlib.h>
#include <string.h>

#include "clusterextension_internal.h"
#include "install_record.h"
#include "olm_log.h"

/* Lists `kind` (in `ns`, NULL: cluster-scoped) with `selector` into name -> object, without
 * managedFields (kept until taken: nobody reads them).  In pages, so that the parsed
 * response held at once stays small next to the map.  NULL when a LIST failed. */
#define PREFETCH_PAGE 250
static json_t *list_by_name(clusterextension_reconciler *r, const char *api_version, const char *kind, const char *ns,
                            const char *selector)
{
    json_t *by_name = json_object();
    char *cont = NULL;
    do {
        kube_list_options lo = {.label_selector = selector, .limit = PREFETCH_PAGE, .continue_token = cont};
        json_t *list = NULL;
        olm_error err;
        if (!by_name || kube_list(r->cfg.admin, api_version, kind, ns, &lo, &list, &err) != 0) {
            olm_log(OLM_LOG_DEBUG, "clusterExtension", NULL, "listing %s: %s", kind, by_name ? err.msg : "out of memory");
            free(cont);
            json_decref(by_name);
            return NULL;
        }
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(list, "items"), i, o) {
            json_t *md = json_object_get(o, "metadata");
            const char *name = json_string_value(json_object_get(md, "name"));
            json_object_del(md, "managedFields");
            /* A List's items may come without them (built-in kinds); a GET's object has them. */
            if (!json_object_get(o, "apiVersion"))
                json_object_set_new(o, "apiVersion", json_string(api_version));
            if (!json_object_get(o, "kind"))
                json_object_set_new(o, "kind", json_string(kind));
            if (name)
                json_object_set(by_name, name, o);
        }
        free(cont);
        const char *next = json_string_value(json_object_get(json_object_get(list, "metadata"), "continue"));
        cont = next && *next ? strdup(next) : NULL;
        json_decref(list);
    } while (cont);
    return by_name;
}

/* Takes `name` out of *map (NULL: nothing listed); the map goes once empty.  Caller holds the lock. */
static json_t *take(json_t **map, const char *name)
{
    json_t *o = *map && name ? json_incref(json_object_get(*map, name)) : NULL;
    if (o) {
        json_object_del(*map, name);
        if (json_object_size(*map) == 0) {
            json_decref(*map);
            *map = NULL;
        }
    }
    return o;
}

json_t *clusterextension_record_prefetched(clusterextension_reconciler *r, const char *extension)
{
    pthread_mutex_lock(&r->prefetch_lock);
    if (!r->prefetch_done) {
        r->prefetch_done = true;
        r->prefetched = list_by_name(r, "v1", "Secret", r->system_namespace, INSTALL_RECORD_LABEL "=true");
    }
    char *name = r->prefetched ? install_record_secret_name(extension) : NULL;
    json_t *secret = take(&r->prefetched, name);
    free(name);
    pthread_mutex_unlock(&r->prefetch_lock);
    return secret;
}

json_t *clusterextension_extension_prefetched(clusterextension_reconciler *r, const char *name)
{
    if (!r->cfg.extensions || !kube_informer_has_synced(r->cfg.extensions))
        return NULL;
    pthread_mutex_lock(&r->prefetch_lock);
    if (!r->prefetch_ces_done) {
        r->prefetch_ces_done = true;
        r->prefetched_ces = list_by_name(r, CE_API_VERSION, CE_KIND, NULL, NULL);
    }
    json_t *ce = take(&r->prefetched_ces, name);
    pthread_mutex_unlock(&r->prefetch_lock);
    if (!ce)
        return NULL;
    json_t *cached = kube_informer_get(r->cfg.extensions, name);
    const char *rv = json_string_value(json_object_get(json_object_get(cached, "metadata"), "resourceVersion"));
    const char *lrv = json_string_value(json_object_get(json_object_get(ce, "metadata"), "resourceVersion"));
    bool same = rv && lrv && strcmp(rv, lrv) == 0;
    json_decref(cached);
    if (!same) {
        json_decref(ce);
        return NULL;
    }
    return ce;
}

bool clusterextension_retire_may_write(clusterextension_reconciler *r, const char *name)
{
    pthread_mutex_lock(&r->retire_mu);
    bool may = !r->retire_scanned || json_object_get(r->retire_names, name) != NULL;
    pthread_mutex_unlock(&r->retire_mu);
    return may;
}
