/* clusterextension_token_cache: reuse while more than a third of the lifetime remains,
 * the server's expirationTimestamp, 401 invalidation (only of the rejected token),
 * forget, mint failures, and concurrent gets, with a fake clock and a fake TokenRequest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterextension.h"
#include "fake_http_server.h"

typedef struct fake {
    time_t now;
    int64_t server_lifetime; /* what the "apiserver" grants; 0: no expirationTimestamp */
    int fail;                /* negative kube_result to return, 0: succeed */
    unsigned minted;
    int64_t asked_seconds;
    pthread_mutex_t lock;
} fake;

static time_t fake_now(void *data)
{
    fake *f = data;
    pthread_mutex_lock(&f->lock);
    time_t t = f->now;
    pthread_mutex_unlock(&f->lock);
    return t;
}

static int fake_mint(void *data, const char *ns, const char *sa, int64_t seconds, char **token, time_t *expires,
                     olm_error *err)
{
    fake *f = data;
    pthread_mutex_lock(&f->lock);
    f->asked_seconds = seconds;
    if (f->fail) {
        int rc = f->fail;
        pthread_mutex_unlock(&f->lock);
        return olm_error_set(err, "serviceaccounts \"%s\" not found", sa), rc;
    }
    unsigned n = ++f->minted;
    *expires = f->server_lifetime ? f->now + (time_t)f->server_lifetime : 0;
    pthread_mutex_unlock(&f->lock);
    if (asprintf(token, "tok-%s-%s-%u", ns, sa, n) < 0)
        return olm_error_set(err, "out of memory");
    return 0;
}

static clusterextension_token_cache *new_cache(fake *f, int64_t lifetime)
{
    pthread_mutex_init(&f->lock, NULL);
    clusterextension_token_cache_options o = {.lifetime_seconds = lifetime, .mint = fake_mint, .mint_data = f, .now = fake_now,
                                .clock_data = f};
    olm_error err;
    clusterextension_token_cache *c = clusterextension_token_cache_new(&o, &err);
    assert_non_null(c);
    return c;
}

static void get(clusterextension_token_cache *c, const char *ns, const char *sa, const char *want)
{
    clusterextension_token t;
    olm_error err;
    assert_int_equal(clusterextension_token_cache_get(c, ns, sa, &t, &err), 0);
    assert_string_equal(t.value, want);
    clusterextension_token_free(&t);
    assert_null(t.value);
}

/* Many ServiceAccounts (the table grows past its first buckets several times): each keeps its
 * own token, found again without a mint; forgetting one drops it alone. */
static void test_many_service_accounts(void **state)
{
    (void)state;
    fake f = {.now = 1000, .server_lifetime = 3600};
    clusterextension_token_cache *c = new_cache(&f, 3600);
    char ns[32], want[64];
    for (unsigned i = 0; i < 1000; i++) {
        snprintf(ns, sizeof ns, "ns-%u", i);
        snprintf(want, sizeof want, "tok-%s-installer-%u", ns, i + 1);
        get(c, ns, "installer", want);
    }
    assert_int_equal(clusterextension_token_cache_size(c), 1000);
    for (unsigned i = 0; i < 1000; i++) {
        snprintf(ns, sizeof ns, "ns-%u", i);
        snprintf(want, sizeof want, "tok-%s-installer-%u", ns, i + 1);
        get(c, ns, "installer", want);
    }
    assert_int_equal(f.minted, 1000);
    clusterextension_token_cache_forget(c, "ns-500", "installer");
    assert_int_equal(clusterextension_token_cache_size(c), 999);
    get(c, "ns-500", "installer", "tok-ns-500-installer-1001");
    get(c, "ns-501", "installer", "tok-ns-501-installer-502");
    assert_int_equal(f.minted, 1001);
    clusterextension_token_cache_free(c);
    pthread_mutex_destroy(&f.lock);
}

static void test_reused_until_two_thirds_of_the_lifetime(void **state)
{
    fake f = {.now = 1000, .server_lifetime = 3600};
    clusterextension_token_cache *c = new_cache(&f, 3600);
    clusterextension_token t;
    olm_error err;
    assert_int_equal(clusterextension_token_cache_get(c, "ns", "sa", &t, &err), 0);
    assert_string_equal(t.value, "tok-ns-sa-1");
    assert_int_equal(t.expires, 1000 + 3600);
    assert_int_equal(t.refresh_at, 1000 + 2400); /* a third (1200 s) before expiry */
    clusterextension_token_free(&t);
    assert_int_equal(f.asked_seconds, 3600);

    f.now = 1000 + 2399;
    get(c, "ns", "sa", "tok-ns-sa-1");
    assert_int_equal(f.minted, 1);
    f.now = 1000 + 2400;
    get(c, "ns", "sa", "tok-ns-sa-2");
    assert_int_equal(f.minted, 2);
    get(c, "ns", "sa", "tok-ns-sa-2");
    assert_int_equal(clusterextension_token_cache_mints(c), 2);
    assert_int_equal(clusterextension_token_cache_size(c), 1);
    clusterextension_token_cache_free(c);
}

static void test_server_shortened_lifetime_is_honoured(void **state)
{
    /* Asked for an hour, got ten minutes (--service-account-max-token-expiration). */
    fake f = {.now = 0, .server_lifetime = 600};
    clusterextension_token_cache *c = new_cache(&f, 3600);
    get(c, "ns", "sa", "tok-ns-sa-1");
    f.now = 399;
    get(c, "ns", "sa", "tok-ns-sa-1");
    f.now = 400;
    get(c, "ns", "sa", "tok-ns-sa-2");
    clusterextension_token_cache_free(c);
}

static void test_no_expiration_timestamp_uses_requested_seconds(void **state)
{
    fake f = {.now = 50, .server_lifetime = 0};
    clusterextension_token_cache *c = new_cache(&f, 0); /* default lifetime: 3600 */
    clusterextension_token t;
    olm_error err;
    assert_int_equal(clusterextension_token_cache_get(c, "ns", "sa", &t, &err), 0);
    assert_int_equal(f.asked_seconds, 3600);
    assert_int_equal(t.expires, 50 + 3600);
    assert_int_equal(t.refresh_at, 50 + 2400);
    clusterextension_token_free(&t);
    clusterextension_token_cache_free(c);
}

static void test_entries_are_per_namespace_and_service_account(void **state)
{
    fake f = {.now = 0, .server_lifetime = 3600};
    clusterextension_token_cache *c = new_cache(&f, 3600);
    get(c, "a", "sa", "tok-a-sa-1");
    get(c, "b", "sa", "tok-b-sa-2");
    get(c, "a", "other", "tok-a-other-3");
    get(c, "a", "sa", "tok-a-sa-1");
    assert_int_equal(clusterextension_token_cache_size(c), 3);
    clusterextension_token_cache_forget(c, "b", "sa");
    assert_int_equal(clusterextension_token_cache_size(c), 2);
    get(c, "b", "sa", "tok-b-sa-4");
    clusterextension_token_cache_free(c);
}

static void test_invalidate_drops_only_the_rejected_token(void **state)
{
    fake f = {.now = 0, .server_lifetime = 3600};
    clusterextension_token_cache *c = new_cache(&f, 3600);
    get(c, "ns", "sa", "tok-ns-sa-1");
    /* A 401 seen with an older token that another reconcile already replaced. */
    clusterextension_token_cache_invalidate(c, "ns", "sa", "tok-ns-sa-0");
    get(c, "ns", "sa", "tok-ns-sa-1");
    clusterextension_token_cache_invalidate(c, "ns", "sa", "tok-ns-sa-1");
    assert_int_equal(clusterextension_token_cache_size(c), 0);
    get(c, "ns", "sa", "tok-ns-sa-2");
    clusterextension_token_cache_invalidate(c, "ns", "nope", NULL); /* unknown: nothing happens */
    assert_int_equal(clusterextension_token_cache_size(c), 1);
    clusterextension_token_cache_free(c);
}

static void test_mint_failure_keeps_nothing(void **state)
{
    fake f = {.now = 0, .server_lifetime = 3600, .fail = KUBE_NOT_FOUND};
    clusterextension_token_cache *c = new_cache(&f, 3600);
    clusterextension_token t;
    olm_error err;
    assert_int_equal(clusterextension_token_cache_get(c, "ns", "sa", &t, &err), KUBE_NOT_FOUND);
    assert_null(t.value);
    assert_string_equal(err.msg, "serviceaccounts \"sa\" not found");
    assert_int_equal(clusterextension_token_cache_size(c), 0);
    f.fail = 0;
    get(c, "ns", "sa", "tok-ns-sa-1");
    clusterextension_token_cache_free(c);
}

static void test_new_requires_a_mint_function(void **state)
{
    clusterextension_token_cache_options o = {0};
    olm_error err;
    assert_null(clusterextension_token_cache_new(&o, &err));
    assert_non_null(strstr(err.msg, "mint function"));
}

/* Reconciles run on several threads: gets, invalidations and clock moves at once. */
typedef struct worker {
    clusterextension_token_cache *c;
    fake *f;
    int id;
} worker;

static void *hammer(void *data)
{
    worker *w = data;
    char sa[16];
    for (int i = 0; i < 2000; i++) {
        snprintf(sa, sizeof sa, "sa%d", i % 5);
        clusterextension_token t;
        olm_error err;
        if (clusterextension_token_cache_get(w->c, "ns", sa, &t, &err) != 0)
            return "get failed";
        if (strncmp(t.value, "tok-ns-", 7) != 0)
            return "bad token";
        if (i % 97 == w->id)
            clusterextension_token_cache_invalidate(w->c, "ns", sa, t.value);
        clusterextension_token_free(&t);
        if (i % 500 == 0) {
            pthread_mutex_lock(&w->f->lock);
            w->f->now += 1000;
            pthread_mutex_unlock(&w->f->lock);
        }
    }
    return NULL;
}

static void test_concurrent_use(void **state)
{
    fake f = {.now = 0, .server_lifetime = 3600};
    clusterextension_token_cache *c = new_cache(&f, 3600);
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){c, &f, i};
        assert_int_equal(pthread_create(&th[i], NULL, hammer, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *res = NULL;
        pthread_join(th[i], &res);
        assert_null(res);
    }
    assert_true(clusterextension_token_cache_size(c) <= 5);
    assert_true(clusterextension_token_cache_mints(c) >= 5);
    assert_true(clusterextension_token_cache_mints(c) < 4 * 2000); /* reuse happened */
    clusterextension_token_cache_free(c);
}

/* A fake apiserver started in *srv, and operator-controller's own client for it. */
static kube_client *admin_on(fake_http_server *srv)
{
    assert_int_equal(fake_http_start(srv), 0);
    kube_config cfg = {.server = strdup(srv->url), .token = strdup("own-token")};
    olm_error err = {""};
    kube_client *admin = kube_client_new(&cfg, NULL, &err);
    assert_non_null(admin);
    return admin;
}

/* Impersonation: no TokenRequest; the ServiceAccount is read from the watch cache, and a 404
 * there is read again from etcd before it counts (it is usually created just before). */
static void test_impersonation_mint_checks_the_service_account(void **state)
{
    (void)state;
    fake_http_server srv;
    kube_client *admin = admin_on(&srv);
    olm_error err = {""};
    static const char sa_json[] = "{\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"installer\"}}";
    static const char gone[] = "{\"kind\":\"Status\",\"message\":\"serviceaccounts \\\"installer\\\" not found\","
                               "\"reason\":\"NotFound\",\"code\":404}";
    char *cred = NULL;
    time_t exp = 0, t0 = time(NULL);
    clusterextension_identity_source src = {.admin = admin}; /* no informer: a GET each time */

    fake_http_push(&srv, 200, sa_json);
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "installer", 3600, &cred, &exp, &err), 0);
    assert_true(kube_credential_is_impersonation(cred));
    assert_memory_equal(cred, KUBE_IMPERSONATION_PREFIX "system:serviceaccount:ns:installer ",
                        strlen(KUBE_IMPERSONATION_PREFIX "system:serviceaccount:ns:installer "));
    char *first = cred;
    assert_true(exp >= t0 + 3600 && exp <= time(NULL) + 3600);
    assert_int_equal(fake_http_count(&srv), 1);
    assert_string_equal(srv.reqs[0].target, "/api/v1/namespaces/ns/serviceaccounts/installer?resourceVersion=0");

    fake_http_push(&srv, 404, gone); /* not in the watch cache yet */
    fake_http_push(&srv, 200, sa_json);
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "installer", 600, &cred, &exp, &err), 0);
    assert_non_null(cred);
    assert_string_not_equal(cred, first); /* each one new, as a token would be */
    free(first);
    free(cred);
    assert_int_equal(fake_http_count(&srv), 3);
    assert_string_equal(srv.reqs[2].target, "/api/v1/namespaces/ns/serviceaccounts/installer");

    fake_http_push(&srv, 404, gone);
    fake_http_push(&srv, 404, gone);
    cred = NULL;
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "installer", 600, &cred, &exp, &err),
                     KUBE_NOT_FOUND);
    assert_null(cred);

    fake_http_push(&srv, 403, "{\"kind\":\"Status\",\"message\":\"forbidden\",\"reason\":\"Forbidden\",\"code\":403}");
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "installer", 600, &cred, &exp, &err),
                     KUBE_FORBIDDEN);
    assert_null(cred);
    assert_int_equal(fake_http_count(&srv), 6);
    kube_client_free(admin);
    fake_http_stop(&srv);
}

static void on_closed_uc(void *d)
{
    kube_uvcurl_close(d, NULL, NULL);
}

static json_t *service_account(const char *ns, const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata", "name",
                     name, "namespace", ns, "resourceVersion", "7");
}

/* With an informer of ServiceAccounts: one it holds needs no request; one it lacks is read
 * from the apiserver; and it is trusted neither before its first LIST nor after it lost an
 * event. */
static void test_impersonation_mint_reads_the_informer(void **state)
{
    (void)state;
    fake_http_server srv;
    kube_client *admin = admin_on(&srv);
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err = {""};
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    assert_non_null(uc);
    kube_config kcfg = {.server = "http://127.0.0.1:9"}; /* never contacted: not started */
    kube_watch_options wo = {.path = "/api/v1/serviceaccounts"};
    kube_informer *inf = kube_informer_new(uc, &kcfg, &wo, NULL, NULL, &err);
    assert_non_null(inf);
    kube_informer_set_transform(inf, clusterextension_identity_service_account_form);
    json_t *sa = service_account("ns", "installer");
    kube_informer_apply(inf, KUBE_WATCH_ADDED, sa);
    json_decref(sa);
    clusterextension_identity_source src = {.admin = admin, .service_accounts = inf};
    static const char sa_json[] = "{\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"other\"}}";
    char *cred = NULL;
    time_t exp = 0;

    fake_http_push(&srv, 200, sa_json); /* not synced yet: read */
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "installer", 600, &cred, &exp, &err), 0);
    free(cred);
    assert_int_equal(fake_http_count(&srv), 1);

    kube_informer_mark_synced(inf);
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "installer", 600, &cred, &exp, &err), 0);
    assert_true(kube_credential_is_impersonation(cred));
    free(cred);
    assert_int_equal(fake_http_count(&srv), 1); /* from the informer */

    fake_http_push(&srv, 200, sa_json); /* one it has not seen (yet): read */
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "other", 600, &cred, &exp, &err), 0);
    free(cred);
    assert_int_equal(fake_http_count(&srv), 2);
    assert_string_equal(srv.reqs[1].target, "/api/v1/namespaces/ns/serviceaccounts/other?resourceVersion=0");

    json_t *nameless = json_pack("{s:s, s:{}}", "kind", "ServiceAccount", "metadata");
    kube_informer_apply(inf, KUBE_WATCH_ADDED, nameless); /* lost: the cache is no longer trusted */
    json_decref(nameless);
    fake_http_push(&srv, 200, sa_json);
    assert_int_equal(clusterextension_identity_mint_impersonation(&src, "ns", "installer", 600, &cred, &exp, &err), 0);
    free(cred);
    assert_int_equal(fake_http_count(&srv), 3);

    kube_informer_stop(inf, on_closed_uc, uc);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    kube_client_free(admin);
    fake_http_stop(&srv);
}

/* auto asks whether it may impersonate and get serviceaccounts: both yes -> impersonation;
 * a no, or no answer (a 403 on the review itself) -> tokens; a fixed mode asks nothing. */
static void test_identity_choice(void **state)
{
    (void)state;
    fake_http_server srv;
    kube_client *admin = admin_on(&srv);
    static const char yes[] = "{\"status\":{\"allowed\":true}}", no[] = "{\"status\":{\"allowed\":false}}";
    fake_http_push(&srv, 201, yes);
    fake_http_push(&srv, 201, yes);
    assert_true(clusterextension_identity_impersonates(admin, CE_IDENTITY_AUTO));
    assert_int_equal(fake_http_count(&srv), 2);
    assert_non_null(strstr(srv.reqs[0].body, "\"verb\":\"impersonate\""));
    assert_non_null(strstr(srv.reqs[1].body, "\"verb\":\"get\""));
    fake_http_push(&srv, 201, no); /* upstream's RBAC: no impersonation */
    assert_false(clusterextension_identity_impersonates(admin, CE_IDENTITY_AUTO));
    assert_int_equal(fake_http_count(&srv), 3);
    fake_http_push(&srv, 201, yes);
    fake_http_push(&srv, 201, no);
    assert_false(clusterextension_identity_impersonates(admin, CE_IDENTITY_AUTO));
    fake_http_push(&srv, 403, "{\"kind\":\"Status\",\"message\":\"no\",\"reason\":\"Forbidden\",\"code\":403}");
    assert_false(clusterextension_identity_impersonates(admin, CE_IDENTITY_AUTO));
    assert_int_equal(fake_http_count(&srv), 6);
    assert_true(clusterextension_identity_impersonates(admin, CE_IDENTITY_IMPERSONATION));
    assert_false(clusterextension_identity_impersonates(admin, CE_IDENTITY_TOKEN));
    assert_int_equal(fake_http_count(&srv), 6);
    kube_client_free(admin);
    fake_http_stop(&srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reused_until_two_thirds_of_the_lifetime),
        cmocka_unit_test(test_server_shortened_lifetime_is_honoured),
        cmocka_unit_test(test_no_expiration_timestamp_uses_requested_seconds),
        cmocka_unit_test(test_entries_are_per_namespace_and_service_account),
        cmocka_unit_test(test_invalidate_drops_only_the_rejected_token),
        cmocka_unit_test(test_mint_failure_keeps_nothing),
        cmocka_unit_test(test_new_requires_a_mint_function),
        cmocka_unit_test(test_concurrent_use),
        cmocka_unit_test(test_many_service_accounts),
        cmocka_unit_test(test_impersonation_mint_checks_the_service_account),
        cmocka_unit_test(test_impersonation_mint_reads_the_informer),
        cmocka_unit_test(test_identity_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
