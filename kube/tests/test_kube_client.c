/* Unit tests for kube_client: Status error messages, result codes, path and
 * query building, and request/response behaviour of every verb against the
 * in-process fake HTTP server (fake_http_server.h) on 127.0.0.1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_http_server.h"
#include "kube_client.h"
#include "kube_client_internal.h" /* the connection pool clients share */

/* ------------------------------------------------------------ pure functions */

static void test_status_errors(void **state)
{
    (void)state;
    olm_error err = {""};
    const char *forbidden =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"deployments.apps "
        "\\\"x\\\" is forbidden: User \\\"system:serviceaccount:ns:sa\\\" cannot create resource "
        "\\\"deployments\\\" in API group \\\"apps\\\" in the namespace \\\"ns\\\"\",\"reason\":\"Forbidden\","
        "\"details\":{\"name\":\"x\",\"group\":\"apps\",\"kind\":\"deployments\"},\"code\":403}";
    assert_int_equal(kube_status_error(403, forbidden, strlen(forbidden), "POST", "/apis/apps/v1/namespaces/ns/deployments", &err),
                     KUBE_FORBIDDEN);
    assert_string_equal(err.msg, "deployments.apps \"x\" is forbidden: User \"system:serviceaccount:ns:sa\" cannot "
                                 "create resource \"deployments\" in API group \"apps\" in the namespace \"ns\" "
                                 "(HTTP 403 Forbidden)");

    const char *exists = "{\"kind\":\"Status\",\"message\":\"namespaces \\\"a\\\" already exists\",\"reason\":\"AlreadyExists\",\"code\":409}";
    assert_int_equal(kube_status_error(409, exists, strlen(exists), "POST", "/api/v1/namespaces", &err), KUBE_ALREADY_EXISTS);
    assert_string_equal(err.msg, "namespaces \"a\" already exists (HTTP 409 Conflict)");
    const char *conflict = "{\"kind\":\"Status\",\"message\":\"Operation cannot be fulfilled\",\"reason\":\"Conflict\",\"code\":409}";
    assert_int_equal(kube_status_error(409, conflict, strlen(conflict), "PUT", "/p", &err), KUBE_CONFLICT);

    const char *html = "<html>\n<body>Bad gateway</body></html>";
    assert_int_equal(kube_status_error(502, html, strlen(html), "GET", "/api", &err), KUBE_UNAVAILABLE);
    assert_string_equal(err.msg, "GET /api: HTTP 502 Bad Gateway: <html> <body>Bad gateway</body></html>");

    assert_int_equal(kube_status_error(401, "", 0, "GET", "/api", &err), KUBE_UNAUTHORIZED);
    assert_non_null(strstr(err.msg, "HTTP 401 Unauthorized: the API server rejected the credentials"));

    const char *reason_only = "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}";
    assert_int_equal(kube_status_error(404, reason_only, strlen(reason_only), "GET", "/x", &err), KUBE_NOT_FOUND);
    assert_string_equal(err.msg, "GET /x: NotFound (HTTP 404 Not Found)");

    assert_int_equal(kube_result_from_http(422, NULL), KUBE_INVALID);
    assert_int_equal(kube_result_from_http(410, NULL), KUBE_GONE);
    assert_int_equal(kube_result_from_http(201, NULL), KUBE_OK);
    assert_string_equal(kube_result_name(KUBE_CONFLICT), "Conflict");
}

static void test_paths(void **state)
{
    (void)state;
    olm_error err = {""};
    kube_resource_info ri;
    assert_true(kube_builtin_kind("apps/v1", "Deployment", &ri));
    char *p = kube_resource_path(&ri, "ns", "web", NULL, &err);
    assert_string_equal(p, "/apis/apps/v1/namespaces/ns/deployments/web");
    free(p);
    p = kube_resource_path(&ri, NULL, NULL, NULL, &err); /* all namespaces */
    assert_string_equal(p, "/apis/apps/v1/deployments");
    free(p);
    assert_null(kube_resource_path(&ri, NULL, "web", NULL, &err));
    assert_non_null(strstr(err.msg, "namespace is required"));

    assert_true(kube_builtin_kind("v1", "ServiceAccount", &ri));
    p = kube_resource_path(&ri, "ns", "sa", "token", &err);
    assert_string_equal(p, "/api/v1/namespaces/ns/serviceaccounts/sa/token");
    free(p);

    assert_true(kube_builtin_kind("rbac.authorization.k8s.io/v1", "ClusterRole", &ri));
    assert_false(ri.namespaced);
    p = kube_resource_path(&ri, "ignored", "system:controller:x", NULL, &err);
    assert_string_equal(p, "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Acontroller%3Ax");
    free(p);
    assert_null(kube_resource_path(&ri, NULL, "a/b", NULL, &err));
    assert_non_null(strstr(err.msg, "invalid name"));

    assert_true(kube_builtin_kind("olm.operatorframework.io/v1", "ClusterExtension", &ri));
    p = kube_resource_path(&ri, NULL, "ext", "status", &err);
    assert_string_equal(p, "/apis/olm.operatorframework.io/v1/clusterextensions/ext/status");
    free(p);

    assert_false(kube_builtin_kind("apps/v1beta9", "Deployment", &ri));
    assert_false(kube_builtin_kind("a/b/c", "Deployment", &ri));
}

static void test_queries(void **state)
{
    (void)state;
    char *q = kube_apply_query("olm.operatorframework.io", true);
    assert_string_equal(q, "fieldManager=olm.operatorframework.io&force=true");
    free(q);
    q = kube_apply_query("m", false);
    assert_string_equal(q, "fieldManager=m");
    free(q);
    q = NULL;
    assert_int_equal(kube_query_add(&q, "labelSelector", "app in (a,b),!x"), 0);
    assert_int_equal(kube_query_add(&q, "limit", "5"), 0);
    assert_string_equal(q, "labelSelector=app%20in%20%28a%2Cb%29%2C%21x&limit=5");
    free(q);
}

static void test_parse_time(void **state)
{
    (void)state;
    time_t t;
    assert_int_equal(kube_parse_time("1970-01-01T01:00:00Z", &t), 0);
    assert_int_equal((long)t, 3600);
    assert_int_equal(kube_parse_time("2024-01-02T03:04:05.123456Z", &t), 0);
    assert_int_equal((long)t, 1704164645);
    assert_int_equal(kube_parse_time("2024-01-02T05:04:05+02:00", &t), 0);
    assert_int_equal((long)t, 1704164645);
    assert_int_equal(kube_parse_time("2024-01-02 03:04:05", &t), -1);
    assert_int_equal(kube_parse_time("2024-01-02T03:04:05Zjunk", &t), -1);
}

/* ------------------------------------------------------------ against the fake server */

struct fixture {
    fake_http_server srv;
    kube_client *c;
};

static int srv_setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(fake_http_start(&f->srv), 0);
    kube_config cfg = {0};
    cfg.server = strdup(f->srv.url);
    cfg.token = strdup("admin-token");
    olm_error err = {""};
    kube_client_options o = {.connect_timeout_ms = 2000, .timeout_ms = 5000, .user_agent = "olmv1-test"};
    f->c = kube_client_new(&cfg, &o, &err);
    assert_non_null(f->c);
    assert_null(cfg.server); /* ownership moved */
    *state = f;
    return 0;
}

static int srv_teardown(void **state)
{
    struct fixture *f = *state;
    kube_client_free(f->c);
    fake_http_stop(&f->srv);
    free(f);
    return 0;
}

static const fake_http_request *req_at(struct fixture *f, size_t i)
{
    assert_true(fake_http_count(&f->srv) > i);
    return &f->srv.reqs[i];
}

static void test_get_and_headers(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    fake_http_push(&f->srv, 200, "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}");
    json_t *obj = NULL;
    assert_int_equal(kube_get(f->c, "v1", "ConfigMap", "ns", "x", &obj, &err), KUBE_OK);
    assert_string_equal(json_string_value(json_object_get(obj, "kind")), "ConfigMap");
    json_decref(obj);
    const fake_http_request *r = req_at(f, 0);
    char buf[256];
    assert_string_equal(r->method, "GET");
    assert_string_equal(r->target, "/api/v1/namespaces/ns/configmaps/x");
    assert_string_equal(fake_http_header(r, "Authorization", buf, sizeof buf), "Bearer admin-token");
    assert_string_equal(fake_http_header(r, "Accept", buf, sizeof buf), "application/json");
    assert_string_equal(fake_http_header(r, "User-Agent", buf, sizeof buf), "olmv1-test");

    fake_http_push(&f->srv, 404, "{\"kind\":\"Status\",\"message\":\"configmaps \\\"y\\\" not found\",\"reason\":\"NotFound\",\"code\":404}");
    assert_int_equal(kube_get(f->c, "v1", "ConfigMap", "ns", "y", &obj, &err), KUBE_NOT_FOUND);
    assert_null(obj);
    assert_string_equal(err.msg, "configmaps \"y\" not found (HTTP 404 Not Found)");

    fake_http_push(&f->srv, 200, "not json");
    assert_int_equal(kube_get(f->c, "v1", "ConfigMap", "ns", "z", &obj, &err), KUBE_ERROR);
    assert_non_null(strstr(err.msg, "invalid JSON"));
}

/* Clients for different tokens made from one base share one connection pool (pooled easy
 * handles with their connections go from one identity to the next), yet every request
 * carries its own client's token and never the base's or the other client's. */
static void test_token_clients_share_pool_not_tokens(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    kube_client_options o = {.user_agent = "sa-test"};
    kube_client *a = kube_client_new_for_token(f->c, "token-a", &o, &err);
    kube_client *b = kube_client_new_for_token(f->c, "token-b", NULL, &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_equal(a->conns, b->conns);   /* one pool for every token client */
    assert_ptr_not_equal(a->conns, f->c->conns); /* kept apart from the base's own */
    assert_null(kube_client_new_for_token(f->c, "", NULL, &err));
    kube_client *order[] = {a, b, a, f->c, b, b, a};
    const char *want[] = {"Bearer token-a", "Bearer token-b", "Bearer token-a", "Bearer admin-token",
                          "Bearer token-b", "Bearer token-b", "Bearer token-a"};
    size_t n = sizeof order / sizeof order[0];
    for (size_t i = 0; i < n; i++) {
        fake_http_push(&f->srv, 200, "{}");
        json_t *obj = NULL;
        assert_int_equal(kube_get(order[i], "v1", "ConfigMap", "ns", "x", &obj, &err), KUBE_OK);
        json_decref(obj);
    }
    assert_int_equal(a->conns->nidle, 1); /* the same handle went round all token clients */
    char buf[256];
    for (size_t i = 0; i < n; i++)
        assert_string_equal(fake_http_header(req_at(f, i), "Authorization", buf, sizeof buf), want[i]);
    assert_string_equal(fake_http_header(req_at(f, 0), "User-Agent", buf, sizeof buf), "sa-test");
    /* The base may go first: the token clients keep the pool (and its CA copy) alive. */
    kube_client_free(f->c);
    f->c = NULL;
    fake_http_push(&f->srv, 200, "{}");
    json_t *obj = NULL;
    assert_int_equal(kube_get(b, "v1", "ConfigMap", "ns", "x", &obj, &err), KUBE_OK);
    json_decref(obj);
    assert_string_equal(fake_http_header(req_at(f, n), "Authorization", buf, sizeof buf), "Bearer token-b");
    kube_client_free(a);
    kube_client_free(b);
}

/* An impersonation credential in place of a token: the base's own credentials, the user in
 * Impersonate-User, over the base's own pool; a token client never carries that header. */
static void test_impersonating_client(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    kube_client *imp = kube_client_new_for_token(f->c, KUBE_IMPERSONATION_PREFIX "system:serviceaccount:ns:installer",
                                                 NULL, &err);
    kube_client *tok = kube_client_new_for_token(f->c, "token-a", NULL, &err);
    assert_non_null(imp);
    assert_non_null(tok);
    assert_ptr_equal(imp->conns, f->c->conns); /* the base's credentials: the base's connections */
    assert_null(kube_client_new_for_token(f->c, KUBE_IMPERSONATION_PREFIX, NULL, &err));
    assert_non_null(strstr(err.msg, "no user to impersonate"));
    kube_client *order[] = {imp, tok, f->c};
    for (size_t i = 0; i < 3; i++) {
        fake_http_push(&f->srv, 200, "{}");
        json_t *obj = NULL;
        assert_int_equal(kube_get(order[i], "v1", "ConfigMap", "ns", "x", &obj, &err), KUBE_OK);
        json_decref(obj);
    }
    char buf[256];
    assert_string_equal(fake_http_header(req_at(f, 0), "Authorization", buf, sizeof buf), "Bearer admin-token");
    assert_string_equal(fake_http_header(req_at(f, 0), "Impersonate-User", buf, sizeof buf),
                        "system:serviceaccount:ns:installer");
    assert_string_equal(fake_http_header(req_at(f, 1), "Authorization", buf, sizeof buf), "Bearer token-a");
    assert_string_equal(fake_http_header(req_at(f, 1), "Impersonate-User", buf, sizeof buf), "");
    assert_string_equal(fake_http_header(req_at(f, 2), "Impersonate-User", buf, sizeof buf), "");
    kube_client_free(imp);
    kube_client_free(tok);
}

static void test_self_access_review(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    bool allowed = true;
    fake_http_push(&f->srv, 201, "{\"kind\":\"SelfSubjectAccessReview\",\"status\":{\"allowed\":false}}");
    kube_access a = {.verb = "impersonate", .resource = "serviceaccounts"};
    assert_int_equal(kube_self_allowed(f->c, &a, &allowed, &err), KUBE_OK);
    assert_false(allowed);
    const fake_http_request *r = req_at(f, 0);
    assert_string_equal(r->method, "POST");
    assert_string_equal(r->target, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
    json_t *got = json_loads(r->body, 0, NULL);
    json_t *want = json_pack("{s:s,s:s,s:{s:{s:s,s:s,s:s}}}", "apiVersion", "authorization.k8s.io/v1", "kind",
                             "SelfSubjectAccessReview", "spec", "resourceAttributes", "verb", "impersonate", "group", "",
                             "resource", "serviceaccounts");
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    fake_http_push(&f->srv, 201, "{\"status\":{\"allowed\":true}}");
    kube_access g = {.verb = "get", .resource = "serviceaccounts", .namespace = "ns"};
    assert_int_equal(kube_self_allowed(f->c, &g, &allowed, &err), KUBE_OK);
    assert_true(allowed);
    got = json_loads(req_at(f, 1)->body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(got, "spec"), "resourceAttributes"), "namespace")),
                        "ns");
    json_decref(got);
    fake_http_push(&f->srv, 403, "{\"kind\":\"Status\",\"message\":\"no\",\"reason\":\"Forbidden\",\"code\":403}");
    assert_int_equal(kube_self_allowed(f->c, &a, &allowed, &err), KUBE_FORBIDDEN);
    assert_false(allowed);
    assert_non_null(strstr(err.msg, "SelfSubjectAccessReview of impersonate serviceaccounts"));
}

static void test_list(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    fake_http_push(&f->srv, 200, "{\"kind\":\"DeploymentList\",\"metadata\":{\"continue\":\"c2\"},\"items\":[]}");
    kube_list_options o = {.label_selector = "olm.operatorframework.io/owner-name=ext",
                           .field_selector = "metadata.name=a", .limit = 50, .continue_token = "c1"};
    json_t *list = NULL;
    assert_int_equal(kube_list(f->c, "apps/v1", "Deployment", NULL, &o, &list, &err), KUBE_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(list, "metadata"), "continue")), "c2");
    json_decref(list);
    assert_string_equal(req_at(f, 0)->target,
                        "/apis/apps/v1/deployments?labelSelector=olm.operatorframework.io%2Fowner-name%3Dext"
                        "&fieldSelector=metadata.name%3Da&limit=50&continue=c1");
    fake_http_push(&f->srv, 410, "{\"kind\":\"Status\",\"message\":\"The provided continue parameter is too old\",\"reason\":\"Expired\",\"code\":410}");
    assert_int_equal(kube_list(f->c, "v1", "Secret", "ns", NULL, &list, &err), KUBE_GONE);
    assert_string_equal(req_at(f, 1)->target, "/api/v1/namespaces/ns/secrets");
}

static void test_create_update_status(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    json_t *cm = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                           "name", "x", "namespace", "ns", "resourceVersion", "7", "data", "k", "v");
    fake_http_push(&f->srv, 201, "{\"metadata\":{\"resourceVersion\":\"8\"}}");
    json_t *out = NULL;
    assert_int_equal(kube_create(f->c, cm, &out, &err), KUBE_OK);
    json_decref(out);
    const fake_http_request *r = req_at(f, 0);
    char buf[128];
    assert_string_equal(r->method, "POST");
    assert_string_equal(r->target, "/api/v1/namespaces/ns/configmaps");
    assert_string_equal(fake_http_header(r, "Content-Type", buf, sizeof buf), "application/json");
    json_t *sent = json_loads(r->body, 0, NULL);
    assert_true(json_equal(sent, cm));
    json_decref(sent);

    fake_http_push(&f->srv, 409, "{\"kind\":\"Status\",\"message\":\"Operation cannot be fulfilled on configmaps \\\"x\\\": "
                                 "the object has been modified; please apply your changes to the latest version and try again\","
                                 "\"reason\":\"Conflict\",\"code\":409}");
    assert_int_equal(kube_update(f->c, cm, &out, &err), KUBE_CONFLICT);
    assert_null(out);
    assert_non_null(strstr(err.msg, "the object has been modified"));
    assert_non_null(strstr(err.msg, "(HTTP 409 Conflict)"));
    assert_string_equal(req_at(f, 1)->method, "PUT");
    assert_string_equal(req_at(f, 1)->target, "/api/v1/namespaces/ns/configmaps/x");

    json_t *ce = json_pack("{s:s,s:s,s:{s:s},s:{}}", "apiVersion", "olm.operatorframework.io/v1", "kind",
                           "ClusterExtension", "metadata", "name", "ext", "status");
    fake_http_push(&f->srv, 200, "{}");
    assert_int_equal(kube_update_status(f->c, ce, NULL, &err), KUBE_OK);
    assert_string_equal(req_at(f, 2)->target, "/apis/olm.operatorframework.io/v1/clusterextensions/ext/status");

    /* Local validation: no request is sent. */
    size_t n = fake_http_count(&f->srv);
    json_object_del(json_object_get(cm, "metadata"), "namespace");
    assert_int_equal(kube_create(f->c, cm, NULL, &err), KUBE_ERROR);
    assert_non_null(strstr(err.msg, "namespaced but has no metadata.namespace"));
    assert_int_equal(fake_http_count(&f->srv), n);
    json_decref(cm);
    json_decref(ce);
}

static void test_patch_and_apply(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    char buf[128];
    fake_http_push(&f->srv, 200, "{}");
    assert_int_equal(kube_patch(f->c, "v1", "Namespace", NULL, "a", NULL, KUBE_PATCH_MERGE,
                                "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}", NULL, &err), KUBE_OK);
    fake_http_push(&f->srv, 200, "{}");
    assert_int_equal(kube_patch(f->c, "apps/v1", "Deployment", "ns", "d", "status", KUBE_PATCH_JSON,
                                "[{\"op\":\"add\",\"path\":\"/status/replicas\",\"value\":1}]", NULL, &err), KUBE_OK);
    assert_string_equal(req_at(f, 0)->method, "PATCH");
    assert_string_equal(fake_http_header(req_at(f, 0), "Content-Type", buf, sizeof buf), "application/merge-patch+json");
    assert_string_equal(req_at(f, 1)->target, "/apis/apps/v1/namespaces/ns/deployments/d/status");
    assert_string_equal(fake_http_header(req_at(f, 1), "Content-Type", buf, sizeof buf), "application/json-patch+json");

    json_t *dep = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "name",
                            "d", "namespace", "ns");
    fake_http_push(&f->srv, 201, "{\"kind\":\"Deployment\"}");
    json_t *out = NULL;
    assert_int_equal(kube_apply(f->c, dep, "olm.operatorframework.io", true, NULL, &out, &err), KUBE_OK);
    assert_non_null(out);
    json_decref(out);
    const fake_http_request *r = req_at(f, 2);
    assert_string_equal(r->method, "PATCH");
    assert_string_equal(r->target, "/apis/apps/v1/namespaces/ns/deployments/d?fieldManager=olm.operatorframework.io&force=true");
    assert_string_equal(fake_http_header(r, "Content-Type", buf, sizeof buf), "application/apply-patch+yaml");
    json_t *sent = json_loads(r->body, 0, NULL);
    assert_true(json_equal(sent, dep));
    json_decref(sent);

    fake_http_push(&f->srv, 409, "{\"kind\":\"Status\",\"message\":\"Apply failed with 1 conflict: conflict with \\\"kubectl\\\": .spec.replicas\",\"reason\":\"Conflict\",\"code\":409}");
    assert_int_equal(kube_apply(f->c, dep, "mgr", false, "status", NULL, &err), KUBE_CONFLICT);
    assert_string_equal(req_at(f, 3)->target, "/apis/apps/v1/namespaces/ns/deployments/d/status?fieldManager=mgr");
    assert_non_null(strstr(err.msg, "Apply failed with 1 conflict"));
    assert_int_equal(kube_apply(f->c, dep, "", true, NULL, NULL, &err), KUBE_ERROR);
    json_decref(dep);
}

static void test_delete(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    fake_http_push(&f->srv, 200, "{\"kind\":\"Status\",\"status\":\"Success\"}");
    kube_delete_options o = {.propagation_policy = "Foreground", .precondition_uid = "u-1",
                             .precondition_resource_version = "9", .grace_period_seconds = -1};
    assert_int_equal(kube_delete(f->c, "v1", "Namespace", NULL, "gone", &o, &err), KUBE_OK);
    const fake_http_request *r = req_at(f, 0);
    assert_string_equal(r->method, "DELETE");
    assert_string_equal(r->target, "/api/v1/namespaces/gone");
    json_t *want = json_pack("{s:s,s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "DeleteOptions",
                             "propagationPolicy", "Foreground", "preconditions", "uid", "u-1", "resourceVersion", "9");
    json_t *sent = json_loads(r->body, 0, NULL);
    assert_true(json_equal(sent, want));
    json_decref(sent);
    json_decref(want);
    fake_http_push(&f->srv, 404, "{\"kind\":\"Status\",\"message\":\"namespaces \\\"gone\\\" not found\",\"reason\":\"NotFound\",\"code\":404}");
    assert_int_equal(kube_delete(f->c, "v1", "Namespace", NULL, "gone", NULL, &err), KUBE_NOT_FOUND);
    assert_int_equal(req_at(f, 1)->body_len, 0);
}

static void test_token_request(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    fake_http_push(&f->srv, 201, "{\"kind\":\"TokenRequest\",\"status\":{\"token\":\"eyJ.sa\",\"expirationTimestamp\":\"2030-01-01T00:00:00Z\"}}");
    const char *auds[] = {"https://kubernetes.default.svc", NULL};
    char *tok = NULL;
    time_t exp = 0;
    assert_int_equal(kube_token_request(f->c, "ns", "installer", 3600, auds, &tok, &exp, &err), KUBE_OK);
    assert_string_equal(tok, "eyJ.sa");
    assert_int_equal((long)exp, 1893456000L);
    free(tok);
    const fake_http_request *r = req_at(f, 0);
    assert_string_equal(r->method, "POST");
    assert_string_equal(r->target, "/api/v1/namespaces/ns/serviceaccounts/installer/token");
    json_t *want = json_pack("{s:s,s:s,s:{s:i,s:[s]}}", "apiVersion", "authentication.k8s.io/v1", "kind", "TokenRequest",
                             "spec", "expirationSeconds", 3600, "audiences", "https://kubernetes.default.svc");
    json_t *sent = json_loads(r->body, 0, NULL);
    assert_true(json_equal(sent, want));
    json_decref(sent);
    json_decref(want);

    assert_int_equal(kube_token_request(f->c, "ns", "installer", 300, NULL, &tok, NULL, &err), KUBE_ERROR);
    assert_non_null(strstr(err.msg, "minimum of 600"));
    assert_int_equal(fake_http_count(&f->srv), 1);

    fake_http_push(&f->srv, 404, "{\"kind\":\"Status\",\"message\":\"serviceaccounts \\\"nope\\\" not found\",\"reason\":\"NotFound\",\"code\":404}");
    assert_int_equal(kube_token_request(f->c, "ns", "nope", 600, NULL, &tok, NULL, &err), KUBE_NOT_FOUND);
    assert_string_equal(err.msg, "TokenRequest for ServiceAccount ns/nope: serviceaccounts \"nope\" not found (HTTP 404 Not Found)");
    assert_null(tok);
    fake_http_push(&f->srv, 201, "{\"status\":{}}");
    assert_int_equal(kube_token_request(f->c, "ns", "sa", 600, NULL, &tok, NULL, &err), KUBE_ERROR);
    assert_non_null(strstr(err.msg, "no status.token"));
}

static void test_discovery(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    fake_http_push(&f->srv, 200,
                   "{\"kind\":\"APIResourceList\",\"groupVersion\":\"example.com/v1\",\"resources\":["
                   "{\"name\":\"widgets/status\",\"kind\":\"Widget\",\"namespaced\":true},"
                   "{\"name\":\"widgets\",\"kind\":\"Widget\",\"namespaced\":true},"
                   "{\"name\":\"gadgets\",\"kind\":\"Gadget\",\"namespaced\":false}]}");
    fake_http_push(&f->srv, 200, "{}");
    json_t *obj = NULL;
    assert_int_equal(kube_get(f->c, "example.com/v1", "Widget", "ns", "w", &obj, &err), KUBE_OK);
    json_decref(obj);
    assert_string_equal(req_at(f, 0)->target, "/apis/example.com/v1");
    assert_string_equal(req_at(f, 1)->target, "/apis/example.com/v1/namespaces/ns/widgets/w");
    kube_resource_info ri;
    assert_int_equal(kube_resolve_kind(f->c, "example.com/v1", "Gadget", &ri, &err), 0); /* cached */
    assert_string_equal(ri.resource, "gadgets");
    assert_false(ri.namespaced);
    assert_int_equal(fake_http_count(&f->srv), 2);

    /* A kind missing from the cache refreshes once, then fails clearly. */
    fake_http_push(&f->srv, 200, "{\"kind\":\"APIResourceList\",\"resources\":[]}");
    assert_int_equal(kube_resolve_kind(f->c, "example.com/v1", "Sprocket", &ri, &err), -1);
    assert_string_equal(err.msg, "the server has no kind \"Sprocket\" in apiVersion \"example.com/v1\"");
    assert_int_equal(fake_http_count(&f->srv), 3);

    fake_http_push(&f->srv, 404, "{}");
    fake_http_push(&f->srv, 404, "{}");
    assert_int_equal(kube_resolve_kind(f->c, "nothere.io/v1", "X", &ri, &err), -1);
    assert_non_null(strstr(err.msg, "does not serve apiVersion \"nothere.io/v1\""));
    bool served = true;
    assert_int_equal(kube_group_version_served(f->c, "nothere.io/v1", &served, &err), 0); /* cached 404 */
    assert_false(served);
    assert_int_equal(fake_http_count(&f->srv), 5);
    kube_discovery_reset(f->c);
    fake_http_push(&f->srv, 200, "{\"resources\":[]}");
    assert_int_equal(kube_group_version_served(f->c, "nothere.io/v1", &served, &err), 0);
    assert_true(served);

    fake_http_push(&f->srv, 403, "{\"kind\":\"Status\",\"message\":\"forbidden: User \\\"x\\\" cannot get path \\\"/apis/a.io/v1\\\"\",\"reason\":\"Forbidden\",\"code\":403}");
    assert_int_equal(kube_resolve_kind(f->c, "a.io/v1", "A", &ri, &err), -1);
    assert_non_null(strstr(err.msg, "discovery: forbidden: User \"x\" cannot get path"));
}

static void test_raw_request(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    fake_http_push_ct(&f->srv, 503, "text/plain", "overloaded");
    kube_response resp;
    long st = kube_request(f->c, "GET", "/readyz", "verbose=1", NULL, NULL, 0, &resp, &err);
    assert_int_equal(st, 503);
    assert_string_equal(resp.body, "overloaded");
    assert_string_equal(resp.content_type, "text/plain");
    assert_string_equal(req_at(f, 0)->target, "/readyz?verbose=1");
    kube_response_free(&resp);
}

/* A 429 or 5xx with a Retry-After was not carried out: sent again (body and all) after
 * the wait; without a Retry-After the status comes back at once (test_raw_request). */
static void test_retry_after(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    static const char throttled[] = "{\"kind\":\"Status\",\"code\":429,\"reason\":\"TooManyRequests\","
                                    "\"message\":\"too many requests, please try again later\"}";
    fake_http_push_headers(&f->srv, 429, "Retry-After: 0\r\n", throttled);
    fake_http_push_headers(&f->srv, 503, "Retry-After: 1\r\n", "{}");
    fake_http_push(&f->srv, 201, "{\"metadata\":{\"name\":\"x\"}}");
    json_t *out = NULL;
    assert_int_equal(kube_request_json(f->c, "POST", "/api/v1/namespaces", NULL, "application/json",
                                       "{\"metadata\":{\"name\":\"x\"}}", &out, &err), KUBE_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "metadata"), "name")), "x");
    json_decref(out);
    assert_int_equal(fake_http_count(&f->srv), 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(req_at(f, i)->method, "POST");
        assert_string_equal(req_at(f, i)->body, "{\"metadata\":{\"name\":\"x\"}}");
    }

    /* An HTTP-date, or no number at all, is no Retry-After: the 429 is the answer. */
    fake_http_push_headers(&f->srv, 429, "Retry-After: Wed, 21 Oct 2026 07:28:00 GMT\r\n", throttled);
    assert_int_equal(kube_request_json(f->c, "GET", "/api/v1/namespaces/x", NULL, NULL, NULL, &out, &err),
                     KUBE_UNAVAILABLE);
    assert_non_null(strstr(err.msg, "too many requests"));
    assert_int_equal(fake_http_count(&f->srv), 4);

    /* A 4xx other than 429 is never retried, whatever it carries. */
    fake_http_push_headers(&f->srv, 409, "Retry-After: 0\r\n", "{\"kind\":\"Status\",\"code\":409}");
    assert_int_equal(kube_request_json(f->c, "GET", "/api/v1/namespaces/x", NULL, NULL, NULL, &out, &err),
                     KUBE_CONFLICT);
    assert_int_equal(fake_http_count(&f->srv), 5);

    /* A wait beyond the client's request timeout (5 s here) is not waited: the 429 is the
     * answer at once. */
    fake_http_push_headers(&f->srv, 429, "Retry-After: 30\r\n", throttled);
    assert_int_equal(kube_request_json(f->c, "GET", "/api/v1/namespaces/x", NULL, NULL, NULL, &out, &err),
                     KUBE_UNAVAILABLE);
    assert_int_equal(fake_http_count(&f->srv), 6);

    /* It gives up after 10 retries and returns the last answer. */
    for (int i = 0; i < 12; i++)
        fake_http_push_headers(&f->srv, 429, "Retry-After: 0\r\n", throttled);
    assert_int_equal(kube_request_json(f->c, "GET", "/api/v1/namespaces/x", NULL, NULL, NULL, &out, &err),
                     KUBE_UNAVAILABLE);
    assert_int_equal(fake_http_count(&f->srv), 6 + 11);
}

/* Idle pooled connections are closed on request (own pool and the token clients' shared
 * one); calls after that connect again. */
static void test_close_idle(void **state)
{
    struct fixture *f = *state;
    olm_error err = {""};
    kube_client *sa = kube_client_new_for_token(f->c, "sa-token", NULL, &err);
    assert_non_null(sa);
    for (int i = 0; i < 2; i++)
        fake_http_push(&f->srv, 200, "{\"kind\":\"Namespace\"}");
    json_t *out = NULL;
    assert_int_equal(kube_request_json(f->c, "GET", "/api/v1/namespaces/a", NULL, NULL, NULL, &out, &err), KUBE_OK);
    json_decref(out);
    assert_int_equal(kube_request_json(sa, "GET", "/api/v1/namespaces/b", NULL, NULL, NULL, &out, &err), KUBE_OK);
    json_decref(out);
    kube_conn_pool *own = f->c->conns, *shared = f->c->token_conns;
    assert_non_null(shared);
    assert_int_equal(own->nidle, 1);
    assert_int_equal(shared->nidle, 1);
    kube_client_close_idle(f->c);
    assert_int_equal(own->nidle, 0);
    assert_int_equal(shared->nidle, 0);
    fake_http_push(&f->srv, 200, "{\"kind\":\"Namespace\"}");
    assert_int_equal(kube_request_json(sa, "GET", "/api/v1/namespaces/c", NULL, NULL, NULL, &out, &err), KUBE_OK);
    json_decref(out);
    assert_int_equal(shared->nidle, 1);
    kube_client_free(sa);
}

static void test_connection_failure(void **state)
{
    (void)state;
    /* Take a port that is certainly closed: start and stop a fake server. */
    fake_http_server tmp;
    assert_int_equal(fake_http_start(&tmp), 0);
    fake_http_stop(&tmp);
    kube_config cfg = {0};
    cfg.server = strdup(tmp.url);
    olm_error err = {""};
    kube_client *c = kube_client_new(&cfg, NULL, &err);
    assert_non_null(c);
    json_t *obj = NULL;
    assert_int_equal(kube_get(c, "v1", "Namespace", NULL, "x", &obj, &err), KUBE_ERROR);
    char want[256];
    snprintf(want, sizeof want, "cannot reach the Kubernetes API server %s (GET /api/v1/namespaces/x): ", tmp.url);
    if (!strstr(err.msg, want) || !strstr(err.msg, "onnect"))
        fail_msg("unexpected message: %s", err.msg);
    kube_client_free(c);

    kube_config empty = {0};
    assert_null(kube_client_new(&empty, NULL, &err));
    assert_non_null(strstr(err.msg, "no server"));
}

static void ok_handler(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    (void)s;
    (void)req;
    *resp = (fake_http_response){.status = 200, .body = "{\"kind\":\"Namespace\"}"};
}

struct worker {
    kube_client *c;
    int ok;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < 10; i++) {
        olm_error err = {""};
        json_t *obj = NULL;
        if (kube_get(w->c, "v1", "Namespace", NULL, "n", &obj, &err) == KUBE_OK)
            w->ok++;
        json_decref(obj);
    }
    return NULL;
}

/* One client used from several threads at once (pooled handles, shared CURLSH). */
static void test_concurrent_use(void **state)
{
    struct fixture *f = *state;
    f->srv.handler = ok_handler; /* set before any request: no race with the server thread */
    pthread_t t[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){f->c, 0};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].ok, 10);
    }
    assert_int_equal(fake_http_count(&f->srv), 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_errors),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_queries),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test_setup_teardown(test_get_and_headers, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_list, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_create_update_status, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_patch_and_apply, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_delete, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_token_request, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_impersonating_client, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_self_access_review, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_discovery, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_raw_request, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_retry_after, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_close_idle, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_use, srv_setup, srv_teardown),
        cmocka_unit_test_setup_teardown(test_token_clients_share_pool_not_tokens, srv_setup, srv_teardown),
        cmocka_unit_test(test_connection_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
