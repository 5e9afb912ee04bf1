/* fbc_normalise: encode a json_t byte for byte as Go's encoding/json encodes a
 * map[string]interface{} with SetEscapeHTML(false): what catalogd writes to
 * catalog.jsonl (spec §4.3).
 *
 *  - object keys sorted bytewise, compact separators;
 *  - numbers are float64 and printed with the shortest digits that read back to
 *    the same double, in plain notation unless |f| < 1e-6 or >= 1e21, where Go
 *    switches to 1e+21 / 1e-7 (its exponent has no leading zero when negative);
 *  - strings: \" \\ \b \f \n \r \t, other control bytes as \u00XX (lowercase
 *    hex), U+2028/U+2029 escaped, invalid UTF-8 as \ufffd, and <, >, & as is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fbc_internal.h"

/* Shortest decimal digits that round-trip: digits[] (no dot), their count, and the
 * decimal exponent of the first digit (value = 0.d1d2... * 10^(exp+1)).  `as_float`
 * asks for round-tripping through a 32-bit float. */
static void shortest_digits(double f, bool as_float, char *digits, int *nd, int *exp10)
{
    char buf[40];
    int maxp = as_float ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, f);
        if (p == maxp)
            break;
        if (as_float ? strtof(buf, NULL) == (float)f : strtod(buf, NULL) == f)
            break;
    }
    /* buf is "[-]d[.ddd]e[+-]xx" */
    const char *s = buf + (buf[0] == '-');
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            digits[n++] = *s;
    /* Trailing zeros carry no information (Go prints 1e+21 and 100, not 1.0e+21). */
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *nd = n;
    *exp10 = atoi(s + 1);
}

/* Go's %e for shortest digits: d[.ddd]e±dd (at least two exponent digits). */
static int fmt_e(char *out, size_t size, bool neg, const char *d, int nd, int exp10)
{
    return snprintf(out, size, "%s%c%s%.*se%c%02d", neg ? "-" : "", d[0], nd > 1 ? "." : "",
                    nd - 1, d + 1, exp10 < 0 ? '-' : '+', abs(exp10));
}

/* Go's %f for shortest digits. */
static void fmt_f(char *out, size_t size, bool neg, const char *d, int nd, int exp10)
{
    int dp = exp10 + 1; /* digits before the decimal point */
    size_t k = 0;
    if (neg && k + 1 < size)
        out[k++] = '-';
    if (dp > 0) {
        for (int i = 0; i < dp && k + 1 < size; i++)
            out[k++] = i < nd ? d[i] : '0';
    } else if (k + 1 < size) {
        out[k++] = '0';
    }
    if (nd > dp) {
        if (k + 1 < size)
            out[k++] = '.';
        for (int i = dp; i < nd && k + 1 < size; i++)
            out[k++] = i < 0 ? '0' : d[i];
    }
    out[k] = '\0';
}

void fbc_format_float64(double f, char *buf, size_t size)
{
    char d[40];
    int nd, e;
    bool neg = signbit(f) != 0;
    double a = fabs(f);
    if (a == 0) {
        snprintf(buf, size, "%s0", neg ? "-" : "");
        return;
    }
    shortest_digits(a, false, d, &nd, &e);
    if (a < 1e-6 || a >= 1e21) {
        fmt_e(buf, size, neg, d, nd, e);
        /* encoding/json trims "e-07" to "e-7" but keeps "e+21". */
        size_t n = strlen(buf);
        if (n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
            buf[n - 2] = buf[n - 1];
            buf[n - 1] = '\0';
        }
        return;
    }
    fmt_f(buf, size, neg, d, nd, e);
}

void fbc_format_float32_g(double f, char *buf, size_t size)
{
    if (isnan(f)) {
        snprintf(buf, size, ".nan");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, size, f > 0 ? ".inf" : "-.inf");
        return;
    }
    char d[40];
    int nd, e;
    bool neg = signbit(f) != 0;
    if ((float)f == 0) {
        snprintf(buf, size, "%s0", neg ? "-" : "");
        return;
    }
    shortest_digits(fabs(f), true, d, &nd, &e);
    /* %g with shortest digits: exponent form when exp < -4 or exp >= 6 (Go's rule
     * for precision -1; the float32 rounding is what a YAML float key goes through). */
    if (e < -4 || e >= 6)
        fmt_e(buf, size, neg, d, nd, e);
    else
        fmt_f(buf, size, neg, d, nd, e);
}

size_t fbc_utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80, c &= 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800, c &= 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000, c &= 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

static int encode_string(const char *str, size_t n, strbuf *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    if (strbuf_reserve(out, n + 2) < 0 || strbuf_putc(out, '"') < 0)
        return -1;
    size_t start = 0, i = 0;
    while (i < n) {
        i += fbc_plain_run(s + i, n - i);
        if (i >= n)
            break;
        unsigned char b = s[i];
        const char *esc = NULL;
        char ubuf[8];
        size_t adv = 1;
        if (b < 0x80) {
            if (b >= 0x20 && b != '"' && b != '\\') {
                i++;
                continue;
            }
            switch (b) {
            case '"': esc = "\\\""; break;
            case '\\': esc = "\\\\"; break;
            case '\b': esc = "\\b"; break;
            case '\f': esc = "\\f"; break;
            case '\n': esc = "\\n"; break;
            case '\r': esc = "\\r"; break;
            case '\t': esc = "\\t"; break;
            default:
                snprintf(ubuf, sizeof ubuf, "\\u00%c%c", hex[b >> 4], hex[b & 0xF]);
                esc = ubuf;
            }
        } else {
            unsigned cp = 0;
            size_t l = fbc_utf8_decode(s + i, n - i, &cp);
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
        if (strbuf_append(out, str + start, i - start) < 0 || strbuf_puts(out, esc) < 0)
            return -1;
        i += adv;
        start = i;
    }
    if (strbuf_append(out, str + start, n - start) < 0)
        return -1;
    return strbuf_putc(out, '"');
}

typedef struct key_ref {
    const char *key;
    size_t len;
    json_t *val;
} key_ref;

static int cmp_keys(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int encode_object(const json_t *v, strbuf *out, fbc_span_marks *marks)
{
    size_t n = json_object_size(v);
    if (n == 0)
        return strbuf_append(out, "{}", 2);
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
    qsort(keys, k, sizeof *keys, cmp_keys);
    int rc = strbuf_putc(out, '{');
    for (size_t i = 0; i < k && rc == 0; i++) {
        if (i && strbuf_putc(out, ',') < 0)
            rc = -1;
        else if (encode_string(keys[i].key, keys[i].len, out) < 0 || strbuf_putc(out, ':') < 0)
            rc = -1;
        else
            rc = fbc_encode_json(keys[i].val, out, marks);
    }
    if (rc == 0)
        rc = strbuf_putc(out, '}');
    if (keys != stack_keys)
        free(keys);
    return rc;
}

static int encode_value(const json_t *v, strbuf *out, fbc_span_marks *marks)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: return encode_object(v, out, marks);
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (strbuf_putc(out, '[') < 0)
            return -1;
        for (size_t i = 0; i < n; i++) {
            if (i && strbuf_putc(out, ',') < 0)
                return -1;
            if (fbc_encode_json(json_array_get(v, i), out, marks) < 0)
                return -1;
        }
        return strbuf_putc(out, ']');
    }
    case JSON_STRING: return encode_string(json_string_value(v), json_string_length(v), out);
    case JSON_INTEGER:
    case JSON_REAL: {
        double f = json_number_value(v);
        if (!isfinite(f))
            return -1;
        fbc_format_float64(f, num, sizeof num);
        return strbuf_puts(out, num);
    }
    case JSON_TRUE: return strbuf_append(out, "true", 4);
    case JSON_FALSE: return strbuf_append(out, "false", 5);
    case JSON_NULL: return strbuf_append(out, "null", 4);
    }
    return -1;
}

int fbc_encode_json(const json_t *v, strbuf *out, fbc_span_marks *marks)
{
    fbc_span_mark *m = NULL;
    if (marks && marks->next < marks->n && marks->items[marks->next].node == v) {
        m = &marks->items[marks->next++];
        m->start = out->len;
    }
    int rc = encode_value(v, out, marks);
    if (m && rc == 0)
        m->len = out->len - m->start;
    return rc;
}

int fbc_meta_keys(const json_t *obj, const char **schema, const char **package, const char **name,
                  olm_error *err)
{
    static const char *const names[3] = {"schema", "package", "name"};
    const char **outs[3] = {schema, package, name};
    const char *seen[3] = {NULL, NULL, NULL};
    *schema = *package = *name = "";
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        for (int i = 0; i < 3; i++) {
            if (strcasecmp(key, names[i]) != 0)
                continue;
            if (seen[i])
                return olm_error_set(err, "duplicate key %s (as \"%s\" and \"%s\")", names[i],
                                     seen[i], key);
            seen[i] = key;
            if (!json_is_string(val))
                return olm_error_set(err, "expected value for key \"%s\" to be a string", key);
            *outs[i] = json_string_value(val);
        }
    }
    return 0;
}
