/* install_record: Secret name, record.json and Secret round trips, malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install_record.h"

static const char *props = "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":4.10},"
                           "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"argocd\",\"version\":\"0.6.0\"}}]";

static install_object_ref refs[] = {
    {"apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "argocds.argoproj.io", 0},
    {"v1", "ServiceAccount", "argocd", "argocd-operator-controller-manager", 0},
    {"apps/v1", "Deployment", "argocd", "argocd-operator-controller-manager", 0xfedcba9876543210u},
};

static install_record sample(void)
{
    install_record r = {
        .extension = "argocd",
        .bundle_name = "argocd-operator.v0.6.0",
        .bundle_version = "0.6.0",
        .bundle_image = "quay.io/operatorhubio/argocd-operator@sha256:1234",
        .package = "argocd-operator",
        .properties = (char *)props,
        .objects = refs,
        .nobjects = sizeof refs / sizeof refs[0],
        .installed_at = "2025-01-02T03:04:05Z",
    };
    return r;
}

static void assert_same(const install_record *a, const install_record *b)
{
    assert_string_equal(a->extension, b->extension);
    assert_string_equal(a->bundle_name, b->bundle_name);
    assert_string_equal(a->bundle_version, b->bundle_version);
    assert_string_equal(a->bundle_image, b->bundle_image);
    assert_string_equal(a->package, b->package);
    assert_string_equal(a->properties, b->properties);
    assert_string_equal(a->installed_at, b->installed_at);
    assert_int_equal(a->nobjects, b->nobjects);
    for (size_t i = 0; i < a->nobjects; i++) {
        assert_string_equal(a->objects[i].api_version, b->objects[i].api_version);
        assert_string_equal(a->objects[i].kind, b->objects[i].kind);
        assert_string_equal(a->objects[i].namespace_, b->objects[i].namespace_);
        assert_string_equal(a->objects[i].name, b->objects[i].name);
        assert_true(a->objects[i].content_hash == b->objects[i].content_hash);
    }
}

static void test_secret_name(void **state)
{
    (void)state;
    char *n = install_record_secret_name("argocd");
    assert_string_equal(n, "olmv1-install-argocd");
    free(n);

    /* 253 - 14 = 239 characters still fit as they are. */
    char fits[240];
    memset(fits, 'a', 239);
    fits[239] = '\0';
    n = install_record_secret_name(fits);
    assert_int_equal(strlen(n), 253);
    assert_memory_equal(n + 14, fits, 239);
    free(n);

    /* Longer: hashed, at most 253, unique, no '.' or '-' before the hash. */
    char longname[254];
    memset(longname, 'b', 253);
    longname[253] = '\0';
    longname[221] = '.'; /* lands right at the cut: must be trimmed */
    char *h1 = install_record_secret_name(longname);
    assert_non_null(h1);
    assert_true(strlen(h1) <= 253);
    assert_true(strncmp(h1, "olmv1-install-", 14) == 0);
    assert_null(strstr(h1, ".-"));
    longname[252] = 'c';
    char *h2 = install_record_secret_name(longname);
    assert_string_not_equal(h1, h2);
    /* Deterministic. */
    char *h3 = install_record_secret_name(longname);
    assert_string_equal(h2, h3);
    free(h1);
    free(h2);
    free(h3);
    assert_null(install_record_secret_name(NULL));
}

static void test_json_round_trip_keeps_properties_text(void **state)
{
    (void)state;
    install_record r = sample();
    char *text = install_record_to_json(&r);
    assert_non_null(text);
    /* The properties are a JSON string holding the text: 4.10 stays 4.10. */
    assert_non_null(strstr(text, "\\\"value\\\":4.10}"));
    install_record back;
    olm_error err = {""};
    assert_int_equal(install_record_from_json(text, strlen(text), &back, &err), 0);
    assert_same(&r, &back);
    assert_string_equal(back.properties, props);
    /* And the text of a second round is identical. */
    char *again = install_record_to_json(&back);
    assert_string_equal(again, text);
    free(again);
    free(text);
    install_record_free(&back);
    assert_null(back.extension); /* free zeroes */
}

static void test_secret_round_trip(void **state)
{
    (void)state;
    install_record r = sample();
    json_t *s = install_record_to_secret(&r, "olmv1-system");
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "kind")), "Secret");
    assert_string_equal(json_string_value(json_object_get(s, "type")), INSTALL_RECORD_TYPE);
    const json_t *md = json_object_get(s, "metadata");
    assert_string_equal(json_string_value(json_object_get(md, "name")), "olmv1-install-argocd");
    assert_string_equal(json_string_value(json_object_get(md, "namespace")), "olmv1-system");
    const json_t *labels = json_object_get(md, "labels");
    assert_string_equal(json_string_value(json_object_get(labels, OWNER_KIND_LABEL)), "ClusterExtension");
    assert_string_equal(json_string_value(json_object_get(labels, OWNER_NAME_LABEL)), "argocd");
    assert_string_equal(json_string_value(json_object_get(labels, INSTALL_RECORD_LABEL)), "true");
    const char *b64 = json_string_value(json_object_get(json_object_get(s, "data"), "record.json"));
    assert_non_null(b64);
    assert_null(strchr(b64, '\n')); /* Secret data: one line */

    install_record back;
    olm_error err = {""};
    assert_int_equal(install_record_from_secret(s, &back, &err), 0);
    assert_same(&r, &back);
    install_record_free(&back);
    json_decref(s);

    /* Every padding length decodes (record lengths 3n, 3n+1, 3n+2). */
    for (int extra = 0; extra < 3; extra++) {
        char ext[8] = "abc";
        memset(ext + 3, 'x', (size_t)extra);
        ext[3 + extra] = '\0';
        install_record e = sample();
        e.extension = ext;
        s = install_record_to_secret(&e, "ns");
        assert_int_equal(install_record_from_secret(s, &back, &err), 0);
        assert_string_equal(back.extension, ext);
        install_record_free(&back);
        json_decref(s);
    }
}

static void test_minimal_record_defaults(void **state)
{
    (void)state;
    const char *text = "{\"extension\":\"e\",\"bundle\":{\"name\":\"b.v1\",\"version\":\"1.0.0\"}}";
    install_record r;
    olm_error err = {""};
    assert_int_equal(install_record_from_json(text, strlen(text), &r, &err), 0);
    assert_string_equal(r.properties, "[]");
    assert_string_equal(r.bundle_image, "");
    assert_string_equal(r.package, "");
    assert_string_equal(r.installed_at, "");
    assert_int_equal(r.nobjects, 0);
    assert_false(r.pending); /* a record without "pending" is an installed bundle */
    install_record_free(&r);

    /* Cluster-scoped objects may omit the namespace. */
    text = "{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},"
           "\"objects\":[{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"name\":\"cr\"}]}";
    assert_int_equal(install_record_from_json(text, strlen(text), &r, &err), 0);
    assert_int_equal(r.nobjects, 1);
    assert_string_equal(r.objects[0].namespace_, "");
    install_record_free(&r);
}

/* A pending record (a failed first install's objects, nothing installed) keeps the flag
 * through the codec; an installed one writes no "pending" at all. */
static void test_pending_round_trip(void **state)
{
    (void)state;
    install_object_ref obj = {"v1", "ConfigMap", "ns", "cm", 0};
    install_record in = {.extension = "e", .bundle_name = "b.v1", .bundle_version = "1.0.0", .bundle_image = "img",
                         .package = "p", .properties = "[]", .objects = &obj, .nobjects = 1, .installed_at = "",
                         .pending = true};
    olm_error err = {""};
    install_record back;
    for (int pending = 1; pending >= 0; pending--) {
        in.pending = pending;
        char *text = install_record_to_json(&in);
        assert_non_null(text);
        assert_true((strstr(text, "\"pending\":true") != NULL) == pending);
        assert_null(strstr(text, "\"pending\":false"));
        assert_int_equal(install_record_from_json(text, strlen(text), &back, &err), 0);
        assert_int_equal(back.pending, pending);
        assert_int_equal(back.nobjects, 1);
        install_record_free(&back);
        free(text);
    }
}

static void expect_error(const char *text, const char *want)
{
    install_record r;
    olm_error err = {""};
    assert_int_equal(install_record_from_json(text, strlen(text), &r, &err), -1);
    if (!strstr(err.msg, want))
        fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
    assert_null(r.extension); /* nothing half-filled is handed out */
    assert_null(r.objects);
}

static void test_malformed_records(void **state)
{
    (void)state;
    expect_error("{", "install record: not valid JSON");
    expect_error("[]", "install record: bundle is missing");
    expect_error("{\"extension\":\"e\",\"bundle\":[]}", "bundle is not an object");
    expect_error("{\"bundle\":{\"name\":\"b\",\"version\":\"1\"}}", "install record: extension is missing");
    expect_error("{\"extension\":\"\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"}}", "extension is empty");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"version\":\"1\"}}", "bundle.name is missing");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":1}}", "bundle.version is not a string");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"pending\":\"yes\"}",
                 "pending is not a boolean");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"properties\":[]}",
                 "properties is not a string");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"properties\":\"[1,\"}",
                 "properties is not valid JSON");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"properties\":\"{}\"}",
                 "properties is not a JSON array");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"objects\":{}}",
                 "objects is not an array");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"objects\":["
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"namespace\":\"n\",\"name\":\"a\"},"
                 "{\"apiVersion\":\"v1\",\"namespace\":\"n\",\"name\":\"b\"}]}",
                 "objects[1].kind is missing");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"objects\":[3]}",
                 "objects[0] is not an object");
    expect_error("{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},\"objects\":["
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"namespace\":7,\"name\":\"a\"}]}",
                 "objects[0].namespace is not a string");
}

static void test_malformed_secrets(void **state)
{
    (void)state;
    install_record r;
    olm_error err = {""};
    json_t *s = json_pack("{s:{s:s}, s:{}}", "metadata", "name", "olmv1-install-x", "data");
    assert_int_equal(install_record_from_secret(s, &r, &err), -1);
    assert_string_equal(err.msg, "install record Secret 'olmv1-install-x' has no data \"record.json\"");
    json_object_set_new(json_object_get(s, "data"), "record.json", json_string("not*base64"));
    assert_int_equal(install_record_from_secret(s, &r, &err), -1);
    assert_non_null(strstr(err.msg, "is not valid base64"));
    json_object_set_new(json_object_get(s, "data"), "record.json", json_string("e30=")); /* "{}" */
    assert_int_equal(install_record_from_secret(s, &r, &err), -1);
    assert_string_equal(err.msg, "install record Secret 'olmv1-install-x': install record: bundle is missing");
    json_decref(s);
}

/* The content hash survives a round trip as 16 hex digits, is left out when unknown, and
 * anything but 1 to 16 hex digits is refused (the record decides what is skipped). */
static void test_content_hash(void **state)
{
    (void)state;
    install_record r = sample();
    char *text = install_record_to_json(&r);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"contentHash\":\"fedcba9876543210\""));
    assert_null(strstr(strstr(text, "contentHash") + 1, "contentHash")); /* only the one known */
    free(text);
    const char *ok = "{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},"
                     "\"objects\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"c\",\"contentHash\":\"0A\"},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"d\"}]}";
    install_record got;
    olm_error err = {""};
    assert_int_equal(install_record_from_json(ok, strlen(ok), &got, &err), 0);
    assert_true(got.objects[0].content_hash == 10);
    assert_true(got.objects[1].content_hash == 0);
    install_record_free(&got);
    static const char *const bad[] = {"\"\"", "\"-1\"", "\"0x1\"", "\"12345678901234567\"", "\"zz\"", "7"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"extension\":\"e\",\"bundle\":{\"name\":\"b\",\"version\":\"1\"},"
                 "\"objects\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"c\",\"contentHash\":%s}]}",
                 bad[i]);
        assert_int_equal(install_record_from_json(doc, strlen(doc), &got, &err), -1);
        assert_non_null(strstr(err.msg, "objects[0].contentHash is not 1 to 16 hex digits"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_name),
        cmocka_unit_test(test_json_round_trip_keeps_properties_text),
        cmocka_unit_test(test_secret_round_trip),
        cmocka_unit_test(test_minimal_record_defaults),
        cmocka_unit_test(test_pending_round_trip),
        cmocka_unit_test(test_malformed_records),
        cmocka_unit_test(test_malformed_secrets),
        cmocka_unit_test(test_content_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
