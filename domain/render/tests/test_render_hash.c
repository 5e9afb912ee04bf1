/* DeepHash, the Go json.Encoder flavour it uses (gocompat) and ObjectNameForBaseAndSuffix.
 * The argocd vectors are the object names in upstream's regression corpus
 * (test/regression/convert/testdata/expected-manifests/argocd-operator.v0.6.0);
 * the others were computed independently in Python (json.dumps compact with Go's
 * HTML escaping, hashlib.sha224, base 36). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"
#include "render.h"

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad JSON in test: %s", e.text);
    return v;
}

static void expect_hash(const char *json, const char *want)
{
    olm_error err;
    char got[RENDER_HASH_MAX];
    json_t *v = load(json);
    assert_int_equal(render_deep_hash(v, got, &err), 0);
    assert_string_equal(got, want);
    json_decref(v);
}

static void test_argocd_permission_vectors(void **state)
{
    (void)state;
    /* The permission entry in Go field order. */
    const char *perm = "{\"serviceAccountName\":\"argocd-operator-controller-manager\",\"rules\":["
                       "{\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"update\",\"patch\",\"delete\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"]},"
                       "{\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"update\",\"patch\",\"delete\"],\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"]},"
                       "{\"verbs\":[\"create\",\"patch\"],\"apiGroups\":[\"\"],\"resources\":[\"events\"]}]}";
    expect_hash(perm, "22gmilmgp91wu25is5i2ec598hni8owq3l71bbkl7iz3");
}

static void test_normalise_reorders_and_promotes(void **state)
{
    (void)state;
    olm_error err;
    /* CSV field order and extra fields do not matter: the Go struct order does. */
    json_t *csv_perm = load("{\"rules\":["
                            "{\"resources\":[\"configmaps\"],\"apiGroups\":[\"\"],\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"update\",\"patch\",\"delete\"],\"x\":1},"
                            "{\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"],\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"update\",\"patch\",\"delete\"],\"resourceNames\":[]},"
                            "{\"apiGroups\":[\"\"],\"resources\":[\"events\"],\"verbs\":[\"create\",\"patch\"]}],"
                            "\"serviceAccountName\":\"argocd-operator-controller-manager\"}");
    char got[RENDER_HASH_MAX];
    json_t *n = render_permission_normalise(csv_perm, NULL, &err);
    assert_non_null(n);
    assert_int_equal(render_deep_hash(n, got, &err), 0);
    assert_string_equal(got, "22gmilmgp91wu25is5i2ec598hni8owq3l71bbkl7iz3");
    json_decref(n);
    json_t *ns_rule = load("{\"verbs\":[\"get\",\"list\",\"watch\"],\"apiGroups\":[\"\"],\"resources\":[\"namespaces\"]}");
    n = render_permission_normalise(csv_perm, ns_rule, &err);
    assert_non_null(n);
    assert_int_equal(render_deep_hash(n, got, &err), 0);
    assert_string_equal(got, "3gkm3u8zfarktdile5wekso69zs9bgzb988mhjm0y6p");
    char *name = render_object_name("argocd-operator.v0.6.0-argocd-operator-controller-manager", got);
    assert_string_equal(name, "argocd-operator.v0.-3gkm3u8zfarktdile5wekso69zs9bgzb988mhjm0y6p");
    free(name);
    json_decref(n);
    json_decref(ns_rule);
    json_decref(csv_perm);
}

static void test_verbs_null_and_escaping(void **state)
{
    (void)state;
    olm_error err;
    json_t *perm = load("{\"serviceAccountName\":\"a<b>&c\\u2028\\n\\\"\\\\\\u0001\\b\\f\","
                        "\"rules\":[{\"nonResourceURLs\":[\"/x\"],\"apiGroups\":[]}]}");
    json_t *n = render_permission_normalise(perm, NULL, &err);
    assert_non_null(n);
    strbuf sb = STRBUF_INIT;
    assert_int_equal(gocompat_json_encode(&sb, n, GOCOMPAT_JSON_ESCAPE_HTML), 0);
    assert_string_equal(strbuf_str(&sb),
                        "{\"serviceAccountName\":\"a\\u003cb\\u003e\\u0026c\\u2028\\n\\\"\\\\\\u0001\\b\\f\","
                        "\"rules\":[{\"verbs\":null,\"nonResourceURLs\":[\"/x\"]}]}");
    strbuf_free(&sb);
    char got[RENDER_HASH_MAX];
    assert_int_equal(render_deep_hash(n, got, &err), 0);
    assert_string_equal(got, "29iboamyx666p3jtd0h5rwctc2bgispk6ouf3vit27zf");
    json_decref(n);
    json_decref(perm);
}

static void test_other_vectors(void **state)
{
    (void)state;
    expect_hash("{}", "16jfjhihxbzhfhs1k5mimq740kvioi98pfbea9q6qtf9");
    expect_hash("null", "2im0kl1kwvzn46sr4cdtkvmdzrlurvj51xdzhwdht8l0");
    expect_hash("\"x\"", "2obekcjk1o40mopmnluffrznwl02q2oqld3tuxwsgh17");
}

static void test_sorted_encoding_and_numbers(void **state)
{
    (void)state;
    json_t *v = load("{\"b\":1.0,\"a\":[1.5,1e21,-0.0,3],\"c\":true}");
    strbuf sb = STRBUF_INIT;
    assert_int_equal(gocompat_json_encode(&sb, v, GOCOMPAT_JSON_SORT_KEYS), 0);
    assert_string_equal(strbuf_str(&sb), "{\"a\":[1.5,1e+21,-0,3],\"b\":1,\"c\":true}");
    strbuf_free(&sb);
    json_decref(v);
}

static void test_object_name(void **state)
{
    (void)state;
    char *n = render_object_name("short", "suffix");
    assert_string_equal(n, "short-suffix");
    free(n);
    /* len(base)+len(suffix) == 63 is not cut (the result is 64 bytes, as upstream). */
    char base[64];
    memset(base, 'a', 56);
    base[56] = '\0';
    n = render_object_name(base, "service");
    assert_int_equal(strlen(n), 64);
    free(n);
    memset(base, 'a', 57);
    base[57] = '\0';
    n = render_object_name(base, "service");
    assert_int_equal(strlen(n), 63);
    assert_string_equal(n + 55, "-service");
    free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argocd_permission_vectors),
        cmocka_unit_test(test_normalise_reorders_and_promotes),
        cmocka_unit_test(test_verbs_null_and_escaping),
        cmocka_unit_test(test_other_vectors),
        cmocka_unit_test(test_sorted_encoding_and_numbers),
        cmocka_unit_test(test_object_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
