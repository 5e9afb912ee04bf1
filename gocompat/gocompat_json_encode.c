/* gocompat_json_encode: Go's encoding/json encoder (json.Marshal, json.Encoder)
 * for the values a jansson tree can hold.
 *
 * Hand-written because its bytes are observable and jansson's differ: catalogd
 * serves catalog.jsonl exactly as encoding/json writes a map[string]interface{}
 * (sorted keys, float64 numbers, HTML escaping off); upstream names RBAC objects
 * with a SHA-224 of json.Encoder's output for a struct (field order, HTML
 * escaping on); the CRD upgrade-safety and upgradeable messages quote values as
 * json.Marshal writes them.  The choices that differ between those callers are
 * flags (gocompat.h); the rest is Go's:
 *  - compact, no trailing newline;
 *  - strings: \" \\ \b \f \n \r \t, other control bytes as \u00XX (lowercase
 *    hex), U+2028/U+2029 always escaped (JSONP safety), each invalid UTF-8 byte
 *    as \ufffd, DEL as it is;
 *  - float64 text as in gocompat_float.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat_internal.h"

typedef struct enc {
    strbuf *out;
    unsigned flags;
    gocompat_json_marks *marks;
    const gocompat_json_limits *lim;
} enc;

/* strbuf_putc / strbuf_append with the common case inline: the encoder writes a catalog as
 * millions of separators and short runs, and the out-of-line calls (each a reserve check
 * and a memcpy) were ~4% of a catalog decode.  The fallbacks grow the buffer. */
static inline int put1(strbuf *sb, char c)
{
    if (sb->len + 2 > sb->cap) /* c and the NUL */
        return strbuf_putc(sb, c);
    sb->data[sb->len++] = c;
    sb->data[sb->len] = '\0';
    return 0;
}

static inline int putn(strbuf *sb, const char *s, size_t n)
{
    if (sb->len + n + 1 > sb->cap)
        return strbuf_append(sb, s, n);
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return 0;
}

int gocompat_json_string(strbuf *out, const char *str, size_t n, unsigned flags)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    bool html = (flags & GOCOMPAT_JSON_ESCAPE_HTML) != 0;
    bool legacy_bf = (flags & GOCOMPAT_JSON_LEGACY_BF) != 0;
    if (strbuf_reserve(out, n + 2) < 0 || put1(out, '"') < 0)
        return -1;
    size_t start = 0, i = 0;
    while (i < n) {
        /* The fast run treats <, > and & as plain: with HTML escaping every byte
         * goes through the checks below instead. */
        if (!html)
            i += gocompat_json_plain_run(s + i, n - i);
        if (i >= n)
            break;
        unsigned char b = s[i];
        const char *esc = NULL;
        char ubuf[8];
        size_t adv = 1;
        if (b < 0x80) {
            bool html_byte = html && (b == '<' || b == '>' || b == '&');
            if (b >= 0x20 && b != '"' && b != '\\' && !html_byte) {
                i++;
                continue;
            }
            switch (b) {
            case '"': esc = "\\\""; break;
            case '\\': esc = "\\\\"; break;
            case '\b': esc = legacy_bf ? NULL : "\\b"; break;
            case '\f': esc = legacy_bf ? NULL : "\\f"; break;
            case '\n': esc = "\\n"; break;
            case '\r': esc = "\\r"; break;
            case '\t': esc = "\\t"; break;
            default: break;
            }
            if (!esc) {
                snprintf(ubuf, sizeof ubuf, "\\u00%c%c", hex[b >> 4], hex[b & 0xF]);
                esc = ubuf;
            }
        } else {
            uint32_t cp = 0;
            size_t l = gocompat_utf8_decode(s + i, n - i, &cp);
            if (l == 0) {
                esc = "\\ufffd";
            } else if (cp == 0x2028 || cp == 0x2029) {
                esc = cp == 0x2028 ? "\\u2028" : "\\u2029";
                adv = l;
            } else {
                i += l;
                continue;
            }
        }
        if (putn(out, str + start, i - start) < 0 || putn(out, esc, strlen(esc)) < 0)
            return -1;
        i += adv;
        start = i;
    }
    if (putn(out, str + start, n - start) < 0)
        return -1;
    return put1(out, '"');
}

static int encode(enc *e, const json_t *v, int depth);

typedef struct key_ref {
    const char *key;
    size_t len;
    json_t *val;
} key_ref;

/* Go sorts map keys as byte strings. */
static int cmp_keys(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int encode_object(enc *e, const json_t *v, int depth)
{
    size_t n = json_object_size(v);
    if (n == 0)
        return strbuf_append(e->out, "{}", 2);
    key_ref stack_keys[16];
    key_ref *keys = n <= 16 ? stack_keys : malloc(n * sizeof *keys);
    if (!keys)
        return -1;
    size_t k = 0;
    for (void *it = json_object_iter((json_t *)v); it && k < n;
         it = json_object_iter_next((json_t *)v, it)) {
        keys[k].key = json_object_iter_key(it);
        keys[k].len = json_object_iter_key_len(it);
        keys[k].val = json_object_iter_value(it);
        k++;
    }
    if (e->flags & GOCOMPAT_JSON_SORT_KEYS)
        qsort(keys, k, sizeof *keys, cmp_keys);
    int rc = put1(e->out, '{');
    for (size_t i = 0; i < k && rc == 0; i++) {
        if (i && put1(e->out, ',') < 0)
            rc = -1;
        else if (gocompat_json_string(e->out, keys[i].key, keys[i].len, e->flags) < 0 ||
                 put1(e->out, ':') < 0)
            rc = -1;
        else
            rc = encode(e, keys[i].val, depth + 1);
    }
    if (rc == 0)
        rc = put1(e->out, '}');
    if (keys != stack_keys)
        free(keys);
    return rc;
}

static int encode_number(enc *e, const json_t *v)
{
    if (e->lim && e->lim->number) {
        int rc = e->lim->number(e->lim->ud, v, e->out);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    if (json_is_integer(v) && !(e->flags & GOCOMPAT_JSON_FLOAT64_NUMBERS))
        return strbuf_printf(e->out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    double f = json_number_value(v);
    if (!isfinite(f))
        return -1;
    if (f == 0 && (e->flags & GOCOMPAT_JSON_LEGACY_ZERO))
        return strbuf_putc(e->out, '0');
    char num[GOCOMPAT_FLOAT_BUF];
    gocompat_json_float(f, num);
    return putn(e->out, num, strlen(num));
}

static int encode_value(enc *e, const json_t *v, int depth)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return encode_object(e, v, depth);
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (put1(e->out, '[') < 0)
            return -1;
        for (size_t i = 0; i < n; i++) {
            if (i && put1(e->out, ',') < 0)
                return -1;
            int rc = encode(e, json_array_get(v, i), depth + 1);
            if (rc < 0)
                return rc;
        }
        return put1(e->out, ']');
    }
    case JSON_STRING:
        return gocompat_json_string(e->out, json_string_value(v), json_string_length(v), e->flags);
    case JSON_INTEGER:
    case JSON_REAL: return encode_number(e, v);
    case JSON_TRUE: return putn(e->out, "true", 4);
    case JSON_FALSE: return putn(e->out, "false", 5);
    case JSON_NULL: return putn(e->out, "null", 4);
    }
    return -1;
}

static int encode(enc *e, const json_t *v, int depth)
{
    if (e->lim) {
        if (e->lim->max_depth && depth > e->lim->max_depth)
            return GOCOMPAT_JSON_EDEPTH;
        if (e->lim->max_len && e->out->len > e->lim->max_len)
            return GOCOMPAT_JSON_ETOOBIG;
    }
    gocompat_json_mark *m = NULL;
    gocompat_json_marks *marks = e->marks;
    if (marks && marks->next < marks->n && marks->items[marks->next].node == v) {
        m = &marks->items[marks->next++];
        m->start = e->out->len;
    }
    int rc = encode_value(e, v, depth);
    if (m && rc == 0)
        m->len = e->out->len - m->start;
    return rc;
}

int gocompat_json_encode_marked(strbuf *out, const json_t *v, unsigned flags,
                                gocompat_json_marks *marks)
{
    enc e = {out, flags, marks, NULL};
    return encode(&e, v, 0);
}

int gocompat_json_encode(strbuf *out, const json_t *v, unsigned flags)
{
    return gocompat_json_encode_marked(out, v, flags, NULL);
}

int gocompat_json_encode_limited(strbuf *out, const json_t *v, unsigned flags,
                                 const gocompat_json_limits *lim)
{
    enc e = {out, flags, NULL, lim};
    return encode(&e, v, 0);
}
