/* Tests for the CRD upgrade-safety preflight (crdify's checks as configured by
 * operator-controller, olmv1-behaviour.md §6.3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdsafety.h"

#define PREFIX "validating upgrade for CRD \"crontabs.stable.example.com\": "

/* A CRD whose versions are given as JSON text; each version comes from ver(). */
static json_t *crd(const char *scope, const char *versions, const char *stored, const char *conversion)
{
    char *text = NULL;
    int n = asprintf(&text,
                     "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                     "\"metadata\":{\"name\":\"crontabs.stable.example.com\"},"
                     "\"spec\":{\"group\":\"stable.example.com\",\"scope\":\"%s\",\"versions\":[%s]%s%s},"
                     "\"status\":{\"storedVersions\":[%s]}}",
                     scope, versions, conversion ? ",\"conversion\":" : "", conversion ? conversion : "", stored);
    assert_true(n > 0);
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j)
        fail_msg("bad test JSON: %s: %s", jerr.text, text);
    free(text);
    return j;
}

/* One served version whose spec has the given properties (JSON object text). */
static char *ver(const char *name, const char *spec_props)
{
    char *s = NULL;
    assert_true(asprintf(&s,
                         "{\"name\":\"%s\",\"served\":true,\"storage\":false,\"schema\":{\"openAPIV3Schema\":"
                         "{\"type\":\"object\",\"properties\":{\"spec\":%s}}}}",
                         name, spec_props) > 0);
    return s;
}

/* Runs the check on single-version (v1) CRDs built from two spec schemas. */
static char *run1(const char *old_spec, const char *new_spec)
{
    char *a = ver("v1", old_spec), *b = ver("v1", new_spec);
    json_t *o = crd("Namespaced", a, "\"v1\"", NULL), *n = crd("Namespaced", b, "\"v1\"", NULL);
    char *report = NULL;
    olm_error err;
    assert_int_equal(crdsafety_report(o, n, &report, &err), 0);
    /* The olm_error form agrees with the report. */
    int rc = crdsafety_check(o, n, &err);
    assert_int_equal(rc, report ? -1 : 0);
    if (report)
        assert_true(strncmp(err.msg, report, sizeof(err.msg) - 1) == 0);
    json_decref(o);
    json_decref(n);
    free(a);
    free(b);
    return report;
}

static void expect1(const char *old_spec, const char *new_spec, const char *want)
{
    char *got = run1(old_spec, new_spec);
    if (!want) {
        if (got)
            fail_msg("unexpected failure: %s", got);
        return;
    }
    if (!got)
        fail_msg("expected failure: %s", want);
    assert_string_equal(got, want);
    free(got);
}

#define FOO(schema) "{\"type\":\"object\",\"properties\":{\"foo\":" schema "}}"

static void test_safe_upgrade(void **state)
{
    (void)state;
    /* new optional field, enum addition, description change, identical schema */
    expect1(FOO("{\"type\":\"string\",\"enum\":[\"a\"],\"description\":\"old\"}"),
            "{\"type\":\"object\",\"properties\":{\"foo\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"],"
            "\"description\":\"new\"},\"bar\":{\"type\":\"integer\"}}}",
            NULL);
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"string\"}"), NULL);
    /* Go semantics: null, absent and false are the same for plain fields */
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"string\",\"nullable\":false,\"format\":null}"), NULL);
    /* loosening bounds is safe */
    expect1(FOO("{\"type\":\"integer\",\"maximum\":5,\"minimum\":2}"),
            FOO("{\"type\":\"integer\",\"maximum\":10,\"minimum\":1}"), NULL);
    /* unknown keys are dropped by the Go decoder */
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"string\",\"x-unknown\":1}"), NULL);
}

static void test_existing_field_removal(void **state)
{
    (void)state;
    expect1(FOO("{\"type\":\"string\"}"), "{\"type\":\"object\"}",
            PREFIX "existingFieldRemoval: removed field : v1.^.spec.foo\n"
                   "v1: ^.spec.foo: type: type changed : \"string\" -> \"\"");
}

static void test_scope_and_stored_versions(void **state)
{
    (void)state;
    char *v1a = ver("v1alpha1", FOO("{\"type\":\"string\"}")), *v1 = ver("v1", FOO("{\"type\":\"string\"}"));
    char *both = NULL;
    assert_true(asprintf(&both, "%s,%s", v1a, v1) > 0);
    json_t *o = crd("Namespaced", both, "\"v1alpha1\",\"v1\"", NULL);
    json_t *n = crd("Cluster", v1, "\"v1\"", NULL);
    olm_error err;
    assert_int_equal(crdsafety_check(o, n, &err), -1);
    assert_string_equal(err.msg, PREFIX "scope: scope changed : \"Namespaced\" -> \"Cluster\"\n"
                                        "storedVersionRemoval: stored versions removed : [v1alpha1]");
    json_decref(o);
    json_decref(n);
    free(v1a);
    free(v1);
    free(both);
}

static void test_default(void **state)
{
    (void)state;
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"string\",\"default\":\"a\"}"),
            PREFIX "v1: ^.spec.foo: default: default added when there was none previously : \"\\\"a\\\"\"");
    expect1(FOO("{\"type\":\"string\",\"default\":\"a\"}"), FOO("{\"type\":\"string\",\"default\":\"b\"}"),
            PREFIX "v1: ^.spec.foo: default: default value changed : \"\\\"a\\\"\" -> \"\\\"b\\\"\"");
    expect1(FOO("{\"type\":\"integer\",\"default\":5}"), FOO("{\"type\":\"integer\"}"),
            PREFIX "v1: ^.spec.foo: default: default value removed : \"5\"");
    /* raw bytes as encoding/json writes them: sorted keys, compact */
    expect1(FOO("{\"type\":\"object\",\"default\":{\"b\":1,\"a\":1.5}}"),
            FOO("{\"type\":\"object\",\"default\":{\"a\":1.5,  \"b\":1}}"), NULL);
}

static void test_enum(void **state)
{
    (void)state;
    expect1(FOO("{\"type\":\"string\",\"enum\":[\"a\",\"c\",\"b\"]}"), FOO("{\"type\":\"string\",\"enum\":[\"a\"]}"),
            PREFIX "v1: ^.spec.foo: enum: allowed enum values removed : [\"b\" \"c\"]");
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"string\",\"enum\":[\"y\",\"x\"]}"),
            PREFIX "v1: ^.spec.foo: enum: enum constraint added when there was none previously : [\"x\" \"y\"]");
}

static void test_bounds(void **state)
{
    (void)state;
    expect1(FOO("{\"type\":\"integer\"}"), FOO("{\"type\":\"integer\",\"maximum\":10}"),
            PREFIX "v1: ^.spec.foo: maximum: maximum constraint added when there was none previously : 10");
    expect1(FOO("{\"type\":\"number\",\"maximum\":1.5}"), FOO("{\"type\":\"number\",\"maximum\":0.1}"),
            PREFIX "v1: ^.spec.foo: maximum: maximum decreased : 1.5 -> 0.1");
    expect1(FOO("{\"type\":\"number\",\"maximum\":2000000}"), FOO("{\"type\":\"number\",\"maximum\":1000000}"),
            PREFIX "v1: ^.spec.foo: maximum: maximum decreased : 2e+06 -> 1e+06");
    expect1(FOO("{\"type\":\"integer\",\"minimum\":1}"), FOO("{\"type\":\"integer\",\"minimum\":2}"),
            PREFIX "v1: ^.spec.foo: minimum: minimum increased : 1 -> 2");
    expect1(FOO("{\"type\":\"integer\"}"), FOO("{\"type\":\"integer\",\"minimum\":0}"),
            PREFIX "v1: ^.spec.foo: minimum: minimum constraint added when there was none previously : 0");
    expect1(FOO("{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":5,\"minItems\":1}"),
            FOO("{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":4,\"minItems\":2}"),
            PREFIX "v1: ^.spec.foo: maxItems: maximum decreased : 5 -> 4\n"
                   "v1: ^.spec.foo: minItems: minimum increased : 1 -> 2");
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"string\",\"maxLength\":63,\"minLength\":1}"),
            PREFIX "v1: ^.spec.foo: maxLength: maximum constraint added when there was none previously : 63\n"
                   "v1: ^.spec.foo: minLength: minimum constraint added when there was none previously : 1");
    expect1(FOO("{\"type\":\"object\",\"maxProperties\":3,\"minProperties\":1}"),
            FOO("{\"type\":\"object\",\"maxProperties\":2,\"minProperties\":2}"),
            PREFIX "v1: ^.spec.foo: maxProperties: maximum decreased : 3 -> 2\n"
                   "v1: ^.spec.foo: minProperties: minimum increased : 1 -> 2");
}

static void test_required_and_type(void **state)
{
    (void)state;
    expect1("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{\"type\":\"string\"}}}",
            "{\"type\":\"object\",\"required\":[\"b\",\"a\"],\"properties\":{\"a\":{\"type\":\"string\"},"
            "\"b\":{\"type\":\"string\"}}}",
            PREFIX "v1: ^.spec: required: new required fields: [a b]");
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"integer\"}"),
            PREFIX "v1: ^.spec.foo: type: type changed : \"string\" -> \"integer\"");
    /* nested paths: array items */
    expect1(FOO("{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}}"),
            FOO("{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"a\"]}}"),
            PREFIX "v1: ^.spec.foo.items: enum: allowed enum values removed : [\"b\"]");
}

static void test_unhandled(void **state)
{
    (void)state;
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"string\",\"format\":\"email\"}"),
            PREFIX "v1: ^.spec.foo: unhandled: unhandled changes found (Format \"\" -> \"email\")");
    expect1(FOO("{\"type\":\"string\",\"pattern\":\"^a$\"}"),
            FOO("{\"type\":\"string\",\"pattern\":\"^b$\",\"nullable\":true}"),
            PREFIX "v1: ^.spec.foo: unhandled: unhandled changes found (Pattern \"^a$\" -> \"^b$\"; "
                   "Nullable false -> true)");
    expect1(FOO("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"),
            FOO("{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"x-kubernetes-list-type\":\"set\"}"),
            PREFIX "v1: ^.spec.foo: unhandled: unhandled changes found (XListType nil -> &\"set\")");
    expect1(FOO("{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}"),
            FOO("{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":false}"),
            PREFIX "v1: ^.spec.foo: unhandled: unhandled changes found "
                   "(XPreserveUnknownFields &true -> &false)");
    /* structured changes give no one-line detail, as in operator-controller */
    expect1(FOO("{\"type\":\"string\"}"),
            FOO("{\"type\":\"string\",\"x-kubernetes-validations\":[{\"rule\":\"self != ''\"}]}"),
            PREFIX "v1: ^.spec.foo: unhandled: unhandled changes found");
    /* handled and unhandled changes on one property: comparators first */
    expect1(FOO("{\"type\":\"string\"}"), FOO("{\"type\":\"integer\",\"multipleOf\":2}"),
            PREFIX "v1: ^.spec.foo: type: type changed : \"string\" -> \"integer\"\n"
                   "v1: ^.spec.foo: unhandled: unhandled changes found (MultipleOf nil -> &2)");
}

/* Two served versions v1, v2 with the given spec schemas. */
static json_t *two(const char *v1spec, const char *v2spec, const char *conversion)
{
    char *a = ver("v1", v1spec), *b = ver("v2", v2spec), *both = NULL;
    assert_true(asprintf(&both, "%s,%s", b, a) > 0); /* listed out of order on purpose */
    json_t *c = crd("Namespaced", both, "\"v1\"", conversion);
    free(a);
    free(b);
    free(both);
    return c;
}

#define ENUM3 FOO("{\"type\":\"string\",\"enum\":[\"a\",\"b\",\"c\"]}")
#define ENUM2 FOO("{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}")

static void test_served_versions(void **state)
{
    (void)state;
    json_t *o = two(ENUM3, ENUM3, NULL), *n = two(ENUM3, ENUM2, NULL);
    olm_error err;
    assert_int_equal(crdsafety_check(o, n, &err), -1);
    assert_string_equal(err.msg, PREFIX "v2: ^.spec.foo: enum: allowed enum values removed : [\"c\"]\n"
                                        "v1 -> v2: ^.spec.foo: enum: allowed enum values removed : [\"c\"]");
    json_decref(n);

    /* conversion webhook: served-version comparisons are skipped (policy Ignore) */
    n = two(ENUM3, ENUM2, "{\"strategy\":\"Webhook\",\"webhook\":{\"conversionReviewVersions\":[\"v1\"]}}");
    assert_int_equal(crdsafety_check(o, n, &err), -1);
    assert_string_equal(err.msg, PREFIX "v2: ^.spec.foo: enum: allowed enum values removed : [\"c\"]");
    json_decref(n);
    json_decref(o);

    /* the same served-version issue in the existing CRD is not reported again */
    o = two(ENUM3, ENUM2, NULL);
    n = two(ENUM3, ENUM2, NULL);
    assert_int_equal(crdsafety_check(o, n, &err), 0);
    json_decref(n);

    /* ... but a new one is */
    n = two("{\"type\":\"object\",\"properties\":{\"foo\":{\"type\":\"string\",\"enum\":[\"a\",\"b\",\"c\"]},"
            "\"extra\":{\"type\":\"boolean\"}}}",
            "{\"type\":\"object\",\"properties\":{\"foo\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]},"
            "\"extra\":{\"type\":\"string\"}}}",
            NULL);
    assert_int_equal(crdsafety_check(o, n, &err), -1);
    assert_string_equal(err.msg, PREFIX "v1 -> v2: ^.spec.extra: type: type changed : \"boolean\" -> \"string\"");
    json_decref(n);
    json_decref(o);
}

static void test_kube_aware_version_order(void **state)
{
    (void)state;
    char *v1 = ver("v1", ENUM3), *v1b = ver("v1beta1", ENUM3), *v1a = ver("v1alpha1", ENUM3), *all = NULL;
    assert_true(asprintf(&all, "%s,%s,%s", v1, v1a, v1b) > 0);
    json_t *o = crd("Namespaced", all, "\"v1\"", NULL);
    free(all);
    char *n1 = ver("v1", ENUM2);
    assert_true(asprintf(&all, "%s,%s,%s", n1, v1a, v1b) > 0);
    json_t *n = crd("Namespaced", all, "\"v1\"", NULL);
    olm_error err;
    assert_int_equal(crdsafety_check(o, n, &err), -1);
    assert_string_equal(err.msg, PREFIX "v1: ^.spec.foo: enum: allowed enum values removed : [\"c\"]\n"
                                        "v1alpha1 -> v1: ^.spec.foo: enum: allowed enum values removed : [\"c\"]\n"
                                        "v1beta1 -> v1: ^.spec.foo: enum: allowed enum values removed : [\"c\"]");
    json_decref(o);
    json_decref(n);
    free(all);
    free(v1);
    free(v1a);
    free(v1b);
    free(n1);
}

static void test_long_report_is_whole(void **state)
{
    (void)state;
    /* 200 removed fields exceed olm_error's buffer; the report keeps them all */
    char *props = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&props, &len);
    assert_non_null(f);
    fputs("{\"type\":\"object\",\"properties\":{", f);
    for (int i = 0; i < 200; i++)
        fprintf(f, "%s\"field%03d\":{\"type\":\"string\"}", i ? "," : "", i);
    fputs("}}", f);
    fclose(f);
    char *got = run1(props, "{\"type\":\"object\"}");
    assert_non_null(got);
    assert_non_null(strstr(got, "existingFieldRemoval: removed field : v1.^.spec.field199\n"));
    assert_non_null(strstr(got, "v1: ^.spec.field199: type: type changed : \"string\" -> \"\""));
    free(got);
    free(props);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_safe_upgrade),
        cmocka_unit_test(test_existing_field_removal),
        cmocka_unit_test(test_scope_and_stored_versions),
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_enum),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_required_and_type),
        cmocka_unit_test(test_unhandled),
        cmocka_unit_test(test_served_versions),
        cmocka_unit_test(test_kube_aware_version_order),
        cmocka_unit_test(test_long_report_is_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
