/* fbc_decode_json: a stream of concatenated JSON values (JSON lines included).
 *
 * jansson parses one value at a time with JSON_DISABLE_EOF_CHECK and reports how
 * many bytes it used, so we walk the buffer value by value and keep a running line
 * count for messages.  Most objects go through fbc_json_fast.c first; what it
 * declines (odd or broken input) jansson decodes or reports.  Numbers are decoded
 * as doubles (JSON_DECODE_INT_AS_REAL) because upstream decodes into interface{}
 * where every number is a float64. */
#include <string.h>

#include "fbc_internal.h"

static const char *json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Newlines in data[0..n): memchr skips the long lines of JSON-lines files fast. */
static int count_lines(const char *data, size_t n)
{
    int lines = 0;
    const char *p = data, *end = data + n;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        lines++;
        p++;
    }
    return lines;
}

/* Decodes the object at data[0] (after whitespace); sets *used.  -1 with err set. */
static json_t *decode_one(const char *data, size_t len, const char *name, int line,
                          strbuf *scratch, size_t *used, olm_error *err)
{
    json_t *v = fbc_json_fast_object(data, len, scratch, used);
    if (v)
        return v;
    json_error_t jerr;
    v = json_loadb(data, len,
                   JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL |
                       JSON_ALLOW_NUL,
                   &jerr);
    if (!v) {
        olm_error_set(err, "%s:%d: invalid JSON: %s", name,
                      line + (jerr.line > 0 ? jerr.line - 1 : 0), jerr.text);
        return NULL;
    }
    if (!json_is_object(v)) {
        olm_error_set(err, "%s:%d: expected a JSON object, got %s", name, line,
                      json_type_name(v));
        json_decref(v);
        return NULL;
    }
    *used = jerr.position > 0 ? (size_t)jerr.position : 1;
    return v;
}

int fbc_decode_json(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                    bool consumed, olm_error *err)
{
    size_t pos = 0;
    int line = 1, rc = 0;
    strbuf scratch = STRBUF_INIT;
    fbc_dom_arena arena;
    if (consumed)
        fbc_dom_arena_begin(&arena);
    for (;;) {
        while (pos < len && is_json_space(data[pos]))
            line += data[pos++] == '\n';
        if (pos >= len)
            break;
        size_t used = 0;
        json_t *v = decode_one(data + pos, len - pos, name, line, &scratch, &used, err);
        if (!v) {
            rc = -1;
            break;
        }
        int start = line;
        if (used > len - pos)
            used = len - pos;
        line += count_lines(data + pos, used);
        pos += used;
        if (fn(ud, v, start, err) < 0) {
            rc = -1;
            break;
        }
        if (consumed)
            fbc_dom_arena_reset(&arena);
    }
    if (consumed)
        fbc_dom_arena_end(&arena);
    strbuf_free(&scratch);
    return rc;
}

static int decode_stream(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                         bool consumed, olm_error *err)
{
    size_t i = 0;
    /* Same sniff as k8s' YAMLOrJSONDecoder: leading whitespace, then '{'. */
    while (i < len && (is_json_space(data[i]) || data[i] == '\f' || data[i] == '\v'))
        i++;
    if (i < len && data[i] == '{')
        return fbc_decode_json(data, len, name, fn, ud, consumed, err);
    return fbc_decode_yaml(data, len, name, fn, ud, consumed, err);
}

int fbc_decode_stream(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                      olm_error *err)
{
    return decode_stream(data, len, name, fn, ud, false, err); /* callers keep their objects */
}

int fbc_decode_stream_consumed(const char *data, size_t len, const char *name, fbc_blob_fn fn,
                               void *ud, olm_error *err)
{
    return decode_stream(data, len, name, fn, ud, true, err);
}
