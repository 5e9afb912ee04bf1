/* blang v4 ranges (skipRange): every example of semver.md §6, §7 and the blang
 * column of §8, quirks included. */
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

struct match_case {
    const char *range;
    const char *version; /* parsed strictly, like OLM does for installed bundles */
    bool want;
};

static bool match(const char *range, const char *version)
{
    olm_error err;
    semver_range *r = semver_range_parse(range, &err);
    if (!r)
        fail_msg("range \"%s\" should parse: %s", range, err.msg);
    semver_version v;
    if (semver_parse_strict(version, &v, &err) < 0)
        fail_msg("version \"%s\" should parse: %s", version, err.msg);
    bool got = semver_range_match(r, &v);
    semver_version_free(&v);
    semver_range_free(r);
    return got;
}

static void run_cases(const struct match_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool got = match(cases[i].range, cases[i].version);
        if (got != cases[i].want)
            fail_msg("\"%s\" vs %s: got %s, want %s", cases[i].range, cases[i].version,
                     got ? "true" : "false", cases[i].want ? "true" : "false");
    }
}

/* §6.1 tokenizer */
static const struct match_case tokenizer_rows[] = {
    {">=1.2.3", "1.2.3", true},           {">=1.2.3", "1.2.2", false},
    {">= 1.2.3", "1.2.3", true},          {">= 1.2.3", "1.2.2", false},
    {"> = 1.2.3", "1.2.3", true},         {"> = 1.2.3", "1.2.2", false},
    {"!= 1.2.3", "1.2.3", false},         {"!= 1.2.3", "1.2.4", true},
    {"! 1.2.3", "1.2.3", true},           {"! 1.2.3", "1.2.4", false}, /* "!" dropped */
    {"1.0.0 - 2.0.0", "1.0.0", false},    {"1.0.0 - 2.0.0", "1.5.0", false},
    {"1.0.0 - 2.0.0", "2.0.0", false},
    {"~ 1.2.3", "1.2.3", true},           {"~ 1.2.3", "1.2.4", false},
    {"^ 1.2.3", "1.2.3", true},           {"^ 1.2.3", "1.3.0", false},
    {"v 1.2.3", "1.2.3", true},           {"v 1.2.3", "1.2.4", false},
    {">=1.2.3 ,", "1.2.3", true},         {">=1.2.3 ,", "1.2.2", false},
    {">=1.2.3 , <2.0.0", "1.9.9", true},  {">=1.2.3 , <2.0.0", "2.0.0", false},
    {">=1.2.3 >", "1.2.3", true},
    {"x >=1.2.3 1", "1.2.3", true},
    {"  >=1.2.3   <2.0.0  ", "1.5.0", true},
    {"\t>=1.2.3", "1.2.3", true}, /* Go TrimSpace on the operator text */
    {">=\t1.2.3", "1.2.2", false},
};

static void test_tokenizer(void **state)
{
    (void)state;
    run_cases(tokenizer_rows, N(tokenizer_rows));
}

/* §6.2 OR */
static const struct match_case or_rows[] = {
    {"<1.0.0 || >2.0.0", "0.9.0", true},
    {"<1.0.0 || >2.0.0", "1.5.0", false},
    {"<1.0.0 || >2.0.0", "2.0.1", true},
    {">=1.0.0 <1.1.0 || >=2.0.0 <2.1.0", "2.0.5", true},
    /* empty middle alternative: parses; it is false (blang panics) */
    {"1.0.0 || || 2.0.0", "1.0.0", true},
    {"1.0.0 || || 2.0.0", "2.0.0", true},
    {"1.0.0 || || 2.0.0", "3.0.0", false},
    {"1.0.0 || || || 2.0.0", "3.0.0", false},
};

static void test_or(void **state)
{
    (void)state;
    run_cases(or_rows, N(or_rows));
}

/* §6.3 wildcard expansion, each checked at its boundaries */
static const struct match_case wildcard_rows[] = {
    {">=1.2.x", "1.2.0", true},      {">=1.2.x", "1.1.9", false},
    {"<1.x", "0.9.9", true},         {"<1.x", "1.0.0", false},
    {">1.2.x", "1.2.9", false},      {">1.2.x", "1.3.0", true},
    {">1.x", "1.9.9", false},        {">1.x", "2.0.0", true},
    {"<=1.2.x", "1.2.9", true},      {"<=1.2.x", "1.3.0", false},
    {"1.2.x", "1.2.0", true},        {"1.2.x", "1.2.9", true},
    {"1.2.x", "1.1.9", false},       {"1.2.x", "1.3.0", false},
    {"=1.2.x", "1.2.5", true},       {"==1.2.x", "1.3.0", false},
    {"1.x", "1.0.0", true},          {"1.x", "1.99.0", true},
    {"1.x", "0.9.9", false},         {"1.x", "2.0.0", false},
    {"1.x", "2.0.0-0", true},        /* no prerelease gate: 2.0.0-0 < 2.0.0 */
    {"!=1.2.x", "1.2.5", false},     {"!=1.2.x", "1.3.0", false},
    {"!=1.2.x", "0.1.0", false},     {"!=1.x", "5.0.0", false},
    {"!1.x", "5.0.0", false},
    {"~1.2.x", "1.2.0", true},       {"~1.2.x", "1.2.1", false},
    {"^1.x", "1.0.0", true},         {"^1.x", "1.1.0", false},
    {"=>1.2.x", "1.2.0", true},      {"=>1.2.x", "1.3.0", false},
    {"x.1.2", "1.2.0", true},        {"x.1.2", "1.2.1", false},
    {"1.x.x", "1.0.0", true},        {"1.x.x", "1.0.9", true},
    {"1.x.x", "1.1.0", false},       {"1.x.x", "1.1.0-0", true},
    {">=1.x.3", "1.0.3", true},      {">=1.x.3", "1.0.2", false},
    {">=1.2.3-x", "1.2.3-x", true},  {">=1.2.3-x", "1.2.3-w", false},
    {"<1.2.3+linux-x86", "1.2.2", true}, {"<1.2.3+linux-x86", "1.2.3", false},
    {">=1.2.3-a.x", "1.2.3-a.0", true},  {">=1.2.3-a.x", "1.2.3-a", false},
    {">01.x", "2.0.0", true},        {">01.x", "1.9.0", false}, /* Atoi drops the zero */
};

static void test_wildcards(void **state)
{
    (void)state;
    run_cases(wildcard_rows, N(wildcard_rows));
}

/* §6.4 comparators and §7 semantics */
static const struct match_case semantics_rows[] = {
    {"=1.2.3", "1.2.3", true},      {"==1.2.3", "1.2.3", true},
    {"1.2.3", "1.2.4", false},      {"!1.2.3", "1.2.3", false},
    {"!1.2.3", "1.2.4", true},      {"!=1.2.3", "1.2.3", false},
    {">1.2.3", "1.2.4", true},      {">1.2.3", "1.2.3", false},
    {"<1.2.3", "1.2.2", true},      {"<=1.2.3", "1.2.3", true},
    {"<=1.2.3", "1.2.4", false},
    /* no prerelease gate */
    {">=1.0.0", "1.5.0-beta", true},
    {"<2.0.0", "2.0.0-rc.1", true},
    {">=1.0.0 <2.0.0", "1.0.0-rc.1", false},
    /* build metadata ignored */
    {">1.2.3+build", "1.2.3", false},
    {"1.2.3+build", "1.2.3", true},
    {"1.2.3", "1.2.3+other", true},
};

static void test_semantics(void **state)
{
    (void)state;
    run_cases(semantics_rows, N(semantics_rows));
}

/* §8: the blang column */
static const struct match_case differences_rows[] = {
    {">=4.1.0 <4.1.2", "4.1.1-rc.1", true},
    {">=4.1.0 <4.1.2", "4.1.2-0", true},
    {">=4.1.0 <4.1.2", "4.1.2-rc.1", true},
    {"<4.1.2", "4.1.2-rc.1", true},
    {"<5.0.0", "5.0.0-0", true},
    {">=4.1.0", "4.1.0-rc.1", false},
    {">=4.1.0-0 <4.1.2", "4.1.2-rc.1", true},
    {">=1.0.0 , <2.0.0", "1.5.0", true},
    {">=1.0.0 , <2.0.0", "2.0.0", false},
    {"!1.2.3", "1.2.3", false},
    {"==1.2.3", "1.2.3", true},
    {"! 1.2.3", "1.2.3", true},
    {"4.1.0 - 4.1.2", "4.1.0", false},
    {"4.1.0 - 4.1.2", "4.1.1", false},
    {"4.1.0 - 4.1.2", "4.1.2", false},
    {"4.x.x", "4.0.0", true},
    {"4.x.x", "4.1.0-0", true},
    {"4.x.x", "4.1.0", false},
    {"4.1.x", "4.1.0", true},
    {"4.1.x", "4.1.1-rc.1", true},
    {"4.1.x", "4.2.0-0", true},
    {"4.1.x", "4.2.0", false},
    {"!=4.1.x", "4.1.5", false},
    {"!=4.1.x", "4.2.0", false},
    {"!=4.x", "5.0.0", false},
    {"!=4.x", "3.0.0", false},
    {"~4.1.x", "4.1.0", true},
    {"~4.1.x", "4.1.1", false},
    {"=>4.1.x", "4.1.0", true},
    {"=>4.1.x", "4.2.0", false},
};

static void test_differences_table(void **state)
{
    (void)state;
    run_cases(differences_rows, N(differences_rows));
}

static const char *const invalid_ranges[] = {
    /* no tokens */
    "", " ", "x", "1", "  x  ", "! ~ ^",
    /* separators blang does not have */
    ">=1.2.3\t<2.0.0", ">=1.0.0,<2.0.0", ">=1.0.0, <2.0.0", "<1.0.0||>2.0.0", "1.2.3||2.0.0",
    /* leading / trailing || */
    "|| 1.2.3", "1.2.3 ||", "||", "1.2.3 || ||",
    /* wildcards that are not */
    "X", "*", "1.2.*", "1.2.X", "4.1.*", "4.*", "1.2.x.x", "1.x.3", ">1.2.3-x", "1.2.3-x",
    "!=1.2.3-xyz", ">x", "x.x", ">1.2.x.x",
    /* operators */
    "=>1.2.3", "=<1.2.3", "~1.2.3", "~>1.2.3", "^1.2.3", ">>1.2.3", "<>1.2.3", "v1.2.3",
    ">=v1.2.3", ">= v1.2.3", "1.2.3 >=", "&&1.2.3",
    /* versions failing strict Parse */
    "1.0", ">=4.1", ">=01.2.3", ">1.00.1", ">v0.1.0", ">=04.1.0", "01.2.3", "1.2", ">=1.2",
    "1.2.3-01", ">1.2.3.4", ">=1.0.0 <2",
};

static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(invalid_ranges); i++) {
        olm_error err = {{0}};
        semver_range *r = semver_range_parse(invalid_ranges[i], &err);
        if (r) {
            semver_range_free(r);
            fail_msg("\"%s\" should be rejected", invalid_ranges[i]);
        }
        if (strncmp(err.msg, "invalid range", 13) != 0)
            fail_msg("\"%s\": unexpected message: %s", invalid_ranges[i], err.msg);
    }
    assert_null(semver_range_parse(NULL, NULL));
    assert_null(semver_range_parse("~1.2.3", NULL));
}

static void test_error_messages(void **state)
{
    (void)state;
    olm_error err;
    assert_null(semver_range_parse(">=1.0.0 ~1.2.3", &err));
    assert_non_null(strstr(err.msg, "\"~\""));
    assert_non_null(strstr(err.msg, "~1.2.3"));
    assert_null(semver_range_parse(">=1.0.0 <1.2", &err));
    assert_non_null(strstr(err.msg, "\"<1.2\""));
    assert_null(semver_range_parse("1.x.3", &err));
    assert_non_null(strstr(err.msg, "1.x.3"));
    assert_null(semver_range_parse("x", &err));
    assert_non_null(strstr(err.msg, "no comparators"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokenizer),        cmocka_unit_test(test_or),
        cmocka_unit_test(test_wildcards),        cmocka_unit_test(test_semantics),
        cmocka_unit_test(test_differences_table), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_error_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
