/* Versions: strict and lenient parsing, precedence, format, copy (semver.md §1-§3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semver.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* input -> canonical text, or NULL when it must be rejected */
struct parse_case {
    const char *in;
    const char *want;
};

static const struct parse_case strict_cases[] = {
    {"1.2.3", "1.2.3"},
    {"0.0.0", "0.0.0"},
    {"1.2.3-alpha.1", "1.2.3-alpha.1"},
    {"1.2.3+build.001", "1.2.3+build.001"}, /* build ids may have leading zeros */
    {"1.2.3-00x", "1.2.3-00x"},             /* mixed id with leading zeros is fine */
    {"1.2.3-rc-1+a-b", "1.2.3-rc-1+a-b"},
    {"1.2.3+a-b", "1.2.3+a-b"},             /* '-' after '+' is build text */
    {"18446744073709551615.0.0", "18446744073709551615.0.0"},
    {"1.0.0-18446744073709551615", "1.0.0-18446744073709551615"},
    {"1.2", NULL},
    {"1", NULL},
    {"v1.2.3", NULL},
    {" 1.2.3", NULL},
    {"1.2.3 ", NULL},
    {"", NULL},
    {"01.2.3", NULL},
    {"1.02.3", NULL},
    {"1.2.03", NULL},
    {"18446744073709551616.0.0", NULL},
    {"1.2.3-", NULL},
    {"1.2.3+", NULL},
    {"0.0.0-.alpha", NULL},
    {"1.2.3-a+b+c", NULL},
    {"1.2.3-beta!", NULL},
    {"1.2.3-01", NULL},
    {"1.0.0-18446744073709551616", NULL}, /* numeric prerelease overflow: blang error */
    {"1.2.3.4", NULL},
    {"1..3", NULL},
    {"1.2.3-a..b", NULL},
    {"1.2.x", NULL},
};

static const struct parse_case lenient_cases[] = {
    {"1.2.3", "1.2.3"},
    {"v1.2.3", "1.2.3"},
    {"v1", "1.0.0"},
    {"1.2", "1.2.0"},
    {"1.2-5", "1.2.0-5"},
    {"01.02.03", "1.2.3"}, /* v3.4+: leading zeros dropped */
    {"1-alpha", "1.0.0-alpha"},
    {"1.2.3+001", "1.2.3+001"},
    {"1.0.0-18446744073709551616", "1.0.0-18446744073709551616"},
    {"1.2.3-rc.1+build.5", "1.2.3-rc.1+build.5"},
    {"V1.2.3", NULL},
    {" 1.2.3", NULL},
    {"1.2.3 ", NULL},
    {"1.2.3.4", NULL},
    {"", NULL},
    {"v", NULL},
    {"1.", NULL},
    {"1.2.3-", NULL},
    {"1.2.3+", NULL},
    {"1.2.3-a..b", NULL},
    {"1.2.3-01", NULL},
    {"1.2.3-beta.01", NULL},
    {"18446744073709551616.0.0", NULL},
    {"1.2.3-a+b+c", NULL},
    {"1.x", NULL},
    {"x", NULL},
};

static void run_parse_cases(const struct parse_case *cases, size_t n,
                            int (*parse)(const char *, semver_version *, olm_error *),
                            const char *label)
{
    for (size_t i = 0; i < n; i++) {
        semver_version v;
        olm_error err = {{0}};
        int rc = parse(cases[i].in, &v, &err);
        if (!cases[i].want) {
            if (rc == 0)
                fail_msg("%s: \"%s\" should be rejected", label, cases[i].in);
            assert_true(strlen(err.msg) > 0);
            /* every message quotes the offending input */
            char quoted[256];
            snprintf(quoted, sizeof quoted, "\"%s\"", cases[i].in);
            if (!strstr(err.msg, quoted))
                fail_msg("%s: message for \"%s\" does not quote it: %s", label, cases[i].in,
                         err.msg);
            continue;
        }
        if (rc != 0)
            fail_msg("%s: \"%s\" should parse, got: %s", label, cases[i].in, err.msg);
        char *s = semver_version_format(&v);
        assert_non_null(s);
        if (strcmp(s, cases[i].want) != 0)
            fail_msg("%s: \"%s\" formatted as \"%s\", want \"%s\"", label, cases[i].in, s,
                     cases[i].want);
        free(s);
        semver_version_free(&v);
    }
}

static void test_parse_strict(void **state)
{
    (void)state;
    run_parse_cases(strict_cases, N(strict_cases), semver_parse_strict, "strict");
}

static void test_parse_lenient(void **state)
{
    (void)state;
    run_parse_cases(lenient_cases, N(lenient_cases), semver_parse_lenient, "lenient");
}

static void test_error_messages(void **state)
{
    (void)state;
    semver_version v;
    olm_error err;
    assert_int_equal(semver_parse_strict("1.2.3.4", &v, &err), -1);
    assert_non_null(strstr(err.msg, "invalid version \"1.2.3.4\""));
    assert_int_equal(semver_parse_strict("01.2.3", &v, &err), -1);
    assert_non_null(strstr(err.msg, "leading zero"));
    assert_int_equal(semver_parse_strict("1.2.3-beta!", &v, &err), -1);
    assert_non_null(strstr(err.msg, "beta!"));
    assert_int_equal(semver_parse_lenient("1.2.3-beta.01", &v, &err), -1);
    assert_non_null(strstr(err.msg, "\"01\""));
    /* NULL error buffer is allowed */
    assert_int_equal(semver_parse_strict("bad", &v, NULL), -1);
    assert_int_equal(semver_parse_lenient("bad", &v, NULL), -1);
}

/* Strictly increasing precedence (semver.org examples plus §1 edge cases). */
static const char *const ascending[] = {
    "0.0.0-0",
    "0.0.0",
    "1.0.0-0",
    "1.0.0-0.0",
    "1.0.0-1",
    "1.0.0-2",
    "1.0.0-10",
    "1.0.0-18446744073709551615",
    "1.0.0--",
    "1.0.0-0a",
    "1.0.0-A",
    "1.0.0-a",
    "1.0.0-a10",
    "1.0.0-a9",
    "1.0.0-alpha",
    "1.0.0-alpha.0",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.4",
    "1.0.0-beta.11",
    "1.0.0-beta.-2",
    "1.0.0-beta.rc-1",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "1.9.0",
    "1.10.0",
    "2.0.0",
    "10.0.0",
    "18446744073709551615.0.0",
};

static void test_compare_order(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(ascending); i++) {
        for (size_t j = 0; j < N(ascending); j++) {
            semver_version a, b;
            assert_int_equal(semver_parse_strict(ascending[i], &a, NULL), 0);
            assert_int_equal(semver_parse_strict(ascending[j], &b, NULL), 0);
            int want = i < j ? -1 : i > j ? 1 : 0;
            int got = semver_compare(&a, &b);
            got = got < 0 ? -1 : got > 0 ? 1 : 0;
            if (got != want)
                fail_msg("compare(%s, %s) = %d, want %d", ascending[i], ascending[j], got, want);
            semver_version_free(&a);
            semver_version_free(&b);
        }
    }
}

static int cmp_lenient(const char *a, const char *b)
{
    semver_version va, vb;
    assert_int_equal(semver_parse_lenient(a, &va, NULL), 0);
    assert_int_equal(semver_parse_lenient(b, &vb, NULL), 0);
    int c = semver_compare(&va, &vb);
    semver_version_free(&va);
    semver_version_free(&vb);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
}

static void test_compare_special(void **state)
{
    (void)state;
    /* build metadata ignored, both for order and equality */
    assert_int_equal(cmp_lenient("1.0.0+a", "1.0.0+b"), 0);
    assert_int_equal(cmp_lenient("1.0.0-rc.1+x", "1.0.0-rc.1"), 0);
    assert_int_equal(cmp_lenient("1.0.0-rc.1", "1.0.0"), -1);
    /* lenient forms compare by their filled-in value */
    assert_int_equal(cmp_lenient("v1", "1.0.0"), 0);
    assert_int_equal(cmp_lenient("01.02.03", "1.2.3"), 0);
    /* Masterminds: an over-long numeric id is alphanumeric: above every number,
     * ASCII against words */
    assert_int_equal(cmp_lenient("1.0.0-18446744073709551616", "1.0.0-18446744073709551615"), 1);
    assert_int_equal(cmp_lenient("1.0.0-18446744073709551616", "1.0.0-999999999999999999999"), -1);
    assert_int_equal(cmp_lenient("1.0.0-18446744073709551616", "1.0.0-alpha"), -1);
    assert_int_equal(cmp_lenient("1.0.0-99999999999999999999", "1.0.0-1"), 1);
}

static void test_copy_format_free(void **state)
{
    (void)state;
    semver_version v, c;
    assert_int_equal(semver_parse_strict("3.4.5-rc.1+meta", &v, NULL), 0);
    assert_int_equal(semver_version_copy(&c, &v), 0);
    semver_version_free(&v);
    semver_version_free(&v); /* idempotent */
    assert_int_equal(c.major, 3);
    assert_int_equal(c.minor, 4);
    assert_int_equal(c.patch, 5);
    assert_string_equal(c.prerelease, "rc.1");
    assert_string_equal(c.build, "meta");
    char *s = semver_version_format(&c);
    assert_string_equal(s, "3.4.5-rc.1+meta");
    free(s);
    semver_version_free(&c);

    semver_version plain = {1, 2, 3, NULL, NULL}; /* NULL strings read as "" */
    s = semver_version_format(&plain);
    assert_string_equal(s, "1.2.3");
    free(s);
    semver_version_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_strict),     cmocka_unit_test(test_parse_lenient),
        cmocka_unit_test(test_error_messages),   cmocka_unit_test(test_compare_order),
        cmocka_unit_test(test_compare_special),  cmocka_unit_test(test_copy_format_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
