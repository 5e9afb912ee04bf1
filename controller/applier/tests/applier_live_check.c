/* applier_live_check: the applier (applier.h) against a real kube-apiserver.
 *
 * Not a unit test (it needs a cluster): run by e2e/tests/test_applier.py with KUBECONFIG
 * pointing at an admin kubeconfig.  It works in its own namespaces ("olmv1-applier-<pid>"
 * for the content, "olmv1-applier-sys-<pid>" as the system namespace) and cluster-scoped
 * names carrying the pid, creates two ServiceAccounts ("installer" with the RBAC the
 * content needs, "weak" that may only touch ConfigMaps), prints one "ok - ..." line per
 * check and exits 1 at the first failure.  Lines starting "   message: " quote the
 * applier's errors for the e2e test to match.  Cleanup deletes what it created (without
 * kube-controller-manager the namespaces stay Terminating, which is harmless). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "applier.h"
#include "kube_client.h"

static kube_client *admin, *installer, *weak;
static char ns[64], sysns[64], ext[64], group[96], crd_name[128], crole[96];
static int failed;

#define CHECK(cond, what, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL - %s: ", what);                                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failed = 1;                                                                            \
            goto out;                                                                              \
        }                                                                                          \
        printf("ok - %s\n", what);                                                                 \
        fflush(stdout);                                                                            \
    } while (0)

/* json_loads of a printf-formatted text; exits on bad JSON (a bug in this file). */
static json_t *jf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *jf(const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    json_error_t je;
    json_t *v = n < 0 ? NULL : json_loads(text, 0, &je);
    if (!v) {
        fprintf(stderr, "bad JSON in applier_live_check: %s\n%s\n", n < 0 ? "oom" : je.text, text ? text : "");
        exit(2);
    }
    free(text);
    return v;
}

static const char *label_of(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

static const char *rv_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* The rendered content: deliberately out of order (custom resource first, CRD in the
 * middle) so that the applier's ordering is what makes it work. */
static json_t *content(bool with_cm_b)
{
    json_t *a = json_array();
    json_array_append_new(a, jf("{\"apiVersion\":\"%s/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w1\","
                                "\"namespace\":\"%s\"},\"spec\":{\"size\":3}}",
                                group, ns));
    json_array_append_new(a, jf("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"op\","
                                "\"namespace\":\"%s\",\"labels\":{\"app\":\"op\"}},\"spec\":{\"replicas\":1,"
                                "\"selector\":{\"matchLabels\":{\"app\":\"op\"}},\"template\":{\"metadata\":{"
                                "\"labels\":{\"app\":\"op\"}},\"spec\":{\"serviceAccountName\":\"op-sa\","
                                "\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/none:1\"}]}}}}",
                                ns));
    json_array_append_new(a, jf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-a\","
                                "\"namespace\":\"%s\"},\"data\":{\"k\":\"a\"}}",
                                ns));
    if (with_cm_b)
        json_array_append_new(a, jf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-b\","
                                    "\"namespace\":\"%s\"},\"data\":{\"k\":\"b\"}}",
                                    ns));
    json_array_append_new(a, jf("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                                "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"group\":\"%s\",\"scope\":\"Namespaced\","
                                "\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\","
                                "\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
                                "\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
                                "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}",
                                crd_name, group));
    json_array_append_new(a, jf("{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"op-sa\","
                                "\"namespace\":\"%s\"}}",
                                ns));
    json_array_append_new(a, jf("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
                                "\"metadata\":{\"name\":\"%s-op\"},\"rules\":[{\"apiGroups\":[\"\"],"
                                "\"resources\":[\"configmaps\"],\"verbs\":[\"get\"]}]}",
                                crole));
    return a;
}

static const char *props = "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":4.10}]";

static kube_client *sa_client(const char *sa, olm_error *err)
{
    char *token = NULL;
    if (kube_token_request(admin, ns, sa, 3600, NULL, &token, NULL, err) < 0)
        return NULL;
    kube_config cfg;
    int rc = kube_config_with_token(kube_client_config(admin), token, &cfg, err);
    explicit_bzero(token, strlen(token));
    free(token);
    if (rc < 0)
        return NULL;
    kube_client *c = kube_client_new(&cfg, NULL, err);
    if (!c)
        kube_config_free(&cfg);
    return c;
}

static int create_all(json_t *objs, olm_error *err)
{
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o) {
        int rc = kube_create(admin, o, NULL, err);
        if (rc < 0 && rc != KUBE_ALREADY_EXISTS)
            return rc;
    }
    return 0;
}

static int setup(olm_error *err)
{
    json_t *objs = json_array();
    json_array_append_new(objs, jf("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns));
    json_array_append_new(objs, jf("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", sysns));
    for (int i = 0; i < 2; i++)
        json_array_append_new(objs, jf("{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"%s\","
                                       "\"namespace\":\"%s\"}}",
                                       i ? "weak" : "installer", ns));
    /* installer: what the content needs, cluster-wide (escalate/bind because it
     * creates a ClusterRole). */
    json_array_append_new(objs, jf(
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"%s\"},"
        "\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\",\"serviceaccounts\"],\"verbs\":[\"*\"]},"
        "{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments\"],\"verbs\":[\"*\"]},"
        "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"clusterroles\"],\"verbs\":[\"*\"]},"
        "{\"apiGroups\":[\"apiextensions.k8s.io\"],\"resources\":[\"customresourcedefinitions\"],\"verbs\":[\"*\"]},"
        "{\"apiGroups\":[\"%s\"],\"resources\":[\"widgets\"],\"verbs\":[\"*\"]}]}",
        crole, group));
    json_array_append_new(objs, jf(
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"%s\"},"
        "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"%s\"},"
        "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"installer\",\"namespace\":\"%s\"}]}",
        crole, crole, ns));
    /* weak: ConfigMaps in its namespace only. */
    json_array_append_new(objs, jf(
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"weak\","
        "\"namespace\":\"%s\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"*\"]}]}",
        ns));
    json_array_append_new(objs, jf(
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"weak\","
        "\"namespace\":\"%s\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\","
        "\"name\":\"weak\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"weak\",\"namespace\":\"%s\"}]}",
        ns, ns));
    int rc = create_all(objs, err);
    json_decref(objs);
    if (rc < 0)
        return rc;
    installer = sa_client("installer", err);
    weak = installer ? sa_client("weak", err) : NULL;
    return weak ? 0 : -1;
}

static bool managed_by_us(const json_t *obj)
{
    const json_t *mf = json_object_get(json_object_get(obj, "metadata"), "managedFields");
    size_t i;
    const json_t *e;
    json_array_foreach(mf, i, e) {
        const char *m = json_string_value(json_object_get(e, "manager"));
        const char *op = json_string_value(json_object_get(e, "operation"));
        if (m && op && strcmp(m, "olm.operatorframework.io") == 0 && strcmp(op, "Apply") == 0)
            return true;
    }
    return false;
}

/* Every object of `objs` exists, labelled and applied by our field manager. */
static int check_installed(json_t *objs, olm_error *err, char *bad, size_t badlen)
{
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o) {
        const char *av = json_string_value(json_object_get(o, "apiVersion"));
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const json_t *md = json_object_get(o, "metadata");
        const char *name = json_string_value(json_object_get(md, "name"));
        const char *ons = json_string_value(json_object_get(md, "namespace"));
        json_t *cur = NULL;
        if (kube_get(admin, av, kind, ons, name, &cur, err) < 0) {
            snprintf(bad, badlen, "%.100s %.200s: %.700s", kind, name, err->msg);
            return -1;
        }
        const char *ok = label_of(cur, "olm.operatorframework.io/owner-kind");
        const char *on = label_of(cur, "olm.operatorframework.io/owner-name");
        bool good = ok && on && strcmp(ok, "ClusterExtension") == 0 && strcmp(on, ext) == 0 && managed_by_us(cur);
        json_decref(cur);
        if (!good) {
            snprintf(bad, badlen, "%s %s lacks the owner labels or the olm.operatorframework.io Apply entry", kind, name);
            return -1;
        }
    }
    return 0;
}

static bool gone(const char *av, const char *kind, const char *ons, const char *name, int wait_s)
{
    for (int i = 0; i <= wait_s * 5; i++) {
        json_t *cur = NULL;
        olm_error e = {""};
        int rc = kube_get(admin, av, kind, ons, name, &cur, &e);
        json_decref(cur);
        if (rc == KUBE_NOT_FOUND || (rc == KUBE_ERROR && strstr(e.msg, "does not serve")))
            return true;
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static int run(void)
{
    olm_error err = {""};
    json_t *v1 = NULL, *v2 = NULL, *bad = NULL, *cur = NULL, *extra = NULL;
    install_record rec = {0}, rec2 = {0}, got = {0}, tmp = {0};
    char why[1024] = "", want[1024];
    int rc = setup(&err);
    CHECK(rc == 0, "setup: namespaces, ServiceAccounts installer and weak, RBAC, tokens", "%s", err.msg);

    applier_bundle b1 = {"widget-operator.v1.0.0", "1.0.0", "registry.invalid/widget-bundle:v1.0.0", "widget-operator",
                         props};
    applier_ctx ctx = {.admin = admin, .as_sa = weak, .system_namespace = sysns, .extension = ext};
    v1 = content(true);

    /* --- too-weak RBAC: the apiserver's 403 names verb and resource; nothing recorded */
    rc = applier_apply(&ctx, &b1, v1, NULL, &rec, &err);
    snprintf(want, sizeof want,
             "applying CustomResourceDefinition '%s': customresourcedefinitions.apiextensions.k8s.io \"%s\" is "
             "forbidden: User \"system:serviceaccount:%s:weak\" cannot patch resource \"customresourcedefinitions\" "
             "in API group \"apiextensions.k8s.io\" at the cluster scope",
             crd_name, crd_name, ns);
    CHECK(rc == -1 && strstr(err.msg, want), "apply with too-weak RBAC fails naming verb and resource", "%s", err.msg);
    printf("   message: %s\n", err.msg);
    rc = applier_read_record(&ctx, &got, &err);
    CHECK(rc == 0, "nothing recorded after the failed apply", "rc=%d %s", rc, err.msg);

    /* --- install */
    ctx.as_sa = installer;
    rc = applier_apply(&ctx, &b1, v1, NULL, &rec, &err);
    CHECK(rc == 0, "install (CR listed before its CRD still applies)", "%s", err.msg);
    {
        /* Apply order: CRD, ServiceAccount, ClusterRole, ConfigMaps, then the rest in
         * rendered order (the Widget was rendered before the Deployment). */
        static const char *const order[] = {"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ConfigMap",
                                            "ConfigMap", "Widget", "Deployment"};
        char got_order[512] = "";
        bool same = rec.nobjects == 7;
        for (size_t k = 0; k < rec.nobjects; k++) {
            same = same && k < 7 && strcmp(rec.objects[k].kind, order[k]) == 0;
            strncat(got_order, rec.objects[k].kind, sizeof got_order - strlen(got_order) - 2);
            strcat(got_order, " ");
        }
        CHECK(same && strcmp(rec.objects[0].namespace_, "") == 0 && strcmp(rec.objects[2].namespace_, "") == 0 &&
                  strcmp(rec.objects[1].namespace_, ns) == 0,
              "record lists the 7 objects in apply order, cluster-scoped ones without namespace", "%s", got_order);
        printf("   order: %s\n", got_order);
    }
    rc = check_installed(v1, &err, why, sizeof why);
    CHECK(rc == 0, "every object has the owner labels and an olm.operatorframework.io Apply managedFields entry", "%s",
          why);
    char *sname = install_record_secret_name(ext);
    rc = kube_get(admin, "v1", "Secret", sysns, sname, &cur, &err);
    free(sname);
    CHECK(rc == 0 && strcmp(json_string_value(json_object_get(cur, "type")), "olm.operatorframework.io/install-record") == 0 &&
              strcmp(label_of(cur, "olm.operatorframework.io/owner-name"), ext) == 0 &&
              strcmp(label_of(cur, "olm.operatorframework.io/install-record"), "true") == 0,
          "record Secret in the system namespace (type and labels)", "rc=%d %s", rc, err.msg);
    char rv1[64];
    snprintf(rv1, sizeof rv1, "%s", rv_of(cur));
    json_decref(cur);
    cur = NULL;
    rc = applier_read_record(&ctx, &got, &err);
    CHECK(rc == 1 && strcmp(got.properties, props) == 0 && strcmp(got.bundle_version, "1.0.0") == 0 &&
              strcmp(got.package, "widget-operator") == 0 && got.nobjects == 7,
          "read_record: bundle and properties text byte-for-byte", "rc=%d %s", rc, err.msg);
    install_record_free(&got);

    /* --- re-apply of the same bundle: idempotent, the record is not rewritten */
    rc = applier_apply(&ctx, &b1, v1, &rec, &tmp, &err);
    CHECK(rc == 0, "re-apply of the same bundle", "%s", err.msg);
    sname = install_record_secret_name(ext);
    rc = kube_get(admin, "v1", "Secret", sysns, sname, &cur, &err);
    free(sname);
    CHECK(rc == 0 && strcmp(rv_of(cur), rv1) == 0 && strcmp(tmp.installed_at, rec.installed_at) == 0,
          "record Secret unchanged by the re-apply", "rv %s -> %s", rv1, cur ? rv_of(cur) : "?");
    json_decref(cur);
    cur = NULL;
    install_record_free(&tmp);

    /* --- conflicts: pre-existing unlabelled ConfigMap, cluster-scoped, other owner */
    extra = jf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"pre-existing\",\"namespace\":\"%s\"},"
               "\"data\":{\"mine\":\"yes\"}}",
               ns);
    rc = kube_create(admin, extra, NULL, &err);
    CHECK(rc == 0, "create an unlabelled ConfigMap 'pre-existing' as admin", "%s", err.msg);
    bad = json_deep_copy(v1);
    json_array_append(bad, extra);
    rc = applier_apply(&ctx, &b1, bad, &rec, &tmp, &err);
    snprintf(want, sizeof want,
             "ConfigMap 'pre-existing' already exists in namespace '%s' and cannot be managed by operator-controller", ns);
    CHECK(rc == -1 && strcmp(err.msg, want) == 0, "pre-existing unlabelled ConfigMap is a conflict", "%s", err.msg);
    printf("   message: %s\n", err.msg);
    rc = kube_get(admin, "v1", "ConfigMap", ns, "pre-existing", &cur, &err);
    CHECK(rc == 0 && !label_of(cur, "olm.operatorframework.io/owner-name") &&
              strcmp(json_string_value(json_object_get(json_object_get(cur, "data"), "mine")), "yes") == 0,
          "the conflicting ConfigMap is untouched", "%s", err.msg);
    json_decref(cur);
    cur = NULL;
    json_decref(bad);
    json_decref(extra);
    extra = jf("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"%s-other\","
               "\"labels\":{\"olm.operatorframework.io/owner-kind\":\"ClusterExtension\","
               "\"olm.operatorframework.io/owner-name\":\"someone-else\"}},\"rules\":[]}",
               crole);
    rc = kube_create(admin, extra, NULL, &err);
    CHECK(rc == 0, "create a ClusterRole owned by another extension", "%s", err.msg);
    bad = json_deep_copy(v1);
    json_array_append(bad, extra);
    rc = applier_apply(&ctx, &b1, bad, &rec, &tmp, &err);
    snprintf(want, sizeof want, "ClusterRole '%s-other' already exists and cannot be managed by operator-controller", crole);
    CHECK(rc == -1 && strcmp(err.msg, want) == 0, "cluster-scoped object of another extension is a conflict", "%s",
          err.msg);
    printf("   message: %s\n", err.msg);
    json_decref(bad);
    bad = NULL;
    rc = applier_read_record(&ctx, &got, &err);
    CHECK(rc == 1 && got.nobjects == 7 && strcmp(got.installed_at, rec.installed_at) == 0,
          "record unchanged by the failed applies", "rc=%d %s", rc, err.msg);
    install_record_free(&got);

    /* --- missing system namespace: clear error before anything is applied */
    applier_ctx nosys = ctx;
    nosys.system_namespace = "olmv1-applier-no-such-namespace";
    rc = applier_apply(&nosys, &b1, v1, &rec, &tmp, &err);
    CHECK(rc == -1 && strstr(err.msg, "the system namespace 'olmv1-applier-no-such-namespace' does not exist"),
          "missing system namespace is a clear error", "%s", err.msg);
    printf("   message: %s\n", err.msg);

    /* --- upgrade without cm-b: pruned */
    applier_bundle b2 = b1;
    b2.name = "widget-operator.v2.0.0";
    b2.version = "2.0.0";
    b2.image = "registry.invalid/widget-bundle:v2.0.0";
    v2 = content(false);
    rc = applier_apply(&ctx, &b2, v2, &rec, &rec2, &err);
    CHECK(rc == 0 && rec2.nobjects == 6 && strcmp(rec2.bundle_version, "2.0.0") == 0, "upgrade to 2.0.0 without cm-b",
          "rc=%d %s", rc, err.msg);
    CHECK(gone("v1", "ConfigMap", ns, "cm-b", 0), "cm-b was pruned", "still there");
    rc = kube_get(admin, "v1", "ConfigMap", ns, "cm-a", &cur, &err);
    CHECK(rc == 0, "cm-a kept", "%s", err.msg);
    json_decref(cur);
    cur = NULL;

    /* --- drift: delete cm-a, strip the owner labels off op-sa; repair restores both */
    rc = kube_delete(admin, "v1", "ConfigMap", ns, "cm-a", NULL, &err);
    CHECK(rc == 0, "delete cm-a behind the applier's back", "%s", err.msg);
    rc = kube_patch(admin, "v1", "ServiceAccount", ns, "op-sa", NULL, KUBE_PATCH_MERGE,
                    "{\"metadata\":{\"labels\":{\"olm.operatorframework.io/owner-name\":null,"
                    "\"olm.operatorframework.io/owner-kind\":null}}}",
                    NULL, &err);
    CHECK(rc == 0, "strip the owner labels off ServiceAccount op-sa", "%s", err.msg);
    rc = applier_repair(&ctx, &rec2, v2, &err);
    CHECK(rc >= 2, "repair reports the missing and the changed object", "rc=%d %s", rc, err.msg);
    printf("   repaired: %d\n", rc);
    rc = check_installed(v2, &err, why, sizeof why);
    CHECK(rc == 0, "after repair every object is back, labelled", "%s", why);
    rc = applier_repair(&ctx, &rec2, v2, &err);
    /* A controller writing the Deployment's status between our GET and apply can count
     * it once (applier_repair.c); nothing else may. */
    CHECK(rc >= 0 && rc <= 1, "a second repair finds (almost) nothing to do", "rc=%d %s", rc, err.msg);
    printf("   repaired again: %d\n", rc);

    /* --- uninstall with a ServiceAccount that may not delete: falls back to admin */
    ctx.as_sa = weak;
    rc = applier_uninstall(&ctx, &rec2, &err);
    CHECK(rc == 0, "uninstall (weak ServiceAccount, admin fall-back)", "%s", err.msg);
    size_t i;
    json_t *o;
    why[0] = '\0';
    json_array_foreach(v2, i, o) {
        const json_t *md = json_object_get(o, "metadata");
        const char *kind = json_string_value(json_object_get(o, "kind"));
        if (!gone(json_string_value(json_object_get(o, "apiVersion")), kind,
                  json_string_value(json_object_get(md, "namespace")), json_string_value(json_object_get(md, "name")),
                  30)) {
            snprintf(why, sizeof why, "%s %s is still there", kind, json_string_value(json_object_get(md, "name")));
            break;
        }
    }
    CHECK(!why[0], "every installed object is gone", "%s", why);
    rc = applier_read_record(&ctx, &got, &err);
    CHECK(rc == 0, "the install record is gone", "rc=%d %s", rc, err.msg);
    rc = kube_get(admin, "v1", "ConfigMap", ns, "pre-existing", &cur, &err);
    CHECK(rc == 0, "the unrelated ConfigMap survives the uninstall", "%s", err.msg);
    json_decref(cur);
    cur = NULL;
    rc = applier_uninstall(&ctx, &rec2, &err);
    CHECK(rc == 0, "uninstall again is a no-op", "%s", err.msg);

out:
    json_decref(v1);
    json_decref(v2);
    json_decref(bad);
    json_decref(cur);
    json_decref(extra);
    install_record_free(&rec);
    install_record_free(&rec2);
    install_record_free(&got);
    install_record_free(&tmp);
    return failed ? 1 : 0;
}

static void cleanup(void)
{
    olm_error err = {""};
    struct {
        const char *av, *kind, *ns;
        char name[160];
    } doomed[] = {
        {"apiextensions.k8s.io/v1", "CustomResourceDefinition", NULL, ""},
        {"rbac.authorization.k8s.io/v1", "ClusterRole", NULL, ""},
        {"rbac.authorization.k8s.io/v1", "ClusterRole", NULL, ""},
        {"rbac.authorization.k8s.io/v1", "ClusterRole", NULL, ""},
        {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", NULL, ""},
        {"v1", "Namespace", NULL, ""},
        {"v1", "Namespace", NULL, ""},
    };
    snprintf(doomed[0].name, sizeof doomed[0].name, "%s", crd_name);
    snprintf(doomed[1].name, sizeof doomed[1].name, "%s", crole);
    snprintf(doomed[2].name, sizeof doomed[2].name, "%s-op", crole);
    snprintf(doomed[3].name, sizeof doomed[3].name, "%s-other", crole);
    snprintf(doomed[4].name, sizeof doomed[4].name, "%s", crole);
    snprintf(doomed[5].name, sizeof doomed[5].name, "%s", ns);
    snprintf(doomed[6].name, sizeof doomed[6].name, "%s", sysns);
    for (size_t i = 0; i < sizeof doomed / sizeof doomed[0]; i++) {
        int rc = kube_delete(admin, doomed[i].av, doomed[i].kind, doomed[i].ns, doomed[i].name, NULL, &err);
        if (rc < 0 && rc != KUBE_NOT_FOUND && !strstr(err.msg, "does not serve"))
            fprintf(stderr, "cleanup: deleting %s %s: %s\n", doomed[i].kind, doomed[i].name, err.msg);
    }
}

int main(void)
{
    olm_error err = {""};
    kube_config cfg;
    if (kube_config_load(NULL, &cfg, &err) < 0) {
        fprintf(stderr, "FAIL - load config: %s\n", err.msg);
        return 1;
    }
    admin = kube_client_new(&cfg, NULL, &err);
    if (!admin) {
        kube_config_free(&cfg);
        fprintf(stderr, "FAIL - client: %s\n", err.msg);
        return 1;
    }
    long pid = (long)getpid();
    snprintf(ns, sizeof ns, "olmv1-applier-%ld", pid);
    snprintf(sysns, sizeof sysns, "olmv1-applier-sys-%ld", pid);
    snprintf(ext, sizeof ext, "applier-live-%ld", pid);
    snprintf(group, sizeof group, "applier%ld.example.com", pid);
    snprintf(crd_name, sizeof crd_name, "widgets.%s", group);
    snprintf(crole, sizeof crole, "olmv1-applier-%ld", pid);
    printf("extension: %s namespace: %s system namespace: %s\n", ext, ns, sysns);
    int rc = run();
    cleanup();
    kube_client_free(installer);
    kube_client_free(weak);
    kube_client_free(admin);
    if (rc == 0)
        printf("applier_live_check: all checks passed\n");
    return rc;
}
