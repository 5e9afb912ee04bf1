#include "catalog_http_util.h"

#include <string.h>

#include <h2o/time_.h>

void catalog_http_format_time(time_t t, char *buf)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    h2o_time2str_rfc1123(buf, &tm);
}

int catalog_http_parse_time(const char *s, size_t len, time_t *out)
{
    /* The three layouts of http.ParseTime (time.RFC1123 with "GMT", RFC 850, ANSI C). */
    static const char *const layouts[] = {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
                                          "%a %b %e %H:%M:%S %Y"};
    char buf[64];
    if (len == 0 || len >= sizeof buf || memchr(s, '\0', len))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        const char *end = strptime(buf, layouts[i], &tm);
        if (end && *end == '\0') {
            *out = timegm(&tm);
            return 0;
        }
    }
    return -1;
}

static const char *trim(const char *s, const char *e, const char **end)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *end = e;
    return s;
}

/* strconv.ParseInt(s, 10, 64) restricted to what can be non-negative: optional '+', digits. */
static int parse_u63(const char *s, const char *e, uint64_t *out)
{
    if (s < e && *s == '+')
        s++;
    if (s == e)
        return -1;
    uint64_t v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int catalog_http_parse_range(const char *s, size_t len, uint64_t size, catalog_http_range *out, size_t max, size_t *n)
{
    const char *p = s, *end = s + len;
    *n = 0;
    if (len < 6 || memcmp(s, "bytes=", 6) != 0)
        return HTTP_RANGE_INVALID;
    p += 6;
    bool no_overlap = false;
    for (bool last = false; !last;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        last = comma == NULL;
        const char *ie = comma ? comma : end, *ib = trim(p, ie, &ie);
        p = comma ? comma + 1 : end;
        if (ib == ie)
            continue;
        const char *dash = memchr(ib, '-', (size_t)(ie - ib));
        if (!dash)
            return HTTP_RANGE_INVALID;
        const char *se, *ss = trim(ib, dash, &se), *ee, *es = trim(dash + 1, ie, &ee);
        catalog_http_range r;
        uint64_t a, b;
        if (ss == se) { /* suffix: the last N bytes */
            if (es == ee || *es == '-' || parse_u63(es, ee, &b) < 0)
                return HTTP_RANGE_INVALID;
            if (b > size)
                b = size;
            r.start = size - b;
            r.length = b;
        } else {
            if (parse_u63(ss, se, &a) < 0)
                return HTTP_RANGE_INVALID;
            if (a >= size) {
                no_overlap = true;
                continue;
            }
            r.start = a;
            if (es == ee) {
                r.length = size - a;
            } else {
                if (parse_u63(es, ee, &b) < 0 || a > b)
                    return HTTP_RANGE_INVALID;
                if (b >= size)
                    b = size - 1;
                r.length = b - a + 1;
            }
        }
        if (*n == max)
            return HTTP_RANGE_INVALID;
        out[(*n)++] = r;
    }
    return (no_overlap && *n == 0) ? HTTP_RANGE_NO_OVERLAP : 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long catalog_http_pct_decode(const char *s, size_t len, char *out, bool plus_space)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            if (i + 2 >= len)
                return -1;
            int h = hexval(s[i + 1]), l = hexval(s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            out[o++] = (char)(h * 16 + l);
            i += 2;
        } else {
            out[o++] = (plus_space && s[i] == '+') ? ' ' : s[i];
        }
    }
    return (long)o;
}

/* Length of the entity tag at s (`"..."` or `W/"..."`), 0 when malformed (net/http scanETag). */
static size_t scan_etag(const char *s, size_t len)
{
    size_t i = 0;
    if (len >= 2 && s[0] == 'W' && s[1] == '/')
        i = 2;
    if (i >= len || s[i] != '"')
        return 0;
    for (i++; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"')
            return i + 1;
        if (!(c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80))
            return 0;
    }
    return 0;
}

bool catalog_http_etag_list_has_star(const char *s, size_t len)
{
    const char *p = s, *end = s + len;
    for (;;) {
        const char *e = end;
        p = trim(p, e, &e);
        end = e;
        if (p == end)
            return false;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '*')
            return true;
        size_t n = scan_etag(p, (size_t)(end - p));
        if (n == 0)
            return false;
        p += n;
    }
}
