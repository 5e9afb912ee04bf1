/* olm_time: the three RFC 3339 layouts, truncation of fractions, the epoch fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "olm_time.h"

static void test_seconds(void **state)
{
    (void)state;
    char buf[OLM_TIME_RFC3339_SIZE];
    assert_int_equal(olm_time_rfc3339(0, buf), 0);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    assert_int_equal(olm_time_rfc3339(1767225600, buf), 0);
    assert_string_equal(buf, "2026-01-01T00:00:00Z");
    assert_int_equal(olm_time_rfc3339(1136214245, buf), 0); /* Go's reference time, in UTC */
    assert_string_equal(buf, "2006-01-02T15:04:05Z");
    assert_int_equal(strlen(buf) + 1, OLM_TIME_RFC3339_SIZE);
}

static void test_fractions(void **state)
{
    (void)state;
    struct timespec t = {1136214245, 123456789};
    char ms[OLM_TIME_RFC3339_MILLI_SIZE], us[OLM_TIME_RFC3339_MICRO_SIZE];
    assert_int_equal(olm_time_rfc3339_milli(&t, ms), 0);
    assert_string_equal(ms, "2006-01-02T15:04:05.123Z");
    assert_int_equal(olm_time_rfc3339_micro(&t, us), 0);
    assert_string_equal(us, "2006-01-02T15:04:05.123456Z");
    t.tv_nsec = 999999999; /* truncated, never rounded up into the next second */
    olm_time_rfc3339_milli(&t, ms);
    assert_string_equal(ms, "2006-01-02T15:04:05.999Z");
    olm_time_rfc3339_micro(&t, us);
    assert_string_equal(us, "2006-01-02T15:04:05.999999Z");
    t.tv_nsec = 1000;
    olm_time_rfc3339_milli(&t, ms);
    assert_string_equal(ms, "2006-01-02T15:04:05.000Z");
    olm_time_rfc3339_micro(&t, us);
    assert_string_equal(us, "2006-01-02T15:04:05.000001Z");
    assert_int_equal(strlen(us) + 1, OLM_TIME_RFC3339_MICRO_SIZE);
}

static void test_unrepresentable(void **state)
{
    (void)state;
    char buf[OLM_TIME_RFC3339_SIZE];
    /* Year 10000 does not fit the layout: the epoch, well-formed, and -1. */
    assert_int_equal(olm_time_rfc3339((time_t)253402300800LL, buf), -1);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    assert_int_equal(olm_time_rfc3339((time_t)253402300799LL, buf), 0);
    assert_string_equal(buf, "9999-12-31T23:59:59Z");
}

static void test_now(void **state)
{
    (void)state;
    struct timespec a = olm_time_now(), b;
    /* Not time(): glibc's reads the kernel's tick-updated seconds, which lag the precise
     * clock for a tick after each second boundary (a.tv_sec == b + 1 about 0.3% of runs). */
    clock_gettime(CLOCK_REALTIME, &b);
    assert_true(a.tv_sec <= b.tv_sec && b.tv_sec - a.tv_sec <= 1);
    assert_true(a.tv_nsec >= 0 && a.tv_nsec < 1000000000L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_fractions),
        cmocka_unit_test(test_unrepresentable),
        cmocka_unit_test(test_now),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
