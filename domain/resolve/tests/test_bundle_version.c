#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "resolve.h"

static void parse_ok(const char *text, const char *want_release, const char *want_build)
{
    bundle_version bv;
    olm_error err;
    assert_int_equal(bundle_version_parse(text, &bv, &err), 0);
    assert_string_equal(bv.release, want_release);
    assert_string_equal(bv.version.build, want_build);
    bundle_version_free(&bv);
}

static void test_release_from_build_metadata(void **state)
{
    (void)state;
    parse_ok("1.0.0", "", "");
    parse_ok("1.0.0+2", "2", "");
    parse_ok("1.0.0-rc.1+2.alpha", "2.alpha", "");
    /* Not a release: numeric segment with a leading zero, or longer than 20 chars. */
    parse_ok("1.0.0+01", "", "01");
    parse_ok("1.0.0+aaaaaaaaaaaaaaaaaaaaa", "", "aaaaaaaaaaaaaaaaaaaaa");
    parse_ok("1.0.0+aaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaa", "");
}

static void test_parse_rejects_non_strict(void **state)
{
    (void)state;
    bundle_version bv;
    olm_error err;
    assert_int_equal(bundle_version_parse("v1.0.0", &bv, &err), -1);
    assert_int_equal(bundle_version_parse("1.0", &bv, &err), -1);
    assert_true(err.msg[0] != '\0');
}

static int cmp(const char *a, const char *b)
{
    bundle_version x, y;
    assert_int_equal(bundle_version_parse(a, &x, NULL), 0);
    assert_int_equal(bundle_version_parse(b, &y, NULL), 0);
    int c = bundle_version_compare(&x, &y);
    bundle_version_free(&x);
    bundle_version_free(&y);
    return c;
}

static void test_compare_release(void **state)
{
    (void)state;
    assert_true(cmp("1.0.0+1", "1.0.0") > 0);       /* empty release is lowest */
    assert_true(cmp("1.0.0+2", "1.0.0+10") < 0);    /* numeric segments by value */
    assert_true(cmp("1.0.0+10", "1.0.0+a") < 0);    /* numeric below alphanumeric */
    assert_true(cmp("1.0.0+a", "1.0.0+a.0") < 0);   /* shorter prefix lower */
    assert_true(cmp("1.0.1", "1.0.0+99") > 0);      /* version first */
    assert_true(cmp("1.0.0-rc.1+5", "1.0.0") < 0);  /* prerelease below release */
    assert_int_equal(cmp("1.0.0+x-y", "1.0.0+x-y"), 0);
    /* Build metadata that is not a release is ignored entirely. */
    assert_int_equal(cmp("1.0.0+01", "1.0.0+02"), 0);
}

static void test_format(void **state)
{
    (void)state;
    const char *cases[] = {"1.0.0", "1.0.0+2", "1.2.3-rc.1+7.x", "1.0.0+01"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bundle_version bv;
        assert_int_equal(bundle_version_parse(cases[i], &bv, NULL), 0);
        char *s = bundle_version_format(&bv);
        assert_string_equal(s, cases[i]);
        free(s);
        bundle_version_free(&bv);
    }
}

static void test_text_order(void **state)
{
    (void)state;
    assert_true(bundle_version_text_order("2.0.0", "1.10.0") < 0); /* newest first */
    assert_true(bundle_version_text_order("1.0.0+1", "1.0.0+2") > 0); /* the release counts */
    assert_true(bundle_version_text_order("1.0.0", "not-a-version") < 0); /* unparsable last */
    assert_true(bundle_version_text_order(NULL, "1.0.0") > 0);
    assert_int_equal(bundle_version_text_order(NULL, "x"), 0);
    assert_int_equal(bundle_version_text_order("1.2.3", "1.2.3"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_order),
        cmocka_unit_test(test_release_from_build_metadata),
        cmocka_unit_test(test_parse_rejects_non_strict),
        cmocka_unit_test(test_compare_release),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
