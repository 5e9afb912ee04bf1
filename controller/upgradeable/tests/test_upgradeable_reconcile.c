/* The pure parts of the upgradeable reconciler: merging conditions into
 * ClusterOperator "olm" (lastTransitionTime kept while the status holds, other
 * conditions untouched), decoding install record Secrets, and the fail-closed
 * conditions for reads that failed (openshift-upgradeable.md §5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_base64.h"
#include "olm_time.h"
#include "upgradeable_internal.h"
#include "upgradeable_reconciler.h"

#define T0 "2026-01-01T00:00:00Z"
#define T1 "2026-02-02T00:00:00Z"

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad fixture JSON: %s", e.text);
    return j;
}

static const char *cond_field(const json_t *arr, const char *type, const char *field)
{
    size_t i;
    json_t *c;
    json_array_foreach (arr, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return json_string_value(json_object_get(c, field));
    }
    return NULL;
}

static upgradeable_condition cond(const char *type, const char *status, const char *reason, const char *message)
{
    return (upgradeable_condition){type, status, (char *)reason, (char *)message};
}

static void test_merge_into_empty(void **state)
{
    upgradeable_condition want[2] = {cond("Upgradeable", "True", "AsExpected", "All is well"),
                                     cond(UPGRADEABLE_DEGRADED_TYPE, "False", "AsExpected", "")};
    bool changed = false;
    json_t *out = upgradeable_conditions_merge(NULL, want, 2, T1, &changed);
    assert_non_null(out);
    assert_true(changed);
    assert_int_equal(json_array_size(out), 2);
    assert_string_equal(cond_field(out, "Upgradeable", "status"), "True");
    assert_string_equal(cond_field(out, "Upgradeable", "reason"), "AsExpected");
    assert_string_equal(cond_field(out, "Upgradeable", "message"), "All is well");
    assert_string_equal(cond_field(out, "Upgradeable", "lastTransitionTime"), T1);
    assert_string_equal(cond_field(out, UPGRADEABLE_DEGRADED_TYPE, "message"), "");
    json_decref(out);
}

static void test_merge_keeps_time_and_others(void **state)
{
    json_t *old = load("[{\"type\":\"Available\",\"status\":\"True\",\"lastTransitionTime\":\"" T0 "\",\"reason\":\"X\"},"
                       " {\"type\":\"Upgradeable\",\"status\":\"False\",\"lastTransitionTime\":\"" T0 "\","
                       "  \"reason\":\"InstalledOLMOperators_IncompatibleOperatorsInstalled\",\"message\":\"old\"},"
                       " {\"type\":\"Degraded\",\"status\":\"False\",\"lastTransitionTime\":\"" T0 "\"}]");
    json_t *copy = json_deep_copy(old);
    /* Same status, new message: the time stays, the message changes. */
    upgradeable_condition want = cond("Upgradeable", "False", "InstalledOLMOperators_IncompatibleOperatorsInstalled",
                                      "new");
    bool changed = false;
    json_t *out = upgradeable_conditions_merge(old, &want, 1, T1, &changed);
    assert_true(changed);
    assert_true(json_equal(old, copy)); /* input untouched */
    assert_int_equal(json_array_size(out), 3);
    assert_string_equal(cond_field(out, "Upgradeable", "lastTransitionTime"), T0);
    assert_string_equal(cond_field(out, "Upgradeable", "message"), "new");
    /* Others: same objects, same order. */
    assert_true(json_equal(json_array_get(out, 0), json_array_get(old, 0)));
    assert_true(json_equal(json_array_get(out, 2), json_array_get(old, 2)));
    assert_string_equal(json_string_value(json_object_get(json_array_get(out, 1), "type")), "Upgradeable");
    json_decref(out);

    /* Status flips: the time moves. */
    want = cond("Upgradeable", "True", "AsExpected", "All is well");
    out = upgradeable_conditions_merge(old, &want, 1, T1, &changed);
    assert_true(changed);
    assert_string_equal(cond_field(out, "Upgradeable", "lastTransitionTime"), T1);
    assert_string_equal(cond_field(out, "Upgradeable", "reason"), "AsExpected");
    assert_true(json_equal(json_array_get(out, 0), json_array_get(old, 0)));
    json_decref(out);
    json_decref(copy);
    json_decref(old);
}

static void test_merge_unchanged(void **state)
{
    json_t *old = load("[{\"type\":\"Upgradeable\",\"status\":\"True\",\"lastTransitionTime\":\"" T0 "\","
                       "  \"reason\":\"AsExpected\",\"message\":\"All is well\"}]");
    upgradeable_condition want = cond("Upgradeable", "True", "AsExpected", "All is well");
    bool changed = true;
    json_t *out = upgradeable_conditions_merge(old, &want, 1, T1, &changed);
    assert_false(changed);
    assert_true(json_equal(out, old));
    json_decref(out);
    /* A condition without lastTransitionTime gets one even when the status holds. */
    json_t *no_time = load("[{\"type\":\"Upgradeable\",\"status\":\"True\",\"reason\":\"AsExpected\","
                           "\"message\":\"All is well\"}]");
    out = upgradeable_conditions_merge(no_time, &want, 1, T1, &changed);
    assert_true(changed);
    assert_string_equal(cond_field(out, "Upgradeable", "lastTransitionTime"), T1);
    json_decref(out);
    json_decref(no_time);
    json_decref(old);
}

static void test_rfc3339(void **state)
{
    char buf[21];
    olm_time_rfc3339(0, buf);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    olm_time_rfc3339(1767225600, buf);
    assert_string_equal(buf, T0);
}

/* ---- install record Secrets ---- */

static json_t *secret(const char *record_b64, const char *owner)
{
    return json_pack("{s:{s:s, s:{s:s}}, s:{s:s}}", "metadata", "name", "olmv1-install-x", "labels",
                     "olm.operatorframework.io/owner-name", owner, "data", "record.json", record_b64);
}

static void test_record_decode(void **state)
{
    /* {"extension":"foo","bundle":{"name":"foo.v1.0.0"},
     *  "properties":"[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":4.10}]"} */
    const char *b64 = "eyJleHRlbnNpb24iOiJmb28iLCJidW5kbGUiOnsibmFtZSI6ImZvby52MS4wLjAifSwicHJvcGVydGllcyI6Ilt7XCJ0eXBl"
                      "XCI6XCJvbG0ubWF4T3BlblNoaWZ0VmVyc2lvblwiLFwidmFsdWVcIjo0LjEwfV0ifQ==";
    json_t *s = secret(b64, "foo");
    char *ext, *bundle, *props;
    olm_error err;
    assert_int_equal(upgradeable_record_from_secret(s, &ext, &bundle, &props, &err), 0);
    assert_string_equal(ext, "foo");
    assert_string_equal(bundle, "foo.v1.0.0");
    assert_string_equal(props, "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":4.10}]"); /* 4.10 kept */
    free(ext);
    free(bundle);
    free(props);
    json_decref(s);

    /* No properties field: NULL (compatible); extension from the owner label. */
    s = secret("eyJidW5kbGUiOnsibmFtZSI6ImIifX0", "bar"); /* {"bundle":{"name":"b"}}, unpadded */
    assert_int_equal(upgradeable_record_from_secret(s, &ext, &bundle, &props, &err), 0);
    assert_string_equal(ext, "bar");
    assert_string_equal(bundle, "b");
    assert_null(props);
    free(ext);
    free(bundle);
    json_decref(s);

    s = secret("!!!", "bar");
    assert_int_equal(upgradeable_record_from_secret(s, &ext, &bundle, &props, &err), -1);
    assert_non_null(strstr(err.msg, "base64"));
    json_decref(s);
    s = secret("bm90IGpzb24=", "bar"); /* "not json" */
    assert_int_equal(upgradeable_record_from_secret(s, &ext, &bundle, &props, &err), -1);
    assert_non_null(strstr(err.msg, "record.json"));
    json_decref(s);
}

/* ---- fail-closed conditions ---- */

static void test_missing_cluster_version(void **state)
{
    upgradeable_inputs in = {0};
    in.version_error = "ClusterVersion \"version\" not found";
    upgradeable_result r;
    olm_error err;
    assert_int_equal(upgradeable_inputs_check(&in, NULL, &r, &err), 0);
    assert_string_equal(r.upgradeable.status, "False");
    assert_string_equal(r.upgradeable.reason, "InstalledOLMOperators_ErrorCheckingOperatorCompatibility");
    assert_string_equal(r.upgradeable.message,
                        "InstalledOLMOperatorsUpgradeable: Encountered errors while checking compatibility with the "
                        "next minor version of OpenShift: ClusterVersion \"version\" not found");
    assert_string_equal(r.degraded.status, "True");
    assert_string_equal(r.degraded.reason, "SyncError");
    upgradeable_result_free(&r);
    /* --to does not need it. */
    assert_int_equal(upgradeable_inputs_check(&in, "4.19", &r, &err), 0);
    assert_string_equal(r.upgradeable.status, "True");
    upgradeable_result_free(&r);
}

static void test_list_error_and_lookup(void **state)
{
    upgradeable_extension ext[2] = {
        {.name = "foo", .bundle = "foo.v1", .properties = "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"}]"},
        {.name = "bar", .bundle = "", .lookup_failed = true},
    };
    upgradeable_inputs in = {.exts = ext, .n = 2, .cluster_version = "4.18.3"};
    upgradeable_result r;
    olm_error err;
    assert_int_equal(upgradeable_inputs_check(&in, NULL, &r, &err), 0);
    assert_string_equal(r.upgradeable.reason, "InstalledOLMOperators_IncompatibleOperatorsInstalled");
    assert_non_null(strstr(r.upgradeable.message, "bundle \"foo.v1\" for ClusterExtension \"foo\""));
    assert_non_null(strstr(r.upgradeable.message, "error returning the last deployed release for bar"));
    upgradeable_result_free(&r);

    upgradeable_inputs bad = {.cluster_version = "4.18.3", .list_error = "cannot list ClusterExtensions: boom\nline2"};
    assert_int_equal(upgradeable_inputs_check(&bad, NULL, &r, &err), 0);
    assert_string_equal(r.upgradeable.reason, "InstalledOLMOperators_FailureGettingExtensionMetadata");
    assert_string_equal(r.upgradeable.message, "InstalledOLMOperatorsUpgradeable: cannot list ClusterExtensions: boom\n"
                                               "InstalledOLMOperatorsUpgradeable: line2");
    upgradeable_result_free(&r);
}

/* ---- matching ClusterExtensions with their record Secrets ---- */

static json_t *record_secret(const char *record_json, const char *owner)
{
    olm_error err;
    char *b64 = olm_base64_encode(record_json, strlen(record_json), NULL, &err);
    assert_non_null(b64);
    json_t *s = secret(b64, owner);
    free(b64);
    return s;
}

static json_t *ce_named(const char *name)
{
    return json_pack("{s:{s:s}}", "metadata", "name", name);
}

static const upgradeable_extension *row_of(const upgradeable_inputs *in, const char *name)
{
    for (size_t i = 0; i < in->n; i++)
        if (strcmp(in->exts[i].name, name) == 0)
            return &in->exts[i];
    return NULL;
}

static void test_inputs_match(void **state)
{
    json_t *ces = json_pack("[o,o,o,o,o]", ce_named("foo"), ce_named("bar"), ce_named("baz"), ce_named("qux"),
                            ce_named("dup"));
    json_t *secrets = json_pack(
        "[o,o,o,o,o,o]",
        /* the record names qux though the label says someone else: the record wins */
        record_secret("{\"extension\":\"qux\",\"bundle\":{\"name\":\"qux.v2\"}}", "other"),
        record_secret("{\"extension\":\"foo\",\"bundle\":{\"name\":\"foo.v1\"},\"properties\":\"[]\"}", "foo"),
        secret("!!!", "bar"), /* unreadable: bar's lookup failed */
        /* two Secrets for dup: the first in list order counts */
        record_secret("{\"extension\":\"dup\",\"bundle\":{\"name\":\"dup.first\"}}", "dup"),
        record_secret("{\"extension\":\"dup\",\"bundle\":{\"name\":\"dup.second\"}}", "dup"),
        record_secret("{\"extension\":\"gone\",\"bundle\":{\"name\":\"gone.v1\"}}", "gone"));
    assert_non_null(ces);
    assert_non_null(secrets);
    upgradeable_inputs in = {0};
    assert_int_equal(upgradeable_inputs_match(ces, secrets, &in), 0);
    assert_int_equal(in.n, 4); /* baz has no record: not installed yet; gone has no ClusterExtension */
    assert_string_equal(in.exts[0].name, "foo"); /* ClusterExtension list order */
    assert_string_equal(row_of(&in, "foo")->bundle, "foo.v1");
    assert_string_equal(row_of(&in, "foo")->properties, "[]");
    assert_true(row_of(&in, "bar")->lookup_failed);
    assert_string_equal(row_of(&in, "bar")->bundle, "");
    assert_null(row_of(&in, "baz"));
    assert_string_equal(row_of(&in, "qux")->bundle, "qux.v2");
    assert_null(row_of(&in, "qux")->properties);
    assert_string_equal(row_of(&in, "dup")->bundle, "dup.first");
    upgradeable_inputs_free(&in);

    /* The Secrets could not be listed: every extension is a failed lookup. */
    assert_int_equal(upgradeable_inputs_match(ces, NULL, &in), 0);
    assert_int_equal(in.n, 5);
    for (size_t i = 0; i < in.n; i++)
        assert_true(in.exts[i].lookup_failed);
    upgradeable_inputs_free(&in);
    json_decref(ces);
    json_decref(secrets);
}

/* ---- which watch events ask for a pass ---- */

static void test_copy_unchanged(void **state)
{
    (void)state;
    json_t *ce = json_pack("{s:{s:s, s:s}, s:{s:[]}}", "metadata", "name", "a", "resourceVersion", "1", "status",
                           "conditions");
    json_t *ce_status_write = json_pack("{s:{s:s, s:s}, s:{s:[{s:s}]}}", "metadata", "name", "a",
                                        "resourceVersion", "2", "status", "conditions", "type", "Installed");
    json_t *held = upgradeable_slim_extension(ce);
    json_t *kept = upgradeable_slim_extension(ce_status_write);
    assert_true(upgradeable_copy_unchanged(true, held, kept));   /* a status write: no pass */
    assert_false(upgradeable_copy_unchanged(false, held, kept)); /* passes list through REST */
    assert_false(upgradeable_copy_unchanged(true, NULL, kept));  /* a new object */
    json_t *rec = json_pack("{s:{s:{s:s}}, s:{s:s}}", "metadata", "labels", "k", "v", "data", "record.json", "e30=");
    json_t *rec2 = json_pack("{s:{s:{s:s}}, s:{s:s}}", "metadata", "labels", "k", "v", "data", "record.json", "e30K");
    json_t *r1 = upgradeable_slim_record(rec), *r2 = upgradeable_slim_record(rec2);
    assert_false(upgradeable_copy_unchanged(true, r1, r2)); /* the record changed */
    assert_true(upgradeable_copy_unchanged(true, r1, r1));
    json_decref(ce), json_decref(ce_status_write), json_decref(held), json_decref(kept);
    json_decref(rec), json_decref(rec2), json_decref(r1), json_decref(r2);
}

/* ---- spacing of passes ---- */

static void test_pass_delay(void **state)
{
    /* Never run: now. */
    assert_int_equal(upgradeable_pass_delay_ms(5000, 0, 0, false), 0);
    /* A 50 ms pass ended at 10,000: the next waits for the minimum gap, then goes. */
    assert_int_equal(upgradeable_pass_delay_ms(10000, 9950, 10000, false), UPGRADEABLE_PASS_GAP_MIN_MS);
    assert_int_equal(upgradeable_pass_delay_ms(10400, 9950, 10000, false), UPGRADEABLE_PASS_GAP_MIN_MS - 400);
    assert_int_equal(upgradeable_pass_delay_ms(10000 + UPGRADEABLE_PASS_GAP_MIN_MS, 9950, 10000, false), 0);
    /* A slow pass (500 ms) spaces the next one by ten times that. */
    assert_int_equal(upgradeable_pass_delay_ms(20000, 19500, 20000, false), 500 * UPGRADEABLE_PASS_GAP_FACTOR);
    assert_int_equal(upgradeable_pass_delay_ms(20000 + 500 * UPGRADEABLE_PASS_GAP_FACTOR, 19500, 20000, false), 0);
    /* One is running: the next follows it by the gap. */
    assert_int_equal(upgradeable_pass_delay_ms(30000, 29900, 20000, true), UPGRADEABLE_PASS_GAP_MIN_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_into_empty),       cmocka_unit_test(test_merge_keeps_time_and_others),
        cmocka_unit_test(test_merge_unchanged),        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_record_decode),          cmocka_unit_test(test_missing_cluster_version),
        cmocka_unit_test(test_list_error_and_lookup), cmocka_unit_test(test_inputs_match),
        cmocka_unit_test(test_copy_unchanged),
        cmocka_unit_test(test_pass_delay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
