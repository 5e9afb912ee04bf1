/* The net/http-compatible parsers: Range, HTTP dates, percent-decoding, entity-tag lists,
 * and the DNS-1123 name rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "catalog_http_util.h"
#include "catalog_name.h"

static int range(const char *s, uint64_t size, catalog_http_range *r, size_t *n)
{
    return catalog_http_parse_range(s, strlen(s), size, r, 4, n);
}

static void test_range(void **state)
{
    (void)state;
    catalog_http_range r[4];
    size_t n;
    assert_int_equal(range("bytes=0-9", 100, r, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].start, 0);
    assert_int_equal(r[0].length, 10);
    assert_int_equal(range("bytes=90-", 100, r, &n), 0);
    assert_int_equal(r[0].start, 90);
    assert_int_equal(r[0].length, 10);
    assert_int_equal(range("bytes=-5", 100, r, &n), 0);
    assert_int_equal(r[0].start, 95);
    assert_int_equal(r[0].length, 5);
    assert_int_equal(range("bytes=-500", 100, r, &n), 0); /* suffix longer than the body: all */
    assert_int_equal(r[0].start, 0);
    assert_int_equal(r[0].length, 100);
    assert_int_equal(range("bytes=50-500", 100, r, &n), 0); /* end clamped */
    assert_int_equal(r[0].length, 50);
    assert_int_equal(range("bytes= 0-1 , 5-6,", 100, r, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(r[1].start, 5);
    assert_int_equal(range("bytes=100-", 100, r, &n), HTTP_RANGE_NO_OVERLAP);
    assert_int_equal(range("bytes=100-,0-0", 100, r, &n), 0); /* one overlapping range is enough */
    assert_int_equal(n, 1);
    assert_int_equal(range("bytes=5-1", 100, r, &n), HTTP_RANGE_INVALID);
    assert_int_equal(range("bytes=x-1", 100, r, &n), HTTP_RANGE_INVALID);
    assert_int_equal(range("bytes=--1", 100, r, &n), HTTP_RANGE_INVALID);
    assert_int_equal(range("bytes=1", 100, r, &n), HTTP_RANGE_INVALID);
    assert_int_equal(range("items=0-1", 100, r, &n), HTTP_RANGE_INVALID);
    assert_int_equal(range("bytes=99999999999999999999-", 100, r, &n), HTTP_RANGE_INVALID);
    assert_int_equal(range("bytes=0-0,1-1,2-2,3-3,4-4", 100, r, &n), HTTP_RANGE_INVALID); /* > max */
    assert_int_equal(range("bytes=", 100, r, &n), 0);
    assert_int_equal(n, 0);
}

static void test_time(void **state)
{
    (void)state;
    time_t t;
    char buf[40];
    assert_int_equal(catalog_http_parse_time("Sun, 06 Nov 1994 08:49:37 GMT", 29, &t), 0);
    assert_int_equal(t, 784111777);
    catalog_http_format_time(t, buf);
    assert_string_equal(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_int_equal(catalog_http_parse_time("Sunday, 06-Nov-94 08:49:37 GMT", 30, &t), 0);
    assert_int_equal(t, 784111777);
    assert_int_equal(catalog_http_parse_time("Sun Nov  6 08:49:37 1994", 24, &t), 0);
    assert_int_equal(t, 784111777);
    assert_int_equal(catalog_http_parse_time("yesterday", 9, &t), -1);
    assert_int_equal(catalog_http_parse_time("Sun, 06 Nov 1994 08:49:37 GMT trailing", 38, &t), -1);
    assert_int_equal(catalog_http_parse_time("", 0, &t), -1);
}

static void test_pct(void **state)
{
    (void)state;
    char out[32];
    assert_int_equal(catalog_http_pct_decode("a%2Fb+c", 7, out, false), 5);
    assert_memory_equal(out, "a/b+c", 5);
    assert_int_equal(catalog_http_pct_decode("a%2fb+c", 7, out, true), 5);
    assert_memory_equal(out, "a/b c", 5);
    assert_int_equal(catalog_http_pct_decode("%zz", 3, out, false), -1);
    assert_int_equal(catalog_http_pct_decode("%4", 2, out, false), -1);
    assert_int_equal(catalog_http_pct_decode("%", 1, out, false), -1);
    assert_int_equal(catalog_http_pct_decode("%00", 3, out, false), 1);
}

static void test_etags(void **state)
{
    (void)state;
    assert_true(catalog_http_etag_list_has_star("*", 1));
    assert_true(catalog_http_etag_list_has_star(" \"a\", W/\"b\" ,*", 14));
    assert_false(catalog_http_etag_list_has_star("\"a\"", 3));
    assert_false(catalog_http_etag_list_has_star("bogus, *", 8)); /* stops at the malformed tag */
    assert_false(catalog_http_etag_list_has_star("", 0));
}

static void test_names(void **state)
{
    (void)state;
    char msg[1024];
    assert_int_equal(catalog_name_check("operatorhubio", 13, msg, sizeof msg), 0);
    assert_int_equal(catalog_name_check("a.b-c.d9", 8, msg, sizeof msg), 0);
    assert_int_equal(catalog_name_check("Bad", 3, msg, sizeof msg), -1);
    assert_string_equal(msg, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
                             "'example.com', regex used for validation is "
                             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    assert_int_equal(catalog_name_check("-a", 2, msg, sizeof msg), -1);
    assert_int_equal(catalog_name_check("a.", 2, msg, sizeof msg), -1);
    assert_int_equal(catalog_name_check("a..b", 4, msg, sizeof msg), -1);
    assert_int_equal(catalog_name_check("a\0b", 3, msg, sizeof msg), -1);
    char longname[300];
    memset(longname, 'a', sizeof longname);
    assert_int_equal(catalog_name_check(longname, 254, msg, sizeof msg), -1);
    assert_string_equal(msg, "must be no more than 253 characters");
    longname[10] = '_';
    assert_int_equal(catalog_name_check(longname, 254, msg, sizeof msg), -1);
    assert_true(strncmp(msg, "must be no more than 253 characters; a lowercase RFC 1123", 57) == 0);
    assert_int_equal(catalog_name_check(longname + 11, 253, msg, sizeof msg), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range), cmocka_unit_test(test_time), cmocka_unit_test(test_pct),
        cmocka_unit_test(test_etags), cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
