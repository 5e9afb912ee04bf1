/* gocompat_float: strconv.FormatFloat 'g' (bits 32 and 64) and encoding/json's
 * float64 text.  Expected texts are Go 1.26's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gocompat.h"

/* Moved from api/tests/test_fbc_normalise.c (the FBC normaliser's numbers). */
static void test_json_float(void **state)
{
    (void)state;
    static const struct { double f; const char *s; } cases[] = {
        {0, "0"}, {-0.0, "-0"}, {1, "1"}, {-1.5, "-1.5"}, {0.1, "0.1"}, {1e20, "100000000000000000000"},
        {1e21, "1e+21"}, {1.5e300, "1.5e+300"}, {1e-6, "0.000001"}, {1e-7, "1e-7"},
        {1.2345e-10, "1.2345e-10"}, {12345678901234567890.0, "12345678901234567000"},
        {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
        {0.30000000000000004, "0.30000000000000004"}, {123456.789, "123456.789"},
    };
    char buf[GOCOMPAT_FLOAT_BUF];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gocompat_json_float(cases[i].f, buf);
        assert_string_equal(buf, cases[i].s);
    }
}

static void test_json_float_more(void **state)
{
    (void)state;
    static const struct { double f; const char *s; } cases[] = {
        {5, "5"}, {4.10, "4.1"}, {-1e21, "-1e+21"}, {-1e-7, "-1e-7"}, {1e-10, "1e-10"},
        {1e-100, "1e-100"}, {999999999999999868928.0, "999999999999999900000"},
        {0.000001234, "0.000001234"}, {9.99999999999999e-7, "9.99999999999999e-7"},
        {-0.0000012345678901234567, "-0.0000012345678901234567"}, {2.5e-8, "2.5e-8"},
    };
    char buf[GOCOMPAT_FLOAT_BUF];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gocompat_json_float(cases[i].f, buf);
        assert_string_equal(buf, cases[i].s);
    }
}

/* %v of a float64 (the CRD upgrade-safety messages). */
static void test_g64(void **state)
{
    (void)state;
    static const struct { double f; const char *s; } cases[] = {
        {0, "0"}, {-0.0, "-0"}, {1, "1"}, {3, "3"}, {-2.5, "-2.5"}, {100, "100"},
        {123456, "123456"}, {1234567, "1.234567e+06"}, {1e6, "1e+06"}, {1e21, "1e+21"},
        {0.0001, "0.0001"}, {0.00001, "1e-05"}, {1e-7, "1e-07"}, {1.5e-300, "1.5e-300"},
        {0.1, "0.1"}, {0.30000000000000004, "0.30000000000000004"},
        {1.7976931348623157e308, "1.7976931348623157e+308"}, {5e-324, "5e-324"},
    };
    char buf[GOCOMPAT_FLOAT_BUF];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gocompat_format_float_g(cases[i].f, 64, buf);
        assert_string_equal(buf, cases[i].s);
    }
    gocompat_format_float_g(NAN, 64, buf);
    assert_string_equal(buf, "NaN");
    gocompat_format_float_g(INFINITY, 64, buf);
    assert_string_equal(buf, "+Inf");
    gocompat_format_float_g(-INFINITY, 64, buf);
    assert_string_equal(buf, "-Inf");
}

/* FormatFloat(f, 'g', -1, 32): sigs.k8s.io/yaml's text for float map keys. */
static void test_g32(void **state)
{
    (void)state;
    static const struct { double f; const char *s; } cases[] = {
        {0.1, "0.1"}, {3.14159265358979, "3.1415927"}, {1e21, "1e+21"}, {1.0, "1"},
        {1.5, "1.5"}, {1e6, "1e+06"}, {0.0001, "0.0001"}, {1e-5, "1e-05"},
        {123456789, "1.2345679e+08"}, {-0.0, "-0"},
        {1e-50, "0"}, {-2.5e-3, "-0.0025"},
        /* The float32's own digits, not the double's. */
        {16777217, "1.6777216e+07"}, {0.053598975, "0.053598974"}, {769812.04150115093, "769812.06"},
        {1e39, "+Inf"}, {-1e39, "-Inf"},
    };
    char buf[GOCOMPAT_FLOAT_BUF];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gocompat_format_float_g(cases[i].f, 32, buf);
        assert_string_equal(buf, cases[i].s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_float),
        cmocka_unit_test(test_json_float_more),
        cmocka_unit_test(test_g64),
        cmocka_unit_test(test_g32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
