/* pull_secret_watch and daemon_runtime_watch_pull_secret: the --global-pull-secret watch
 * against a streaming fake apiserver that plays one Secret's life: missing (said once, over
 * two lists), created, rotated to a malformed value (the credentials kept), rotated again,
 * relisted unchanged and then seen once more at the same resourceVersion (nothing reloaded,
 * nothing requeued), deleted (anonymous again).  The list and watch ask for that one Secret
 * by name (a field selector), so that the Role needs no more.  The runtime's shutdown stops
 * the watch before the transport closes.  A ref that is not NAMESPACE/NAME is refused; no ref
 * is no watch.
 *
 * Mutation checks: each test was seen to fail with its line broken on purpose (the
 * production line edited, the test run, the line restored):
 *   pull_secret_watch.c:48  the same-resourceVersion check dropped (`&& 0`) -> test_secret_life
 *       (a third load; before the repeated MODIFIED was added to the fake this mutation
 *       survived: kube_watch's relist already drops an object whose resourceVersion is unchanged)
 *   pull_secret_watch.c:33  `return` after a malformed Secret dropped -> test_secret_life
 *   pull_secret_watch.c:57  oci_auth_store_clear dropped on delete -> test_secret_life (never anonymous: the guard)
 *   pull_secret_watch.c:64  `&& !w->missing_logged` dropped -> test_secret_life ("not found" twice)
 *   pull_secret_watch.c:94  field selector `metadata.name=%s` -> `metadata.name!=%s` -> test_secret_life
 *   daemon_shared_watches.c:69  the pull-secret watch not stopped at shutdown -> test_secret_life
 *       (the loop never ends: the alarm in main)
 *   daemon_shared_watches.c:20  `if (!ref)` -> `if (0)` -> test_no_ref_and_bad_ref
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "daemon_runtime.h"
#include "test_kubeconfig.h"
#include "fake_http_server.h"
#include "olm_base64.h"
#include "stderr_capture.h"

/* The Secret "sys/pull" at a resourceVersion with credentials for reg.local, or malformed. */
static char secret_u1[1024], secret_bad[256], secret_u2[1024];
static char targets[8][512]; /* what the first requests asked for */

static void make_secret(char *buf, size_t bufsz, const char *rv, const char *user)
{
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"auths\":{\"reg.local\":{\"username\":\"%s\",\"password\":\"pw\"}}}", user);
    olm_error err;
    char *b64 = olm_base64_encode(cfg, strlen(cfg), NULL, &err);
    assert_non_null(b64);
    snprintf(buf, bufsz,
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"pull\",\"namespace\":\"sys\","
             "\"resourceVersion\":\"%s\"},\"type\":\"kubernetes.io/dockerconfigjson\","
             "\"data\":{\".dockerconfigjson\":\"%s\"}}",
             rv, b64);
    free(b64);
}

static int event(fake_http_conn *c, const char *type, const char *obj)
{
    char line[1200];
    int n = snprintf(line, sizeof line, "{\"type\":\"%s\",\"object\":%s}\n", type, obj);
    return fake_http_chunk(c, line, (size_t)n);
}

static void apiserver(fake_http_conn *c, const fake_http_request *req, void *user)
{
    (void)user;
    if (req->seq < 8) {
        pthread_mutex_lock(&c->s->lock);
        snprintf(targets[req->seq], sizeof targets[req->seq], "%.500s", req->target);
        pthread_mutex_unlock(&c->s->lock);
    }
    char list[1200];
    switch (req->seq) {
    case 0: /* not there yet */
    case 2: /* still not there, after a 410 */
        fake_http_respond(c, 200, "{\"kind\":\"SecretList\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}");
        break;
    case 1:
        fake_http_chunked_begin(c, 200);
        event(c, "ERROR", "{\"code\":410}");
        fake_http_hold_open(c);
        break;
    case 3: /* created, rotated to something malformed, rotated again; then a 410 */
        fake_http_chunked_begin(c, 200);
        event(c, "ADDED", secret_u1);
        event(c, "MODIFIED", secret_bad);
        event(c, "MODIFIED", secret_u2);
        event(c, "ERROR", "{\"code\":410}");
        fake_http_hold_open(c);
        break;
    case 4: /* the relist: the same Secret, unchanged */
        snprintf(list, sizeof list, "{\"kind\":\"SecretList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[%s]}",
                 secret_u2);
        fake_http_respond(c, 200, list);
        break;
    case 5: /* the unchanged Secret once more (kube_watch's relist already drops those; a
             * repeated event is how the watch's own check is reached), then deleted */
        fake_http_chunked_begin(c, 200);
        event(c, "MODIFIED", secret_u2);
        event(c, "DELETED", secret_u2);
        fake_http_hold_open(c);
        break;
    default:
        fake_http_respond(c, 500, "{}");
    }
}

typedef struct watcher {
    daemon_runtime rt;
    fake_http_server *srv;
    char loaded[256]; /* "<user>;" each time new credentials arrived */
    int loads;
    uv_timer_t poll, guard;
} watcher;

static void on_loaded(void *data)
{
    watcher *w = data;
    oci_credentials cr = {0};
    olm_error err;
    assert_int_equal(oci_auth_store_lookup(w->rt.pull_secret, "reg.local", &cr, &err), 0);
    strncat(w->loaded, cr.username ? cr.username : "(none)", sizeof w->loaded - strlen(w->loaded) - 2);
    strcat(w->loaded, ";");
    oci_credentials_free(&cr);
    w->loads++;
}

/* Done once the Secret was loaded twice and then deleted (the store empty again). */
static void on_poll(uv_timer_t *t)
{
    watcher *w = t->data;
    if (w->loads < 2 || fake_http_count(w->srv) < 6 || oci_auth_store_loaded(w->rt.pull_secret))
        return;
    uv_close((uv_handle_t *)&w->poll, NULL);
    uv_close((uv_handle_t *)&w->guard, NULL);
    daemon_runtime_shutdown(&w->rt, 0);
}

static void on_guard(uv_timer_t *t)
{
    (void)t;
    fail_msg("the Secret's life did not play out within 30 s");
}

/* The loop run with stderr captured (the caller frees it). */
static char *run_capturing_stderr(uv_loop_t *loop)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    int rc = uv_run(loop, UV_RUN_DEFAULT);
    char *out = stderr_capture_end(&c, 16384);
    assert_int_equal(rc, 0);
    return out;
}

static size_t occurrences(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void test_secret_life(void **state)
{
    (void)state;
    make_secret(secret_u1, sizeof secret_u1, "2", "u1");
    snprintf(secret_bad, sizeof secret_bad,
             "{\"metadata\":{\"name\":\"pull\",\"namespace\":\"sys\",\"resourceVersion\":\"3\"},\"type\":\"Opaque\","
             "\"data\":{}}");
    make_secret(secret_u2, sizeof secret_u2, "4", "u2");
    fake_http_server srv;
    assert_int_equal(fake_http_start_streaming(&srv, apiserver, NULL), 0);
    char kubeconfig[] = "/tmp/pull-secret-kubeconfig-XXXXXX";
    test_kubeconfig_write(kubeconfig, srv.url);

    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    watcher *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->srv = &srv;
    w->rt = (daemon_runtime){.prog = "t", .log_key = "t", .loop = &loop};
    assert_int_equal(daemon_runtime_connect(&w->rt, kubeconfig), 0);
    olm_error err;
    assert_int_equal(daemon_runtime_start_transport(&w->rt, &err), 0);
    assert_int_equal(daemon_runtime_watch_pull_secret(&w->rt, "sys/pull", on_loaded, w, &err), 0);
    assert_non_null(w->rt.pull_secret);
    assert_non_null(w->rt.secret_watch);
    assert_false(oci_auth_store_loaded(w->rt.pull_secret));
    uv_timer_init(&loop, &w->poll);
    w->poll.data = w;
    uv_timer_start(&w->poll, on_poll, 5, 5);
    uv_timer_init(&loop, &w->guard);
    uv_timer_start(&w->guard, on_guard, 30000, 0);

    char *log = run_capturing_stderr(&loop);
    assert_int_equal(uv_loop_close(&loop), 0);
    fake_http_stop(&srv);

    /* created (u1); the malformed value kept u1 and requeued nothing; rotated (u2); the
     * unchanged relist reloaded nothing */
    assert_string_equal(w->loaded, "u1;u2;");
    assert_false(oci_auth_store_loaded(w->rt.pull_secret));
    assert_null(w->rt.secret_watch);
    assert_null(w->rt.uc);
    assert_int_equal(occurrences(log, "global pull secret sys/pull not found: pulling anonymously until it is created"),
                     1);
    assert_int_equal(occurrences(log, "global pull secret sys/pull loaded (resourceVersion 2)"), 1);
    assert_int_equal(occurrences(log, "global pull secret sys/pull loaded (resourceVersion 4)"), 1);
    assert_int_equal(occurrences(log, "; pulls keep the credentials they had"), 1);
    assert_int_equal(occurrences(log, "global pull secret sys/pull was deleted: pulling anonymously"), 1);
    for (int i = 0; i < 6; i++) {
        assert_true(strncmp(targets[i], "/api/v1/namespaces/sys/secrets?", 31) == 0);
        if (!strstr(targets[i], "&fieldSelector=metadata.name%3Dpull"))
            fail_msg("request %d asks for more than the one Secret: %s", i, targets[i]);
    }
    assert_null(strstr(targets[0], "watch=1"));
    assert_non_null(strstr(targets[1], "watch=1"));
    daemon_runtime_free(&w->rt);
    assert_null(w->rt.pull_secret);
    free(w);
    unlink(kubeconfig);
    free(log);
}

/* No --global-pull-secret: no store, no watch.  A ref that is not NAMESPACE/NAME: refused
 * with the flag named, and no watch. */
static void test_no_ref_and_bad_ref(void **state)
{
    (void)state;
    char kubeconfig[] = "/tmp/pull-secret-kubeconfig-XXXXXX";
    test_kubeconfig_write(kubeconfig, "http://127.0.0.1:1");
    daemon_runtime rt = {.prog = "t", .log_key = "t"};
    assert_int_equal(daemon_runtime_connect(&rt, kubeconfig), 0);
    olm_error err;
    assert_int_equal(daemon_runtime_watch_pull_secret(&rt, NULL, NULL, NULL, &err), 0);
    assert_null(rt.pull_secret);
    assert_null(rt.secret_watch);
    assert_int_equal(daemon_runtime_watch_pull_secret(&rt, "no-namespace", NULL, NULL, &err), -1);
    assert_string_equal(err.msg, "--global-pull-secret: want NAMESPACE/NAME, got \"no-namespace\"");
    assert_null(rt.secret_watch);
    daemon_runtime_free(&rt);
    unlink(kubeconfig);
}

int main(void)
{
    /* a shutdown that never ends (a mutation of the code under test) fails instead of hanging */
    alarm(120);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_life),
        cmocka_unit_test(test_no_ref_and_bad_ref),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
