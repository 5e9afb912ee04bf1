/* catalog_http_util: the pure parsing pieces of catalogd's HTTP semantics, kept apart from
 * h2o so they can be tested directly.  Each mirrors a Go net/http function that upstream
 * catalogd relies on (named at each declaration). */
#ifndef OLM_CATALOG_HTTP_UTIL_H
#define OLM_CATALOG_HTTP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* "Mon, 02 Jan 2006 15:04:05 GMT" (http.TimeFormat, always UTC) into buf (>= 30 bytes). */
void catalog_http_format_time(time_t t, char *buf);

/* http.ParseTime: RFC 1123 (GMT), RFC 850 and ANSI C asctime.  0 or -1. */
int catalog_http_parse_time(const char *s, size_t len, time_t *out);

typedef struct catalog_http_range {
    uint64_t start, length;
} catalog_http_range;

enum { HTTP_RANGE_INVALID = -1, HTTP_RANGE_NO_OVERLAP = -2 };

/* http.parseRange for a body of `size` bytes: fills up to `max` ranges.  Returns 0 (with *n,
 * possibly 0), HTTP_RANGE_INVALID ("invalid range", also when more than `max` ranges) or
 * HTTP_RANGE_NO_OVERLAP ("invalid range: failed to overlap"). */
int catalog_http_parse_range(const char *s, size_t len, uint64_t size, catalog_http_range *out, size_t max, size_t *n);

/* Percent-decodes s[0..len) into out (room for len bytes); '+' becomes ' ' when plus_space
 * (query strings).  Returns the decoded length, or -1 on a malformed escape (url.PathUnescape /
 * url.QueryUnescape). */
long catalog_http_pct_decode(const char *s, size_t len, char *out, bool plus_space);

/* The conditional-request headers that decide a response before the body. */
typedef enum catalog_http_cond {
    HTTP_COND_NONE, /* header absent (or ignored) */
    HTTP_COND_TRUE,
    HTTP_COND_FALSE,
} catalog_http_cond;

/* If-Match / If-None-Match against a resource that has no ETag (catalogd sets none): only
 * "*" can match.  Walks the list like net/http's checkIfMatch/checkIfNoneMatch and stops at
 * the first malformed entity tag.  Returns true when "*" was found. */
bool catalog_http_etag_list_has_star(const char *s, size_t len);

#endif
