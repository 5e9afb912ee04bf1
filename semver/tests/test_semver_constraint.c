/* Masterminds v3 constraints: the product doc tables (seeds "Support for version
 * ranges", Tables 1-4) and every example of semver.md §4, §5, §8, §9. */
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
    const char *constraint;
    const char *version; /* parsed leniently, like `olmv1 semver match` */
    bool want;
};

static bool check(const char *constraint, const char *version)
{
    olm_error err;
    semver_constraint *c = semver_constraint_parse(constraint, &err);
    if (!c)
        fail_msg("constraint \"%s\" should parse: %s", constraint, err.msg);
    semver_version v;
    if (semver_parse_lenient(version, &v, &err) < 0)
        fail_msg("version \"%s\" should parse: %s", version, err.msg);
    bool got = semver_constraint_check(c, &v);
    semver_version_free(&v);
    semver_constraint_free(c);
    return got;
}

static void run_cases(const struct match_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool got = check(cases[i].constraint, cases[i].version);
        if (got != cases[i].want)
            fail_msg("\"%s\" vs %s: got %s, want %s", cases[i].constraint, cases[i].version,
                     got ? "true" : "false", cases[i].want ? "true" : "false");
    }
}

/* ---- seed doc tables: each row checked at its boundaries ---- */

static const struct match_case doc_rows[] = {
    /* Table 1: basic comparisons */
    {"=1.2.3", "1.2.3", true},     {"=1.2.3", "1.2.4", false},   {"!=1.2.3", "1.2.3", false},
    {"!=1.2.3", "1.2.4", true},    {">1.2.3", "1.2.3", false},   {">1.2.3", "1.2.4", true},
    {"<1.2.3", "1.2.2", true},     {"<1.2.3", "1.2.3", false},   {">=1.2.3", "1.2.3", true},
    {">=1.2.3", "1.2.2", false},   {"<=1.2.3", "1.2.3", true},   {"<=1.2.3", "1.2.4", false},
    /* the example CR: ">=1.11, <1.13" */
    {">=1.11, <1.13", "1.11.0", true},  {">=1.11, <1.13", "1.12.9", true},
    {">=1.11, <1.13", "1.10.9", false}, {">=1.11, <1.13", "1.13.0", false},
    /* Table 2: wildcards */
    {"1.11.x", "1.11.0", true},    {"1.11.x", "1.11.9", true},   {"1.11.x", "1.10.9", false},
    {"1.11.x", "1.12.0", false},   {">=1.12.X", "1.12.0", true}, {">=1.12.X", "1.11.9", false},
    {">=1.12.X", "9.0.0", true},   {"<=2.x", "2.99.99", true},   {"<=2.x", "0.0.0", true},
    {"<=2.x", "3.0.0", false},     {"*", "0.0.0", true},         {"*", "99.99.99", true},
    /* Table 3: tilde */
    {"~1.11.0", "1.11.0", true},   {"~1.11.0", "1.11.9", true},  {"~1.11.0", "1.10.9", false},
    {"~1.11.0", "1.12.0", false},  {"~1", "1.0.0", true},        {"~1", "1.99.9", true},
    {"~1", "0.9.9", false},        {"~1", "2.0.0", false},       {"~1.12", "1.12.0", true},
    {"~1.12", "1.12.9", true},     {"~1.12", "1.11.9", false},   {"~1.12", "1.13.0", false},
    {"~1.12.x", "1.12.0", true},   {"~1.12.x", "1.12.9", true},  {"~1.12.x", "1.11.9", false},
    {"~1.12.x", "1.13.0", false},  {"~1.x", "1.0.0", true},      {"~1.x", "1.99.0", true},
    {"~1.x", "0.9.9", false},      {"~1.x", "2.0.0", false},
    /* Table 4: caret */
    {"^0", "0.0.0", true},         {"^0", "0.99.99", true},      {"^0", "1.0.0", false},
    {"^0.0", "0.0.0", true},       {"^0.0", "0.0.9", true},      {"^0.0", "0.1.0", false},
    {"^0.0.3", "0.0.3", true},     {"^0.0.3", "0.0.2", false},   {"^0.0.3", "0.0.4", false},
    {"^0.2", "0.2.0", true},       {"^0.2", "0.2.9", true},      {"^0.2", "0.1.9", false},
    {"^0.2", "0.3.0", false},      {"^0.2.3", "0.2.3", true},    {"^0.2.3", "0.2.9", true},
    {"^0.2.3", "0.2.2", false},    {"^0.2.3", "0.3.0", false},   {"^1.2.x", "1.2.0", true},
    {"^1.2.x", "1.9.9", true},     {"^1.2.x", "1.1.9", false},   {"^1.2.x", "2.0.0", false},
    {"^1.2.3", "1.2.3", true},     {"^1.2.3", "1.99.0", true},   {"^1.2.3", "1.2.2", false},
    {"^1.2.3", "2.0.0", false},    {"^2.x", "2.0.0", true},      {"^2.x", "2.9.9", true},
    {"^2.x", "1.9.9", false},      {"^2.x", "3.0.0", false},     {"^2.3", "2.3.0", true},
    {"^2.3", "2.9.0", true},       {"^2.3", "2.2.9", false},     {"^2.3", "3.0.0", false},
};

static void test_doc_table_rows(void **state)
{
    (void)state;
    run_cases(doc_rows, N(doc_rows));
}

/* Each doc row's "Matching string" must agree with the comparison on every probe. */
static const char *const doc_equivalences[][2] = {
    {"1.11.x", ">=1.11.0, <1.12.0"}, {">=1.12.X", ">=1.12.0"},   {"<=2.x", "<3"},
    {"*", ">=0.0.0"},                {"~1.11.0", ">=1.11.0, <1.12.0"},
    {"~1", ">=1, <2"},               {"~1.12", ">=1.12, <1.13"}, {"~1.12.x", ">=1.12.0, <1.13.0"},
    {"~1.x", ">=1, <2"},             {"^0", ">=0.0.0, <1.0.0"},  {"^0.0", ">=0.0.0, <0.1.0"},
    {"^0.0.3", ">=0.0.3, <0.0.4"},   {"^0.2", ">=0.2.0, <0.3.0"}, {"^0.2.3", ">=0.2.3, <0.3.0"},
    {"^1.2.x", ">= 1.2.0, < 2.0.0"}, {"^1.2.3", ">= 1.2.3, < 2.0.0"}, {"^2.x", ">= 2.0.0, < 3"},
    {"^2.3", ">= 2.3, < 3"},
};

static const char *const probes[] = {
    "0.0.0", "0.0.2", "0.0.3", "0.0.4", "0.1.0", "0.1.9", "0.2.0", "0.2.2", "0.2.3",
    "0.2.9", "0.3.0", "0.99.99", "1.0.0", "1.1.9", "1.2.0", "1.2.2", "1.2.3", "1.9.9",
    "1.10.99", "1.11.0", "1.11.9", "1.12.0", "1.12.9", "1.13.0", "1.99.0", "2.0.0", "2.2.9",
    "2.3.0", "2.99.99", "3.0.0", "3.0.1", "10.0.0", "1.12.0-rc.1", "2.0.0-0", "0.0.3-beta",
};

static void test_doc_table_equivalences(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(doc_equivalences); i++)
        for (size_t k = 0; k < N(probes); k++) {
            bool a = check(doc_equivalences[i][0], probes[k]);
            bool b = check(doc_equivalences[i][1], probes[k]);
            if (a != b)
                fail_msg("\"%s\" (%d) and \"%s\" (%d) disagree on %s", doc_equivalences[i][0], a,
                         doc_equivalences[i][1], b, probes[k]);
        }
}

/* ---- grammar (§4) ---- */

static const struct match_case grammar_rows[] = {
    /* hyphen ranges */
    {"1.2.3 - 2.3.4", "1.2.3", true},   {"1.2.3 - 2.3.4", "2.3.4", true},
    {"1.2.3 - 2.3.4", "1.2.2", false},  {"1.2.3 - 2.3.4", "2.3.5", false},
    {"1.2.3\t-\t2.3.4", "2.0.0", true}, {"1.2.3-2.3.4", "1.2.3-2.3.4", true},
    {"1.2.3-2.3.4", "1.2.3", false},    {"1.x - 2.x", "2.9.0", true},
    {"1.x - 2.x", "3.0.0", false},      {"1.x - 2.x", "0.9.0", false},
    {"* - 2", "2.5.0", true},           {"* - 2", "3.0.0", false},
    {"1 - 2 3", "1.5.0", false},        {"1 - 2, <1.5", "1.2.0", true},
    /* || with and without whitespace */
    {"1.2.3||2.0.0", "2.0.0", true},    {"<1.0.0 || >2.0.0", "1.5.0", false},
    {"<1.0.0 || >2.0.0", "2.0.1", true},
    /* separators and whitespace */
    {">=1 ,<2", "1.5.0", true},         {">=1, <2", "2.0.0", false},
    {">=1\t<2", "1.5.0", true},         {">=1\n<2\r", "1.5.0", true},
    {"\f >=1 <2 \t", "1.5.0", true},    {">=   1.2", "1.2.0", true},
    {"~ 1.2.3", "1.2.9", true},         {">= v1.2.3", "1.2.3", true},
    {"v1.2.3", "1.2.3", true},
    /* operator spellings */
    {"=>1.2", "1.2.0", true},           {"=>1.2", "1.1.9", false},
    {"=<1.2", "1.2.9", true},           {"=<1.2", "1.3.0", false},
    {"~>1.2", "1.2.5", true},           {"~>1.2", "1.3.0", false},
    {"1.2.3", "1.2.3", true},
    /* later parts ignored after the first wildcard */
    {"1.x.2", "1.5.0", true},           {"1.x.2", "2.0.0", false},
    {"x.1.2", "7.0.0", true},           {"1.x.1x", "1.5.0", true},
    /* prerelease on a wildcard is kept; build metadata ignored */
    {"4.1-alpha", "4.1.5", true},       {"4.1-alpha", "4.2.0", false},
    {"4.1-alpha", "4.1.0-beta", true},  {"1.x-0", "1.5.0-beta", true},
    {"=1.2.3+build", "1.2.3", true},    {"=1.2.3", "1.2.3+other", true},
    /* leading zeros coerced (v3.4+) */
    {"01.2.3", "1.2.3", true},          {">=04.1.0", "4.1.0", true},
};

static void test_grammar_valid(void **state)
{
    (void)state;
    run_cases(grammar_rows, N(grammar_rows));
}

static const char *const invalid_constraints[] = {
    "", " ", " \t\n",
    "1.2.3 -2.3.4", "1.2.3- 2.3.4", ">1 - 2", "1 - 2 - 3", "1 - ", "=1 - 2",
    "||", "1.2.3 ||", "|| 1.2.3", "1.2.3 || || 2.0.0", "1.2.3 |||| 2.0.0", "1.2.3 | 2.0.0",
    "1.2.3 ||| 2.0.0",
    ">=1,,<2", ">=1,", ">=1, ", ",>=1", " , >=1", ">=1 , , <2",
    "==1.2.3", "!1.2.3", "<>1.2.3", "> =1", ">>1", ">=1 && <2", "&&", ">=1; <2", ">=1;",
    ">=", ">= ,1",
    "18446744073709551616.0.0", ">=1.18446744073709551616", "1.2.3-beta.01",
    "1.2.3.4", "1x", "1.2x", "x1", "V1.2.3", "\v1.2.3", ">=1.0.0\xc2\xa0<2", "1.2.3-",
    "1.2.3+", "1.2.3-a..b", "1.2.3-beta!", "1..2", "1.", ">=1<2", "abc",
};

static void test_grammar_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(invalid_constraints); i++) {
        olm_error err = {{0}};
        semver_constraint *c = semver_constraint_parse(invalid_constraints[i], &err);
        if (c) {
            semver_constraint_free(c);
            fail_msg("\"%s\" should be rejected", invalid_constraints[i]);
        }
        if (strncmp(err.msg, "improper constraint", 19) != 0)
            fail_msg("\"%s\": unexpected message: %s", invalid_constraints[i], err.msg);
    }
    assert_null(semver_constraint_parse(NULL, NULL));
    assert_null(semver_constraint_parse(">>1", NULL));
}

static void test_error_messages_quote_token(void **state)
{
    (void)state;
    olm_error err;
    assert_null(semver_constraint_parse(">=1.0.0, !1.2.3", &err));
    assert_non_null(strstr(err.msg, "\"!1.2.3\""));
    assert_null(semver_constraint_parse(">=1.0.0 <1.2.3.4", &err));
    assert_non_null(strstr(err.msg, "\"1.2.3.4\""));
    assert_null(semver_constraint_parse("1.0.0 || ", &err));
    assert_non_null(strstr(err.msg, "||"));
    assert_null(semver_constraint_parse("", &err));
    assert_non_null(strstr(err.msg, "empty"));
}

/* ---- check semantics (§5) ---- */

static const struct match_case check_rows[] = {
    /* 5.1 prerelease gate, per AND group */
    {"*", "1.0.0-beta", false},
    {"<2.0.0", "1.0.0-beta", false},
    {"!=1.0.0", "1.0.0-beta", false},
    {">=1.0.0-0 <2.0.0", "1.5.0-beta", true},
    {"1.0.0-alpha - 2.0.0 || 3.x", "2.0.0-beta", true},
    {"1.0.0-alpha - 2.0.0 || 3.x", "3.0.0-beta", false},
    {"1.0.0-alpha - 2.0.0 || 3.x", "3.1.0", true},
    {"!=4.1.0", "5.1.0-alpha.1", false},
    /* = with a wildcard is ~ */
    {"=1.2.x", "1.2.7", true},
    {"=1.2.x", "1.3.0", false},
    /* != */
    {"!=1.2.x", "1.2.5", false},
    {"!=1.2.x", "1.3.0", true},
    {"!=1.2.x", "2.2.0", true},
    {"!=1.x", "1.5.0", false},
    {"!=1.x", "2.0.0", true},
    {"!=*", "0.0.0", false},
    {"!=*", "1.0.0", true},
    {"!=*", "0.0.1", true},
    {"!=1.2.x-beta", "1.2.3-alpha", true},
    {"!=1.2.x-beta", "1.2.3-beta", false},
    {"!=1.2.x-beta", "1.2.5", true},
    {"!=1.2.x-beta", "1.3.0-beta", true},
    /* > */
    {">1", "1.9.9", false},
    {">1", "2.0.0", true},
    {">0", "0.5.0", false},
    {">0", "1.0.0", true},
    {">1.2", "1.2.9", false},
    {">1.2", "1.3.0", true},
    {">1.2", "2.0.0", true},
    {">1.2", "0.9.0", false},
    {">*", "0.0.0", false},
    {">*", "0.0.1", true},
    /* >= */
    {">=1.2", "1.2.0", true},
    {">=1.2", "1.1.9", false},
    /* < */
    {"<1.x", "0.9.9", true},
    {"<1.x", "1.0.0", false},
    {"<1.2.x", "1.1.9", true},
    {"<1.2.x", "1.2.0", false},
    {"<*", "0.0.0", false},
    {"<*", "1.0.0", false},
    /* <= */
    {"<=1", "1.9.9", true},
    {"<=1", "2.0.0", false},
    {"<=1.2", "1.2.9", true},
    {"<=1.2", "1.3.0", false},
    {"<=*", "0.0.5", true},
    {"<=*", "0.1.0", false},
    {"<=*", "1.0.0", false},
    /* ~ special case: con 0.0.0 without minor/patch wildcard accepts any release */
    {"~0.0.0", "5.0.0", true},
    {"~*", "5.0.0", true},
    {"x", "5.0.0", true},
    {"X", "0.0.1", true},
    {"x.1.2", "5.0.0", true},
    {"~0.0.0", "5.0.0-rc.1", false},
    {"~0.0", "0.1.0", false},
    {"~0", "1.0.0", false},
    /* ^ */
    {"^0.x", "0.9.0", true},
    {"^0.x", "1.0.0", false},
    {"^0.0.x", "0.0.9", true},
    {"^0.0.x", "0.1.0", false},
    {"^0.0.0", "0.0.0", true},
    {"^0.0.0", "0.0.1", false},
    {"^*", "0.0.0", true},
    {"^*", "0.0.1", false},
    {"^*", "1.0.0", false},
    {"^x", "0.0.0", true},
    {"^x", "2.0.0", false},
    {"^0.0.3", "0.0.3-beta", false},
    {"^0.0.3-alpha", "0.0.3-beta", true},
    {"^0.0.3-alpha", "0.0.4-beta", false},
    {"^1.2.3", "1.2.2", false},
    /* 5.3 prerelease in ranges: plain precedence once the gate is open */
    {"~1.2.3-beta.2", "1.2.4-alpha", true},
    {"^1.2.0-alpha.0", "1.9.0-alpha", true},
    {">=1.2.3-beta <1.2.3", "1.2.3-beta.2", true},
    {"<=1.2.3-rc.1", "1.2.3-rc.1.1", false},
    {"<=1.2.3-rc.1", "1.2.3-rc.1", true},
};

static void test_check_semantics(void **state)
{
    (void)state;
    run_cases(check_rows, N(check_rows));
}

/* ---- §8: the Masterminds column ---- */

static const struct match_case differences_rows[] = {
    {">=4.1.0 <4.1.2", "4.1.1-rc.1", false},
    {">=4.1.0 <4.1.2", "4.1.2-0", false},
    {">=4.1.0 <4.1.2", "4.1.2-rc.1", false},
    {"<4.1.2", "4.1.2-rc.1", false},
    {"<5.0.0", "5.0.0-0", false},
    {">=4.1.0", "4.1.0-rc.1", false},
    {">=4.1.0-0 <4.1.2", "4.1.2-rc.1", true},
    {">=1.0.0,<2.0.0", "1.5.0", true},
    {">=1.0.0, <2.0.0", "2.0.0", false},
    {"<1.0.0||>2.0.0", "2.1.0", true},
    {">=1.0.0\t<2.0.0", "1.0.0", true},
    {"~1.2.3", "1.2.9", true},
    {"^1.2.3", "1.9.0", true},
    {"~>1.2.3", "1.3.0", false},
    {"=>1.2.3", "1.2.3", true},
    {"=<1.2.3", "1.2.4", false},
    {"v1.2.3", "1.2.3", true},
    {">=1.2", "1.2.0", true},
    {"1.2", "1.2.5", true},
    {"4.1.0 - 4.1.2", "4.1.0", true},
    {"4.1.0 - 4.1.2", "4.1.2", true},
    {"4.1.0 - 4.1.2", "4.1.3", false},
    {"4.x.x", "4.0.0", true},
    {"4.x.x", "4.9.9", true},
    {"4.x.x", "5.0.0", false},
    {"4.x.x", "4.1.0-0", false},
    {"4.1.x", "4.1.9", true},
    {"4.1.x", "4.2.0", false},
    {"4.1.x", "4.1.1-rc.1", false},
    {"4.1.x", "4.2.0-0", false},
    {"4.1.*", "4.1.3", true},
    {"4.1.X", "4.1.3", true},
    {"4.*", "4.7.0", true},
    {"4.*", "5.0.0", false},
    {"!=4.1.x", "4.1.5", false},
    {"!=4.1.x", "4.2.0", true},
    {"!=4.x", "4.5.0", false},
    {"!=4.x", "5.0.0", true},
    {"~4.1.x", "4.1.7", true},
    {"~4.1.x", "4.2.0", false},
    {"=>4.1.x", "4.9.0", true},
    {">4.1.0-x", "4.1.0", true},
    {">=04.1.0", "4.1.0", true},
    {"01.2.3", "1.2.3", true},
};

static void test_differences_table(void **state)
{
    (void)state;
    run_cases(differences_rows, N(differences_rows));
    /* and the rows that are errors for Masterminds */
    const char *const errors[] = {"!1.2.3", "==1.2.3", "! 1.2.3"};
    for (size_t i = 0; i < N(errors); i++)
        assert_null(semver_constraint_parse(errors[i], NULL));
}

static void test_null_prerelease_version(void **state)
{
    (void)state;
    /* callers may build versions by hand with NULL strings */
    semver_constraint *c = semver_constraint_parse("!=1.2.x", NULL);
    assert_non_null(c);
    semver_version v = {1, 3, 0, NULL, NULL};
    assert_true(semver_constraint_check(c, &v));
    v.minor = 2;
    assert_false(semver_constraint_check(c, &v));
    semver_constraint_free(c);
    semver_constraint_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_table_rows),
        cmocka_unit_test(test_doc_table_equivalences),
        cmocka_unit_test(test_grammar_valid),
        cmocka_unit_test(test_grammar_errors),
        cmocka_unit_test(test_error_messages_quote_token),
        cmocka_unit_test(test_check_semantics),
        cmocka_unit_test(test_differences_table),
        cmocka_unit_test(test_null_prerelease_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
