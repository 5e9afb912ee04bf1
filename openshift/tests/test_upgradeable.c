/* Every row of openshift-upgradeable.md §3, §4 (v1 column) and §9 A-D, with the
 * exact texts upstream produces (Go's encoding/json and blang/semver messages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upgradeable.h"
#include "upgradeable_internal.h"

#define PROP(v) "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":" v "}]"

/* ---- §4 and §9A: the property value ---- */

typedef struct value_case {
    const char *raw;  /* the property's raw JSON value; NULL = no "value" key */
    const char *want; /* "M.m", or the error reason */
    int ok;
} value_case;

static const value_case value_cases[] = {
    {"\"4.18\"", "4.18", 1},
    {"4.18", "4.18", 1},
    {"4.10", "4.10", 1},
    {"4.1", "4.1", 1},
    {"4.9", "4.9", 1},
    {"4.0", "4.0", 1},
    {"5.0", "5.0", 1},
    {"5.00", "invalid semver format \"5.00\": expected <major>.<minor>", 0},
    {"\"5.00\"", "5.0", 1},
    {"\"4.018\"", "4.18", 1},
    {"\"04.18\"", "4.18", 1},
    {"04.18", "invalid character '4' after top-level value", 0},
    {"0.1", "invalid semver format \"0.1\": expected <major>.<minor>", 0},
    {"\"0.1\"", "0.1", 1},
    {"4", "invalid semver format \"4\": expected <major>.<minor>", 0},
    {"\"4\"", "invalid version format", 0},
    {"\"4.18.0\"", "invalid version format", 0},
    {"\"4.18.1\"", "invalid version format", 0},
    {"\"v4.18\"", "invalid version format", 0},
    {"\"V4.18\"", "Invalid character(s) found in major number \"0V4\"", 0},
    {"\"abc\"", "invalid version format", 0},
    {"\"4.x\"", "Invalid character(s) found in minor number \"x\"", 0},
    {"\"4. 18\"", "Invalid character(s) found in minor number \"0 18\"", 0},
    {"\" 4.18 \"", "4.18", 1},
    {"\"4.18 \"", "4.18", 1},
    {"\"\"", "invalid version format", 0},
    {"\"4.18-rc1\"", "short version cannot contain PreRelease/Build meta data", 0},
    {"\"4.18+build\"", "short version cannot contain PreRelease/Build meta data", 0},
    {"\"\\\"4.18\\\"\"", "Invalid character(s) found in major number \"0\\\"4\"", 0},
    {"4.18e1", "invalid semver format \"4.18e1\": expected <major>.<minor>", 0},
    {"1e2", "invalid semver format \"1e2\": expected <major>.<minor>", 0},
    {"-4.18", "invalid semver format \"-4.18\": expected <major>.<minor>", 0},
    {"true", "invalid type bool for olm.maxOpenshiftVersion: true", 0},
    {"null", "invalid type <nil> for olm.maxOpenshiftVersion: null", 0},
    {"{\"a\":1}", "invalid type map[string]interface {} for olm.maxOpenshiftVersion: {\"a\":1}", 0},
    {"[1]", "invalid type []interface {} for olm.maxOpenshiftVersion: [1]", 0},
    {NULL, "unexpected end of JSON input", 0},
    /* §9A */
    {"4.19", "4.19", 1},
    {"4.19e1", "invalid semver format \"4.19e1\": expected <major>.<minor>", 0},
    {"4.18.0", "invalid character '.' after top-level value", 0},
    {"\"v4.18.0\"", "invalid version format", 0},
    {"\"5.0\"", "5.0", 1},
    {"\"5.1\"", "5.1", 1},
    /* More of the same rules: whitespace, escapes, overflow, a leading v after spaces. */
    {"\" v4.18\"", "4.18", 1},
    {"\"\\u0034.18\"", "4.18", 1},
    {"\".18\"", "strconv.ParseUint: parsing \"\": invalid syntax", 0},
    {"\"99999999999999999999.1\"", "strconv.ParseUint: parsing \"99999999999999999999\": value out of range", 0},
    {"1e400", "json: cannot unmarshal number 1e400 into Go value of type float64", 0},
    {"\"4.\\u00a018\"", "Invalid character(s) found in minor number \"0\\u00a018\"", 0},
};

static void test_value_parsing(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof value_cases / sizeof value_cases[0]; i++) {
        const value_case *c = &value_cases[i];
        upgradeable_minor v = {0, 0};
        strbuf msg = STRBUF_INIT;
        int rc = upgradeable_parse_max_version(c->raw, c->raw ? strlen(c->raw) : 0, &v, &msg);
        char got[256];
        if (rc == 0)
            snprintf(got, sizeof got, "%llu.%llu", (unsigned long long)v.major, (unsigned long long)v.minor);
        else
            snprintf(got, sizeof got, "%s", strbuf_str(&msg));
        if ((rc == 0) != c->ok || strcmp(got, c->want) != 0)
            fail_msg("value %s: want %s [%s], got %s [%s]", c->raw ? c->raw : "(none)", c->ok ? "ok" : "error",
                     c->want, rc == 0 ? "ok" : "error", got);
        strbuf_free(&msg);
    }
}

/* ---- one extension through the whole check ---- */

static upgradeable_result check1(const char *cluster, const char *props)
{
    upgradeable_extension e = {.name = "ce", .bundle = "test-bundle-1.0", .properties = props};
    upgradeable_result r;
    olm_error err;
    if (upgradeable_check(&e, 1, cluster, &r, &err) < 0)
        fail_msg("%s", err.msg);
    return r;
}

static void expect_cond(const upgradeable_condition *c, const char *status, const char *reason, const char *message)
{
    assert_string_equal(c->status, status);
    assert_string_equal(c->reason, reason);
    assert_string_equal(c->message, message);
}

/* The value rows seen as the controller reports them (full messages). */
static void test_value_rows_in_messages(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof value_cases / sizeof value_cases[0]; i++) {
        const value_case *c = &value_cases[i];
        char props[512];
        if (!c->raw)
            snprintf(props, sizeof props, "[{\"type\":\"olm.maxOpenShiftVersion\"}]");
        else
            snprintf(props, sizeof props, PROP("%s"), c->raw);
        upgradeable_result r = check1("4.17.0", props);
        if (c->ok) {
            /* Every accepted value but 4.0/4.1/4.9/4.10/0.1 is above 4.17. */
            assert_true(r.nverdicts == 1 && r.verdicts[0].kind != UPGRADEABLE_ERROR);
            assert_string_equal(r.verdicts[0].max, c->want);
        } else if (c->raw && (strcmp(c->raw, "04.18") == 0 || strcmp(c->raw, "4.18.0") == 0)) {
            /* Not JSON at all: the whole annotation fails to decode. */
            char want[512];
            snprintf(want, sizeof want,
                     "error with cluster extension ce: error in bundle test-bundle-1.0: could not convert "
                     "olm.properties: failed to unmarshal properties annotation: invalid character '%c' after "
                     "object key:value pair",
                     c->raw[1] == '4' ? '4' : '.');
            expect_cond(&r.intermediate, "False", "FailureGettingExtensionMetadata", want);
        } else {
            char want[768];
            snprintf(want, sizeof want,
                     "error(s) with cluster extension ce: error in bundle test-bundle-1.0: error converting to "
                     "semver for version %s: %s",
                     c->raw ? c->raw : "", c->want);
            expect_cond(&r.intermediate, "False", "FailureGettingExtensionMetadata", want);
            expect_cond(&r.degraded, "True", "SyncError", want);
            assert_string_equal(r.upgradeable.reason, "InstalledOLMOperators_FailureGettingExtensionMetadata");
        }
        upgradeable_result_free(&r);
    }
}

static void test_number_text_is_kept(void **state)
{
    (void)state;
    /* 4.10 stays 4.10 (blocks nothing at 4.9) where arithmetic would give 4.1 (317cc10). */
    upgradeable_result r = check1("4.9.0", PROP("4.10"));
    expect_cond(&r.intermediate, "True", "", "");
    upgradeable_result_free(&r);
    r = check1("4.10.0", PROP("4.10"));
    assert_string_equal(r.intermediate.reason, "IncompatibleOperatorsInstalled");
    upgradeable_result_free(&r);
}

static void test_duplicates(void **state)
{
    (void)state;
    const char *dup = "error(s) with cluster extension ce: error in bundle test-bundle-1.0: more than one "
                      "olm.maxOpenShiftVersion found in bundle";
    /* Two identical values, two different ones, and one that would block: all errors, never listed. */
    const char *cases[] = {
        "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"},{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"}]",
        "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"},{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.20\"}]",
        "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.17\"},{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.20\"}]",
    };
    for (size_t i = 0; i < 3; i++) {
        upgradeable_result r = check1("4.17.0", cases[i]);
        expect_cond(&r.intermediate, "False", "FailureGettingExtensionMetadata", dup);
        assert_int_equal(r.nincompatible, 0);
        upgradeable_result_free(&r);
    }
    /* A bad first value and a second one: both errors, joined with "\n"; the walk stops there. */
    upgradeable_result r = check1("4.17.0", "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"x\"},"
                                            "{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"},"
                                            "{\"type\":\"olm.maxOpenShiftVersion\",\"value\":true}]");
    expect_cond(&r.intermediate, "False", "FailureGettingExtensionMetadata",
                "error(s) with cluster extension ce: error in bundle test-bundle-1.0: error converting to semver "
                "for version \"x\": invalid version format\nmore than one olm.maxOpenShiftVersion found in bundle");
    assert_string_equal(r.upgradeable.message,
                        "InstalledOLMOperatorsUpgradeable: error(s) with cluster extension ce: error in bundle "
                        "test-bundle-1.0: error converting to semver for version \"x\": invalid version format\n"
                        "InstalledOLMOperatorsUpgradeable: more than one olm.maxOpenShiftVersion found in bundle");
    upgradeable_result_free(&r);
}

/* §4 last row and §9D: nothing to check means compatible. */
static void test_compatible_without_property(void **state)
{
    (void)state;
    const char *cases[] = {NULL, "null", "[]", "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\"}}]",
                           "[{\"type\":\"olm.maxopenshiftversion\",\"value\":\"4.1\"}]", "[null]",
                           PROP("\"4.18\"")};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        upgradeable_result r = check1("4.17.0", cases[i]);
        expect_cond(&r.intermediate, "True", "", "");
        expect_cond(&r.degraded, "False", "AsExpected", "");
        expect_cond(&r.upgradeable, "True", "AsExpected", "All is well");
        assert_null(r.errors);
        upgradeable_result_free(&r);
    }
}

/* §2c: the annotation itself does not decode (Go's encoding/json texts). */
static void test_annotation_errors(void **state)
{
    (void)state;
    static const struct {
        const char *props, *why;
    } cases[] = {
        {"", "unexpected end of JSON input"},
        {"abcd", "invalid character 'a' looking for beginning of value"},
        {"[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"}", "unexpected end of JSON input"},
        {"{}", "json: cannot unmarshal object into Go value of type []property.Property"},
        {"\"x\"", "json: cannot unmarshal string into Go value of type []property.Property"},
        {"[1]", "json: cannot unmarshal number into Go value of type property.Property"},
        {"[{\"type\":1}]", "json: cannot unmarshal number into Go struct field Property.type of type string"},
        {"[{\"type\":\"a\",}]", "invalid character '}' looking for beginning of object key string"},
        {"[{\"type\" \"a\"}]", "invalid character '\"' after object key"},
        {"[tru]", "invalid character ']' in literal true (expecting 'e')"},
        {"[\"a\nb\"]", "invalid character '\\n' in string literal"},
        {"[1 2]", "invalid character '2' after array element"},
        {"[] x", "invalid character 'x' after top-level value"},
        {"[-]", "invalid character ']' in numeric literal"},
        {"[1.]", "invalid character ']' after decimal point in numeric literal"},
        {"[1e]", "invalid character ']' in exponent of numeric literal"},
        {"[\"\\x\"]", "invalid character 'x' in string escape code"},
        {"[\"\\u12g4\"]", "invalid character 'g' in \\u hexadecimal character escape"},
        {"['a']", "invalid character '\\'' looking for beginning of value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        upgradeable_result r = check1("4.17.0", cases[i].props);
        char want[512];
        snprintf(want, sizeof want,
                 "error with cluster extension ce: error in bundle test-bundle-1.0: could not convert olm.properties: "
                 "failed to unmarshal properties annotation: %s",
                 cases[i].why);
        if (strcmp(r.intermediate.message, want) != 0)
            fail_msg("annotation %s:\n want %s\n got  %s", cases[i].props, want, r.intermediate.message);
        assert_string_equal(r.intermediate.reason, "FailureGettingExtensionMetadata");
        assert_int_equal(r.verdicts[0].kind, UPGRADEABLE_ERROR);
        upgradeable_result_free(&r);
    }
}

/* Go's struct decoding: keys match case-insensitively, the last duplicate wins. */
static void test_struct_decoding(void **state)
{
    (void)state;
    upgradeable_result r = check1("4.17.0", "[{\"TYPE\":\"olm.maxOpenShiftVersion\",\"Value\":\"4.17\"}]");
    assert_string_equal(r.intermediate.reason, "IncompatibleOperatorsInstalled");
    upgradeable_result_free(&r);
    r = check1("4.17.0", "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.17\",\"value\":\"4.18\"}]");
    expect_cond(&r.intermediate, "True", "", "");
    upgradeable_result_free(&r);
    r = check1("4.17.0", "[ { \"type\" : \"olm.maxOpenShiftVersion\" , \"value\" : 4.17 } ]");
    assert_string_equal(r.intermediate.reason, "IncompatibleOperatorsInstalled");
    upgradeable_result_free(&r);
}

/* ---- §3 and §9B/C: current and next version ---- */

static void test_current_and_next(void **state)
{
    (void)state;
    static const struct {
        const char *cluster, *next, *blocks, *passes;
    } cases[] = {
        {"4.17.0", "4.18", "4.17", "4.18"},
        {"4.17.5", "4.18", "4.17", "4.18"},
        {"4.17.0+b", "4.18", "4.17", "4.18"},
        {"4.18.0-rc.1", "4.19", "4.18", "4.19"},
        {"4.18.0-0.nightly-2025-01-01-000000", "4.19", "4.18", "4.19"},
        {"4.22.3", "4.23", "4.22", "4.23"},
        {"4.23.0", "5.1", "5.0", "5.1"},
        {"4.23.4", "5.1", "4.23", "5.1"},
        {"5.0.2", "5.1", "5.0", "5.1"},
        {"5.0.0", "5.1", "4.23", "5.1"},
        {"5.1.0", "5.2", "5.1", "5.2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char props[128];
        snprintf(props, sizeof props, PROP("\"%s\""), cases[i].blocks);
        upgradeable_result r = check1(cases[i].cluster, props);
        assert_string_equal(r.next, cases[i].next);
        char want[256];
        snprintf(want, sizeof want,
                 "Found ClusterExtensions that require upgrades prior to upgrading cluster to version %s: bundle "
                 "\"test-bundle-1.0\" for ClusterExtension \"ce\".",
                 cases[i].next);
        expect_cond(&r.intermediate, "False", "IncompatibleOperatorsInstalled", want);
        upgradeable_result_free(&r);
        snprintf(props, sizeof props, PROP("\"%s\""), cases[i].passes);
        r = check1(cases[i].cluster, props);
        expect_cond(&r.intermediate, "True", "", "");
        upgradeable_result_free(&r);
    }
}

static void test_compat_matrix(void **state)
{
    (void)state;
    /* §9C: max, current, upgradable. */
    static const struct {
        const char *max, *cluster;
        int ok;
    } cases[] = {
        {"4.18", "4.17.0", 1}, {"4.18", "4.18.0", 0}, {"4.18", "4.19.0", 0}, {"4.23", "4.22.0", 1},
        {"4.23", "4.23.0", 0}, {"4.23", "5.0.0", 0},  {"4.23", "5.1.0", 0},  {"5.0", "4.23.0", 0},
        {"5.0", "5.0.0", 0},   {"5.0", "5.1.0", 0},   {"5.1", "4.23.0", 1},  {"5.1", "5.0.0", 1},
        {"5.1", "5.1.0", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char props[128];
        snprintf(props, sizeof props, PROP("\"%s\""), cases[i].max);
        upgradeable_result r = check1(cases[i].cluster, props);
        if ((r.verdicts[0].kind == UPGRADEABLE_COMPATIBLE) != cases[i].ok)
            fail_msg("max %s at %s: want %s", cases[i].max, cases[i].cluster, cases[i].ok ? "upgradable" : "blocked");
        upgradeable_result_free(&r);
    }
}

static void test_bad_cluster_version(void **state)
{
    (void)state;
    const char *bad[] = {"", "4.18", "v4.18.0", NULL};
    for (size_t i = 0; i < 4; i++) {
        upgradeable_result r = check1(bad[i], PROP("\"4.18\""));
        assert_string_equal(r.intermediate.status, "False");
        assert_string_equal(r.intermediate.reason, "ErrorCheckingOperatorCompatibility");
        assert_string_equal(r.upgradeable.reason, "InstalledOLMOperators_ErrorCheckingOperatorCompatibility");
        assert_non_null(strstr(r.upgradeable.message,
                               "InstalledOLMOperatorsUpgradeable: Encountered errors while checking compatibility "
                               "with the next minor version of OpenShift: cannot parse the cluster version: "));
        assert_string_equal(r.degraded.status, "True");
        upgradeable_result_free(&r);
    }
}

/* ---- §9D and §5: several extensions, sorting, messages ---- */

static upgradeable_result check_many(const char *cluster, const upgradeable_extension *e, size_t n)
{
    upgradeable_result r;
    olm_error err;
    if (upgradeable_check(e, n, cluster, &r, &err) < 0)
        fail_msg("%s", err.msg);
    return r;
}

static void test_controller_cases(void **state)
{
    (void)state;
    /* No ClusterExtensions. */
    upgradeable_result r = check_many("4.17.0", NULL, 0);
    expect_cond(&r.intermediate, "True", "", "");
    expect_cond(&r.upgradeable, "True", "AsExpected", "All is well");
    upgradeable_result_free(&r);

    /* Helm: CE1 "4.17" (bundle-1.0) + CE2 "4.18" (bundle-2.0); Boxcutter: the active revision's props. */
    upgradeable_extension two[] = {
        {.name = "ce1", .bundle = "test-bundle-1.0", .properties = PROP("\"4.17\"")},
        {.name = "ce2", .bundle = "test-bundle-2.0", .properties = PROP("\"4.18\"")},
    };
    r = check_many("4.17.0", two, 2);
    expect_cond(&r.intermediate, "False", "IncompatibleOperatorsInstalled",
                "Found ClusterExtensions that require upgrades prior to upgrading cluster to version 4.18: bundle "
                "\"test-bundle-1.0\" for ClusterExtension \"ce1\".");
    expect_cond(&r.upgradeable, "False", "InstalledOLMOperators_IncompatibleOperatorsInstalled",
                "InstalledOLMOperatorsUpgradeable: Found ClusterExtensions that require upgrades prior to upgrading "
                "cluster to version 4.18: bundle \"test-bundle-1.0\" for ClusterExtension \"ce1\".");
    expect_cond(&r.degraded, "False", "AsExpected", "");
    upgradeable_result_free(&r);

    /* §5 example: sorted by bundle name first, joined by "," with no space. */
    upgradeable_extension ex[] = {
        {.name = "bar", .bundle = "zed.v2", .properties = PROP("4.18")},
        {.name = "foo", .bundle = "foo.v1.0.0", .properties = PROP("\"4.18\"")},
    };
    r = check_many("4.18.2", ex, 2);
    expect_cond(&r.intermediate, "False", "IncompatibleOperatorsInstalled",
                "Found ClusterExtensions that require upgrades prior to upgrading cluster to version 4.19: bundle "
                "\"foo.v1.0.0\" for ClusterExtension \"foo\",bundle \"zed.v2\" for ClusterExtension \"bar\".");
    upgradeable_result_free(&r);

    /* Incompatible plus errors: the errors follow after "\n "; each line prefixed on the CO. */
    upgradeable_extension mixed[] = {
        {.name = "good", .bundle = "good.v1", .properties = PROP("\"4.20\"")},
        {.name = "old", .bundle = "old.v1", .properties = PROP("\"4.18\"")},
        {.name = "bad", .bundle = "bad.v1", .properties = "abcd"},
        {.name = "gone", .bundle = "gone.v1", .lookup_failed = true},
        {.name = "none", .bundle = "none.v1", .properties = NULL},
    };
    r = check_many("4.18.0", mixed, 5);
    const char *errs = "error with cluster extension bad: error in bundle bad.v1: could not convert olm.properties: "
                       "failed to unmarshal properties annotation: invalid character 'a' looking for beginning of "
                       "value\nerror returning the last deployed release for gone";
    assert_string_equal(r.errors, errs);
    char want[1024];
    snprintf(want, sizeof want,
             "Found ClusterExtensions that require upgrades prior to upgrading cluster to version 4.19: bundle "
             "\"old.v1\" for ClusterExtension \"old\".\n Additionally the following errors were encountered while "
             "getting extension metadata: %s",
             errs);
    expect_cond(&r.intermediate, "False", "IncompatibleOperatorsInstalled", want);
    expect_cond(&r.degraded, "True", "SyncError", errs);
    expect_cond(&r.upgradeable, "False", "InstalledOLMOperators_IncompatibleOperatorsInstalled",
                "InstalledOLMOperatorsUpgradeable: Found ClusterExtensions that require upgrades prior to upgrading "
                "cluster to version 4.19: bundle \"old.v1\" for ClusterExtension \"old\".\n"
                "InstalledOLMOperatorsUpgradeable:  Additionally the following errors were encountered while getting "
                "extension metadata: error with cluster extension bad: error in bundle bad.v1: could not convert "
                "olm.properties: failed to unmarshal properties annotation: invalid character 'a' looking for "
                "beginning of value\n"
                "InstalledOLMOperatorsUpgradeable: error returning the last deployed release for gone");
    assert_int_equal(r.verdicts[0].kind, UPGRADEABLE_COMPATIBLE);
    assert_int_equal(r.verdicts[1].kind, UPGRADEABLE_INCOMPATIBLE);
    assert_int_equal(r.verdicts[2].kind, UPGRADEABLE_ERROR);
    assert_int_equal(r.verdicts[3].kind, UPGRADEABLE_ERROR);
    assert_int_equal(r.verdicts[4].kind, UPGRADEABLE_NO_PROPERTY);
    upgradeable_result_free(&r);

    /* Names are Go-%q quoted in entries. */
    upgradeable_extension odd[] = {{.name = "c\"e", .bundle = "b\\1\n", .properties = PROP("4.1")}};
    r = check_many("4.17.0", odd, 1);
    assert_string_equal(r.incompatible[0], "bundle \"b\\\\1\\n\" for ClusterExtension \"c\\\"e\"");
    upgradeable_result_free(&r);
}

static void test_duplicate_lines_dropped(void **state)
{
    (void)state;
    upgradeable_extension e[] = {
        {.name = "a", .bundle = "b", .lookup_failed = true},
        {.name = "a", .bundle = "b", .lookup_failed = true},
    };
    upgradeable_result r = check_many("4.17.0", e, 2);
    expect_cond(&r.intermediate, "False", "FailureGettingExtensionMetadata",
                "error returning the last deployed release for a\nerror returning the last deployed release for a");
    expect_cond(&r.upgradeable, "False", "InstalledOLMOperators_FailureGettingExtensionMetadata",
                "InstalledOLMOperatorsUpgradeable: error returning the last deployed release for a");
    upgradeable_result_free(&r);
}

static void test_target_mode(void **state)
{
    (void)state;
    static const struct {
        const char *target, *max;
        int blocks;
    } cases[] = {
        {"4.19", "4.18", 1}, {"4.19", "4.19", 0}, {"4.23", "4.22", 1}, {"4.23", "4.23", 0}, {"4.23", "5.0", 0},
        {"5.0", "4.22", 1},  {"5.0", "4.23", 0},  {"5.0", "5.0", 0},   {"5.1", "4.23", 1},  {"5.1", "5.0", 1},
        {"5.1", "5.1", 0},   {"5.2", "5.1", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char props[128];
        snprintf(props, sizeof props, PROP("\"%s\""), cases[i].max);
        upgradeable_extension e = {.name = "ce", .bundle = "b", .properties = props};
        upgradeable_result r;
        assert_int_equal(upgradeable_check_target(&e, 1, cases[i].target, &r, NULL), 0);
        assert_string_equal(r.next, cases[i].target);
        if ((r.verdicts[0].kind == UPGRADEABLE_INCOMPATIBLE) != cases[i].blocks)
            fail_msg("--to %s, max %s: want blocks=%d", cases[i].target, cases[i].max, cases[i].blocks);
        upgradeable_result_free(&r);
    }
    upgradeable_result r;
    assert_int_equal(upgradeable_check_target(NULL, 0, "4.19.0", &r, NULL), 0);
    assert_string_equal(r.intermediate.reason, "ErrorCheckingOperatorCompatibility");
    upgradeable_result_free(&r);
}

static void test_properties_from_json(void **state)
{
    (void)state;
    json_t *a = json_pack("[{s:s, s:s}, {s:s, s:f}]", "type", "olm.maxOpenShiftVersion", "value", "4.18", "type",
                          "x", "value", 4.18);
    char *text = upgradeable_properties_from_json(a);
    assert_string_equal(text, "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"},{\"type\":\"x\",\"value\":4.18}]");
    free(text);
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_parsing),
        cmocka_unit_test(test_value_rows_in_messages),
        cmocka_unit_test(test_number_text_is_kept),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_compatible_without_property),
        cmocka_unit_test(test_annotation_errors),
        cmocka_unit_test(test_struct_decoding),
        cmocka_unit_test(test_current_and_next),
        cmocka_unit_test(test_compat_matrix),
        cmocka_unit_test(test_bad_cluster_version),
        cmocka_unit_test(test_controller_cases),
        cmocka_unit_test(test_duplicate_lines_dropped),
        cmocka_unit_test(test_target_mode),
        cmocka_unit_test(test_properties_from_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
