/* clusterextension_cached: a reconcile reads its ClusterExtension from the informer's cache.
 *
 * Every reconcile used to GET its ClusterExtension first: at 1,000 installs that was 2,200
 * requests (a reconcile per install and per Available change), the most common request of an
 * install batch, although the informer that queued the reconcile holds the object already.
 * Upstream's controller-runtime reconciles from its cache alone; so do we, with one guard it
 * has not: the cache may not have delivered this process's own last write yet (a status or
 * finalizer write, then an event that reconciles again before the watch brings the write
 * back), and a copy older than our own write would only be refused (409) at the status write.
 * The cache keeps each object parsed only in part, and whole as text (clusterextension_cache_form):
 * the text is what a reconcile parses.  The reconciler remembers, per extension, the newest
 * resourceVersion it knows (from its writes and its GETs) and takes the cached copy only when
 * it is that one, or when it knows none (this process never wrote or read the extension: the cache is as new as a GET made now
 * could show, give or take the watch's delay, which a GET has too: a change not yet delivered
 * queues the extension again when it is).  Otherwise, or without a synced informer, a GET.
 *
 * Resource versions are compared for equality only (they are opaque). */
#include <stdlib.h>
#include <string.h>

#include "clusterextension_controller.h"
#include "clusterextension_internal.h"
#include "kube_object.h"

json_t *clusterextension_extension_cached(clusterextension_reconciler *r, const char *name)
{
    if (!r->cfg.extensions || !kube_informer_has_synced(r->cfg.extensions))
        return NULL;
    json_t *cached = kube_informer_get(r->cfg.extensions, name);
    const char *rv = kube_object_string(cached, "metadata.resourceVersion");
    const char *text = clusterextension_cached_text(cached);
    if (!rv || !text) {
        json_decref(cached);
        return NULL;
    }
    pthread_mutex_lock(&r->known_lock);
    const char *known = json_string_value(json_object_get(r->known_versions, name));
    bool current = !known || strcmp(known, rv) == 0;
    pthread_mutex_unlock(&r->known_lock);
    /* The whole object, kept as text by the cache (clusterextension_cache_form). */
    json_t *obj = current ? json_loads(text, 0, NULL) : NULL;
    json_decref(cached);
    return obj;
}

void clusterextension_extension_known(clusterextension_reconciler *r, const json_t *obj)
{
    const char *name = kube_object_string(obj, "metadata.name"), *rv = kube_object_string(obj, "metadata.resourceVersion");
    if (!name || !rv)
        return;
    pthread_mutex_lock(&r->known_lock);
    json_object_set_new(r->known_versions, name, json_string(rv));
    pthread_mutex_unlock(&r->known_lock);
}

void clusterextension_extension_forget_known(clusterextension_reconciler *r, const char *name)
{
    pthread_mutex_lock(&r->known_lock);
    json_object_del(r->known_versions, name);
    pthread_mutex_unlock(&r->known_lock);
}

void clusterextension_extension_stale(clusterextension_reconciler *r, const char *name)
{
    pthread_mutex_lock(&r->known_lock);
    if (name)
        json_object_set_new(r->known_versions, name, json_string("")); /* no copy has it: a GET */
    pthread_mutex_unlock(&r->known_lock);
}
