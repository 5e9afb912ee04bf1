/* clusterextension_prefetch: what a restart's first reconciles read, in one LIST.
 *
 * A restarted operator-controller reconciles every extension once, and each of those
 * reconciles read its install record with a GET: 1,000 requests for 1,000 extensions.
 * Instead, the first reconcile of the process lists every record Secret of the system
 * namespace (label INSTALL_RECORD_LABEL=true) once, and each extension's first reconcile
 * takes its record from that list.  Each entry is taken once: later reconciles read with
 * GETs as always.  A record the LIST did not hold (a first install's) is read with a GET too.
 * (The ClusterExtensions themselves come from the informer's cache: clusterextension_cached.c.)
 *
 * Why a listed record is as good as a GET: records are written only by operator-controller
 * (its own identity, applier_record.c), one extension's only by that extension's reconciles,
 * which the work queue never runs two at a time; the record an extension's first reconcile
 * takes is therefore the newest one, unless a previous leader was still writing it after
 * this process took the Lease (the same race a GET a moment later has). */
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

bool clusterextension_retire_may_write(clusterextension_reconciler *r, const char *name)
{
    pthread_mutex_lock(&r->retire_mu);
    bool may = !r->retire_scanned || json_object_get(r->retire_names, name) != NULL;
    pthread_mutex_unlock(&r->retire_mu);
    return may;
}
