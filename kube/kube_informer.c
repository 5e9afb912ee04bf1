/* kube_informer: watch-fed cache with concurrent readers (see kube_informer.h). */
#include "kube_informer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct kube_informer {
    kube_watch *watch;
    kube_informer_handlers h;
    void *data;
    uv_rwlock_t lock; /* guards `store`; written on the loop thread only */
    json_t *store;    /* key → object */
    atomic_bool synced;
    atomic_uint lost; /* kube_informer_lost_events */
    kube_informer_transform transform;
    bool stopped;
    void (*closed_cb)(void *data);
    void *closed_data;
};

/* An event that could not be applied: counted, so fail-closed readers stop trusting
 * the cache (kube_informer_lost_events), and reported. */
static void lose(kube_informer *inf, const char *why)
{
    atomic_fetch_add(&inf->lost, 1);
    if (inf->h.on_error)
        inf->h.on_error(why, inf->data);
}

void kube_informer_apply(kube_informer *inf, kube_watch_event_type type, json_t *obj)
{
    if (inf->stopped)
        return;
    char *key = kube_object_key(obj);
    if (!key) {
        lose(inf, "informer: event for an object without metadata.name (or out of memory) lost");
        return;
    }
    json_t *kept = inf->transform ? inf->transform(obj, inf->data) : json_incref(obj);
    if (!kept) {
        free(key);
        lose(inf, "informer: out of memory transforming an object; event lost");
        return;
    }
    /* Keep the previous object alive past the store update for on_update/on_delete. */
    uv_rwlock_wrlock(&inf->lock);
    json_t *old = json_incref(json_object_get(inf->store, key));
    int rc = 0;
    if (type == KUBE_WATCH_DELETED)
        json_object_del(inf->store, key);
    else
        rc = json_object_set(inf->store, key, kept);
    uv_rwlock_wrunlock(&inf->lock);
    free(key);
    if (rc != 0) {
        json_decref(old);
        json_decref(kept);
        lose(inf, "informer: out of memory updating the cache; event lost");
        return;
    }
    if (type == KUBE_WATCH_DELETED) {
        /* A delete carries the final state. */
        if (inf->h.on_delete)
            inf->h.on_delete(kept, inf->data);
    } else if (old) {
        if (inf->h.on_update)
            inf->h.on_update(old, kept, inf->data);
    } else if (inf->h.on_add) {
        inf->h.on_add(kept, inf->data);
    }
    json_decref(old);
    json_decref(kept);
}

static void on_watch_event(kube_watch_event_type type, json_t *obj, void *data)
{
    kube_informer_apply(data, type, obj);
}

void kube_informer_mark_synced(kube_informer *inf)
{
    atomic_store(&inf->synced, true);
    if (inf->h.on_synced && !inf->stopped)
        inf->h.on_synced(inf->data);
}

static void on_watch_synced(void *data)
{
    kube_informer_mark_synced(data);
}

static void on_watch_error(const char *msg, void *data)
{
    kube_informer *inf = data;
    if (inf->h.on_error && !inf->stopped)
        inf->h.on_error(msg, inf->data);
}

kube_informer *kube_informer_new(kube_uvcurl *uc, const kube_config *cfg, const kube_watch_options *opts,
                                 const kube_informer_handlers *handlers, void *data, olm_error *err)
{
    kube_informer *inf = calloc(1, sizeof *inf);
    if (!inf) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    if (handlers)
        inf->h = *handlers;
    inf->data = data;
    atomic_init(&inf->synced, false);
    atomic_init(&inf->lost, 0);
    inf->store = json_object();
    if (!inf->store) {
        free(inf);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    int rc = uv_rwlock_init(&inf->lock);
    if (rc != 0) {
        json_decref(inf->store);
        free(inf);
        olm_error_set(err, "uv_rwlock_init: %s", uv_strerror(rc));
        return NULL;
    }
    kube_watch_handlers wh = {on_watch_event, on_watch_synced, on_watch_error};
    inf->watch = kube_watch_new(uc, cfg, opts, &wh, inf, err);
    if (!inf->watch) {
        uv_rwlock_destroy(&inf->lock);
        json_decref(inf->store);
        free(inf);
        return NULL;
    }
    return inf;
}

void kube_informer_set_transform(kube_informer *inf, kube_informer_transform transform)
{
    inf->transform = transform;
}

int kube_informer_start(kube_informer *inf, olm_error *err)
{
    return kube_watch_start(inf->watch, err);
}

bool kube_informer_has_synced(kube_informer *inf)
{
    return atomic_load(&inf->synced);
}

json_t *kube_informer_get(kube_informer *inf, const char *key)
{
    uv_rwlock_rdlock(&inf->lock);
    json_t *o = json_incref(json_object_get(inf->store, key));
    uv_rwlock_rdunlock(&inf->lock);
    return o;
}

json_t *kube_informer_list(kube_informer *inf)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    const char *key;
    json_t *obj;
    uv_rwlock_rdlock(&inf->lock);
    json_object_foreach(inf->store, key, obj) {
        if (json_array_append(arr, obj) != 0) {
            uv_rwlock_rdunlock(&inf->lock);
            json_decref(arr);
            return NULL;
        }
    }
    uv_rwlock_rdunlock(&inf->lock);
    return arr;
}

typedef struct keyed {
    const char *key;
    json_t *obj;
} keyed;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

json_t *kube_informer_list_by_key(kube_informer *inf)
{
    uv_rwlock_rdlock(&inf->lock);
    size_t n = json_object_size(inf->store), k = 0;
    keyed *v = malloc((n ? n : 1) * sizeof *v); /* the keys are the store's: read under the lock */
    json_t *arr = v ? json_array() : NULL;
    const char *key;
    json_t *obj;
    if (arr) {
        json_object_foreach(inf->store, key, obj)
            v[k++] = (keyed){key, obj};
        qsort(v, k, sizeof *v, by_key);
        for (size_t j = 0; j < k && arr; j++)
            if (json_array_append(arr, v[j].obj) != 0) {
                json_decref(arr);
                arr = NULL;
            }
    }
    uv_rwlock_rdunlock(&inf->lock);
    free(v);
    return arr;
}

unsigned kube_informer_lost_events(kube_informer *inf)
{
    return atomic_load(&inf->lost);
}

size_t kube_informer_count(kube_informer *inf)
{
    uv_rwlock_rdlock(&inf->lock);
    size_t n = json_object_size(inf->store);
    uv_rwlock_rdunlock(&inf->lock);
    return n;
}

static void on_watch_closed(void *data)
{
    kube_informer *inf = data;
    void (*cb)(void *) = inf->closed_cb;
    void *cb_data = inf->closed_data;
    uv_rwlock_destroy(&inf->lock);
    json_decref(inf->store);
    free(inf);
    if (cb)
        cb(cb_data);
}

void kube_informer_stop(kube_informer *inf, void (*closed_cb)(void *data), void *data)
{
    if (inf->stopped)
        return;
    inf->stopped = true;
    inf->closed_cb = closed_cb;
    inf->closed_data = data;
    kube_watch_stop(inf->watch, on_watch_closed, inf);
}

bool kube_informer_error_is_transient(const kube_informer *inf)
{
    /* A lost event is told outside the watch's own reports, where this is false. */
    return inf && inf->watch && kube_watch_error_is_transient(inf->watch);
}
