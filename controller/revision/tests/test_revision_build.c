/* revision: a ClusterObjectSet revision built from rendered objects as upstream builds it
 * (applier/boxcutter.go, phase.go, secretpacker.go at df2c201), and revisions read back.
 *
 * Mutation checks (production line broken, test seen failing, line restored): listed in the
 * commit message of the change that added this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "olm_base64.h"
#include "revision.h"

static json_t *obj(const char *api, const char *kind, const char *ns, const char *name)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:{s:i}}", "apiVersion", api, "kind", kind,
                          "metadata", "name", name, "uid", "u-1", "creationTimestamp", "2020-01-01T00:00:00Z",
                          "labels", "app", name, "status", "x", 1);
    if (ns)
        json_object_set_new(json_object_get(o, "metadata"), "namespace", json_string(ns));
    return o;
}

static const revision_bundle BUNDLE = {.name = "test.1.2.0", .version = "1.2.0", .image = "reg/test:1.2.0",
                                       .package = "test", .properties = "[{\"type\":\"olm.test-property\",\"value\":\"v\"}]"};

static revision_input input(int64_t n)
{
    return (revision_input){.extension = "ext", .extension_uid = "uid-ce", .number = n,
                            .system_namespace = "olmv1-system", .progress_deadline_minutes = 0};
}

/* The inline object behind a phase entry's ref, decoded from its Secret. */
static json_t *deref(const revision_built *b, const json_t *entry)
{
    const json_t *ref = json_object_get(entry, "ref");
    assert_non_null(ref);
    const char *sname = json_string_value(json_object_get(ref, "name"));
    size_t i;
    json_t *s;
    json_array_foreach(b->secrets, i, s) {
        if (strcmp(json_string_value(json_object_get(json_object_get(s, "metadata"), "name")), sname) != 0)
            continue;
        const char *v = json_string_value(json_object_get(json_object_get(s, "data"),
                                                          json_string_value(json_object_get(ref, "key"))));
        assert_non_null(v);
        olm_error err;
        size_t n;
        char *raw = olm_base64_decode(v, strlen(v), 0, &n, &err);
        assert_non_null(raw);
        json_t *o = json_loadb(raw, n, 0, NULL);
        free(raw);
        assert_non_null(o);
        return o;
    }
    fail_msg("no Secret %s", sname);
    return NULL;
}

static json_t *bundle_objects(void)
{
    json_t *a = json_array();
    json_array_append_new(a, obj("apps/v1", "Deployment", "ns", "op"));
    json_array_append_new(a, obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", NULL, "widgets.example.com"));
    json_array_append_new(a, obj("v1", "ServiceAccount", "zz", "aa"));
    json_array_append_new(a, obj("v1", "ServiceAccount", "ns", "sa"));
    json_array_append_new(a, obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", NULL, "crb"));
    json_array_append_new(a, obj("rbac.authorization.k8s.io/v1", "ClusterRole", NULL, "cr-b"));
    json_array_append_new(a, obj("rbac.authorization.k8s.io/v1", "Role", "ns", "r"));
    json_array_append_new(a, obj("rbac.authorization.k8s.io/v1", "ClusterRole", NULL, "cr-a"));
    json_array_append_new(a, obj("v1", "ConfigMap", "ns", "cm"));
    json_array_append_new(a, obj("v1", "Service", "ns", "svc"));
    json_array_append_new(a, obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", NULL, "vwh"));
    json_array_append_new(a, obj("example.com/v1", "Widget", "ns", "w"));
    return a;
}

static void test_metadata_and_spec(void **state)
{
    (void)state;
    json_t *objs = bundle_objects();
    revision_input in = input(3);
    in.progress_deadline_minutes = 10;
    revision_built b;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    assert_string_equal(b.name, "ext-3");
    const json_t *m = json_object_get(b.cos, "metadata");
    assert_string_equal(json_string_value(json_object_get(m, "name")), "ext-3");
    assert_string_equal(json_string_value(json_object_get(b.cos, "apiVersion")), "olm.operatorframework.io/v1");
    assert_string_equal(json_string_value(json_object_get(b.cos, "kind")), "ClusterObjectSet");
    json_t *want_labels = json_pack("{s:s, s:s}", "olm.operatorframework.io/owner-kind", "ClusterExtension",
                                    "olm.operatorframework.io/owner-name", "ext");
    assert_true(json_equal(json_object_get(m, "labels"), want_labels));
    json_decref(want_labels);
    json_t *want_anns = json_pack("{s:s, s:s, s:s, s:s, s:s}", "olm.operatorframework.io/bundle-name", "test.1.2.0",
                                  "olm.operatorframework.io/package-name", "test",
                                  "olm.operatorframework.io/bundle-version", "1.2.0",
                                  "olm.operatorframework.io/bundle-reference", "reg/test:1.2.0", "olm.properties",
                                  "[{\"type\":\"olm.test-property\",\"value\":\"v\"}]");
    assert_true(json_equal(json_object_get(m, "annotations"), want_anns));
    json_decref(want_anns);
    json_t *want_owner = json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", "olm.operatorframework.io/v1",
                                   "kind", "ClusterExtension", "name", "ext", "uid", "uid-ce", "blockOwnerDeletion", 1,
                                   "controller", 1);
    assert_true(json_equal(json_object_get(m, "ownerReferences"), want_owner));
    json_decref(want_owner);
    const json_t *spec = json_object_get(b.cos, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "lifecycleState")), "Active");
    assert_int_equal(json_integer_value(json_object_get(spec, "revision")), 3);
    assert_string_equal(json_string_value(json_object_get(spec, "collisionProtection")), "Prevent");
    assert_int_equal(json_integer_value(json_object_get(spec, "progressDeadlineMinutes")), 10);
    const json_t *probes = json_object_get(spec, "progressionProbes");
    assert_int_equal(json_array_size(probes), 7);
    const json_t *dep = json_array_get(probes, 6);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(dep, "selector"), "groupKind"), "kind")),
                        "Deployment");
    assert_int_equal(json_array_size(json_object_get(dep, "assertions")), 2);
    revision_built_free(&b);

    /* A ServiceAccount: named on the revision for the ClusterObjectSet controller. */
    in.service_account = "installer";
    in.service_account_namespace = "ns";
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    m = json_object_get(b.cos, "metadata");
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "annotations"),
                                                          "olm.operatorframework.io/service-account-name")), "installer");
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "annotations"),
                                                          "olm.operatorframework.io/service-account-namespace")), "ns");
    revision_built_free(&b);
    in.service_account = NULL;

    /* No deadline on the extension: none on the revision. */
    in.progress_deadline_minutes = 0;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    assert_null(json_object_get(json_object_get(b.cos, "spec"), "progressDeadlineMinutes"));
    revision_built_free(&b);
    json_decref(objs);
}

static void test_phases_in_upstream_order(void **state)
{
    (void)state;
    json_t *objs = bundle_objects();
    revision_input in = input(1);
    revision_built b;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    const json_t *phases = json_object_get(json_object_get(b.cos, "spec"), "phases");
    static const char *const want[] = {"identity", "configuration", "crds", "roles", "bindings",
                                       "infrastructure", "deploy", "admission"};
    assert_int_equal(json_array_size(phases), 8);
    for (size_t i = 0; i < 8; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(phases, i), "name")), want[i]);
    /* roles: sorted by group, version, kind, namespace, name: ClusterRole cr-a, cr-b, then Role. */
    const json_t *roles = json_object_get(json_array_get(phases, 3), "objects");
    assert_int_equal(json_array_size(roles), 3);
    static const char *const names[] = {"cr-a", "cr-b", "r"};
    for (size_t i = 0; i < 3; i++) {
        json_t *o = deref(&b, json_array_get(roles, i));
        assert_string_equal(json_string_value(json_object_get(json_object_get(o, "metadata"), "name")), names[i]);
        json_decref(o);
    }
    /* identity: by namespace before name. */
    const json_t *ids = json_object_get(json_array_get(phases, 0), "objects");
    json_t *first = deref(&b, json_array_get(ids, 0));
    assert_string_equal(json_string_value(json_object_get(json_object_get(first, "metadata"), "namespace")), "ns");
    json_decref(first);
    /* deploy: the Deployment (apps) before the unknown Widget (example.com). */
    const json_t *deploy = json_object_get(json_array_get(phases, 6), "objects");
    assert_int_equal(json_array_size(deploy), 2);
    json_t *o = deref(&b, json_array_get(deploy, 0));
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "Deployment");
    json_decref(o);
    assert_string_equal(revision_phase_of("", "Namespace"), "namespaces");
    assert_string_equal(revision_phase_of("policy", "PodDisruptionBudget"), "policies");
    assert_string_equal(revision_phase_of("", "PersistentVolumeClaim"), "storage");
    assert_string_equal(revision_phase_of("monitoring.coreos.com", "ServiceMonitor"), "publish");
    assert_string_equal(revision_phase_of("autoscaling.k8s.io", "VerticalPodAutoscaler"), "scaling");
    assert_string_equal(revision_phase_of("apps", "StatefulSet"), "deploy");
    revision_built_free(&b);
    json_decref(objs);
}

static void test_objects_sanitized_and_labeled(void **state)
{
    (void)state;
    json_t *objs = json_array();
    json_t *cm = obj("v1", "ConfigMap", "ns", "cm");
    json_object_set_new(json_object_get(cm, "metadata"), "annotations",
                        json_pack("{s:s, s:s}", "kubectl.kubernetes.io/last-applied-configuration", "{}", "keep", "me"));
    json_array_append_new(objs, cm);
    revision_input in = input(1);
    revision_built b;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    json_t *o = deref(&b, json_array_get(json_object_get(json_array_get(json_object_get(json_object_get(b.cos, "spec"), "phases"), 0), "objects"), 0));
    json_t *want = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}}", "apiVersion", "v1",
                             "kind", "ConfigMap", "metadata", "name", "cm", "namespace", "ns", "labels", "app", "cm",
                             "olm.operatorframework.io/owner-kind", "ClusterExtension",
                             "olm.operatorframework.io/owner-name", "ext", "annotations", "keep", "me",
                             "olm.operatorframework.io/bundle-version", "1.2.0",
                             "olm.operatorframework.io/package-name", "test");
    char *got = json_dumps(o, JSON_SORT_KEYS);
    assert_true(json_equal(o, want) || (fprintf(stderr, "%s\n", got), 0));
    free(got);
    json_decref(want);
    json_decref(o);
    /* The caller's objects are left as they were. */
    assert_non_null(json_object_get(cm, "status"));
    revision_built_free(&b);
    json_decref(objs);
}

static void test_secrets_as_upstream_packs_them(void **state)
{
    (void)state;
    json_t *objs = json_array();
    json_t *a = obj("v1", "ConfigMap", "ns", "a");
    json_object_set_new(a, "data", json_pack("{s:s}", "html", "<b>&</b>"));
    json_array_append_new(objs, a);
    json_array_append_new(objs, obj("v1", "ConfigMap", "ns", "b"));
    revision_input in = input(2);
    revision_built b;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    assert_int_equal(json_array_size(b.secrets), 1);
    const json_t *s = json_array_get(b.secrets, 0);
    const json_t *sm = json_object_get(s, "metadata");
    const char *sname = json_string_value(json_object_get(sm, "name"));
    assert_int_equal(strlen(sname), strlen("ext-2-") + 16);
    assert_memory_equal(sname, "ext-2-", 6);
    assert_string_equal(json_string_value(json_object_get(sm, "namespace")), "olmv1-system");
    assert_string_equal(json_string_value(json_object_get(json_object_get(sm, "labels"), "olm.operatorframework.io/revision-name")), "ext-2");
    assert_string_equal(json_string_value(json_object_get(json_object_get(sm, "labels"), "olm.operatorframework.io/owner-name")), "ext");
    assert_true(json_is_true(json_object_get(s, "immutable")));
    assert_string_equal(json_string_value(json_object_get(s, "type")), "olm.operatorframework.io/object-data");
    assert_int_equal(json_object_size(json_object_get(s, "data")), 2);
    {
        /* secretNameFromData: SHA-256 over the keys, sorted, each followed by its value. */
        const char *k[2];
        size_t nk = 0;
        const char *kk;
        json_t *vv;
        json_object_foreach(json_object_get(s, "data"), kk, vv) k[nk++] = kk;
        if (strcmp(k[0], k[1]) > 0) {
            const char *t = k[0];
            k[0] = k[1];
            k[1] = t;
        }
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
        for (size_t i = 0; i < 2; i++) {
            const char *d = json_string_value(json_object_get(json_object_get(s, "data"), k[i]));
            size_t dn;
            char *raw = olm_base64_decode(d, strlen(d), 0, &dn, &err);
            EVP_DigestUpdate(ctx, k[i], strlen(k[i]));
            EVP_DigestUpdate(ctx, raw, dn);
            free(raw);
        }
        unsigned char md[32];
        unsigned mdn;
        EVP_DigestFinal_ex(ctx, md, &mdn);
        EVP_MD_CTX_free(ctx);
        char want[64];
        snprintf(want, sizeof want, "ext-2-%02x%02x%02x%02x%02x%02x%02x%02x", md[0], md[1], md[2], md[3], md[4], md[5],
                 md[6], md[7]);
        assert_string_equal(sname, want);
    }

    const json_t *entry = json_array_get(json_object_get(json_array_get(json_object_get(json_object_get(b.cos, "spec"), "phases"), 0), "objects"), 0);
    assert_null(json_object_get(entry, "object"));
    const json_t *ref = json_object_get(entry, "ref");
    assert_string_equal(json_string_value(json_object_get(ref, "name")), sname);
    assert_string_equal(json_string_value(json_object_get(ref, "namespace")), "olmv1-system");
    /* The key is base64url(SHA-256) of the stored bytes, which are encoding/json's. */
    const char *key = json_string_value(json_object_get(ref, "key"));
    assert_int_equal(strlen(key), 43);
    const char *v = json_string_value(json_object_get(json_object_get(s, "data"), key));
    size_t n;
    char *raw = olm_base64_decode(v, strlen(v), 0, &n, &err);
    assert_non_null(strstr(raw, "\"html\":\"\\u003cb\\u003e\\u0026\\u003c/b\\u003e\""));
    assert_null(strchr(raw, ' '));
    assert_true(strstr(raw, "\"apiVersion\"") < strstr(raw, "\"kind\"")); /* keys sorted */
    unsigned char md[32];
    unsigned mdlen;
    EVP_Digest(raw, n, md, &mdlen, EVP_sha256(), NULL);
    char *b64 = olm_base64_encode(md, mdlen, NULL, &err);
    for (char *p = b64; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    b64[43] = '\0';
    assert_string_equal(key, b64);
    free(b64);
    free(raw);

    /* The same content builds the same Secret name; other content another. */
    revision_built b2;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b2, &err), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(b2.secrets, 0), "metadata"), "name")), sname);
    assert_true(revision_unchanged(b.cos, b2.cos));
    revision_built_free(&b2);
    revision_bundle other = BUNDLE;
    other.version = "1.2.1";
    assert_int_equal(revision_build(&in, &other, objs, &b2, &err), 0);
    assert_string_not_equal(json_string_value(json_object_get(json_object_get(json_array_get(b2.secrets, 0), "metadata"), "name")), sname);
    /* A new version with identical objects is new content (the bundle-version annotation). */
    assert_false(revision_unchanged(b.cos, b2.cos));
    revision_built_free(&b2);
    revision_built_free(&b);
    json_decref(objs);
}

static void test_duplicate_content_one_entry(void **state)
{
    (void)state;
    json_t *objs = json_array();
    json_array_append_new(objs, obj("v1", "ConfigMap", "ns", "a"));
    json_array_append_new(objs, obj("v1", "ConfigMap", "ns", "a"));
    revision_input in = input(1);
    revision_built b;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    assert_int_equal(json_object_size(json_object_get(json_array_get(b.secrets, 0), "data")), 1);
    const json_t *objects = json_object_get(json_array_get(json_object_get(json_object_get(b.cos, "spec"), "phases"), 0), "objects");
    assert_int_equal(json_array_size(objects), 2);
    assert_true(json_equal(json_object_get(json_array_get(objects, 0), "ref"), json_object_get(json_array_get(objects, 1), "ref")));
    revision_built_free(&b);
    json_decref(objs);
}

static json_t *big_configmap(const char *name, size_t size, bool random)
{
    char *data = malloc(size + 1);
    unsigned x = 12345;
    for (size_t i = 0; i < size; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = random ? "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[(x >> 16) % 62] : 'x';
    }
    data[size] = '\0';
    json_t *o = obj("v1", "ConfigMap", "ns", name);
    json_object_set_new(o, "data", json_pack("{s:s}", "k", data));
    free(data);
    return o;
}

static void test_large_objects(void **state)
{
    (void)state;
    olm_error err;
    revision_input in = input(1);
    revision_built b;
    /* Larger than 900 KiB but compressible: stored gzip'd. */
    json_t *objs = json_array();
    json_array_append_new(objs, big_configmap("big", 1000 * 1024, false));
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    const json_t *data = json_object_get(json_array_get(b.secrets, 0), "data");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)data, key, v) {
        size_t n;
        unsigned char *raw = (unsigned char *)olm_base64_decode(json_string_value(v), strlen(json_string_value(v)), 0, &n, &err);
        assert_true(n < 900 * 1024);
        assert_int_equal(raw[0], 0x1f);
        assert_int_equal(raw[1], 0x8b);
        free(raw);
    }
    revision_built_free(&b);
    json_decref(objs);
    /* Two that do not fit one Secret together: two Secrets. */
    objs = json_array();
    json_array_append_new(objs, big_configmap("one", 600 * 1024, true));
    json_array_append_new(objs, big_configmap("two", 600 * 1024, true));
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    assert_int_equal(json_array_size(b.secrets), 2);
    revision_built_free(&b);
    json_decref(objs);
    /* One that stays too large compressed: refused with upstream's words. */
    objs = json_array();
    json_array_append_new(objs, big_configmap("huge", 1400 * 1024, true));
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), -1);
    assert_non_null(strstr(err.msg, "object in phase 0 index 0 exceeds maximum Secret data size"));
    assert_non_null(strstr(err.msg, "even after compression"));
    assert_null(b.cos);
    json_decref(objs);
}

static void test_migrated_revision(void **state)
{
    (void)state;
    json_t *objs = bundle_objects();
    revision_input in = input(1);
    in.migrated = true;
    revision_built b, p;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(b.cos, "spec"), "collisionProtection")), "None");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(b.cos, "metadata"), "labels"),
                                                          "olm.operatorframework.io/migrated-from-helm")), "true");
    /* The next revision of the same content is Prevent: not the same revision (upstream makes revision 2). */
    in.migrated = false;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &p, &err), 0);
    assert_false(revision_unchanged(b.cos, p.cos));
    /* An archived revision is never the current one. */
    json_object_set_new(json_object_get(p.cos, "spec"), "lifecycleState", json_string("Archived"));
    revision_built q;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &q, &err), 0);
    assert_false(revision_unchanged(p.cos, q.cos));
    revision_built_free(&q);
    revision_built_free(&p);
    revision_built_free(&b);
    json_decref(objs);
}

static json_t *cos_obj(const char *name, int n, const char *state, const char *succeeded)
{
    json_t *o = json_pack("{s:{s:s, s:{s:s, s:s}}, s:{s:i, s:s}, s:{s:[]}}", "metadata", "name", name, "annotations",
                          "olm.operatorframework.io/bundle-name", name, "olm.operatorframework.io/bundle-version", "1",
                          "spec", "revision", n, "lifecycleState", state, "status", "conditions");
    if (succeeded)
        json_array_append_new(json_object_get(json_object_get(o, "status"), "conditions"),
                              json_pack("{s:s, s:s}", "type", "Succeeded", "status", succeeded));
    return o;
}

static void test_revision_states(void **state)
{
    (void)state;
    json_t *items = json_array();
    json_array_append_new(items, cos_obj("e-3", 3, "Active", NULL));
    json_array_append_new(items, cos_obj("e-1", 1, "Archived", "True"));
    json_array_append_new(items, cos_obj("e-4", 4, "Active", "False"));
    json_array_append_new(items, cos_obj("e-2", 2, "Active", "True"));
    revision_info *infos;
    size_t n;
    assert_int_equal(revision_infos(items, &infos, &n), 0);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(infos[i].number, (int64_t)i + 1);
    assert_true(infos[0].archived);
    assert_string_equal(infos[1].bundle_name, "e-2");
    ssize_t installed;
    size_t rolling[4], nrolling;
    revision_states(infos, n, &installed, rolling, &nrolling);
    assert_int_equal(installed, 1);
    assert_int_equal(nrolling, 2);
    assert_string_equal(infos[rolling[0]].name, "e-3");
    assert_string_equal(infos[rolling[1]].name, "e-4");
    free(infos);
    json_decref(items);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metadata_and_spec),
        cmocka_unit_test(test_phases_in_upstream_order),
        cmocka_unit_test(test_objects_sanitized_and_labeled),
        cmocka_unit_test(test_secrets_as_upstream_packs_them),
        cmocka_unit_test(test_duplicate_content_one_entry),
        cmocka_unit_test(test_large_objects),
        cmocka_unit_test(test_migrated_revision),
        cmocka_unit_test(test_revision_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
