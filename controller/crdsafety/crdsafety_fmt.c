/* crdsafety_fmt: the Go formatting rules that crdify's messages depend
 * on (%q, %v of float64, encoding/json bytes, kube-aware version order), so our
 * messages match upstream byte for byte. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdsafety_internal.h"

int crdsafety_list_take(crdsafety_list *l, char *s)
{
    if (!s)
        return -1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            free(s);
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

int crdsafety_list_addf(crdsafety_list *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        return -1;
    return crdsafety_list_take(l, s);
}

int crdsafety_list_has(const crdsafety_list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

void crdsafety_list_free(crdsafety_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void crdsafety_strv_sort(const char **v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_str);
}

int crdsafety_go_quote(strbuf *sb, const char *s)
{
    if (strbuf_putc(sb, '"'))
        return -1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int r;
        switch (*p) {
        case '"': r = strbuf_puts(sb, "\\\""); break;
        case '\\': r = strbuf_puts(sb, "\\\\"); break;
        case '\a': r = strbuf_puts(sb, "\\a"); break;
        case '\b': r = strbuf_puts(sb, "\\b"); break;
        case '\f': r = strbuf_puts(sb, "\\f"); break;
        case '\n': r = strbuf_puts(sb, "\\n"); break;
        case '\r': r = strbuf_puts(sb, "\\r"); break;
        case '\t': r = strbuf_puts(sb, "\\t"); break;
        case '\v': r = strbuf_puts(sb, "\\v"); break;
        default:
            /* Non-ASCII UTF-8 is printable in practice and Go keeps it as is. */
            if (*p < 0x20 || *p == 0x7f)
                r = strbuf_printf(sb, "\\x%02x", *p);
            else
                r = strbuf_putc(sb, (char)*p);
        }
        if (r)
            return -1;
    }
    return strbuf_putc(sb, '"');
}

/* Shortest decimal digits that round-trip v (v > 0, finite): digits in d
 * (no dot), and the decimal exponent such that v = 0.d * 10^dp. */
static void shortest_digits(double v, char *d, size_t dsz, int *dp)
{
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* buf is "D.DDDDe[+-]XX" or "De[+-]XX" */
    size_t n = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p) && n + 1 < dsz)
            d[n++] = *p;
    while (n > 1 && d[n - 1] == '0')
        n--;
    d[n] = '\0';
    *dp = (*p == 'e' ? atoi(p + 1) : 0) + 1;
}

/* strconv.FormatFloat(v, fmtc, -1, 64) for fmtc 'g' (%v) or the encoding/json
 * variant ('j': %f unless the exponent is < -6 or >= 21, and "e-07" -> "e-7"). */
static int go_float(strbuf *sb, double v, char fmtc)
{
    if (isnan(v))
        return strbuf_puts(sb, "NaN");
    if (isinf(v))
        return strbuf_puts(sb, v > 0 ? "+Inf" : "-Inf");
    if (v == 0)
        return strbuf_puts(sb, signbit(v) && fmtc == 'g' ? "-0" : "0");
    if (v < 0 && strbuf_putc(sb, '-'))
        return -1;
    char d[32];
    int dp;
    shortest_digits(fabs(v), d, sizeof(d), &dp);
    int nd = (int)strlen(d), exp = dp - 1;
    int use_e = fmtc == 'g' ? (exp < -4 || exp >= 6) : (exp < -6 || exp >= 21);
    if (use_e) {
        if (strbuf_putc(sb, d[0]))
            return -1;
        if (nd > 1 && (strbuf_putc(sb, '.') || strbuf_puts(sb, d + 1)))
            return -1;
        int ax = exp < 0 ? -exp : exp;
        if (fmtc == 'g' || ax >= 10)
            return strbuf_printf(sb, "e%c%02d", exp < 0 ? '-' : '+', ax);
        return strbuf_printf(sb, "e%c%d", exp < 0 ? '-' : '+', ax);
    }
    if (dp <= 0) {
        if (strbuf_puts(sb, "0."))
            return -1;
        for (int i = 0; i < -dp; i++)
            if (strbuf_putc(sb, '0'))
                return -1;
        return strbuf_puts(sb, d);
    }
    for (int i = 0; i < dp; i++)
        if (strbuf_putc(sb, i < nd ? d[i] : '0'))
            return -1;
    if (nd > dp && (strbuf_putc(sb, '.') || strbuf_puts(sb, d + dp)))
        return -1;
    return 0;
}

int crdsafety_go_float(strbuf *sb, double v)
{
    return go_float(sb, v, 'g');
}

/* encoding/json string escaping (HTML-safe, as json.Marshal does by default). */
static int json_str(strbuf *sb, const char *s, size_t len)
{
    if (strbuf_putc(sb, '"'))
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int r;
        if (c == '"' || c == '\\')
            r = strbuf_putc(sb, '\\') || strbuf_putc(sb, (char)c);
        else if (c == '\n')
            r = strbuf_puts(sb, "\\n");
        else if (c == '\r')
            r = strbuf_puts(sb, "\\r");
        else if (c == '\t')
            r = strbuf_puts(sb, "\\t");
        else if (c == '\b')
            r = strbuf_puts(sb, "\\b");
        else if (c == '\f')
            r = strbuf_puts(sb, "\\f");
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            r = strbuf_printf(sb, "\\u%04x", c);
        else if (c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
                 ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
            r = strbuf_printf(sb, "\\u%04x", (unsigned char)s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
            i += 2;
        } else
            r = strbuf_putc(sb, (char)c);
        if (r)
            return -1;
    }
    return strbuf_putc(sb, '"');
}

static int json_raw(strbuf *sb, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n;
        const char **keys = crdsafety_sorted_keys(v, &n);
        if (!keys && n)
            return -1;
        int r = strbuf_putc(sb, '{');
        for (size_t i = 0; !r && i < n; i++) {
            r = (i && strbuf_putc(sb, ',')) || json_str(sb, keys[i], strlen(keys[i])) ||
                strbuf_putc(sb, ':') || json_raw(sb, json_object_get(v, keys[i]));
        }
        free(keys);
        return r || strbuf_putc(sb, '}');
    }
    case JSON_ARRAY: {
        int r = strbuf_putc(sb, '[');
        for (size_t i = 0; !r && i < json_array_size(v); i++)
            r = (i && strbuf_putc(sb, ',')) || json_raw(sb, json_array_get(v, i));
        return r || strbuf_putc(sb, ']');
    }
    case JSON_STRING: return json_str(sb, json_string_value(v), json_string_length(v));
    case JSON_INTEGER: return strbuf_printf(sb, "%lld", (long long)json_integer_value(v));
    case JSON_REAL: return go_float(sb, json_real_value(v), 'j');
    case JSON_TRUE: return strbuf_puts(sb, "true");
    case JSON_FALSE: return strbuf_puts(sb, "false");
    default: return strbuf_puts(sb, "null");
    }
}

char *crdsafety_raw_json(const json_t *v)
{
    strbuf sb = STRBUF_INIT;
    if (json_raw(&sb, v)) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* ^v(\d+)(?:(alpha|beta)(\d+))?$ ; type: 0 alpha, 1 beta, 2 GA. */
static int parse_kube(const char *s, long *major, int *type, long *minor)
{
    if (*s++ != 'v' || !isdigit((unsigned char)*s))
        return 0;
    char *end;
    *major = strtol(s, &end, 10);
    *type = 2;
    *minor = 0;
    if (!*end)
        return 1;
    if (strncmp(end, "alpha", 5) == 0) {
        *type = 0;
        end += 5;
    } else if (strncmp(end, "beta", 4) == 0) {
        *type = 1;
        end += 4;
    } else
        return 0;
    if (!isdigit((unsigned char)*end))
        return 0;
    *minor = strtol(end, &end, 10);
    return *end == '\0';
}

int crdsafety_kube_version_cmp(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return 0;
    long amaj = 0, amin = 0, bmaj = 0, bmin = 0; /* set only on success; -O3 cannot see that */
    int at = 0, bt = 0;
    int oka = parse_kube(a, &amaj, &at, &amin), okb = parse_kube(b, &bmaj, &bt, &bmin);
    if (!oka && !okb)
        return strcmp(b, a);
    if (!oka)
        return -1;
    if (!okb)
        return 1;
    if (at != bt)
        return at - bt;
    if (amaj != bmaj)
        return amaj < bmaj ? -1 : 1;
    return amin < bmin ? -1 : (amin > bmin);
}
