/* drift_kube: the drift watcher's backend on kube_watch.
 *
 * Each watch is one kube_watch (LIST, then a streaming WATCH resumed from the last
 * resourceVersion, relisting after 410) on the shared kube_uvcurl.  Cost per watch:
 * the kube_watch struct, a uv_timer_t, one libcurl easy handle for the stream, and the
 * identity of every listed object (what a relist is compared with); the connection is
 * libcurl's: over https it negotiates HTTP/2 and multiplexes streams to the same
 * apiserver onto shared connections when the TLS settings match (all ServiceAccount
 * tokens carry the same ones), so a watch costs a stream, not a socket. */
#include <stdlib.h>

#include "drift.h"

typedef struct kube_backend_watch {
    kube_watch *kw;
    drift_watch *w;
    void (*closed)(void *cdata);
    void *cdata;
} kube_backend_watch;

static void on_event(kube_watch_event_type type, json_t *obj, void *data)
{
    kube_backend_watch *b = data;
    drift_watch_event(b->w, type, obj);
}

static void on_synced(void *data)
{
    kube_backend_watch *b = data;
    drift_watch_synced(b->w);
}

static void on_error(const char *msg, void *data)
{
    kube_backend_watch *b = data;
    drift_watch_error(b->w, kube_watch_last_status(b->kw), msg);
}

static void *kube_start(void *data, const kube_config *cfg, const char *path, const char *selector, drift_watch *w,
                        olm_error *err)
{
    kube_backend_watch *b = calloc(1, sizeof *b);
    if (!b) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    b->w = w;
    /* Deletions need only the object's identity and owner labels (drift_watch_event,
     * drift_shared_event): at 1,000 extensions, whole objects were most of the RSS. */
    kube_watch_options o = {.path = path, .label_selector = selector, .keep_metadata_only = true};
    kube_watch_handlers h = {.on_event = on_event, .on_synced = on_synced, .on_error = on_error};
    b->kw = kube_watch_new(data, cfg, &o, &h, b, err);
    if (!b->kw) {
        free(b);
        return NULL;
    }
    if (kube_watch_start(b->kw, err) != 0) {
        kube_watch_stop(b->kw, free, b);
        return NULL;
    }
    return b;
}

static void kube_closed(void *data)
{
    kube_backend_watch *b = data;
    void (*closed)(void *) = b->closed;
    void *cdata = b->cdata;
    free(b);
    if (closed)
        closed(cdata);
}

static void kube_stop(void *data, void *handle, void (*closed)(void *cdata), void *cdata)
{
    (void)data;
    kube_backend_watch *b = handle;
    b->closed = closed;
    b->cdata = cdata;
    kube_watch_stop(b->kw, kube_closed, b);
}

drift_backend drift_backend_kube(kube_uvcurl *uc)
{
    return (drift_backend){.start = kube_start, .stop = kube_stop, .data = uc};
}
