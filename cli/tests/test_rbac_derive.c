/* Unit tests of rbac_derive: the installer ServiceAccount's least RBAC from rendered
 * objects.  A synthetic bundle pins the exact rules (named verbs, list/watch scope,
 * escalate/bind, the bundle's own CRD kinds, several namespaces); the argocd fixture of
 * the renderer goes through the real renderer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "rbac_derive.h"
#include "render.h"

static int builtin(void *ud, const char *av, const char *kind, kube_resource_info *out, olm_error *err)
{
    int *calls = ud;
    if (calls)
        (*calls)++;
    if (kube_builtin_kind(av, kind, out))
        return 0;
    return olm_error_set(err, "the server does not serve %s %s", av, kind);
}

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v)
        fail_msg("bad test JSON: %s", e.text);
    return v;
}

static void assert_same(const json_t *got, const char *want)
{
    json_t *w = parse(want);
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS), *ws = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS);
    if (strcmp(g, ws) != 0)
        fail_msg("got  %s\nwant %s", g, ws);
    free(g);
    free(ws);
    json_decref(w);
}

static const char *const OBJECTS =
    "["
    "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"op\",\"namespace\":\"inst\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cfg\"}},"
    "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"op-r\",\"namespace\":\"watched\"}},"
    "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"op-rb\",\"namespace\":\"watched\"},"
    " \"roleRef\":{\"kind\":\"Role\",\"name\":\"op-r\"}},"
    "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"view\",\"namespace\":\"inst\"},"
    " \"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"view\"}},"
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\",\"metadata\":{\"name\":\"widgets.example.com\"},"
    " \"spec\":{\"group\":\"example.com\",\"scope\":\"Cluster\",\"names\":{\"kind\":\"Widget\",\"plural\":\"widgets\"}}},"
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"default\"}},"
    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"ValidatingWebhookConfiguration\","
    " \"metadata\":{\"name\":\"vwh\",\"namespace\":\"inst\"}},"
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"op\",\"namespace\":\"inst\"}},"
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"op2\",\"namespace\":\"other\"}}"
    "]";

static void test_synthetic(void **state)
{
    (void)state;
    json_t *objs = parse(OBJECTS);
    rbac_plan p;
    olm_error err;
    int calls = 0;
    assert_int_equal(rbac_derive(objs, "inst", builtin, &calls, &p, &err), 0);
    assert_int_equal(calls, json_array_size(objs) - 1); /* the Widget came from the bundle's CRD */
    assert_same(p.cluster_rules,
                "["
                /* Deployments sit in two namespaces: watched cluster-wide. */
                "{\"apiGroups\":[\"admissionregistration.k8s.io\"],\"resources\":[\"validatingwebhookconfigurations\"],"
                " \"verbs\":[\"list\",\"watch\"]},"
                "{\"apiGroups\":[\"admissionregistration.k8s.io\"],\"resources\":[\"validatingwebhookconfigurations\"],"
                " \"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],\"resourceNames\":[\"vwh\"]},"
                "{\"apiGroups\":[\"apiextensions.k8s.io\"],\"resources\":[\"customresourcedefinitions\"],"
                " \"verbs\":[\"list\",\"watch\"]},"
                "{\"apiGroups\":[\"apiextensions.k8s.io\"],\"resources\":[\"customresourcedefinitions\"],"
                " \"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],\"resourceNames\":[\"widgets.example.com\"]},"
                "{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments\"],\"verbs\":[\"list\",\"watch\"]},"
                "{\"apiGroups\":[\"example.com\"],\"resources\":[\"widgets\"],\"verbs\":[\"list\",\"watch\"]},"
                "{\"apiGroups\":[\"example.com\"],\"resources\":[\"widgets\"],"
                " \"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],\"resourceNames\":[\"default\"]},"
                /* RoleBindings in inst and watched: watched cluster-wide too. */
                "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"rolebindings\"],\"verbs\":[\"list\",\"watch\"]}"
                "]");
    assert_same(p.ns_rules,
                "{\"inst\":["
                "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\",\"serviceaccounts\"],\"verbs\":[\"list\",\"watch\"]},"
                "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],"
                " \"resourceNames\":[\"cfg\"]},"
                "{\"apiGroups\":[\"\"],\"resources\":[\"serviceaccounts\"],\"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],"
                " \"resourceNames\":[\"op\"]},"
                "{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments\"],\"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],"
                " \"resourceNames\":[\"op\"]},"
                /* Binding the ClusterRole "view" in inst: bind on it, in that namespace. */
                "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"clusterroles\"],\"verbs\":[\"bind\"],"
                " \"resourceNames\":[\"view\"]},"
                "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"rolebindings\"],"
                " \"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],\"resourceNames\":[\"view\"]}"
                "],"
                "\"other\":["
                "{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments\"],\"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],"
                " \"resourceNames\":[\"op2\"]}"
                "],"
                "\"watched\":["
                "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"roles\"],\"verbs\":[\"list\",\"watch\"]},"
                "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"rolebindings\"],"
                " \"verbs\":[\"create\",\"delete\",\"get\",\"patch\"],\"resourceNames\":[\"op-rb\"]},"
                "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"roles\"],"
                " \"verbs\":[\"bind\",\"create\",\"delete\",\"escalate\",\"get\",\"patch\"],\"resourceNames\":[\"op-r\"]}"
                "]}");

    rbac_names n = {"ext", "inst", "ext-installer", "b.v1"};
    json_t *o = rbac_objects(&p, &n);
    assert_non_null(o);
    /* SA, ClusterRole + binding, then Role + RoleBinding for inst, other, watched. */
    assert_int_equal(json_array_size(o), 9);
    static const char *const kinds[] = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                                        "RoleBinding",    "Role",        "RoleBinding",        "Role", "RoleBinding"};
    for (size_t i = 0; i < 9; i++) {
        const json_t *x = json_array_get(o, i);
        assert_string_equal(json_string_value(json_object_get(x, "kind")), kinds[i]);
        const json_t *meta = json_object_get(x, "metadata");
        assert_string_equal(json_string_value(json_object_get(json_object_get(meta, "labels"), RBAC_LABEL)), "ext");
    }
    assert_same(json_array_get(o, 2),
                "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
                "\"metadata\":{\"name\":\"ext-installer\",\"labels\":{\"" RBAC_LABEL "\":\"ext\"},"
                "\"annotations\":{\"olmv1.operatorframework.io/derived-from-bundle\":\"b.v1\"}},"
                "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"ext-installer\"},"
                "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"ext-installer\",\"namespace\":\"inst\"}]}");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(o, 7), "metadata"), "namespace")),
                        "watched");
    json_decref(o);
    rbac_plan_free(&p);

    /* An unknown kind, a binding without roleRef, an object without a name. */
    json_t *bad = parse("[{\"apiVersion\":\"nope.example.com/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":\"x\"}}]");
    assert_int_equal(rbac_derive(bad, "inst", builtin, NULL, &p, &err), -1);
    assert_string_equal(err.msg, "the server does not serve nope.example.com/v1 Thing");
    json_decref(bad);
    bad = parse("[{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"x\"}}]");
    assert_int_equal(rbac_derive(bad, "inst", builtin, NULL, &p, &err), -1);
    assert_string_equal(err.msg, "RoleBinding x has no roleRef to a Role or ClusterRole");
    json_decref(bad);
    bad = parse("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{}}]");
    assert_int_equal(rbac_derive(bad, "inst", builtin, NULL, &p, &err), -1);
    json_decref(bad);
    json_decref(objs);
}

/* Does `rules` grant `verb` on group/resource/name (name NULL: the rule must not restrict names)? */
static bool grants(const json_t *rules, const char *group, const char *resource, const char *verb, const char *name)
{
    size_t i;
    const json_t *r;
    json_array_foreach(rules, i, r) {
        bool g = false, res = false, v = false, n = false;
        size_t k;
        const json_t *x;
        json_array_foreach(json_object_get(r, "apiGroups"), k, x) g = g || strcmp(json_string_value(x), group) == 0;
        json_array_foreach(json_object_get(r, "resources"), k, x) res = res || strcmp(json_string_value(x), resource) == 0;
        json_array_foreach(json_object_get(r, "verbs"), k, x) v = v || strcmp(json_string_value(x), verb) == 0;
        const json_t *names = json_object_get(r, "resourceNames");
        if (!name)
            n = !names;
        else
            json_array_foreach(names, k, x) n = n || strcmp(json_string_value(x), name) == 0;
        if (g && res && v && n)
            return true;
    }
    return false;
}

static void test_argocd_bundle(void **state)
{
    (void)state;
    char dir[1024];
    const char *src = getenv("OLMV1_SOURCE");
    snprintf(dir, sizeof dir, "%s/domain/render/tests/fixtures/bundles/argocd", src ? src : "../..");
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(dir, &b, &err), 0);
    json_t *objs = NULL;
    render_options ro = {"argocd", NULL, NULL, RENDER_CERT_OPENSHIFT_SERVICE_CA};
    assert_int_equal(render_bundle(&b, &ro, &objs, &err), 0);
    rbac_plan p;
    assert_int_equal(rbac_derive(objs, "argocd", builtin, NULL, &p, &err), 0);
    const json_t *ns = json_object_get(p.ns_rules, "argocd");
    assert_int_equal(json_object_size(p.ns_rules), 1);
    /* Every rendered object: its named verbs where it lives, and list/watch of its kind. */
    size_t i;
    const json_t *o;
    json_array_foreach(objs, i, o) {
        kube_resource_info ri;
        const char *av = json_string_value(json_object_get(o, "apiVersion"));
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        assert_true(kube_builtin_kind(av, kind, &ri));
        const json_t *rules = ri.namespaced ? ns : p.cluster_rules;
        static const char *const verbs[] = {"create", "delete", "get", "patch"};
        for (size_t k = 0; k < 4; k++)
            if (!grants(rules, ri.group, ri.resource, verbs[k], name))
                fail_msg("%s %s: no %s", kind, name, verbs[k]);
        assert_true(grants(rules, ri.group, ri.resource, "list", NULL));
        assert_true(grants(rules, ri.group, ri.resource, "watch", NULL));
        if (strcmp(kind, "ClusterRole") == 0)
            assert_true(grants(p.cluster_rules, ri.group, "clusterroles", "escalate", name));
        if (strcmp(kind, "ClusterRoleBinding") == 0) {
            const char *ref = json_string_value(json_object_get(json_object_get(o, "roleRef"), "name"));
            assert_true(grants(p.cluster_rules, ri.group, "clusterroles", "bind", ref));
        }
    }
    /* Nothing unnamed but list/watch, and no wildcard anywhere. */
    const json_t *sets[] = {p.cluster_rules, ns};
    for (size_t s = 0; s < 2; s++) {
        json_array_foreach(sets[s], i, o) {
            char *text = json_dumps(o, JSON_COMPACT);
            assert_null(strstr(text, "\"*\""));
            if (!json_object_get(o, "resourceNames"))
                assert_string_equal(strstr(text, "\"verbs\":"), "\"verbs\":[\"list\",\"watch\"]}");
            free(text);
        }
    }
    rbac_plan_free(&p);
    json_decref(objs);
    bundle_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_synthetic), cmocka_unit_test(test_argocd_bundle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
