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
    strbuf_reset(&s->pending);
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

int kube_watch_stream_feed(kube_watch_stream *s, const char *buf, size_t len, olm_error *err)
{
    size_t max = s->max_line ? s->max_line : DEFAULT_MAX_LINE;
    size_t scan_from = s->pending.len; /* older bytes hold no newline */
    if (strbuf_append(&s->pending, buf, len) != 0)
        return olm_error_set(err, "out of memory buffering a watch event");
    char *p = s->pending.data;
    size_t start = 0, end = s->pending.len;
    int rc = 0;
    for (size_t i = scan_from; i < end; i++) {
        if (p[i] != '\n')
            continue;
        rc = parse_line(s, p + start, i - start, err);
        start = i + 1;
        if (rc != 0)
            break;
    }
    if (rc == 0 && end - start > max)
        rc = olm_error_set(err, "watch event larger than %zu bytes", max);
    if (rc != 0) {
        strbuf_reset(&s->pending);
        return rc;
    }
    if (start > 0) {
        memmove(p, p + start, end - start);
        s->pending.len = end - start;
        p[s->pending.len] = '\0';
    }
    return 0;
}
