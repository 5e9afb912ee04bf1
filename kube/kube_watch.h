/* kube_watch: list+watch of one resource collection, kept going forever.
 *
 * LIST (paged, async on the shared kube_uvcurl) gives every object and a
 * resourceVersion; WATCH from that resourceVersion streams changes.  When a watch
 * ends normally (server timeout) it resumes from the last resourceVersion seen
 * (events and BOOKMARKs advance it).  When the server says the resourceVersion is
 * too old (HTTP 410, or an ERROR event with code 410) the collection is listed
 * again and compared with what the watch had reported: objects that vanished in
 * between are reported as DELETED, changed ones as MODIFIED, new ones as ADDED, so
 * a consumer never misses a delete.  Connection and server errors are retried
 * with exponential back-off.
 *
 * Thread affinity: loop thread only; every callback runs on the loop thread. */
#ifndef OLM_KUBE_WATCH_H
#define OLM_KUBE_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "kube_config.h"
#include "kube_uvcurl.h"
#include "olm_error.h"

typedef struct kube_watch kube_watch;

typedef enum kube_watch_event_type {
    KUBE_WATCH_ADDED,
    KUBE_WATCH_MODIFIED,
    KUBE_WATCH_DELETED,
} kube_watch_event_type;

typedef struct kube_watch_handlers {
    /* An object appeared, changed or disappeared.  `obj` is borrowed (json_incref
     * to keep it) and must not be modified.  Required. */
    void (*on_event)(kube_watch_event_type type, json_t *obj, void *data);
    /* A (re)list was fully applied: the events so far describe the whole
     * collection.  Optional. */
    void (*on_synced)(void *data);
    /* Something went wrong and will be retried (or, for relist, is being handled);
     * for logging.  Optional. */
    void (*on_error)(const char *msg, void *data);
} kube_watch_handlers;

typedef struct kube_watch_options {
    /* Collection path, e.g. "/api/v1/namespaces" or
     * "/apis/olm.operatorframework.io/v1/clustercatalogs".  Required. */
    const char *path;
    const char *label_selector;  /* NULL: everything */
    const char *field_selector;  /* NULL: everything */
    unsigned timeout_seconds;    /* server-side watch timeout; 0: 300 */
    unsigned list_page_size;     /* LIST limit; 0: 500 */
    uint64_t backoff_initial_ms; /* first retry delay after an error; 0: 200 */
    uint64_t backoff_max_ms;     /* retry delay cap; 0: 30000 */
    /* Keep only apiVersion, kind and metadata's name, namespace, uid, labels and
     * resourceVersion of each object for the relist comparison, not the whole object:
     * the DELETED events a relist reports then carry just those.  For watchers of many
     * objects that only need their identity on deletion (drift watches). */
    bool keep_metadata_only;
    /* Drop metadata.managedFields from every object before it is reported or kept: the
     * server-side apply bookkeeping is often the biggest part of an object, and a cache
     * of thousands of them (an informer's) never reads it. */
    bool drop_managed_fields;
    /* Optional: reduces each object in place to what the consumer reads, before it is
     * reported or kept (client-go's informer transform).  It must keep metadata.name,
     * .namespace and .resourceVersion (the watch's own bookkeeping).  Loop thread. */
    void (*transform)(json_t *obj);
} kube_watch_options;

/* The informer/work-queue key of an object: "namespace/name", or "name" for
 * cluster-scoped objects.  NULL if the object has no metadata.name or memory runs
 * out.  Caller frees.  Any thread. */
char *kube_object_key(const json_t *obj);

/* Creates a watch; nothing happens until kube_watch_start.  `uc` and `cfg` are
 * borrowed and must outlive the watch; the strings of `opts` are copied. */
kube_watch *kube_watch_new(kube_uvcurl *uc, const kube_config *cfg, const kube_watch_options *opts,
                           const kube_watch_handlers *handlers, void *data, olm_error *err);

/* Starts the initial LIST. */
int kube_watch_start(kube_watch *w, olm_error *err);

/* True once the first LIST has been applied. */
bool kube_watch_has_synced(const kube_watch *w);

/* resourceVersion the next watch would resume from ("" before the first LIST);
 * borrowed, valid until the next callback. */
const char *kube_watch_resource_version(const kube_watch *w);

/* The HTTP status of the LIST or WATCH response that failed last (e.g. 403 when the
 * credentials may not list or watch the collection, 401 when they were rejected), 0
 * when the last one succeeded or no HTTP response arrived.  Meant for on_error. */
long kube_watch_last_status(const kube_watch *w);

/* From on_error only: whether the failure it is told of is one the watch gets past by itself,
 * retrying or listing again (a lost connection, 410 Gone, 408, 429 -- throttled, or the
 * apiserver's storage (re)initializing after a restart or a new CRD --, 5xx), rather than one
 * that needs someone to act (401, 403, 404, another 4xx, a malformed answer, out of memory).
 * Lets a handler log the first kind as a warning: an error line should mean something. */
bool kube_watch_error_is_transient(const kube_watch *w);
/* The statuses above. */
bool kube_watch_status_is_transient(long status);

/* Number of LISTs started so far (1 after the first; relists add one each). */
unsigned kube_watch_list_count(const kube_watch *w);

/* Stops everything; no callback runs after this returns.  The watch is freed
 * asynchronously and `closed_cb` (may be NULL) runs when it is gone.  Safe to call
 * from inside a watch callback. */
void kube_watch_stop(kube_watch *w, void (*closed_cb)(void *data), void *data);

#endif
