/* applier: ordering, labels, conflict and ownership rules, prune and uninstall order,
 * against the shared in-memory apiserver (testsupport/fake_apiserver.h).
 * The real apiserver is exercised by applier_live_check.c (e2e/tests/test_applier.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applier.h"
#include "fake_apiserver.h"
#include "applier_internal.h"
#include "helm_release.h"
#include "kube_object.h"

/* ------------------------------------------------------------ pure helpers */

static json_t *J(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad JSON in test: %s: %s", je.text, text);
    return v;
}

static const char *content_json =
    "[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\","
    "\"labels\":{\"app\":\"d\"},\"resourceVersion\":\"5\",\"uid\":\"u\"},\"spec\":{},\"status\":{\"replicas\":1}},"
    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"ValidatingWebhookConfiguration\","
    "\"metadata\":{\"name\":\"vwh\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}},"
    "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"crb\"}},"
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\",\"metadata\":{\"name\":\"ws.x.io\"},"
    "\"spec\":{\"group\":\"x.io\",\"names\":{\"kind\":\"W\"}}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"svc\",\"namespace\":\"ns\"}},"
    "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"cr\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"sa\",\"namespace\":\"ns\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}]";

static void test_set_order_labels_and_stripping(void **state)
{
    (void)state;
    json_t *objs = J(content_json);
    applier_set set;
    olm_error err = {""};
    assert_int_equal(applier_set_build("ext", objs, &set, &err), 0);
    static const char *const kinds[] = {"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole",
                                        "ClusterRoleBinding", "ConfigMap", "Service", "Deployment",
                                        "ValidatingWebhookConfiguration"};
    assert_int_equal(set.n, 9);
    for (size_t i = 0; i < set.n; i++)
        assert_string_equal(set.v[i].kind, kinds[i]);
    const applier_obj *d = &set.v[7];
    const json_t *md = json_object_get(d->obj, "metadata");
    const json_t *labels = json_object_get(md, "labels");
    assert_string_equal(json_string_value(json_object_get(labels, "app")), "d"); /* kept */
    assert_string_equal(json_string_value(json_object_get(labels, OWNER_KIND_LABEL)), "ClusterExtension");
    assert_string_equal(json_string_value(json_object_get(labels, OWNER_NAME_LABEL)), "ext");
    assert_null(json_object_get(md, "resourceVersion"));
    assert_null(json_object_get(md, "uid"));
    assert_null(json_object_get(d->obj, "status"));
    assert_string_equal(set.v[0].ns, ""); /* no namespace given */
    /* The input is borrowed and untouched. */
    assert_null(json_object_get(json_object_get(json_object_get(json_array_get(objs, 0), "metadata"), "labels"),
                                OWNER_NAME_LABEL));
    applier_set_free(&set);

    /* Equal phases keep the rendered order. */
    json_t *two = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"z\",\"namespace\":\"n\"}},"
                    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}]");
    assert_int_equal(applier_set_build("ext", two, &set, &err), 0);
    assert_string_equal(set.v[0].name, "z");
    applier_set_free(&set);
    json_decref(two);

    json_t *bad = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{}}]");
    assert_int_equal(applier_set_build("ext", bad, &set, &err), -1);
    assert_string_equal(err.msg, "rendered object #0 has no apiVersion, kind or metadata.name");
    json_decref(bad);
    assert_int_equal(applier_set_build("ext", objs, &set, &err), 0);
    applier_set_free(&set);
    assert_int_equal(applier_set_build("ext", json_object_get(json_array_get(objs, 0), "metadata"), &set, &err), -1);
    json_decref(objs);
}

static void test_identity_and_ownership(void **state)
{
    (void)state;
    olm_error err = {""};
    applier_conflict(&err, "ConfigMap", "ns", "cm");
    assert_string_equal(err.msg, "ConfigMap 'cm' already exists in namespace 'ns' and cannot be managed by operator-controller");
    applier_conflict(&err, "ClusterRole", "", "cr");
    assert_string_equal(err.msg, "ClusterRole 'cr' already exists and cannot be managed by operator-controller");

    /* The version does not make a different object; the group does. */
    assert_true(applier_same_object("apps/v1", "Deployment", "n", "d", "apps/v1beta1", "Deployment", "n", "d"));
    assert_false(applier_same_object("apps/v1", "Deployment", "n", "d", "x.io/v1", "Deployment", "n", "d"));
    assert_false(applier_same_object("v1", "ConfigMap", "n", "d", "v1", "ConfigMap", "m", "d"));
    assert_true(applier_same_object("v1", "ConfigMap", "n", "d", "v1", "ConfigMap", "n", "d"));

    json_t *ours = J("{\"metadata\":{\"labels\":{\"olm.operatorframework.io/owner-kind\":\"ClusterExtension\","
                     "\"olm.operatorframework.io/owner-name\":\"ext\"}}}");
    json_t *other = J("{\"metadata\":{\"labels\":{\"olm.operatorframework.io/owner-name\":\"other\"}}}");
    json_t *otherkind = J("{\"metadata\":{\"labels\":{\"olm.operatorframework.io/owner-kind\":\"Something\","
                          "\"olm.operatorframework.io/owner-name\":\"ext\"}}}");
    json_t *none = J("{\"metadata\":{\"labels\":{\"app\":\"x\"}}}");
    assert_int_equal(applier_owner_of(ours, "ext"), OWNER_OURS);
    assert_int_equal(applier_owner_of(other, "ext"), OWNER_OTHER);
    assert_int_equal(applier_owner_of(otherkind, "ext"), OWNER_OTHER);
    assert_int_equal(applier_owner_of(none, "ext"), OWNER_UNLABELLED);
    json_decref(ours);
    json_decref(other);
    json_decref(otherkind);
    json_decref(none);
}

/* ------------------------------------------------------------ the cluster: testsupport's fake apiserver */

/* What the fake answers when an identity is refused, in the apiserver's words. */
#define FORBID_PATCH_DEPLOYMENTS "deployments.apps \"d\" is forbidden: User \"sa\" cannot patch resource \"deployments\""
#define FORBID_DELETE "configmaps is forbidden: User \"sa\" cannot delete resource"
#define FORBID_GET_SA "configmaps \"cm\" is forbidden: User \"sa\" cannot get resource \"configmaps\""
#define FORBID_GET_ADMIN "configmaps \"cm\" is forbidden: User \"admin\" cannot get resource \"configmaps\""

struct fx {
    fake_apiserver *api;
    kube_client *admin, *sa;
    applier_ctx ctx;
};

static kube_client *client(const char *url, const char *token)
{
    kube_config cfg = {0};
    cfg.server = strdup(url);
    cfg.token = strdup(token);
    olm_error err = {""};
    kube_client_options o = {.connect_timeout_ms = 2000, .timeout_ms = 5000};
    kube_client *c = kube_client_new(&cfg, &o, &err);
    assert_non_null(c);
    return c;
}

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->api = fake_apiserver_start();
    assert_non_null(f->api);
    f->admin = client(fake_apiserver_url(f->api), "admin");
    f->sa = client(fake_apiserver_url(f->api), "sa");
    f->ctx = (applier_ctx){.admin = f->admin, .as_sa = f->sa, .system_namespace = "sys", .extension = "ext"};
    fake_apiserver_put(f->api, "/api/v1/namespaces/sys", J("{\"metadata\":{\"name\":\"sys\"}}"));
    fake_apiserver_put(f->api, "/api/v1/namespaces/ns", J("{\"metadata\":{\"name\":\"ns\"},\"status\":{\"phase\":\"Active\"}}"));
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    kube_client_free(f->admin);
    kube_client_free(f->sa);
    fake_apiserver_stop(f->api);
    free(f);
    return 0;
}

static const applier_bundle bundle = {"b.v1", "1.0.0", "img:1", "pkg", "[{\"type\":\"x\",\"value\":4.10}]"};

/* The i-th request that was not a GET starts with `want`. */
static void assert_log_prefix(fake_apiserver *api, size_t i, const char *want)
{
    const char *have = fake_apiserver_write_at(api, i);
    assert_non_null(have);
    if (strncmp(have, want, strlen(want)) != 0)
        fail_msg("request %zu is \"%s\", want \"%s...\"", i, have, want);
}

static void test_apply_order_record_prune_uninstall(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *objs = J("[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"}},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}},"
                     "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                     "\"metadata\":{\"name\":\"ws.x.io\"}},"
                     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"cr\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    assert_log_prefix(f->api, 0, "PATCH /apis/apiextensions.k8s.io/v1/customresourcedefinitions/ws.x.io?fieldManager=olm.operatorframework.io&force=true");
    assert_log_prefix(f->api, 1, "PATCH /apis/rbac.authorization.k8s.io/v1/clusterroles/cr?");
    assert_log_prefix(f->api, 2, "PATCH /api/v1/namespaces/ns/configmaps/cm?");
    assert_log_prefix(f->api, 3, "PATCH /apis/apps/v1/namespaces/ns/deployments/d?");
    /* Upstream's record first (a failure leaves ours unwritten, so the retry writes both). */
    assert_log_prefix(f->api, 4, "POST /api/v1/namespaces/sys/secrets");
    assert_log_prefix(f->api, 5, "POST /api/v1/namespaces/sys/secrets");
    assert_int_equal(fake_apiserver_nwrites(f->api), 6);
    json_t *h = fake_apiserver_object(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v1");
    assert_non_null(h);
    assert_string_equal(json_string_value(json_object_get(h, "type")), "operatorframework.io/index.v1");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(h, "metadata"), "labels"), "status")),
                        "deployed");
    assert_int_equal(rec.nobjects, 4);
    assert_string_equal(rec.objects[1].namespace_, "");
    assert_string_equal(rec.objects[2].namespace_, "ns");
    assert_string_equal(rec.properties, bundle.properties);
    /* Applied objects carry the owner labels. */
    json_t *i = fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/cm");
    assert_non_null(i);
    assert_int_equal(applier_owner_of(i, "ext"), OWNER_OURS);

    /* Same bundle again: no record write. */
    fake_apiserver_log_clear(f->api);
    install_record again;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, &rec, &again, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 4);
    install_record_free(&again);

    /* Upgrade without the ConfigMap and the ClusterRole; the ClusterRole was handed to
     * another extension meanwhile, so only the ConfigMap is pruned. */
    i = fake_apiserver_object(f->api, "/apis/rbac.authorization.k8s.io/v1/clusterroles/cr");
    json_object_set_new(json_object_get(json_object_get(i, "metadata"), "labels"), OWNER_NAME_LABEL,
                        json_string("other"));
    json_array_remove(objs, 3);
    json_array_remove(objs, 1);
    applier_bundle b2 = bundle;
    b2.version = "2.0.0";
    fake_apiserver_log_clear(f->api);
    install_record rec2;
    assert_int_equal(applier_apply(&f->ctx, &b2, objs, &rec, &rec2, &err), 0);
    assert_log_prefix(f->api, 2, "DELETE /api/v1/namespaces/ns/configmaps/cm");
    assert_log_prefix(f->api, 3, "PUT /api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v1"); /* in place */
    assert_log_prefix(f->api, 4, "PUT /api/v1/namespaces/sys/secrets/olmv1-install-ext");
    assert_int_equal(fake_apiserver_nwrites(f->api), 5);
    assert_non_null(fake_apiserver_object(f->api, "/apis/rbac.authorization.k8s.io/v1/clusterroles/cr"));
    assert_int_equal(rec2.nobjects, 2);

    /* read_record gives the new record back. */
    install_record got;
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 1);
    assert_string_equal(got.bundle_version, "2.0.0");
    install_record_free(&got);

    /* Uninstall: reverse record order, then the record. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_uninstall(&f->ctx, &rec2, &err), 0);
    assert_log_prefix(f->api, 0, "DELETE /apis/apps/v1/namespaces/ns/deployments/d");
    assert_log_prefix(f->api, 1, "DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/ws.x.io");
    assert_log_prefix(f->api, 2, "DELETE /api/v1/namespaces/sys/secrets/olmv1-install-ext");
    assert_log_prefix(f->api, 3, "DELETE /api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v1");
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 0); /* nothing left to adopt either */

    install_record_free(&rec);
    install_record_free(&rec2);
    json_decref(objs);
}

/* A first install (no previous record) creates the record Secret without reading it or
 * the system namespace again; a record that exists after all (the caller's view was
 * stale) is still updated, through the AlreadyExists fallback. */
static void test_record_write_create_first(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *objs = J("[]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 2); /* the Helm release, then ours */
    assert_log_prefix(f->api, 0, "POST /api/v1/namespaces/sys/secrets");
    assert_log_prefix(f->api, 1, "POST /api/v1/namespaces/sys/secrets");
    assert_int_equal(fake_apiserver_count(f->api, "GET", NULL, "admin"), 2); /* the system namespace, checked once up front; the releases */
    install_record_free(&rec);

    fake_apiserver_log_clear(f->api);
    applier_bundle b2 = bundle;
    b2.version = "2.0.0";
    assert_int_equal(applier_apply(&f->ctx, &b2, objs, NULL, &rec, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 3);
    assert_log_prefix(f->api, 0, "PUT /api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v1");
    assert_log_prefix(f->api, 1, "POST /api/v1/namespaces/sys/secrets");
    assert_log_prefix(f->api, 2, "PUT /api/v1/namespaces/sys/secrets/olmv1-install-ext");
    install_record_free(&rec);
    install_record got;
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 1);
    assert_string_equal(got.bundle_version, "2.0.0");
    install_record_free(&got);
    json_decref(objs);
}

/* A read that found no Helm release at all lets the first install's mirror write create
 * version 1 without listing the releases again; one found makes it list (and update). */
static void test_first_install_lists_releases_once(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    bool none = false;
    f->ctx.no_helm_release = &none;
    install_record got;
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 0);
    assert_true(none);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/sys/secrets?", "admin"), 1);
    fake_apiserver_log_clear(f->api);
    json_t *objs = J("[]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/sys/secrets?", "admin"), 0);
    assert_non_null(fake_apiserver_object(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v1"));
    assert_false(none); /* written: a later write lists */
    install_record_free(&rec);

    /* The next reconcile reads our record (no release listing); its upgrade lists and
     * updates the release in place. */
    fake_apiserver_log_clear(f->api);
    applier_bundle b2 = bundle;
    b2.version = "2.0.0";
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 1);
    assert_int_equal(applier_apply(&f->ctx, &b2, objs, &got, &rec, &err), 0);
    /* the releases, and the chunks of the one updated */
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/sys/secrets?", "admin"), 2);
    assert_int_equal(fake_apiserver_count(f->api, "PUT", "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v1", NULL), 1);
    install_record_free(&got);
    install_record_free(&rec);
    json_decref(objs);
}

/* A cluster that upstream OLM v1 ran: no record of ours, upstream's deployed Helm release.
 * Reading adopts it (our record is written, nothing else), and the uninstall removes the
 * objects it lists and both records. */
static void test_adopt_upstream_helm_release(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    install_object_ref refs[] = {{"v1", "ConfigMap", "ns", "cm", 0}, {"rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr", 0}};
    install_record up = {.extension = "ext", .bundle_name = "b.v1", .bundle_version = "1.0.0", .bundle_image = "img@sha256:1",
                         .package = "pkg", .properties = "[]", .objects = refs, .nobjects = 2,
                         .installed_at = "2026-01-01T00:00:00Z"};
    helm_release_in in = {.rec = &up, .release_namespace = "ns", .version = 4};
    json_t *chunks = NULL, *index = helm_release_secrets(&in, "sys", &chunks, &err);
    assert_non_null(index);
    json_object_del(json_object_get(index, "metadata"), "annotations"); /* as upstream: labels on the Secret */
    fake_apiserver_put(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v4", index);
    /* an older, superseded release is not the installed one */
    json_t *old = json_deep_copy(index);
    json_object_set_new(json_object_get(json_object_get(old, "metadata"), "labels"), "status", json_string("superseded"));
    json_object_set_new(json_object_get(json_object_get(old, "metadata"), "labels"), "version", json_string("3"));
    json_object_set_new(json_object_get(old, "metadata"), "name", json_string("sh.helm.release.v1.ext.v3"));
    fake_apiserver_put(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v3", old);
    fake_apiserver_put(f->api, "/api/v1/namespaces/ns/configmaps/cm", J("{\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}}"));
    fake_apiserver_put(f->api, "/apis/rbac.authorization.k8s.io/v1/clusterroles/cr", J("{\"metadata\":{\"name\":\"cr\"}}"));
    fake_apiserver_log_clear(f->api);

    install_record got;
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 1);
    assert_string_equal(got.bundle_name, "b.v1");
    assert_string_equal(got.bundle_image, "img@sha256:1");
    assert_int_equal(got.nobjects, 2);
    assert_false(got.pending);
    assert_int_equal(fake_apiserver_nwrites(f->api), 1); /* our record, and nothing else */
    assert_log_prefix(f->api, 0, "POST /api/v1/namespaces/sys/secrets");
    assert_non_null(fake_apiserver_object(f->api, "/api/v1/namespaces/sys/secrets/olmv1-install-ext"));
    install_record again;
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_read_record(&f->ctx, &again, &err), 1); /* ours now */
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    install_record_free(&again);

    /* Upstream ran again meanwhile and installed b.v2: the status names it, its release too. */
    up.bundle_name = "b.v2";
    in.version = 5;
    json_t *chunks2 = NULL, *v5 = helm_release_secrets(&in, "sys", &chunks2, &err);
    json_object_set_new(json_object_get(json_object_get(index, "metadata"), "labels"), "status",
                        json_string("superseded"));
    fake_apiserver_put(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v5", v5);
    assert_int_equal(applier_refresh_record(&f->ctx, "b.v1", &got, &err), 0); /* status agrees with us */
    assert_int_equal(applier_refresh_record(&f->ctx, "", &got, &err), 0);
    assert_string_equal(got.bundle_name, "b.v1");
    assert_int_equal(applier_refresh_record(&f->ctx, "b.v2", &got, &err), 1);
    assert_string_equal(got.bundle_name, "b.v2");
    assert_int_equal(applier_read_record(&f->ctx, &again, &err), 1);
    assert_string_equal(again.bundle_name, "b.v2"); /* written */
    install_record_free(&again);
    assert_int_equal(applier_refresh_record(&f->ctx, "b.v3", &got, &err), 0); /* nobody installed b.v3 */
    json_decref(chunks2);

    assert_int_equal(applier_uninstall(&f->ctx, &got, &err), 0);
    assert_null(fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/cm"));
    assert_null(fake_apiserver_object(f->api, "/apis/rbac.authorization.k8s.io/v1/clusterroles/cr"));
    assert_null(fake_apiserver_object(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v4"));
    assert_null(fake_apiserver_object(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v3"));
    assert_null(fake_apiserver_object(f->api, "/api/v1/namespaces/sys/secrets/sh.helm.release.v1.ext.v5"));
    assert_int_equal(applier_read_record(&f->ctx, &again, &err), 0);
    install_record_free(&got);
    json_decref(chunks);
}

/* An object there without our labels stops the install before anything is written; the
 * check reads from the apiserver's watch cache. */
static void test_conflict_before_any_write(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    fake_apiserver_put(f->api, "/api/v1/namespaces/ns/configmaps/cm", J("{\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}}"));
    json_t *objs = J("[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"}},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), -1);
    assert_string_equal(err.msg, "ConfigMap 'cm' already exists in namespace 'ns' and cannot be managed by operator-controller");
    assert_int_equal(fake_apiserver_nwrites(f->api), 0); /* nothing written */
    /* The check read the apiserver's watch cache, not etcd (resourceVersion=0), once. */
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/ns/configmaps/cm?resourceVersion=0", NULL), 1);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/ns/configmaps/cm", NULL), 1);

    /* Listed in our previous record and merely unlabelled: ours, the apply relabels it. */
    install_object_ref ref = {"v1", "ConfigMap", "ns", "cm", 0};
    install_record prev = {.extension = "ext", .objects = &ref, .nobjects = 1};
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, &prev, &rec, &err), 0);
    install_record_free(&rec);
    json_decref(objs);
}

/* A first install refused part-way (the Deployment) has applied the ConfigMap before it.
 * Nothing is recorded as installed, but a pending record lists the ConfigMap (not the
 * refused Deployment), so that the uninstall of the failed extension removes it; a retry
 * that gets no further writes nothing more. */
static void test_forbidden_names_object_and_records_only_what_it_applied(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    fake_apiserver_fail(f->api, "PATCH", "/deployments/", NULL, 403, FORBID_PATCH_DEPLOYMENTS, -1);
    json_t *objs = J("[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"}},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), -1);
    if (!strstr(err.msg, "applying Deployment 'd' in namespace 'ns': deployments.apps \"d\" is forbidden: User \"sa\" "
                         "cannot patch resource \"deployments\""))
        fail_msg("%s", err.msg);
    assert_null(rec.extension);
    assert_int_equal(fake_apiserver_nwrites(f->api), 3);
    assert_log_prefix(f->api, 0, "PATCH /api/v1/namespaces/ns/configmaps/cm?");
    assert_log_prefix(f->api, 1, "PATCH /apis/apps/v1/namespaces/ns/deployments/d?");
    assert_log_prefix(f->api, 2, "POST /api/v1/namespaces/sys/secrets");
    install_record pending;
    assert_int_equal(applier_read_record(&f->ctx, &pending, &err), 1);
    assert_true(pending.pending);
    assert_string_equal(pending.bundle_name, bundle.name);
    assert_string_equal(pending.properties, "[]");
    assert_string_equal(pending.installed_at, "");
    assert_int_equal(pending.nobjects, 1);
    assert_string_equal(pending.objects[0].kind, "ConfigMap");

    /* The retry fails the same way: the record already lists all it applied. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, &pending, &rec, &err), -1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 2);
    assert_log_prefix(f->api, 1, "PATCH /apis/apps/v1/namespaces/ns/deployments/d?");

    /* Allowed at last: installed, the record no longer pending. */
    fake_apiserver_fail_clear(f->api);
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, &pending, &rec, &err), 0);
    assert_false(rec.pending);
    assert_string_not_equal(rec.installed_at, "");
    install_record got;
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 1);
    assert_false(got.pending);
    assert_int_equal(got.nobjects, 2);
    install_record_free(&got);
    install_record_free(&rec);

    /* The uninstall of a failed first install removes what it applied, and the record. */
    fake_apiserver_fail(f->api, "PATCH", "/deployments/", NULL, 403, FORBID_PATCH_DEPLOYMENTS, -1);
    f->ctx.extension = "ext2";
    json_t *objs2 = J("[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d2\",\"namespace\":\"ns\"}},"
                      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm2\",\"namespace\":\"ns\"}}]");
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs2, NULL, &rec, &err), -1);
    install_record_free(&pending);
    assert_int_equal(applier_read_record(&f->ctx, &pending, &err), 1);
    assert_non_null(fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/cm2"));
    assert_int_equal(applier_uninstall(&f->ctx, &pending, &err), 0);
    assert_null(fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/cm2"));
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 0);
    install_record_free(&pending);
    json_decref(objs2);
    f->ctx.extension = "ext";
    json_decref(objs);

    /* Missing system namespace: reported before anything is applied. */
    fake_apiserver_fail_clear(f->api);
    fake_apiserver_log_clear(f->api);
    f->ctx.system_namespace = "nope";
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs = J("[]"), NULL, &rec, &err), -1);
    assert_non_null(strstr(err.msg, "the system namespace 'nope' does not exist"));
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    json_decref(objs);
}

/* An upgrade refused part-way: the previous bundle stays the installed one, and the record
 * gains the object the upgrade created before the refusal (so that the uninstall, or the
 * apply of yet another bundle, removes it), not the refused one. */
static void test_failed_upgrade_records_what_it_created(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *v1 = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, v1, NULL, &rec, &err), 0);
    json_t *v2 = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}},"
                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm2\",\"namespace\":\"ns\"}},"
                   "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"}}]");
    applier_bundle b2 = bundle;
    b2.name = "b.v2";
    b2.version = "2.0.0";
    fake_apiserver_fail(f->api, "PATCH", "/deployments/", NULL, 403, FORBID_PATCH_DEPLOYMENTS, -1);
    install_record next;
    assert_int_equal(applier_apply(&f->ctx, &b2, v2, &rec, &next, &err), -1);
    install_record got;
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 1);
    assert_false(got.pending);
    assert_string_equal(got.bundle_name, "b.v1");
    assert_string_equal(got.bundle_version, "1.0.0");
    assert_string_equal(got.installed_at, rec.installed_at);
    assert_string_equal(got.properties, bundle.properties);
    assert_int_equal(got.nobjects, 2);
    assert_string_equal(got.objects[0].name, "cm");
    assert_string_equal(got.objects[1].name, "cm2");

    /* The uninstall then removes both. */
    fake_apiserver_fail_clear(f->api);
    assert_int_equal(applier_uninstall(&f->ctx, &got, &err), 0);
    assert_null(fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/cm"));
    assert_null(fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/cm2"));
    install_record_free(&got);
    install_record_free(&rec);
    json_decref(v1);
    json_decref(v2);
}

/* An upgrade whose objects are applied and recorded but whose prune is refused: the call
 * fails (the refusal is the error), and *out is the record it wrote, which names the new
 * bundle and keeps the unpruned object, so that the caller reports what is installed. */
static void test_refused_prune_hands_out_the_written_record(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *v1 = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}},"
                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"old\",\"namespace\":\"ns\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, v1, NULL, &rec, &err), 0);
    json_t *v2 = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\"}}]");
    applier_bundle b2 = bundle;
    b2.name = "b.v2";
    b2.version = "2.0.0";
    fake_apiserver_fail(f->api, "DELETE", "/configmaps/old", NULL, 403, FORBID_DELETE, -1);
    install_record next;
    assert_int_equal(applier_apply(&f->ctx, &b2, v2, &rec, &next, &err), -1);
    if (!strstr(err.msg, "pruning ConfigMap 'old' in namespace 'ns'"))
        fail_msg("%s", err.msg);
    assert_non_null(next.extension);
    assert_string_equal(next.bundle_name, "b.v2");
    assert_int_equal(next.nobjects, 2);
    install_record got;
    assert_int_equal(applier_read_record(&f->ctx, &got, &err), 1);
    assert_string_equal(got.bundle_name, "b.v2");
    install_record_free(&got);
    install_record_free(&next);
    install_record_free(&rec);
    json_decref(v1);
    json_decref(v2);
}

/* Bundle content is read as the ServiceAccount that manages it, so the controller's own
 * identity needs no read access to arbitrary kinds; it reads only when the ServiceAccount
 * may not, and when neither may, the ServiceAccount's refusal is reported. */
static void test_reads_as_service_account(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    fake_apiserver_put(f->api, "/api/v1/namespaces/ns/configmaps/cm",
        J("{\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\",\"labels\":{\"olm.operatorframework.io/owner-name\":\"ext\"}}}"));
    json_t *cur = NULL;
    assert_int_equal(applier_get(&f->ctx, "v1", "ConfigMap", "ns", "cm", &cur, &err), KUBE_OK);
    json_decref(cur);
    assert_int_equal(fake_apiserver_count(f->api, "GET", NULL, "sa"), 1);
    assert_int_equal(fake_apiserver_count(f->api, "GET", NULL, "admin"), 0);

    fake_apiserver_fail(f->api, "GET", NULL, "sa", 403, FORBID_GET_SA, -1);
    assert_int_equal(applier_get(&f->ctx, "v1", "ConfigMap", "ns", "cm", &cur, &err), KUBE_OK);
    json_decref(cur);
    assert_int_equal(fake_apiserver_count(f->api, "GET", NULL, "sa"), 2);
    assert_int_equal(fake_apiserver_count(f->api, "GET", NULL, "admin"), 1);

    fake_apiserver_fail(f->api, "GET", NULL, "admin", 403, FORBID_GET_ADMIN, -1);
    cur = NULL;
    assert_int_equal(applier_get(&f->ctx, "v1", "ConfigMap", "ns", "cm", &cur, &err), KUBE_FORBIDDEN);
    assert_null(cur);
    if (!strstr(err.msg, "User \"sa\" cannot get resource \"configmaps\""))
        fail_msg("%s", err.msg);

    /* No ServiceAccount client (uninstall after it is gone): the controller reads. */
    fake_apiserver_fail_clear(f->api);
    applier_ctx no_sa = f->ctx;
    no_sa.as_sa = NULL;
    size_t sa_before = fake_apiserver_count(f->api, "GET", NULL, "sa");
    assert_int_equal(applier_get(&no_sa, "v1", "ConfigMap", "ns", "cm", &cur, &err), KUBE_OK);
    json_decref(cur);
    assert_int_equal(fake_apiserver_count(f->api, "GET", NULL, "sa"), sa_before);
}

/* A custom kind the controller's discovery cache still knows although its CRD is gone: the
 * object is gone too (NotFound), not an error (the ServiceAccount's client, new on every
 * reconcile, must not run a discovery of its own that disagrees). */
static void test_read_of_a_kind_removed_since_discovery(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    fake_apiserver_put(f->api, "/apis/x.io/v1", J("{\"metadata\":{},\"kind\":\"APIResourceList\",\"groupVersion\":\"x.io/v1\","
                                   "\"resources\":[{\"name\":\"ws\",\"namespaced\":true,\"kind\":\"W\",\"verbs\":[\"get\"]}]}"));
    fake_apiserver_put(f->api, "/apis/x.io/v1/namespaces/ns/ws/w1", J("{\"metadata\":{\"name\":\"w1\",\"namespace\":\"ns\"}}"));
    json_t *cur = NULL;
    assert_int_equal(applier_get(&f->ctx, "x.io/v1", "W", "ns", "w1", &cur, &err), KUBE_OK); /* caches discovery */
    json_decref(cur);
    /* The CRD goes, and its objects with it. */
    fake_apiserver_remove_under(f->api, "/apis/x.io/");
    /* The next reconcile has a new ServiceAccount client, with no discovery cache. */
    applier_ctx next = f->ctx;
    next.as_sa = client(fake_apiserver_url(f->api), "sa");
    cur = NULL;
    int rc = applier_get(&next, "x.io/v1", "W", "ns", "w1", &cur, &err);
    kube_client_free(next.as_sa);
    if (rc != KUBE_NOT_FOUND)
        fail_msg("applier_get: %d (%s), want NotFound", rc, err.msg);
    assert_null(cur);
}

/* Uninstall when the install namespace is going away (with the ServiceAccount in it): its
 * objects count as handled; a cluster-scoped object nobody may delete says how to get unstuck. */
static void test_uninstall_without_identity(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    fake_apiserver_put(f->api, "/api/v1/namespaces/ns/configmaps/cm",
        J("{\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\",\"labels\":{\"olm.operatorframework.io/owner-name\":\"ext\"}}}"));
    fake_apiserver_put(f->api, "/api/v1/namespaces/ns", J("{\"metadata\":{\"name\":\"ns\"},\"status\":{\"phase\":\"Terminating\"}}"));
    install_object_ref refs[] = {{"v1", "ConfigMap", "ns", "cm", 0},
                                 {"rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr", 0}};
    install_record rec = {.extension = "ext", .objects = refs, .nobjects = 2};
    applier_ctx ctx = f->ctx;
    ctx.as_sa = ctx.admin; /* what the reconciler passes when no token can be had */

    /* The ClusterRole is gone already: the namespaced ConfigMap is left to the namespace deletion. */
    assert_int_equal(applier_uninstall(&ctx, &rec, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 1);
    assert_log_prefix(f->api, 0, "DELETE /api/v1/namespaces/sys/secrets/olmv1-install-ext");
    assert_non_null(fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/cm"));

    /* A ClusterRole that exists and that nobody may read or delete. */
    fake_apiserver_put(f->api, "/apis/rbac.authorization.k8s.io/v1/clusterroles/cr",
        J("{\"metadata\":{\"name\":\"cr\",\"labels\":{\"olm.operatorframework.io/owner-name\":\"ext\"}}}"));
    fake_apiserver_fail(f->api, "GET", NULL, "admin", 403, FORBID_GET_ADMIN, -1);
    assert_int_equal(applier_uninstall(&ctx, &rec, &err), -1);
    if (!strstr(err.msg, "uninstalling ClusterRole 'cr': ") || !strstr(err.msg, "cannot get resource") ||
        !strstr(err.msg, "recreate the ServiceAccount with the RBAC it had") ||
        !strstr(err.msg, "remove the finalizer olm.operatorframework.io/cleanup"))
        fail_msg("%s", err.msg);
}

/* What counts as repaired: an object that was missing, or one whose applied fields the apply
 * changed.  Not one whose resourceVersion merely moved: a controller writing the status or
 * its own annotation (a Deployment's revision) between our GET and our no-op apply made a
 * repair nobody had asked for show up in the log during 100 parallel installs.  (The fake
 * bumps resourceVersion on every write, no-op or not.) */
static void test_repair_counts(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *objs = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"}},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\","
                     "\"annotations\":{\"mine\":\"1\"}},\"data\":{\"k\":\"v\",\"list\":\"[1,2]\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    /* Nothing changed: nothing repaired, and no apply sent (the live objects hold our fields). */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    /* Someone else's annotation and a status: still nothing of ours changed. */
    json_t *i = fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/b");
    json_object_set_new(json_object_get(json_object_get(i, "metadata"), "annotations"),
                        "deployment.kubernetes.io/revision", json_string("1"));
    json_object_set_new(i, "status", J("{\"replicas\":1}"));
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 0);
    /* A missing object, and a field of ours edited: both repaired. */
    assert_true(fake_apiserver_remove(f->api, "/api/v1/namespaces/ns/configmaps/a"));
    i = fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/b");
    json_object_set_new(json_object_get(i, "data"), "k", json_string("edited"));
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 2);
    assert_non_null(fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/a"));
    /* An annotation of ours removed: repaired. */
    i = fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/b");
    json_object_del(json_object_get(json_object_get(i, "metadata"), "annotations"), "mine");
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 1);
    /* Owned by someone else now: a conflict, not a takeover. */
    i = fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/b");
    json_object_set_new(json_object_get(json_object_get(i, "metadata"), "labels"), OWNER_NAME_LABEL,
                        json_string("other"));
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), -1);
    assert_string_equal(err.msg, "ConfigMap 'b' already exists in namespace 'ns' and cannot be managed by operator-controller");
    install_record_free(&rec);
    json_decref(objs);
}

/* applier_ctx.observe: the apply's answers, the reads of the CRD wait (the newest last) and a
 * repair's reads are handed over, each object's latest state last; the conflict check's reads,
 * taken before anything is written, are not.
 * Mutation checks: applier_apply.c crd_established's observe dropped, the apply's answer not
 * observed, applier_repair.c the unchanged GET or the repair's answer not observed: each seen
 * failing this test. */
typedef struct seen_objects {
    char kinds[32][64];
    json_t *last_crd;
    int n;
} seen_objects;

static void observe(void *data, const json_t *live)
{
    seen_objects *s = data;
    const char *kind = json_string_value(json_object_get(live, "kind"));
    if (s->n < 32)
        snprintf(s->kinds[s->n++], sizeof s->kinds[0], "%s", kind ? kind : "?");
    if (kind && strcmp(kind, "CustomResourceDefinition") == 0) {
        json_decref(s->last_crd);
        s->last_crd = json_deep_copy(live);
    }
}

static void test_observe_hands_over_what_apply_and_repair_hold(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    seen_objects seen = {0};
    f->ctx.observe = observe;
    f->ctx.observe_data = &seen;
    json_t *objs = J("[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"}},"
                     "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                     "\"metadata\":{\"name\":\"ws.x.io\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    /* The CRD's apply, its wait's read (Established), the Deployment's apply. */
    assert_int_equal(seen.n, 3);
    assert_string_equal(seen.kinds[0], "CustomResourceDefinition");
    assert_string_equal(seen.kinds[1], "CustomResourceDefinition");
    assert_string_equal(seen.kinds[2], "Deployment");
    assert_true(kube_object_condition_is(seen.last_crd, "Established", "True"));
    /* A repair: the read of each object left alone, and the answer of the one put back. */
    seen.n = 0;
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 0);
    assert_int_equal(seen.n, 2);
    assert_true(fake_apiserver_remove(f->api, "/apis/apps/v1/namespaces/ns/deployments/d"));
    seen.n = 0;
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 1);
    assert_int_equal(seen.n, 2);
    assert_string_equal(seen.kinds[1], "Deployment");
    json_decref(seen.last_crd);
    install_record_free(&rec);
    json_decref(objs);
}

/* The apiserver's defaults (a container's terminationMessagePath, a port's protocol) and a
 * null we render (a pod template's creationTimestamp) are no drift: no apply is sent.  A
 * changed image, or one container more, is. */
static void test_repair_ignores_defaults(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *objs = J("[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"},"
                     "\"spec\":{\"replicas\":1,\"template\":{\"metadata\":{\"creationTimestamp\":null},\"spec\":{"
                     "\"containers\":[{\"name\":\"m\",\"image\":\"i:1\",\"ports\":[{\"containerPort\":80}]}]}}}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    json_t *i = fake_apiserver_object(f->api, "/apis/apps/v1/namespaces/ns/deployments/d");
    json_t *tmpl = json_object_get(json_object_get(i, "spec"), "template");
    json_object_del(json_object_get(tmpl, "metadata"), "creationTimestamp");
    json_t *c = json_array_get(json_object_get(json_object_get(tmpl, "spec"), "containers"), 0);
    json_object_set_new(c, "terminationMessagePath", json_string("/dev/termination-log"));
    json_object_set_new(json_array_get(json_object_get(c, "ports"), 0), "protocol", json_string("TCP"));
    json_object_set_new(json_object_get(i, "spec"), "replicas", json_real(1.0)); /* same number */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    json_object_set_new(c, "image", json_string("i:2"));
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 1);
    i = fake_apiserver_object(f->api, "/apis/apps/v1/namespaces/ns/deployments/d");
    json_t *cs = json_object_get(json_object_get(json_object_get(json_object_get(i, "spec"), "template"),
                                                 "spec"), "containers");
    json_array_append_new(cs, J("{\"name\":\"sidecar\",\"image\":\"s\"}"));
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 1);
    install_record_free(&rec);
    json_decref(objs);
}

/* applier_ctx.unchanged: the record keeps each object's content hash as the apply left it
 * (the hash of the apply's answer); a repair asks the callback with it, and an object it vouches
 * for is neither read nor written.  One it does not vouch for is read, and repaired when it
 * drifted.  Mutation checks: the hash not recorded (applier_apply.c), or the callback's answer
 * ignored (applier_repair.c): each seen failing this test. */
typedef struct vouch {
    json_t *hashes; /* name -> the hash the callback saw */
    const char *only; /* the name it vouches for */
} vouch;

static bool vouch_for(void *data, const install_object_ref *ref, uint64_t content_hash)
{
    vouch *v = data;
    json_object_set_new(v->hashes, ref->name, json_integer((json_int_t)content_hash));
    return strcmp(ref->name, v->only) == 0;
}

static void test_repair_skips_what_is_known_unchanged(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *objs = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"},"
                     "\"data\":{\"k\":\"v\"}},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\"}}]");
    install_record rec;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    assert_int_equal(rec.nobjects, 2);
    for (size_t k = 0; k < 2; k++) {
        char path[64];
        snprintf(path, sizeof path, "/api/v1/namespaces/ns/configmaps/%s", rec.objects[k].name);
        assert_true(rec.objects[k].content_hash != 0);
        assert_true(rec.objects[k].content_hash == kube_object_content_hash(fake_apiserver_object(f->api, path)));
    }
    vouch v = {.hashes = json_object(), .only = "a"};
    f->ctx.unchanged = vouch_for;
    f->ctx.unchanged_data = &v;
    /* "a" drifted, but the callback vouches for it: not read, not repaired; "b" is read. */
    json_t *a = fake_apiserver_object(f->api, "/api/v1/namespaces/ns/configmaps/a");
    json_object_set_new(json_object_get(a, "data"), "k", json_string("edited"));
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 0);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "configmaps/a", NULL), 0);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "configmaps/b", NULL), 1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(json_object_size(v.hashes), 2);
    assert_true((uint64_t)json_integer_value(json_object_get(v.hashes, "a")) == rec.objects[0].content_hash ||
                (uint64_t)json_integer_value(json_object_get(v.hashes, "a")) == rec.objects[1].content_hash);
    /* Not vouched for any more: read and repaired. */
    v.only = "none";
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 1);
    /* A record without hashes (older, or adopted from Helm): the callback is not asked. */
    json_object_clear(v.hashes);
    v.only = "a";
    for (size_t k = 0; k < rec.nobjects; k++)
        rec.objects[k].content_hash = 0;
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_repair(&f->ctx, &rec, objs, &err), 0);
    assert_int_equal(json_object_size(v.hashes), 0);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "configmaps/a", NULL), 1);
    json_decref(v.hashes);
    install_record_free(&rec);
    json_decref(objs);
}

/* applier_record_set_hashes: a record that does not know an object's hash (written before
 * hashes were kept, or adopted) learns it, with one write; nothing known and unchanged writes
 * nothing; a hash that merely moved is written only after a repair.  Mutation check: the
 * `!*h || repaired` condition dropped (every moved hash written): seen failing this test. */
static void test_record_learns_the_hashes_a_repair_saw(void **state)
{
    struct fx *f = *state;
    olm_error err = {""};
    json_t *objs = J("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"}},"
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\"}}]");
    install_record rec, back;
    assert_int_equal(applier_apply(&f->ctx, &bundle, objs, NULL, &rec, &err), 0);
    uint64_t h0 = rec.objects[0].content_hash, h1 = rec.objects[1].content_hash;
    rec.objects[0].content_hash = 0; /* as an older record */
    assert_int_equal(applier_write_record(&f->ctx, &rec, false, &err), 0);
    uint64_t seen[2] = {h0, h1 + 1};
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_record_set_hashes(&f->ctx, &rec, seen, false, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 1);
    assert_true(rec.objects[0].content_hash == h0);
    assert_true(rec.objects[1].content_hash == h1); /* moved, no repair: kept */
    assert_int_equal(applier_read_record(&f->ctx, &back, &err), 1);
    assert_true(back.objects[0].content_hash == h0);
    install_record_free(&back);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(applier_record_set_hashes(&f->ctx, &rec, seen, false, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(applier_record_set_hashes(&f->ctx, &rec, seen, true, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 1);
    assert_true(rec.objects[1].content_hash == h1 + 1);
    install_record_free(&rec);
    json_decref(objs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_order_labels_and_stripping),
        cmocka_unit_test(test_identity_and_ownership),
        cmocka_unit_test_setup_teardown(test_apply_order_record_prune_uninstall, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_adopt_upstream_helm_release, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_repair_ignores_defaults, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_conflict_before_any_write, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_record_write_create_first, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_forbidden_names_object_and_records_only_what_it_applied, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failed_upgrade_records_what_it_created, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refused_prune_hands_out_the_written_record, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_repair_counts, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_repair_skips_what_is_known_unchanged, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_record_learns_the_hashes_a_repair_saw, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_observe_hands_over_what_apply_and_repair_hold, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reads_as_service_account, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_read_of_a_kind_removed_since_discovery, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_uninstall_without_identity, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_first_install_lists_releases_once, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
