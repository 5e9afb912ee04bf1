/* kube_watch_stream: incremental parser of a watch response body.
 *
 * The API server streams one JSON object per event, {"type": "...", "object": {...}},
 * each followed by a newline; TCP and HTTP chunking cut that stream anywhere.  The
 * parser buffers the incomplete tail and reports each complete event, so callers
 * can feed whatever curl's write callback hands them.
 *
 * Thread affinity: none (plain data); one parser is used by one thread at a time. */
#ifndef OLM_KUBE_WATCH_STREAM_H
#define OLM_KUBE_WATCH_STREAM_H

#include <jansson.h>
#include <stddef.h>

#include "olm_error.h"
#include "strbuf.h"

/* Called per complete event.  `type` is the event type as sent ("ADDED",
 * "MODIFIED", "DELETED", "BOOKMARK", "ERROR"); `object` is borrowed (incref to
 * keep it).  Return 0 to continue, non-zero to stop feeding (kube_watch_stream_feed
 * then returns that value at once; the rest of the chunk is dropped). */
typedef int (*kube_watch_stream_event_cb)(const char *type, json_t *object, void *data);

typedef struct kube_watch_stream {
    strbuf pending;            /* bytes after the last newline */
    size_t max_line;           /* an event larger than this is an error (0: 64 MiB) */
    kube_watch_stream_event_cb cb;
    void *data;
} kube_watch_stream;

void kube_watch_stream_init(kube_watch_stream *s, kube_watch_stream_event_cb cb, void *data);
/* Drops buffered bytes (a new connection starts a new stream). */
void kube_watch_stream_reset(kube_watch_stream *s);
void kube_watch_stream_free(kube_watch_stream *s);

/* Returns 0, the callback's non-zero value, or -1 with err set on malformed input
 * (not JSON, no "type", or a line over max_line) or out of memory. */
int kube_watch_stream_feed(kube_watch_stream *s, const char *buf, size_t len, olm_error *err);

/* Bytes buffered without a terminating newline yet. */
size_t kube_watch_stream_pending(const kube_watch_stream *s);

#endif
