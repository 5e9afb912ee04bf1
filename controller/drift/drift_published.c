/* drift_published: what the extensions' own watches (not the shared ones) hold, published for
 * drift_watcher_lookup.
 *
 * An extension whose ServiceAccount may not watch a type cluster-wide (namespace-bound
 * installers) has watches of its own.  Their content hashes and probe digests answer a
 * reconcile's lookup as a shared watch's do (drift.h), so its repair reads no object its own
 * watch holds as its apply left it: before, each reconcile of such an extension read every
 * object again (1,000 namespace-bound installs: ~2,900 GETs of ConfigMaps alone, the
 * Deployments' rollouts re-reconciling them).
 *
 * A watch publishes at its first sync (a LIST's objects) and then each event; it withdraws
 * everything when it stops or starts over (a new credential, a 403), so an answer always
 * comes from a watch that runs.  Keys are "<resource>\n<ns>/<name>": an object is labelled for
 * one extension, so two extensions' watches never publish the same key (one that did, after
 * an ownership change, answers with a hash the other's record does not hold).  The maps are
 * guarded by the watcher's cache_lock, the lookup's side being any thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift_internal.h"

static char *published_key(const char *resource, const char *key)
{
    size_t n = strlen(resource) + strlen(key) + 2;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s\n%s", resource, key);
    return k;
}

/* Caller holds cache_lock. */
static void put_locked(drift_watch *w, const char *key)
{
    drift_watcher *d = w->d;
    char *k = published_key(w->resource, key);
    if (!k)
        return; /* out of memory: that object is read by its reconcile, as before */
    json_t *h = json_object_get(w->seen, key);
    json_t *p = json_object_get(w->probed, key);
    if (!h || json_object_set(d->own_seen, k, h) != 0)
        json_object_del(d->own_seen, k);
    if (!h || !p || json_object_set(d->own_probed, k, p) != 0)
        json_object_del(d->own_probed, k);
    free(k);
}

void drift_published_put(drift_watch *w, const char *key)
{
    if (!w->published)
        return;
    pthread_mutex_lock(&w->d->cache_lock);
    put_locked(w, key);
    pthread_mutex_unlock(&w->d->cache_lock);
}

void drift_published_all(drift_watch *w)
{
    if (w->published || !w->resource)
        return;
    w->published = true;
    const char *key;
    json_t *v;
    pthread_mutex_lock(&w->d->cache_lock);
    json_object_foreach(w->seen, key, v) put_locked(w, key);
    pthread_mutex_unlock(&w->d->cache_lock);
}

void drift_published_withdraw(drift_watch *w)
{
    if (!w->published)
        return;
    w->published = false;
    drift_watcher *d = w->d;
    const char *key;
    json_t *v;
    pthread_mutex_lock(&d->cache_lock);
    json_object_foreach(w->seen, key, v) {
        char *k = published_key(w->resource, key);
        if (k) {
            json_object_del(d->own_seen, k);
            json_object_del(d->own_probed, k);
        }
        free(k);
    }
    pthread_mutex_unlock(&d->cache_lock);
}

int drift_published_lookup(drift_watcher *d, const char *resource, const char *key, uint64_t *content,
                           uint64_t *probe, char **line)
{
    char *k = published_key(resource, key);
    const json_t *h = k ? json_object_get(d->own_seen, k) : NULL;
    if (h) {
        *content = (uint64_t)json_integer_value(h);
        *probe = drift_probed_get(d->own_probed, k);
        if (line)
            *line = drift_probed_line(d->own_probed, k);
    }
    free(k);
    return h ? 1 : 0;
}
