/* kube_informer: a local cache of one resource collection, fed by a kube_watch.
 *
 * The cache maps the object key ("namespace/name" or "name") to the latest object.
 * The watch updates it on the loop thread and then calls the handlers, so a handler
 * that enqueues a key lets the reconcile see at least that version.  Reconciles
 * run on the threadpool and read the cache concurrently: reads take a read lock
 * (uv_rwlock_t) and hand out new references to shared, immutable objects.
 *
 * Objects handed out are shared with the cache and with other readers: never
 * modify them; json_deep_copy first (jansson's reference counts are atomic, so
 * json_decref from any thread is fine).
 *
 * An optional transform (kube_informer_set_transform) makes the cache keep only
 * what its readers read, as client-go's SharedInformer.SetTransform does. */
#ifndef OLM_KUBE_INFORMER_H
#define OLM_KUBE_INFORMER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube_config.h"
#include "kube_uvcurl.h"
#include "kube_watch.h"
#include "olm_error.h"

typedef struct kube_informer kube_informer;

/* All optional; loop thread; objects borrowed for the call.  They run after the
 * cache has been updated and see what it keeps (the transformed objects, when there
 * is a transform: on_update's old_obj is the one the cache held before). */
typedef struct kube_informer_handlers {
    void (*on_add)(json_t *obj, void *data);
    void (*on_update)(json_t *old_obj, json_t *new_obj, void *data);
    void (*on_delete)(json_t *obj, void *data);
    void (*on_synced)(void *data);          /* after every (re)list */
    void (*on_error)(const char *msg, void *data);
} kube_informer_handlers;

/* Loop thread.  `uc` and `cfg` borrowed, must outlive the informer. */
kube_informer *kube_informer_new(kube_uvcurl *uc, const kube_config *cfg, const kube_watch_options *opts,
                                 const kube_informer_handlers *handlers, void *data, olm_error *err);

/* What the cache keeps of an event's object: a new reference the informer takes
 * over (the object itself, incref'd, is fine), or NULL when it cannot be made (out
 * of memory): the event is then lost (kube_informer_lost_events).  `obj` is the
 * watch's, borrowed for the call and never modified.  Runs on the loop thread for
 * every event, DELETED too (its result is what on_delete sees).  The cache key is
 * taken from `obj` before the transform, so the result need not keep metadata.
 * `data` is the handlers' data.  Unlike kube_watch_options.transform, which reduces
 * the watch's object in place and must keep its identity and resourceVersion (the
 * watch's bookkeeping), this one may keep anything: without the resourceVersion,
 * equal results mean that nothing the readers read changed. */
typedef json_t *(*kube_informer_transform)(const json_t *obj, void *data);

/* Loop thread, before kube_informer_start.  NULL: the cache keeps the objects. */
void kube_informer_set_transform(kube_informer *inf, kube_informer_transform transform);

/* From on_error only: whether what it is told is a failure the watch gets past by itself
 * (kube_watch_error_is_transient); a lost event (the cache may be wrong for good) is not.
 * NULL: false. */
bool kube_informer_error_is_transient(const kube_informer *inf);

/* Loop thread.  Starts the watch. */
int kube_informer_start(kube_informer *inf, olm_error *err);

/* Any thread.  True once the first LIST is in the cache. */
bool kube_informer_has_synced(kube_informer *inf);

/* Any thread.  A new reference to the cached object (caller json_decrefs), or NULL. */
json_t *kube_informer_get(kube_informer *inf, const char *key);

/* Any thread.  A new array holding new references to every cached object (in no
 * particular order), or NULL when out of memory.  Caller json_decrefs. */
json_t *kube_informer_list(kube_informer *inf);

/* Any thread.  kube_informer_list in key order ("namespace/name"), which is the
 * order the apiserver lists a collection in, so a reader that picks the first of
 * several matching objects picks the same one from either. */
json_t *kube_informer_list_by_key(kube_informer *inf);

/* Any thread.  How many events could not be applied (out of memory in the cache or
 * the transform, or an object without metadata.name); on_error says so each time.
 * After one the cache may lack an object, or hold a stale or deleted one, for good:
 * the watch counts the event as delivered, so not even a relist repairs it.  A
 * reader that must fail closed stops trusting the cache once this is non-zero. */
unsigned kube_informer_lost_events(kube_informer *inf);

/* Any thread. */
size_t kube_informer_count(kube_informer *inf);

/* Loop thread.  Stops the watch; no handler runs after this returns.  Frees the
 * informer asynchronously, then calls closed_cb (may be NULL).  No reader may use
 * the informer after calling this (stop reconciles first). */
void kube_informer_stop(kube_informer *inf, void (*closed_cb)(void *data), void *data);

/* ----- the event sink, exposed so tests and other feeds can drive the cache ----- */

/* Loop thread.  Applies one watch event to the cache and calls the handlers. */
void kube_informer_apply(kube_informer *inf, kube_watch_event_type type, json_t *obj);
/* Loop thread.  The feed has delivered the whole initial list: has_synced turns true and the
 * on_synced handler runs, as after a watch's first LIST. */
void kube_informer_mark_synced(kube_informer *inf);

#endif
