/* crdsafety internals: the pieces the preflight's messages are made of (crdsafety_internal.h),
 * white-box: the Go formatting (%q, %v of a float64, encoding/json bytes), the kube-aware
 * version order, the flattening of a schema into crdify's "simple locations", the message
 * list, and crdsafety_compare_versions on changes that are safe (relaxations report nothing)
 * or that only its label and path order can show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdsafety_internal.h"

static json_t *J(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad JSON in test: %s: %s", je.text, text);
    return v;
}

/* ------------------------------------------------------------ Go formatting */

static const char *quoted(const char *s)
{
    static char out[256];
    strbuf sb = STRBUF_INIT;
    assert_int_equal(crdsafety_go_quote(&sb, s), 0);
    snprintf(out, sizeof out, "%s", strbuf_str(&sb));
    strbuf_free(&sb);
    return out;
}

static void test_go_quote(void **state)
{
    (void)state;
    assert_string_equal(quoted("plain"), "\"plain\"");
    assert_string_equal(quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_string_equal(quoted("\n\t\r"), "\"\\n\\t\\r\"");
    assert_string_equal(quoted("\x01\x7f"), "\"\\x01\\x7f\"");
    assert_string_equal(quoted(""), "\"\"");
    /* Only ASCII is escaped: this preflight's messages always copied UTF-8 through. */
    assert_string_equal(quoted("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

static const char *go_float(double v)
{
    static char out[64];
    strbuf sb = STRBUF_INIT;
    assert_int_equal(crdsafety_go_float(&sb, v), 0);
    snprintf(out, sizeof out, "%s", strbuf_str(&sb));
    strbuf_free(&sb);
    return out;
}

static void test_go_float(void **state)
{
    (void)state;
    /* strconv.FormatFloat(v, 'g', -1, 64): the exponent form from 1e6 (six digits) on. */
    assert_string_equal(go_float(100), "100");
    assert_string_equal(go_float(123456), "123456");
    assert_string_equal(go_float(2e6), "2e+06");
    assert_string_equal(go_float(1234567), "1.234567e+06");
    assert_string_equal(go_float(1.5), "1.5");
    assert_string_equal(go_float(-0.25), "-0.25");
    assert_string_equal(go_float(0.0001), "0.0001");
    assert_string_equal(go_float(0.00001), "1e-05");
    assert_string_equal(go_float(1e21), "1e+21");
}

static void test_raw_json(void **state)
{
    (void)state;
    json_t *v = J("{\"b\":1,\"a\":\"<&>\",\"d\":1.50,\"c\":-0.0,\"e\":[true,null,{\"z\":1,\"y\":2}]}");
    char *raw = crdsafety_raw_json(v);
    /* encoding/json: keys sorted at every level, HTML escaped, a negative zero as 0. */
    assert_string_equal(raw, "{\"a\":\"\\u003c\\u0026\\u003e\",\"b\":1,\"c\":0,\"d\":1.5,"
                             "\"e\":[true,null,{\"y\":2,\"z\":1}]}");
    free(raw);
    json_decref(v);
    v = J("\"x\"");
    raw = crdsafety_raw_json(v);
    assert_string_equal(raw, "\"x\"");
    free(raw);
    json_decref(v);
}

/* ------------------------------------------------------------ version order */

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

static void test_kube_version_order(void **state)
{
    (void)state;
    /* k8s' order, highest first: GA by major, then beta, then alpha, then the rest. */
    static const char *const order[] = {"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1",
                                        "v12alpha1", "v11alpha2", "foo1", "foo10"};
    size_t n = sizeof order / sizeof order[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int want = i < j ? 1 : i > j ? -1 : 0;
            if (sign(crdsafety_kube_version_cmp(order[i], order[j])) != want)
                fail_msg("cmp(%s, %s) = %d, want sign %d", order[i], order[j],
                         crdsafety_kube_version_cmp(order[i], order[j]), want);
        }
    /* Not kube-like: "v1alpha", "v1beta", "v1gamma1", "1". */
    assert_true(crdsafety_kube_version_cmp("v1alpha1", "v1alpha") > 0);
    assert_true(crdsafety_kube_version_cmp("v1beta1", "v1gamma1") > 0);
    assert_true(crdsafety_kube_version_cmp("v1", "1") > 0);
}

/* ------------------------------------------------------------ schemas */

static void test_flatten_names_every_sub_schema(void **state)
{
    (void)state;
    json_t *s = J("{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"string\"},"
                  "\"a\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
                  "\"additionalProperties\":{\"type\":\"string\"},\"allOf\":[{\"required\":[\"a\"]},{}],"
                  "\"patternProperties\":{\"^x\":{}},\"not\":{\"type\":\"null\"},"
                  "\"definitions\":{\"d\":{}},\"dependencies\":{\"a\":{}},\"additionalItems\":{},"
                  "\"anyOf\":[{}],\"oneOf\":[{}]}");
    json_t *flat = crdsafety_flatten(s);
    assert_non_null(flat);
    static const char *const want[] = {"^", "^.a", "^.a.items", "^.additionalItems", "^.additionalProperties",
                                       "^.allOf[0]", "^.allOf[1]", "^.anyOf[0]", "^.b",
                                       "^.definitions[d]", "^.dependencies[a]", "^.not", "^.oneOf[0]",
                                       "^.patternProperties[^x]"};
    size_t n;
    const char **keys = crdsafety_sorted_keys(flat, &n);
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(keys[i], want[i]);
    free(keys);
    /* Each path holds the sub-schema itself (borrowed from the CRD). */
    assert_ptr_equal(json_object_get(flat, "^.b"), json_object_get(json_object_get(s, "properties"), "b"));
    json_decref(flat);
    json_decref(s);
}

static void test_flatten_tuple_items_and_nothing(void **state)
{
    (void)state;
    json_t *s = J("{\"type\":\"array\",\"items\":[{\"type\":\"string\"},{\"type\":\"integer\"}],"
                  "\"properties\":{\"skip\":\"not a schema\"}}");
    json_t *flat = crdsafety_flatten(s);
    assert_int_equal(json_object_size(flat), 3);
    assert_non_null(json_object_get(flat, "^.items[0]"));
    assert_non_null(json_object_get(flat, "^.items[1]"));
    assert_null(json_object_get(flat, "^.skip")); /* a property that is no schema is no path */
    json_decref(flat);
    json_decref(s);
    flat = crdsafety_flatten(NULL); /* a version without a schema */
    assert_int_equal(json_object_size(flat), 0);
    json_decref(flat);
}

static void test_versions_and_schemas(void **state)
{
    (void)state;
    json_t *crd = J("{\"spec\":{\"versions\":[{\"name\":\"v1\",\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\"}}},"
                    "{\"name\":\"v2\",\"schema\":{\"openAPIV3Schema\":\"bad\"}},{\"name\":\"v3\"}]}}");
    const json_t *v1 = crdsafety_crd_version(crd, "v1");
    assert_non_null(v1);
    assert_string_equal(json_string_value(json_object_get(crdsafety_version_schema(v1), "type")), "object");
    assert_null(crdsafety_version_schema(crdsafety_crd_version(crd, "v2"))); /* not an object */
    assert_null(crdsafety_version_schema(crdsafety_crd_version(crd, "v3")));
    assert_null(crdsafety_crd_version(crd, "v4"));
    json_decref(crd);
}

static void test_sorted_keys(void **state)
{
    (void)state;
    json_t *o = J("{\"b\":1,\"B\":2,\"a\":3,\"ab\":4}");
    size_t n;
    const char **keys = crdsafety_sorted_keys(o, &n);
    assert_int_equal(n, 4);
    /* bytewise, as Go sorts strings: upper case first */
    assert_string_equal(keys[0], "B");
    assert_string_equal(keys[1], "a");
    assert_string_equal(keys[2], "ab");
    assert_string_equal(keys[3], "b");
    free(keys);
    json_decref(o);
    o = json_object();
    assert_null(crdsafety_sorted_keys(o, &n));
    assert_int_equal(n, 0);
    json_decref(o);
}

/* ------------------------------------------------------------ the message list */

static void test_list(void **state)
{
    (void)state;
    crdsafety_list l = {0};
    for (int i = 0; i < 20; i++) /* past the first growth */
        assert_int_equal(crdsafety_list_addf(&l, "line %02d", 19 - i), 0);
    assert_int_equal(l.n, 20);
    assert_true(crdsafety_list_has(&l, "line 07"));
    assert_false(crdsafety_list_has(&l, "line 7"));
    assert_int_equal(crdsafety_list_take(&l, NULL), -1); /* what an out-of-memory string gives */
    assert_int_equal(l.n, 20);
    crdsafety_strv_sort((const char **)l.v, l.n);
    assert_string_equal(l.v[0], "line 00");
    assert_string_equal(l.v[19], "line 19");
    crdsafety_list_free(&l);
    assert_null(l.v);
    assert_int_equal(l.n, 0);
}

/* ------------------------------------------------------------ compare_versions */

static json_t *version(const char *spec)
{
    char *text = NULL;
    assert_true(asprintf(&text, "{\"name\":\"v1\",\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
                                "\"properties\":{\"spec\":%s}}}}", spec) > 0);
    json_t *v = J(text);
    free(text);
    return v;
}

/* The lines for old -> new, joined with "|" ("" when none). */
static const char *compare(const char *old_spec, const char *new_spec, const char *label)
{
    static char out[2048];
    json_t *a = version(old_spec), *b = version(new_spec);
    crdsafety_list l = {0};
    assert_int_equal(crdsafety_compare_versions(a, b, label, &l), 0);
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l.n; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", i ? "|" : "", l.v[i]);
    crdsafety_list_free(&l);
    json_decref(a);
    json_decref(b);
    return out;
}

static void test_relaxations_are_safe(void **state)
{
    (void)state;
    assert_string_equal(compare("{\"type\":\"integer\",\"maximum\":5,\"minimum\":2}",
                                "{\"type\":\"integer\",\"maximum\":9,\"minimum\":1}", "v1"), "");
    assert_string_equal(compare("{\"type\":\"string\",\"enum\":[\"a\"]}", "{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}",
                                "v1"), "");
    assert_string_equal(compare("{\"type\":\"object\",\"required\":[\"a\"],\"properties\":{\"a\":{\"type\":\"string\"}}}",
                                "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}", "v1"), "");
    /* A new optional property, and only a description changed: nothing. */
    assert_string_equal(compare("{\"type\":\"object\"}",
                                "{\"type\":\"object\",\"description\":\"now documented\","
                                "\"properties\":{\"n\":{\"type\":\"string\"}}}", "v1"), "");
}

/* crdify compares enum sets: dropping the constraint altogether removes its values too. */
static void test_dropped_enum_counts_as_values_removed(void **state)
{
    (void)state;
    assert_string_equal(compare("{\"type\":\"string\",\"enum\":[\"b\",\"a\"]}", "{\"type\":\"string\"}", "v1"),
                        "v1: ^.spec: enum: allowed enum values removed : [\"a\" \"b\"]");
}

static void test_lines_carry_the_label_in_path_order(void **state)
{
    (void)state;
    assert_string_equal(compare("{\"type\":\"object\",\"properties\":{\"z\":{\"type\":\"string\"},"
                                "\"a\":{\"type\":\"integer\",\"maximum\":3}}}",
                                "{\"type\":\"object\",\"properties\":{\"z\":{\"type\":\"integer\"},"
                                "\"a\":{\"type\":\"integer\",\"maximum\":2}}}", "v1 -> v2"),
                        "v1 -> v2: ^.spec.a: maximum: maximum decreased : 3 -> 2|"
                        "v1 -> v2: ^.spec.z: type: type changed : \"string\" -> \"integer\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_quote),
        cmocka_unit_test(test_go_float),
        cmocka_unit_test(test_raw_json),
        cmocka_unit_test(test_kube_version_order),
        cmocka_unit_test(test_flatten_names_every_sub_schema),
        cmocka_unit_test(test_flatten_tuple_items_and_nothing),
        cmocka_unit_test(test_versions_and_schemas),
        cmocka_unit_test(test_sorted_keys),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_relaxations_are_safe),
        cmocka_unit_test(test_dropped_enum_counts_as_values_removed),
        cmocka_unit_test(test_lines_carry_the_label_in_path_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
