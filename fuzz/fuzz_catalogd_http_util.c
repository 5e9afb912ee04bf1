/* fuzz_catalogd_http_util: the request-header and URL parsing catalogd does itself (beside
 * h2o): Range, If-Modified-Since and friends, percent-decoding of paths and queries, and
 * If-Match/If-None-Match lists.  The first byte picks the parser, the rest is the header or
 * URL text.  Checks: ranges stay inside the body and within the count asked for; a parsed
 * date formats back to the same instant; decoding never grows the text. */
#include <stdbool.h>

#include "catalog_http_util.h"
#include "fuzz_util.h"

#define MAX_RANGES 8

static void ranges(const char *s, size_t len)
{
    static const uint64_t sizes[] = {0, 1, 100, UINT64_C(1) << 40};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        catalog_http_range r[MAX_RANGES];
        size_t n = 0;
        int rc = catalog_http_parse_range(s, len, sizes[i], r, MAX_RANGES, &n);
        FUZZ_CHECK(rc == 0 || rc == HTTP_RANGE_INVALID || rc == HTTP_RANGE_NO_OVERLAP, "rc %d", rc);
        if (rc != 0)
            continue;
        FUZZ_CHECK(n <= MAX_RANGES, "%zu ranges", n);
        for (size_t j = 0; j < n; j++)
            FUZZ_CHECK(r[j].start <= sizes[i] && r[j].length <= sizes[i] - r[j].start,
                       "range %zu (%llu, %llu) outside a body of %llu", j, (unsigned long long)r[j].start,
                       (unsigned long long)r[j].length, (unsigned long long)sizes[i]);
    }
}

static void date(const char *s, size_t len)
{
    time_t t;
    if (catalog_http_parse_time(s, len, &t) != 0)
        return;
    if (t < 0 || t > (time_t)253402300799) /* years 1970..9999: what the format can write */
        return;
    char buf[64];
    catalog_http_format_time(t, buf);
    time_t back;
    FUZZ_CHECK(catalog_http_parse_time(buf, strlen(buf), &back) == 0 && back == t,
               "%lld formats as \"%s\", which parses as %lld", (long long)t, buf, (long long)back);
}

static void decode(const char *s, size_t len)
{
    char *out = malloc(len + 1);
    if (!out)
        return;
    for (int plus = 0; plus < 2; plus++) {
        long n = catalog_http_pct_decode(s, len, out, plus);
        FUZZ_CHECK(n >= -1 && n <= (long)len, "decoded %ld bytes out of %zu", n, len);
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *s = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] % 4) {
    case 0: ranges(s, len); break;
    case 1: date(s, len); break;
    case 2: decode(s, len); break;
    default: (void)catalog_http_etag_list_has_star(s, len); break;
    }
    return 0;
}
