/* kube_label_selector: matchLabels / matchExpressions semantics and apimachinery's
 * error texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "kube_label_selector.h"

static bool sel_match(const char *sel_json, const char *labels_json)
{
    json_t *sel = sel_json ? json_loads(sel_json, 0, NULL) : NULL;
    json_t *labels = labels_json ? json_loads(labels_json, 0, NULL) : NULL;
    kube_label_selector *s;
    olm_error err;
    if (kube_label_selector_parse(sel, &s, &err) != 0)
        fail_msg("%s", err.msg);
    bool m = kube_label_selector_matches(s, labels);
    kube_label_selector_free(s);
    json_decref(sel);
    json_decref(labels);
    return m;
}

static void test_matching(void **state)
{
    (void)state;
    assert_true(sel_match(NULL, NULL));
    assert_true(sel_match("null", "{\"a\":\"b\"}"));
    assert_true(sel_match("{}", "{\"a\":\"b\"}"));
    assert_true(sel_match("{\"matchLabels\":{\"a\":\"b\"}}", "{\"a\":\"b\",\"c\":\"d\"}"));
    assert_false(sel_match("{\"matchLabels\":{\"a\":\"b\"}}", "{\"a\":\"x\"}"));
    assert_false(sel_match("{\"matchLabels\":{\"a\":\"b\"}}", NULL));
    assert_true(sel_match("{\"matchLabels\":{\"a\":\"\"}}", "{\"a\":\"\"}"));
    const char *in = "{\"matchExpressions\":[{\"key\":\"olm.operatorframework.io/metadata.name\",\"operator\":\"In\","
                     "\"values\":[\"x\",\"y\"]}]}";
    assert_true(sel_match(in, "{\"olm.operatorframework.io/metadata.name\":\"y\"}"));
    assert_false(sel_match(in, "{\"olm.operatorframework.io/metadata.name\":\"z\"}"));
    assert_false(sel_match(in, NULL));
    const char *notin = "{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"NotIn\",\"values\":[\"x\"]}]}";
    assert_true(sel_match(notin, "{\"k\":\"y\"}"));
    assert_true(sel_match(notin, NULL)); /* an absent key matches NotIn */
    assert_false(sel_match(notin, "{\"k\":\"x\"}"));
    const char *exists = "{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}";
    assert_true(sel_match(exists, "{\"k\":\"\"}"));
    assert_false(sel_match(exists, "{}"));
    const char *dne = "{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"DoesNotExist\",\"values\":null}]}";
    assert_true(sel_match(dne, "{}"));
    assert_false(sel_match(dne, "{\"k\":\"v\"}"));
    const char *both = "{\"matchLabels\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}";
    assert_true(sel_match(both, "{\"a\":\"b\",\"k\":\"v\"}"));
    assert_false(sel_match(both, "{\"a\":\"b\"}"));
}

static void expect_bad(const char *sel_json, const char *want)
{
    json_t *sel = json_loads(sel_json, 0, NULL);
    assert_non_null(sel);
    kube_label_selector *s = (kube_label_selector *)1;
    olm_error err;
    assert_int_equal(kube_label_selector_parse(sel, &s, &err), -1);
    assert_null(s);
    if (strcmp(err.msg, want) != 0)
        fail_msg("got \"%s\", want \"%s\"", err.msg, want);
    json_decref(sel);
}

static void test_invalid(void **state)
{
    (void)state;
    expect_bad("[]", "a selector must be an object");
    expect_bad("{\"matchLabels\":[]}", "matchLabels must be an object and matchExpressions a list");
    expect_bad("{\"matchLabels\":{\"k\":1}}", "matchLabels[k] must be a string");
    expect_bad("{\"matchExpressions\":[{\"operator\":\"In\"}]}", "matchExpressions entries need a string key");
    expect_bad("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\",\"values\":\"x\"}]}",
               "values of key \"k\" must be a list");
    expect_bad("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\",\"values\":[1]}]}",
               "values of key \"k\" must be strings");
    expect_bad("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Like\",\"values\":[\"x\"]}]}",
               "\"Like\" is not a valid label selector operator");
    expect_bad("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\",\"values\":[]}]}",
               "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty");
    expect_bad("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
               "values: Invalid value: values set must be empty for exists and does not exist");
    expect_bad("{\"matchLabels\":{\"bad key!\":\"v\"}}",
               "key: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or "
               "'.', and must start and end with an alphanumeric character");
    expect_bad("{\"matchLabels\":{\"k\":\"-v\"}}",
               "values[0]: Invalid value: \"-v\": a valid label must be an empty string or consist of "
               "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
    expect_bad("{\"matchLabels\":{\"Upper.example/k\":\"v\"}}", "key: Invalid value: \"Upper.example/k\": name part "
               "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
               "alphanumeric character");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matching),
        cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
