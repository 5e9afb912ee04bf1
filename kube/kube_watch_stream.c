/* kube_watch_stream: newline-delimited watch events (see kube_watch_stream.h). */
#include "kube_watch_stream.h"

#include <string.h>

#define DEFAULT_MAX_LINE ((size_t)64 << 20)

void kube_watch_stream_init(kube_watch_stream *s, kube_watch_stream_event_cb cb, void *data)
{
    memset(s, 0, sizeof *s);
    s->cb = cb;
    s->data = data;
}

void kube_watch_stream_reset(kube_watch_stream *s)
{
    strbuf_free(&s->pending);
}

void kube_watch_stream_free(kube_watch_stream *s)
{
    strbuf_free(&s->pending);
}

size_t kube_watch_stream_pending(const kube_watch_stream *s)
{
    return s->pending.len;
}

static int only_space(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

static int parse_line(kube_watch_stream *s, const char *line, size_t n, olm_error *err)
{
    if (only_space(line, n))
        return 0; /* keep-alive blank lines are harmless */
    json_error_t je;
    json_t *ev = json_loadb(line, n, 0, &je);
    if (!ev)
        return olm_error_set(err, "watch event is not JSON: %s (line %d, column %d)", je.text, je.line,
                             je.column);
    json_t *type = json_object_get(ev, "type");
    json_t *obj = json_object_get(ev, "object");
    if (!json_is_string(type) || !json_is_object(obj)) {
        json_decref(ev);
        return olm_error_set(err, "watch event without a string \"type\" and an \"object\"");
    }
    int rc = s->cb(json_string_value(type), obj, s->data);
    json_decref(ev);
    return rc;
}

/* Complete events are parsed where curl's buffer has them; only the start of an event whose
 * newline has not arrived yet is copied into `pending`, and `pending` is freed once that event
 * is complete.  (It used to collect every chunk and keep its largest size for the watch's life:
 * after a burst of installs, tens of KiB per watch that would never be needed again.) */
int kube_watch_stream_feed(kube_watch_stream *s, const char *buf, size_t len, olm_error *err)
{
    size_t max = s->max_line ? s->max_line : DEFAULT_MAX_LINE;
    int rc = 0;
    if (s->pending.len > 0) {
        const char *nl = memchr(buf, '\n', len);
        size_t take = nl ? (size_t)(nl - buf) : len;
        if (strbuf_append(&s->pending, buf, take) != 0) {
            strbuf_free(&s->pending);
            return olm_error_set(err, "out of memory buffering a watch event");
        }
        if (!nl) {
            if (s->pending.len > max) {
                strbuf_free(&s->pending);
                return olm_error_set(err, "watch event larger than %zu bytes", max);
            }
            return 0;
        }
        rc = parse_line(s, s->pending.data, s->pending.len, err);
        strbuf_free(&s->pending);
        if (rc != 0)
            return rc;
        buf += take + 1;
        len -= take + 1;
    }
    const char *nl;
    while ((nl = memchr(buf, '\n', len)) != NULL) {
        size_t n = (size_t)(nl - buf);
        if ((rc = parse_line(s, buf, n, err)) != 0)
            return rc;
        buf += n + 1;
        len -= n + 1;
    }
    if (len > max)
        return olm_error_set(err, "watch event larger than %zu bytes", max);
    if (len > 0 && strbuf_append(&s->pending, buf, len) != 0) {
        strbuf_free(&s->pending);
        return olm_error_set(err, "out of memory buffering a watch event");
    }
    return 0;
}
