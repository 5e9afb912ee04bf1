/* objectset_watches when operator-controller may not watch a type itself: the type is watched
 * with the credential a revision's pass offers (a ServiceAccount's token, or an impersonation
 * of it), a ServiceAccount refused too is not asked again, and once the borrowed watch has
 * listed the type counts as watched and its events queue the set that controls the object.
 * Real kube_watches against testsupport's HTTP fake (streaming mode), which authorizes by the
 * bearer token or the Impersonate-User header as an apiserver's RBAC would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdatomic.h>
#include <unistd.h>

#include "fake_http_server.h"
#include "kube_config.h"
#include "kube_uvcurl.h"
#include "name_log.h"
#include "olm_log.h"
#include "stderr_capture.h"
#include "objectset_watch.h"
#include "objectset_watch_internal.h"

#define PATH "/apis/apps/v1/deployments"
#define NS_PATH "/apis/apps/v1/namespaces/nb/deployments" /* where ServiceAccount b may watch */
#define SA_A "system:serviceaccount:ns:a"

typedef struct counts {
    int lists_operator, lists_b, lists_a, watches_a, lists_c_old, watches_c_old;
    int operator_in_ns, lists_b_ns, watches_b_ns; /* requests for NS_PATH */
    char last_user[128];
} counts;

static atomic_bool release_401; /* the second watch of token-c-old answers 401 once set */

static counts seen;
static name_log queued;

/* Who a request acts as: the impersonated user, else the bearer token. */
static void user_of(const fake_http_request *req, char *out, size_t len)
{
    char buf[256];
    const char *imp = fake_http_header(req, "Impersonate-User", buf, sizeof buf); /* "" when absent */
    if (*imp) {
        snprintf(out, len, "%s", imp);
        return;
    }
    const char *auth = fake_http_header(req, "Authorization", buf, sizeof buf);
    snprintf(out, len, "%s", auth && strncmp(auth, "Bearer ", 7) == 0 ? auth + 7 : "");
}

static void handler(fake_http_conn *c, const fake_http_request *req, void *user)
{
    (void)user;
    char who[128];
    user_of(req, who, sizeof who);
    bool watch = strstr(req->target, "watch=") != NULL;
    bool in_nb = strncmp(req->target, NS_PATH, strlen(NS_PATH)) == 0;
    pthread_mutex_lock(&c->s->lock);
    snprintf(seen.last_user, sizeof seen.last_user, "%s", who);
    int *count = in_nb && strcmp(who, "operator-token") == 0 ? &seen.operator_in_ns
                 : in_nb && strcmp(who, "token-b") == 0    ? (watch ? &seen.watches_b_ns : &seen.lists_b_ns)
                 : strcmp(who, "operator-token") == 0 ? &seen.lists_operator
                 : strcmp(who, "token-b") == 0      ? &seen.lists_b
                 : strcmp(who, SA_A) == 0           ? (watch ? &seen.watches_a : &seen.lists_a)
                 : strcmp(who, "token-c-old") == 0  ? (watch ? &seen.watches_c_old : &seen.lists_c_old)
                                                    : NULL;
    int n = count ? ++*count : 0;
    pthread_mutex_unlock(&c->s->lock);
    if (strcmp(who, "token-c-old") == 0 && watch && n >= 2) { /* the token expired meanwhile */
        while (!atomic_load(&release_401))
            usleep(1000);
        fake_http_respond(c, 401, "{\"kind\":\"Status\",\"code\":401,\"reason\":\"Unauthorized\"}");
        return;
    }
    bool allowed = strcmp(who, SA_A) == 0 || strncmp(who, "token-c-", 8) == 0 ||
                   (in_nb && strcmp(who, "token-b") == 0); /* b: a RoleBinding in nb */
    if (!allowed) {
        fake_http_respond(c, 403, "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"deployments.apps "
                                  "is forbidden: cannot list resource deployments at the cluster scope\"}");
        return;
    }
    if (!watch) {
        fake_http_respond(c, 200, "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}");
        return;
    }
    fake_http_chunked_begin(c, 200);
    if (in_nb) {
        static const char ev_b[] =
            "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"op\",\"namespace\":\"nb\",\"uid\":\"u2\","
            "\"resourceVersion\":\"7\",\"ownerReferences\":[{\"kind\":\"ClusterObjectSet\",\"name\":\"rev-b-1\","
            "\"controller\":true}]}}}\n";
        fake_http_chunk(c, ev_b, strlen(ev_b));
        fake_http_hold_open(c);
        return;
    }
    static const char ev[] =
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"op\",\"namespace\":\"ns\",\"uid\":\"u1\","
        "\"resourceVersion\":\"6\",\"ownerReferences\":[{\"kind\":\"ClusterObjectSet\",\"name\":\"rev-a-1\","
        "\"controller\":true}]}}}\n";
    fake_http_chunk(c, ev, strlen(ev));
    if (strcmp(who, "token-c-old") == 0) { /* a watch's normal end (its timeout): watched again */
        fake_http_chunked_end(c);
        return;
    }
    fake_http_hold_open(c);
}

static int get_count(fake_http_server *s, const int *field)
{
    pthread_mutex_lock(&s->lock);
    int n = *field;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Runs the loop until cond() or 10 s (a failure). */
static void spin_until(uv_loop_t *loop, bool (*cond)(void *), void *data)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!cond(data)) {
        uv_run(loop, UV_RUN_NOWAIT);
        usleep(1000);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10)
            fail_msg("condition not reached within 10 s");
    }
}

typedef struct world {
    fake_http_server srv;
    uv_loop_t loop;
    kube_uvcurl *uc;
    kube_config cfg; /* borrowed strings: not freed */
    objectset_watches *ws;
} world;

static bool flag_set(void *data);
static void set_flag(void *data);

/* The fake apiserver, a loop and the watches, operator-controller's token "operator-token". */
static void world_start(world *w)
{
    memset(&seen, 0, sizeof seen);
    name_log_clear(&queued);
    memset(w, 0, sizeof *w);
    assert_int_equal(fake_http_start_streaming(&w->srv, handler, NULL), 0);
    assert_int_equal(uv_loop_init(&w->loop), 0);
    olm_error err;
    w->uc = kube_uvcurl_new(&w->loop, &err);
    assert_non_null(w->uc);
    w->cfg.server = w->srv.url;
    w->cfg.token = "operator-token";
    w->ws = objectset_watches_new(&w->loop, w->uc, &w->cfg, name_log_record, &queued, &err);
    assert_non_null(w->ws);
}

static void world_stop(world *w)
{
    bool closed = false;
    objectset_watches_stop(w->ws, set_flag, &closed);
    spin_until(&w->loop, flag_set, &closed);
    objectset_watches_free(w->ws);
    bool uc_closed = false;
    kube_uvcurl_close(w->uc, set_flag, &uc_closed);
    spin_until(&w->loop, flag_set, &uc_closed);
    uv_run(&w->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&w->loop), 0);
    fake_http_stop(&w->srv);
}

static bool operator_refused(void *data)
{
    world *w = data;
    return get_count(&w->srv, &seen.lists_operator) >= 1 && objectset_watches_active(w->ws) == 0;
}

static bool b_refused(void *data)
{
    world *w = data;
    return get_count(&w->srv, &seen.lists_b) >= 1 && objectset_watches_active(w->ws) == 0;
}

static bool event_queued(void *data)
{
    (void)data;
    return queued.n >= 1;
}

static bool flag_set(void *data)
{
    return *(bool *)data;
}

static void set_flag(void *data)
{
    *(bool *)data = true;
}

static void test_refused_type_watched_as_service_account(void **state)
{
    (void)state;
    world w;
    world_start(&w);

    /* operator-controller's own watch: refused. */
    assert_false(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL));
    spin_until(&w.loop, operator_refused, &w);
    assert_false(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL)); /* polled meanwhile */

    /* ServiceAccount b's token: refused too, and not asked again.  Refused before it listed, its
     * watch told no set the type was watched: none is queued (they poll already; queueing them
     * would make each offer its credential, be refused, and queue them all again). */
    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-b-1", "ns/b", "token-b"));
    spin_until(&w.loop, b_refused, &w);
    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-b-1", "ns/b", "token-b"));
    for (int i = 0; i < 50; i++) {
        uv_run(&w.loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    assert_int_equal(get_count(&w.srv, &seen.lists_b), 1);
    assert_int_equal(get_count(&w.srv, &seen.lists_operator), 1);
    assert_int_equal(queued.n, 0);

    /* ServiceAccount a, by impersonation: it may.  Once listed, the type is watched, and an
     * event queues the set controlling the object. */
    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-a-1", "ns/a", KUBE_IMPERSONATION_PREFIX SA_A " 1"));
    spin_until(&w.loop, event_queued, NULL);
    assert_string_equal(queued.names[0], "rev-a-1");
    assert_int_equal(get_count(&w.srv, &seen.lists_a), 1);
    assert_int_equal(get_count(&w.srv, &seen.watches_a), 1);
    assert_true(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL));
    assert_true(objectset_watches_want_as(w.ws, PATH, "rev-b-1", "ns/b", "token-b"));
    assert_int_equal(objectset_watches_active(w.ws), 1);
    assert_int_equal(get_count(&w.srv, &seen.lists_b), 1);

    world_stop(&w);
}

static bool queued_twice(void *data)
{
    (void)data;
    return queued.n >= 2;
}

static bool queued_three(void *data)
{
    (void)data;
    return queued.n >= 3;
}

/* A credential the apiserver stops taking (401: an expired token) ends the borrowed watch: what
 * it reported no longer vouches for an object (a deletion before the next watch lists would be
 * no event of it), the sets that asked for the type are queued (they poll, and offer a fresh
 * credential), the rejected one is not tried again, and a fresh one watches again. */
static void test_rejected_credential_queues_its_set(void **state)
{
    (void)state;
    atomic_store(&release_401, false);
    world w;
    world_start(&w);
    assert_false(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL));
    spin_until(&w.loop, operator_refused, &w);

    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-c-1", "ns/c", "token-c-old"));
    spin_until(&w.loop, event_queued, NULL); /* the first watch's event */
    assert_string_equal(queued.names[0], "rev-a-1");
    json_t *op = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "op", "uid", "u1", "resourceVersion", "6");
    objectset_watches_verdict(w.ws, "set\nop", op); /* a pass found it in order at version 6 */
    assert_true(objectset_watches_unchanged(w.ws, "set\nop"));
    atomic_store(&release_401, true); /* the watch resumes, and its token is rejected */
    spin_until(&w.loop, queued_twice, NULL);
    assert_string_equal(queued.names[1], "rev-c-1"); /* queued: it polls, and offers a fresh credential */
    assert_false(objectset_watches_unchanged(w.ws, "set\nop"));
    assert_int_equal(objectset_watches_active(w.ws), 0);
    assert_false(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL));
    /* The rejected credential offered again (the token source has no fresher one yet): not tried. */
    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-c-1", "ns/c", "token-c-old"));
    for (int i = 0; i < 50; i++) {
        uv_run(&w.loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    assert_int_equal(get_count(&w.srv, &seen.lists_c_old), 1);

    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-c-1", "ns/c", "token-c-new"));
    spin_until(&w.loop, queued_three, NULL); /* the new watch's event */
    assert_string_equal(queued.names[2], "rev-a-1");
    assert_true(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL));
    objectset_watches_verdict(w.ws, "set\nop", op);
    assert_true(objectset_watches_unchanged(w.ws, "set\nop"));
    json_decref(op);

    world_stop(&w);
}

static bool d_refused(void *data)
{
    world *w = data;
    return objectset_watches_refused_for(w->ws, PATH, "ns/d");
}

/* A type refused cluster-wide to operator-controller and to ServiceAccount b: b's revisions
 * ask for the namespace of their objects instead, watched with b's credential only (never
 * operator-controller's own), and its events queue the set. */
static void test_refused_cluster_wide_watched_in_namespace(void **state)
{
    (void)state;
    world w;
    world_start(&w);
    assert_false(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL));
    spin_until(&w.loop, operator_refused, &w);
    assert_false(objectset_watches_refused_for(w.ws, PATH, "ns/b")); /* b not asked yet */
    olm_log_set_level(OLM_LOG_INFO);
    stderr_capture cap;
    stderr_capture_begin(&cap);
    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-b-1", "ns/b", "token-b"));
    spin_until(&w.loop, b_refused, &w);
    assert_true(objectset_watches_refused_for(w.ws, PATH, "ns/b"));
    /* Another namespace-bound ServiceAccount refused cluster-wide: said at debug level only. */
    assert_false(objectset_watches_want_as(w.ws, PATH, "rev-d-1", "ns/d", "token-d"));
    spin_until(&w.loop, d_refused, &w);
    char *said = stderr_capture_end(&cap, 1 << 16);
    assert_non_null(strstr(said, "ServiceAccount ns/b may not list+watch " PATH " either"));
    assert_null(strstr(said, "ServiceAccount ns/d may not"));
    free(said);
    assert_false(objectset_watches_refused_for(w.ws, PATH, "ns/other"));
    assert_false(objectset_watches_want_in(w.ws, NS_PATH, "rev-b-1", "ns/b", NULL)); /* no credential */

    assert_false(objectset_watches_listed(w.ws, NS_PATH));
    assert_false(objectset_watches_want_in(w.ws, NS_PATH, "rev-b-1", "ns/b", "token-b"));
    spin_until(&w.loop, event_queued, NULL);
    assert_true(objectset_watches_listed(w.ws, NS_PATH));
    assert_string_equal(queued.names[0], "rev-b-1");
    assert_true(objectset_watches_want_in(w.ws, NS_PATH, "rev-b-1", "ns/b", "token-b"));
    /* What a pass asks for one object: its namespace's watch covers it, a cluster-scoped one not. */
    assert_true(objectset_watches_want_object(w.ws, PATH, NS_PATH, "rev-b-1", "ns/b", "token-b"));
    assert_false(objectset_watches_want_object(w.ws, PATH, NULL, "rev-b-1", "ns/b", "token-b"));
    assert_int_equal(get_count(&w.srv, &seen.lists_b_ns), 1);
    assert_int_equal(get_count(&w.srv, &seen.watches_b_ns), 1);
    assert_int_equal(get_count(&w.srv, &seen.operator_in_ns), 0);
    assert_int_equal(get_count(&w.srv, &seen.lists_b), 1); /* cluster-wide: asked once */
    /* The cluster-wide type is still not watched: other ServiceAccounts' revisions poll. */
    assert_false(objectset_watches_want_as(w.ws, PATH, NULL, NULL, NULL));
    /* The last set asking for the namespace is deleted: its watch stops (it held b's
     * credential for nobody); a set asking again starts another. */
    objectset_watches_forget_set(w.ws, "uid-of-rev-b-1", "rev-b-1");
    assert_int_equal(objectset_watches_active(w.ws), 0);
    assert_false(objectset_watches_listed(w.ws, NS_PATH));
    assert_false(objectset_watches_want_in(w.ws, NS_PATH, "rev-b-2", "ns/b", "token-b"));
    spin_until(&w.loop, queued_twice, NULL); /* the new watch's event */
    assert_int_equal(get_count(&w.srv, &seen.lists_b_ns), 2);
    assert_true(objectset_watches_listed(w.ws, NS_PATH));

    world_stop(&w);
}

/* The offers of one type alone: a ServiceAccount refused (403) is not taken or kept again
 * while its refusal lasts, and says whether it was refused before; a rejected credential (401)
 * is never tried again, a fresh one of the same ServiceAccount is. */
static void test_offers_refused_and_rejected(void **state)
{
    (void)state;
    watch_offers o;
    assert_true(watch_offers_init(&o));
    char *as = NULL, *cred = NULL, *set = NULL;
    assert_false(watch_offers_take(&o, &as, &cred, &set)); /* none offered */
    assert_false(watch_offers_put(&o, "ns/a", NULL, "set-a"));
    assert_true(watch_offers_put(&o, "ns/a", "tok-a", "set-a"));
    assert_false(watch_offers_refused(&o, "ns/a", 403, watch_offers_hash("tok-a"))); /* the first time */
    assert_true(watch_offers_denied(&o, "ns/a"));
    assert_false(watch_offers_take(&o, &as, &cred, &set)); /* refused since it was offered: dropped */
    assert_false(watch_offers_put(&o, "ns/a", "tok-a2", NULL));
    assert_true(watch_offers_refused(&o, "ns/a", 403, watch_offers_hash("tok-a2"))); /* again */
    watch_offers_allowed(&o, "ns/a"); /* a's watch listed after all (RBAC mended) */
    assert_false(watch_offers_denied(&o, "ns/a"));
    assert_false(watch_offers_refused(&o, "ns/a", 403, 0)); /* a refusal after that is news */

    assert_true(watch_offers_put(&o, "ns/b", "tok-b", NULL));
    assert_false(watch_offers_refused(&o, "ns/b", 401, watch_offers_hash("tok-b")));
    assert_false(watch_offers_denied(&o, "ns/b")); /* a 401 refuses the credential, not b */
    assert_false(watch_offers_take(&o, &as, &cred, &set));
    assert_false(watch_offers_put(&o, "ns/b", "tok-b", NULL));
    assert_true(watch_offers_put(&o, "ns/b", "tok-b2", "set-b"));
    assert_true(watch_offers_take(&o, &as, &cred, &set));
    assert_string_equal(as, "ns/b");
    assert_string_equal(cred, "tok-b2");
    assert_string_equal(set, "set-b");
    free(as);
    free(cred);
    free(set);
    assert_false(watch_offers_take(&o, &as, &cred, &set)); /* taken */
    watch_offers_free(&o);
}

/* Namespace-bound installers: after three ServiceAccounts in a row were refused, a fourth is
 * not asked (it counts as refused: its revisions watch in their namespace) until the quiet
 * period ends or a watch lists.  Mutation checks: the count not kept, not reset by a watch that
 * listed, or not looked at by watch_offers_denied: each seen failing this test. */
static void test_offers_quiet_after_refusals(void **state)
{
    (void)state;
    watch_offers o;
    assert_true(watch_offers_init(&o));
    const char *sas[] = {"ns-a/installer", "ns-b/installer", "ns-c/installer"};
    for (size_t i = 0; i < 3; i++) {
        assert_true(watch_offers_put(&o, sas[i], "tok", NULL));
        watch_offers_refused(&o, sas[i], 403, watch_offers_hash("tok"));
    }
    assert_true(watch_offers_denied(&o, "ns-d/installer"));
    assert_false(watch_offers_put(&o, "ns-d/installer", "tok-d", NULL));
    /* The quiet period over: d is asked. */
    o.refusals.quiet_until_ms = (uint64_t)time(NULL) * 1000 - 1000;
    assert_false(watch_offers_denied(&o, "ns-d/installer"));
    assert_true(watch_offers_put(&o, "ns-d/installer", "tok-d", NULL));
    /* Refused too: quiet again at once (still in a row); a watch that lists ends it. */
    watch_offers_refused(&o, "ns-d/installer", 403, watch_offers_hash("tok-d"));
    assert_true(watch_offers_denied(&o, "ns-e/installer"));
    watch_offers_allowed(&o, "ns-f/installer");
    assert_false(watch_offers_denied(&o, "ns-e/installer"));
    assert_true(watch_offers_denied(&o, "ns-d/installer")); /* its own refusal stands */
    watch_offers_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_type_watched_as_service_account),
        cmocka_unit_test(test_rejected_credential_queues_its_set),
        cmocka_unit_test(test_refused_cluster_wide_watched_in_namespace),
        cmocka_unit_test(test_offers_refused_and_rejected),
        cmocka_unit_test(test_offers_quiet_after_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
