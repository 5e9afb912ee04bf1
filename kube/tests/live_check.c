/* kube_live_check: exercises the REST client against a real kube-apiserver.
 *
 * Not a unit test (it needs a cluster): run by e2e/tests/test_kube_client.py with
 * KUBECONFIG pointing at an admin kubeconfig.  It creates its own namespace
 * ("olmv1-live-<pid>"), prints one "ok - ..." line per check, and exits 1 at the
 * first failure with the client's error message.  Cleanup deletes the namespace
 * (without kube-controller-manager it stays Terminating, which is harmless). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube_client.h"

static kube_client *admin;
static char ns[64];
static int failed;

static void die(const char *what, const olm_error *err, int rc)
{
    fprintf(stderr, "FAIL - %s: rc=%d (%s): %s\n", what, rc, kube_result_name((kube_result)rc), err ? err->msg : "");
    failed = 1;
}

#define CHECK(cond, what, err, rc)                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            die(what, err, rc);                                                                    \
            goto out;                                                                              \
        }                                                                                          \
        printf("ok - %s\n", what);                                                                 \
    } while (0)

static const char *rv_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static json_t *configmap(const char *name, const char *value)
{
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                     "name", name, "namespace", ns, "labels", "olmv1-live", "yes", "data", "k", value);
}

static int run(void)
{
    olm_error err = {""};
    int rc = 0;
    json_t *obj = NULL, *out = NULL, *cm = NULL, *dep = NULL;
    kube_client *sa_client = NULL;
    char *token = NULL;

    /* --- namespace: create, duplicate, get, list with a label selector */
    json_t *nso = json_pack("{s:s,s:s,s:{s:s,s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace", "metadata", "name", ns,
                            "labels", "olmv1-live", ns);
    rc = kube_create(admin, nso, NULL, &err);
    CHECK(rc == KUBE_OK, "create namespace", &err, rc);
    rc = kube_create(admin, nso, NULL, &err);
    CHECK(rc == KUBE_ALREADY_EXISTS && strstr(err.msg, "already exists (HTTP 409 Conflict)"),
          "create again is AlreadyExists", &err, rc);
    json_decref(nso);
    nso = NULL;
    rc = kube_get(admin, "v1", "Namespace", NULL, ns, &obj, &err);
    CHECK(rc == KUBE_OK && strcmp(json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")), ns) == 0,
          "get namespace", &err, rc);
    json_decref(obj);
    obj = NULL;
    char sel[128];
    snprintf(sel, sizeof sel, "olmv1-live=%s", ns);
    kube_list_options lo = {.label_selector = sel};
    rc = kube_list(admin, "v1", "Namespace", NULL, &lo, &obj, &err);
    CHECK(rc == KUBE_OK && json_array_size(json_object_get(obj, "items")) == 1, "list namespaces by label", &err, rc);
    json_decref(obj);
    obj = NULL;
    rc = kube_get(admin, "v1", "ConfigMap", ns, "missing", &obj, &err);
    CHECK(rc == KUBE_NOT_FOUND && strstr(err.msg, "configmaps \"missing\" not found (HTTP 404 Not Found)"),
          "get missing is NotFound", &err, rc);

    /* --- update with optimistic concurrency */
    cm = configmap("cm", "1");
    rc = kube_create(admin, cm, &out, &err);
    CHECK(rc == KUBE_OK && rv_of(out), "create configmap", &err, rc);
    json_object_set_new(json_object_get(cm, "metadata"), "resourceVersion", json_string(rv_of(out)));
    json_decref(out);
    out = NULL;
    json_object_set_new(json_object_get(cm, "data"), "k", json_string("2"));
    rc = kube_update(admin, cm, &out, &err);
    CHECK(rc == KUBE_OK, "update with current resourceVersion", &err, rc);
    json_decref(out);
    out = NULL;
    rc = kube_update(admin, cm, NULL, &err); /* same, now stale, resourceVersion */
    CHECK(rc == KUBE_CONFLICT && strstr(err.msg, "the object has been modified"), "stale update is Conflict", &err, rc);
    printf("   message: %s\n", err.msg);

    /* --- pagination */
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof n, "page-%d", i);
        json_t *p = configmap(n, "x");
        rc = kube_create(admin, p, NULL, &err);
        json_decref(p);
        CHECK(rc == KUBE_OK, "create page configmap", &err, rc);
    }
    {
        size_t total = 0, pages = 0;
        char cont[1024] = "";
        do {
            kube_list_options po = {.label_selector = "olmv1-live=yes", .limit = 2, .continue_token = cont};
            rc = kube_list(admin, "v1", "ConfigMap", ns, &po, &obj, &err);
            if (rc != KUBE_OK)
                break;
            total += json_array_size(json_object_get(obj, "items"));
            pages++;
            const char *c = json_string_value(json_object_get(json_object_get(obj, "metadata"), "continue"));
            snprintf(cont, sizeof cont, "%s", c ? c : "");
            json_decref(obj);
            obj = NULL;
        } while (cont[0]);
        CHECK(rc == KUBE_OK && total == 4 && pages == 2, "list with limit/continue (4 items, 2 pages)", &err, rc);
    }

    /* --- server-side apply: create, conflict between managers, force */
    json_t *ssa = configmap("applied", "from-olm");
    rc = kube_apply(admin, ssa, "olm.operatorframework.io", true, NULL, &out, &err);
    CHECK(rc == KUBE_OK && strcmp(json_string_value(json_object_get(json_object_get(out, "data"), "k")), "from-olm") == 0,
          "server-side apply creates", &err, rc);
    json_decref(out);
    out = NULL;
    json_object_set_new(json_object_get(ssa, "data"), "k", json_string("from-other"));
    rc = kube_apply(admin, ssa, "someone-else", false, NULL, NULL, &err);
    CHECK(rc == KUBE_CONFLICT && strstr(err.msg, "conflict"), "apply by another manager without force conflicts", &err, rc);
    printf("   message: %s\n", err.msg);
    rc = kube_apply(admin, ssa, "someone-else", true, NULL, &out, &err);
    CHECK(rc == KUBE_OK, "apply with force takes ownership", &err, rc);
    json_decref(out);
    out = NULL;
    json_decref(ssa);

    /* --- patches and status subresource on a Deployment */
    dep = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i,s:{s:{s:s}},s:{s:{s:{s:s}},s:{s:[{s:s,s:s}]}}}}", "apiVersion",
                    "apps/v1", "kind", "Deployment", "metadata", "name", "web", "namespace", ns, "spec", "replicas", 1,
                    "selector", "matchLabels", "app", "web", "template", "metadata", "labels", "app", "web", "spec",
                    "containers", "name", "c", "image", "registry.invalid/none:1");
    rc = kube_apply(admin, dep, "olm.operatorframework.io", true, NULL, &out, &err);
    CHECK(rc == KUBE_OK, "apply deployment", &err, rc);
    json_decref(out);
    out = NULL;
    rc = kube_patch(admin, "apps/v1", "Deployment", ns, "web", NULL, KUBE_PATCH_MERGE,
                    "{\"metadata\":{\"labels\":{\"patched\":\"merge\"}}}", &out, &err);
    CHECK(rc == KUBE_OK, "merge patch", &err, rc);
    json_decref(out);
    out = NULL;
    rc = kube_patch(admin, "apps/v1", "Deployment", ns, "web", NULL, KUBE_PATCH_JSON,
                    "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":2}]", &out, &err);
    CHECK(rc == KUBE_OK && json_integer_value(json_object_get(json_object_get(out, "spec"), "replicas")) == 2,
          "json patch", &err, rc);
    json_decref(out);
    out = NULL;
    /* With kube-controller-manager running (e2e/cluster default), the deployment controller
     * writes this status too: a 409 is the documented "re-GET and retry", not a failure. */
    for (int attempt = 0; attempt < 10; attempt++) {
        if (attempt) {
            json_decref(obj);
            obj = NULL;
            usleep(100000);
        }
        rc = kube_get(admin, "apps/v1", "Deployment", ns, "web", &obj, &err);
        CHECK(rc == KUBE_OK, "get deployment", &err, rc);
        json_object_set_new(obj, "status", json_pack("{s:i,s:i,s:i}", "replicas", 2, "readyReplicas", 2, "availableReplicas", 2));
        rc = kube_update_status(admin, obj, &out, &err);
        if (rc != KUBE_CONFLICT)
            break;
    }
    CHECK(rc == KUBE_OK && json_integer_value(json_object_get(json_object_get(out, "status"), "availableReplicas")) == 2,
          "update status (PUT .../status)", &err, rc);
    json_decref(out);
    out = NULL;
    json_decref(obj);
    obj = NULL;

    /* --- discovery for a kind outside the built-in table */
    kube_resource_info ri;
    rc = kube_resolve_kind(admin, "apps/v1", "ControllerRevision", &ri, &err);
    CHECK(rc == 0 && strcmp(ri.resource, "controllerrevisions") == 0 && ri.namespaced, "discovery: ControllerRevision",
          &err, rc);
    rc = kube_resolve_kind(admin, "nothere.example.com/v1", "Thing", &ri, &err);
    CHECK(rc == -1 && strstr(err.msg, "does not serve"), "discovery: unknown group is a clear error", &err, rc);

    /* --- TokenRequest and acting as the ServiceAccount */
    json_t *sa = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata", "name",
                           "installer", "namespace", ns);
    rc = kube_create(admin, sa, NULL, &err);
    json_decref(sa);
    CHECK(rc == KUBE_OK, "create serviceaccount", &err, rc);
    time_t exp = 0;
    rc = kube_token_request(admin, ns, "installer", 600, NULL, &token, &exp, &err);
    CHECK(rc == KUBE_OK && token && exp > time(NULL) + 500 && exp < time(NULL) + 700, "TokenRequest (600 s)", &err, rc);
    explicit_bzero(token, strlen(token));
    free(token);
    token = NULL;
    rc = kube_token_request(admin, ns, "nobody", 600, NULL, &token, NULL, &err);
    CHECK(rc == KUBE_NOT_FOUND && strstr(err.msg, "serviceaccounts \"nobody\" not found"),
          "TokenRequest for a missing ServiceAccount is NotFound", &err, rc);
    rc = kube_token_request(admin, ns, "installer", 3600, NULL, &token, &exp, &err);
    CHECK(rc == KUBE_OK, "TokenRequest (3600 s)", &err, rc);
    kube_config sa_cfg;
    rc = kube_config_with_token(kube_client_config(admin), token, &sa_cfg, &err);
    CHECK(rc == 0, "kube_config_with_token", &err, rc);
    sa_client = kube_client_new(&sa_cfg, NULL, &err);
    if (!sa_client)
        kube_config_free(&sa_cfg);
    CHECK(sa_client != NULL, "client as the ServiceAccount", &err, -1);
    rc = kube_apply(sa_client, dep, "olm.operatorframework.io", true, NULL, NULL, &err);
    char want[512];
    snprintf(want, sizeof want,
             "User \"system:serviceaccount:%s:installer\" cannot patch resource \"deployments\" in API group \"apps\" "
             "in the namespace \"%s\"",
             ns, ns);
    CHECK(rc == KUBE_FORBIDDEN && strstr(err.msg, want) && strstr(err.msg, "(HTTP 403 Forbidden)"),
          "apply as the ServiceAccount is Forbidden, naming verb and resource", &err, rc);
    printf("   message: %s\n", err.msg);
    rc = kube_get(sa_client, "v1", "Namespace", NULL, ns, &obj, &err);
    snprintf(want, sizeof want, "cannot get resource \"namespaces\" in API group \"\"");
    CHECK(rc == KUBE_FORBIDDEN && strstr(err.msg, want), "get as the ServiceAccount is Forbidden", &err, rc);
    kube_config bad;
    rc = kube_config_with_token(kube_client_config(admin), "not-a-token", &bad, &err);
    kube_client *bad_client = rc == 0 ? kube_client_new(&bad, NULL, &err) : NULL;
    rc = bad_client ? kube_get(bad_client, "v1", "Namespace", NULL, ns, &obj, &err) : -1;
    kube_client_free(bad_client);
    if (!bad_client)
        kube_config_free(&bad);
    CHECK(rc == KUBE_UNAUTHORIZED && strstr(err.msg, "HTTP 401"), "a bad token is Unauthorized", &err, rc);
    printf("   message: %s\n", err.msg);

    /* --- delete with preconditions and propagation policy */
    kube_delete_options wrong = {.precondition_uid = "00000000-0000-0000-0000-000000000000", .grace_period_seconds = -1};
    rc = kube_delete(admin, "v1", "ConfigMap", ns, "cm", &wrong, &err);
    CHECK(rc == KUBE_CONFLICT && strstr(err.msg, "the UID in the precondition"), "delete with a wrong UID precondition is Conflict",
          &err, rc);
    printf("   message: %s\n", err.msg);
    kube_delete_options bg = {.propagation_policy = "Background", .grace_period_seconds = 0};
    rc = kube_delete(admin, "v1", "ConfigMap", ns, "cm", &bg, &err);
    CHECK(rc == KUBE_OK, "delete (Background)", &err, rc);
    rc = kube_delete(admin, "v1", "ConfigMap", ns, "cm", NULL, &err);
    CHECK(rc == KUBE_NOT_FOUND, "delete again is NotFound", &err, rc);

out:
    json_decref(obj);
    json_decref(out);
    json_decref(cm);
    json_decref(dep);
    if (token) {
        explicit_bzero(token, strlen(token));
        free(token);
    }
    kube_client_free(sa_client);
    kube_delete_options fg = {.propagation_policy = "Foreground", .grace_period_seconds = -1};
    int drc = kube_delete(admin, "v1", "Namespace", NULL, ns, &fg, &err);
    if (drc != KUBE_OK)
        fprintf(stderr, "cleanup: deleting namespace %s: %s\n", ns, err.msg);
    return failed ? 1 : 0;
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
    snprintf(ns, sizeof ns, "olmv1-live-%ld", (long)getpid());
    int rc = run();
    kube_client_free(admin);
    if (rc == 0)
        printf("kube_live_check: all checks passed\n");
    return rc;
}
