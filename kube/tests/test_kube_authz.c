/* Tests of kube_authz against a fake apiserver that answers TokenReviews and
 * SubjectAccessReviews: the 401/403/200/500 decisions, the caches, the request bodies,
 * cancel and free while a review is in flight, and rest_client_requests_total counting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <string.h>

#include "fake_http_server.h"
#include "kube_authz.h"
#include "kube_request_metrics.h"

/* Tokens: "alice" and "bob" authenticate as themselves, anything else does not; "boom"
 * makes the TokenReview fail with 500.  Only alice may get /metrics. */
static void review_handler(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    json_t *body = json_loads(req->body, 0, NULL);
    const json_t *spec = json_object_get(body, "spec");
    static const char *const out[] = {
        "{\"status\":{\"authenticated\":false}}",
        "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"alice\",\"uid\":\"1\",\"groups\":[\"g\"]}}}",
        "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"bob\",\"groups\":[\"g\"]}}}",
        "{\"status\":{\"allowed\":true}}",
        "{\"status\":{\"allowed\":false,\"reason\":\"no\"}}",
        "{\"kind\":\"Status\",\"message\":\"etcd is sad\"}",
    };
    *resp = (fake_http_response){.status = 201, .body = out[0]};
    if (strcmp(req->target, "/apis/authentication.k8s.io/v1/tokenreviews") == 0) {
        const char *tok = json_string_value(json_object_get(spec, "token"));
        if (tok && strcmp(tok, "alice") == 0)
            resp->body = out[1];
        else if (tok && strcmp(tok, "bob") == 0)
            resp->body = out[2];
        else if (tok && strcmp(tok, "boom") == 0)
            *resp = (fake_http_response){.status = 500, .body = out[5]};
    } else if (strcmp(req->target, "/apis/authorization.k8s.io/v1/subjectaccessreviews") == 0) {
        const char *user = json_string_value(json_object_get(spec, "user"));
        const json_t *nr = json_object_get(spec, "nonResourceAttributes");
        const char *path = json_string_value(json_object_get(nr, "path"));
        bool metrics = path && strcmp(path, "/metrics") == 0;
        resp->body = user && strcmp(user, "alice") == 0 && metrics ? out[3] : out[4];
    } else {
        *resp = (fake_http_response){.status = 404, .body = "{}"};
    }
    json_decref(body);
    (void)s;
}

typedef struct fixture {
    fake_http_server srv;
    uv_loop_t loop;
    kube_uvcurl *uc;
    kube_config cfg;
    kube_request_metrics *rm;
    kube_authz *az;
    int status, calls;
    char msg[256], detail[1024];
} fixture;

static void on_decided(int status, const char *msg, const char *detail, void *data)
{
    fixture *f = data;
    f->status = status;
    f->calls++;
    snprintf(f->msg, sizeof f->msg, "%s", msg);
    snprintf(f->detail, sizeof f->detail, "%s", detail ? detail : "");
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(fake_http_start(&f->srv), 0);
    f->srv.handler = review_handler;
    assert_int_equal(uv_loop_init(&f->loop), 0);
    olm_error err;
    f->uc = kube_uvcurl_new(&f->loop, &err);
    assert_non_null(f->uc);
    f->rm = kube_request_metrics_new();
    assert_non_null(f->rm);
    kube_uvcurl_set_request_metrics(f->uc, f->rm);
    f->cfg.server = f->srv.url;
    f->az = kube_authz_new(f->uc, &f->cfg, NULL, &err);
    assert_non_null(f->az);
    *state = f;
    return 0;
}

static void uc_closed(void *data)
{
    *(bool *)data = true;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kube_authz_free(f->az);
    bool closed = false;
    kube_uvcurl_close(f->uc, uc_closed, &closed);
    while (!closed)
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    fake_http_stop(&f->srv);
    kube_request_metrics_free(f->rm);
    free(f);
    return 0;
}

/* Runs one check to its end: the status, from the cache or from the fake apiserver. */
static int check(fixture *f, const char *authorization, const char *path)
{
    kube_authz_pending *p;
    char msg[256] = "";
    f->calls = 0;
    int rc = kube_authz_check(f->az, authorization, "get", path, on_decided, f, &p, msg, sizeof msg);
    if (rc != 0) {
        assert_null(p);
        snprintf(f->msg, sizeof f->msg, "%s", msg);
        f->detail[0] = '\0';
        return rc;
    }
    assert_non_null(p);
    while (f->calls == 0)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_int_equal(f->calls, 1);
    return f->status;
}

static void test_no_or_malformed_token_is_401_without_a_review(void **state)
{
    fixture *f = *state;
    assert_int_equal(check(f, NULL, "/metrics"), 401);
    assert_string_equal(f->msg, "Unauthorized");
    assert_int_equal(check(f, "Basic YWxpY2U6eA==", "/metrics"), 401);
    assert_int_equal(check(f, "Bearer ", "/metrics"), 401);
    assert_int_equal(check(f, "Bearer a b", "/metrics"), 401);
    assert_int_equal(kube_authz_reviews(f->az), 0);
}

static void test_allowed_denied_and_cached(void **state)
{
    fixture *f = *state;
    assert_int_equal(check(f, "Bearer alice", "/metrics"), 200);
    assert_int_equal(kube_authz_reviews(f->az), 2); /* TokenReview + SubjectAccessReview */
    assert_int_equal(check(f, "bearer  alice", "/metrics"), 200); /* scheme in any case */
    assert_int_equal(kube_authz_reviews(f->az), 2);              /* both cached */

    assert_int_equal(check(f, "Bearer bob", "/metrics"), 403);
    assert_string_equal(f->msg, "Authorization denied for user bob");
    assert_int_equal(check(f, "Bearer bob", "/metrics"), 403);
    assert_string_equal(f->msg, "Authorization denied for user bob");
    assert_int_equal(kube_authz_reviews(f->az), 4);

    assert_int_equal(check(f, "Bearer mallory", "/metrics"), 401);
    assert_int_equal(check(f, "Bearer mallory", "/metrics"), 401);
    assert_int_equal(kube_authz_reviews(f->az), 5);

    /* Another path is another authorization decision for the same (cached) user. */
    assert_int_equal(check(f, "Bearer alice", "/debug"), 403);
    assert_int_equal(kube_authz_reviews(f->az), 6);
}

static void test_review_bodies(void **state)
{
    fixture *f = *state;
    assert_int_equal(check(f, "Bearer alice", "/metrics"), 200);
    pthread_mutex_lock(&f->srv.lock);
    assert_int_equal(f->srv.n_reqs, 2);
    json_t *tr = json_loads(f->srv.reqs[0].body, 0, NULL), *sar = json_loads(f->srv.reqs[1].body, 0, NULL);
    pthread_mutex_unlock(&f->srv.lock);
    json_t *want_tr = json_loads("{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\","
                                 "\"spec\":{\"token\":\"alice\"}}",
                                 0, NULL);
    json_t *want_sar = json_loads("{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\","
                                  "\"spec\":{\"user\":\"alice\",\"uid\":\"1\",\"groups\":[\"g\"],"
                                  "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"}}}",
                                  0, NULL);
    assert_true(json_equal(tr, want_tr));
    assert_true(json_equal(sar, want_sar));
    json_decref(tr);
    json_decref(sar);
    json_decref(want_tr);
    json_decref(want_sar);
}

static void test_failed_review_is_500_with_a_detail(void **state)
{
    fixture *f = *state;
    assert_int_equal(check(f, "Bearer boom", "/metrics"), 500);
    assert_string_equal(f->msg, "Authentication failed");
    assert_string_equal(f->detail, "TokenReview: HTTP 500: etcd is sad");
    /* Not cached: the next try asks again. */
    assert_int_equal(check(f, "Bearer boom", "/metrics"), 500);
    assert_int_equal(kube_authz_reviews(f->az), 2);
}

static void test_cancel_and_free_while_pending(void **state)
{
    fixture *f = *state;
    kube_authz_pending *p;
    char msg[128];
    f->calls = 0;
    assert_int_equal(kube_authz_check(f->az, "Bearer alice", "get", "/metrics", on_decided, f, &p, msg, sizeof msg),
                     0);
    kube_authz_cancel(p);
    for (int i = 0; i < 20; i++)
        uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(f->calls, 0);

    assert_int_equal(kube_authz_check(f->az, "Bearer bob", "get", "/metrics", on_decided, f, &p, msg, sizeof msg), 0);
    kube_authz_free(f->az);
    assert_int_equal(f->calls, 1);
    assert_int_equal(f->status, 503);
    olm_error err;
    f->az = kube_authz_new(f->uc, &f->cfg, NULL, &err); /* for teardown */
    assert_non_null(f->az);
}

static void test_too_many_pending_is_503(void **state)
{
    fixture *f = *state;
    kube_authz_free(f->az);
    olm_error err;
    kube_authz_options o = {.max_pending = 1};
    f->az = kube_authz_new(f->uc, &f->cfg, &o, &err);
    kube_authz_pending *p, *q;
    char msg[128];
    assert_int_equal(kube_authz_check(f->az, "Bearer alice", "get", "/metrics", on_decided, f, &p, msg, sizeof msg),
                     0);
    assert_int_equal(kube_authz_check(f->az, "Bearer bob", "get", "/metrics", on_decided, f, &q, msg, sizeof msg),
                     503);
    assert_null(q);
    kube_authz_cancel(p);
}

static void test_requests_are_counted(void **state)
{
    fixture *f = *state;
    assert_int_equal(check(f, "Bearer alice", "/metrics"), 200);
    assert_int_equal(check(f, "Bearer boom", "/metrics"), 500);
    strbuf out = STRBUF_INIT;
    assert_int_equal(kube_request_metrics_render(f->rm, &out), 0);
    char want[256];
    snprintf(want, sizeof want, "rest_client_requests_total{code=\"201\",host=\"127.0.0.1:%d\",method=\"POST\"} 2\n",
             f->srv.port);
    assert_non_null(strstr(strbuf_str(&out), want));
    snprintf(want, sizeof want, "rest_client_requests_total{code=\"500\",host=\"127.0.0.1:%d\",method=\"POST\"} 1\n",
             f->srv.port);
    assert_non_null(strstr(strbuf_str(&out), want));
    strbuf_free(&out);

    kube_request_metrics_observe(f->rm, "GET", "h:1", 0);
    assert_int_equal(kube_request_metrics_render(f->rm, &out), 0);
    assert_non_null(
        strstr(strbuf_str(&out), "rest_client_requests_total{code=\"<error>\",host=\"h:1\",method=\"GET\"} 1\n"));
    strbuf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_or_malformed_token_is_401_without_a_review, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allowed_denied_and_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_review_is_500_with_a_detail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_and_free_while_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_many_pending_is_503, setup, teardown),
        cmocka_unit_test_setup_teardown(test_requests_are_counted, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
