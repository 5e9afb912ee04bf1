/* fbc_json_fast: the decoder's fast path for one JSON object.
 *
 * jansson reads input one byte at a time through a callback and copies every string
 * twice; on catalogs, whose blobs are mostly long strings, that was most of the load
 * time.  This parser scans strings in place and builds the same jansson values
 * (numbers as doubles, as with JSON_DECODE_INT_AS_REAL).
 *
 * It accepts a subset of what jansson accepts and gives up (NULL) on anything else:
 * bad syntax, invalid UTF-8, control bytes, lone surrogates, \u0000, numbers that
 * overflow, very deep nesting, out of memory.  The caller then hands the same bytes to
 * jansson, which decodes the rare odd blob or reports the error in its own words, so
 * behaviour and messages stay exactly jansson's. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fbc_internal.h"

#define FAST_MAX_DEPTH 512 /* jansson allows 2048; deeper blobs just take the slow path */
#define FAST_MAX_NUMBER 64 /* longer number tokens take the slow path too */

typedef struct fast_parser {
    const unsigned char *s;
    size_t len, pos;
    strbuf *scratch; /* unescaped text of the current string */
} fast_parser;

static json_t *parse_value(fast_parser *p, int depth);

static bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void skip_space(fast_parser *p)
{
    while (p->pos < p->len && is_space(p->s[p->pos]))
        p->pos++;
}

static int hex4(const unsigned char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static int put_utf8(strbuf *sb, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return strbuf_append(sb, b, n);
}

/* One escape after the backslash at p->pos - 1, appended to scratch; -1 to give up. */
static int unescape(fast_parser *p)
{
    if (p->pos >= p->len)
        return -1;
    unsigned char c = p->s[p->pos++];
    char out;
    switch (c) {
    case '"': case '\\': case '/': out = (char)c; break;
    case 'b': out = '\b'; break;
    case 'f': out = '\f'; break;
    case 'n': out = '\n'; break;
    case 'r': out = '\r'; break;
    case 't': out = '\t'; break;
    case 'u': {
        if (p->len - p->pos < 4)
            return -1;
        int cp = hex4(p->s + p->pos);
        p->pos += 4;
        if (cp <= 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
            return -1; /* \u0000 (NUL handling) and lone low surrogates: jansson decides */
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (p->len - p->pos < 6 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                return -1;
            int lo = hex4(p->s + p->pos + 2);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return -1;
            p->pos += 6;
            cp = ((cp - 0xD800) << 10) + (lo - 0xDC00) + 0x10000;
        }
        return put_utf8(p->scratch, (unsigned)cp);
    }
    default: return -1;
    }
    return strbuf_putc(p->scratch, out);
}

/* Scans the string whose opening quote is at p->pos.  On success (*text, *n) is
 * the decoded text: a slice of the input when it had no escapes (*in_place), else the
 * scratch buffer, valid until the next string.  -1 to give up. */
static int scan_string(fast_parser *p, const char **text, size_t *n, bool *in_place)
{
    size_t start = ++p->pos, copied = start; /* input up to `copied` is in scratch */
    bool escaped = false;
    while (p->pos < p->len) {
        p->pos += gocompat_json_plain_run(p->s + p->pos, p->len - p->pos);
        if (p->pos >= p->len)
            break;
        unsigned char c = p->s[p->pos];
        if (c == '"') {
            if (!escaped) {
                *text = (const char *)p->s + start;
                *n = p->pos - start;
                *in_place = true;
            } else {
                if (strbuf_append(p->scratch, (const char *)p->s + copied, p->pos - copied) < 0)
                    return -1;
                *text = p->scratch->data;
                *n = p->scratch->len;
                *in_place = false;
            }
            p->pos++;
            return 0;
        }
        if (c == '\\') {
            if (!escaped) {
                strbuf_reset(p->scratch);
                escaped = true;
            }
            if (strbuf_append(p->scratch, (const char *)p->s + copied, p->pos - copied) < 0)
                return -1;
            p->pos++;
            if (unescape(p) < 0)
                return -1;
            copied = p->pos;
            continue;
        }
        if (c < 0x20)
            return -1; /* raw control byte: jansson's error */
        uint32_t cp;
        size_t l = gocompat_utf8_decode(p->s + p->pos, p->len - p->pos, &cp);
        if (l == 0)
            return -1; /* invalid UTF-8: jansson's error */
        p->pos += l;
    }
    return -1; /* unterminated */
}

static json_t *parse_number(fast_parser *p)
{
    size_t start = p->pos;
    const unsigned char *s = p->s;
    size_t i = p->pos;
    if (i < p->len && s[i] == '-')
        i++;
    if (i < p->len && s[i] == '0') {
        i++;
    } else if (i < p->len && s[i] >= '1' && s[i] <= '9') {
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return NULL;
    }
    if (i < p->len && s[i] == '.') {
        i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return NULL;
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return NULL;
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    /* "01" and "1x" are jansson errors: a number must end at a delimiter. */
    if (i < p->len && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
                       (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '.' || s[i] == '-' || s[i] == '+'))
        return NULL;
    size_t n = i - start;
    if (n >= FAST_MAX_NUMBER)
        return NULL;
    char buf[FAST_MAX_NUMBER]; /* the input need not be NUL-terminated */
    memcpy(buf, s + start, n);
    buf[n] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE && isinf(d))
        return NULL; /* jansson: "real number overflow" */
    p->pos = i;
    return json_real(d);
}

static json_t *parse_literal(fast_parser *p, const char *word, json_t *value)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return NULL;
    size_t i = p->pos + n;
    if (i < p->len && ((p->s[i] >= 'a' && p->s[i] <= 'z') || (p->s[i] >= 'A' && p->s[i] <= 'Z')))
        return NULL;
    p->pos = i;
    return value;
}

static json_t *parse_object(fast_parser *p, int depth)
{
    json_t *obj = json_object();
    if (!obj)
        return NULL;
    p->pos++; /* '{' */
    skip_space(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return obj;
    }
    for (;;) {
        if (p->pos >= p->len || p->s[p->pos] != '"')
            goto fail;
        const char *k;
        size_t kn;
        bool in_place;
        if (scan_string(p, &k, &kn, &in_place) < 0)
            goto fail;
        /* The value's strings reuse the scratch buffer: keep an escaped key apart. */
        char *kcopy = NULL;
        if (!in_place) {
            if (!(kcopy = malloc(kn ? kn : 1)))
                goto fail;
            memcpy(kcopy, k, kn);
            k = kcopy;
        }
        skip_space(p);
        json_t *v = NULL;
        if (p->pos < p->len && p->s[p->pos] == ':') {
            p->pos++;
            skip_space(p);
            v = parse_value(p, depth + 1);
        }
        int rc = v ? json_object_setn_new_nocheck(obj, k, kn, v) : -1; /* consumes v */
        free(kcopy);
        if (rc < 0)
            goto fail;
        skip_space(p);
        if (p->pos >= p->len)
            goto fail;
        if (p->s[p->pos] == '}') {
            p->pos++;
            return obj;
        }
        if (p->s[p->pos] != ',')
            goto fail;
        p->pos++;
        skip_space(p);
    }
fail:
    json_decref(obj);
    return NULL;
}

static json_t *parse_array(fast_parser *p, int depth)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    p->pos++; /* '[' */
    skip_space(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return arr;
    }
    for (;;) {
        json_t *v = parse_value(p, depth + 1);
        if (!v || json_array_append_new(arr, v) < 0) /* consumes v */
            goto fail;
        skip_space(p);
        if (p->pos >= p->len)
            goto fail;
        if (p->s[p->pos] == ']') {
            p->pos++;
            return arr;
        }
        if (p->s[p->pos] != ',')
            goto fail;
        p->pos++;
        skip_space(p);
    }
fail:
    json_decref(arr);
    return NULL;
}

static json_t *parse_value(fast_parser *p, int depth)
{
    if (depth > FAST_MAX_DEPTH || p->pos >= p->len)
        return NULL;
    switch (p->s[p->pos]) {
    case '{': return parse_object(p, depth);
    case '[': return parse_array(p, depth);
    case '"': {
        const char *t;
        size_t n;
        bool in_place;
        if (scan_string(p, &t, &n, &in_place) < 0)
            return NULL;
        return json_stringn_nocheck(t, n);
    }
    case 't': return parse_literal(p, "true", json_true());
    case 'f': return parse_literal(p, "false", json_false());
    case 'n': return parse_literal(p, "null", json_null());
    default: return parse_number(p);
    }
}

json_t *fbc_json_fast_object(const char *data, size_t len, strbuf *scratch, size_t *used)
{
    fast_parser p = {.s = (const unsigned char *)data, .len = len, .scratch = scratch};
    json_t *v = NULL;
    if (len > 0 && data[0] == '{')
        v = parse_object(&p, 1);
    if (v)
        *used = p.pos;
    return v;
}
