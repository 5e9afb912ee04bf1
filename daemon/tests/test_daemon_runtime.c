/* daemon_runtime: the Lease identity's form, SIGTERM/SIGINT reaching the daemon's callback
 * once the handles run (and nothing after they are closed), and the start-up errors that end
 * a daemon before its loop: a kubeconfig that cannot be read. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon_runtime.h"
#include "test_kubeconfig.h"

static void test_identity_is_host_pid_random(void **state)
{
    (void)state;
    char a[256], b[256], host[128] = "";
    daemon_leader_identity("fallback", a, sizeof a);
    gethostname(host, sizeof host - 1);
    char want[200];
    snprintf(want, sizeof want, "%s_%d_", *host ? host : "fallback", (int)getpid());
    assert_true(strncmp(a, want, strlen(want)) == 0);
    const char *hex = a + strlen(want);
    assert_int_equal(strlen(hex), 8);
    assert_int_equal(strspn(hex, "0123456789abcdef"), 8);
    /* a small buffer truncates, never overflows */
    daemon_leader_identity("fallback", b, 6);
    assert_int_equal(strlen(b), 5);
}

typedef struct seen {
    int signum, calls;
    daemon_runtime *rt;
} seen;

static void on_signal(void *data, int signum)
{
    seen *s = data;
    s->signum = signum;
    s->calls++;
    daemon_runtime_close_signals(s->rt); /* as a daemon's shutdown does */
}

static void test_signals_reach_the_daemon_once(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    daemon_runtime rt = {.prog = "test", .log_key = "test", .loop = &loop};
    seen s = {.rt = &rt};
    daemon_runtime_watch_signals(&rt, on_signal, &s);
    assert_int_equal(raise(SIGTERM), 0); /* not fatal: libuv's handler is installed */
    uv_run(&loop, UV_RUN_DEFAULT);       /* runs until the handles are closed */
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.signum, SIGTERM);
    daemon_runtime_close_signals(&rt); /* idempotent */
    assert_int_equal(uv_loop_close(&loop), 0);

    /* SIGINT the same way, on a fresh loop */
    assert_int_equal(uv_loop_init(&loop), 0);
    s = (seen){.rt = &rt};
    daemon_runtime_watch_signals(&rt, on_signal, &s);
    assert_int_equal(raise(SIGINT), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.signum, SIGINT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_connect_fails_on_a_missing_kubeconfig(void **state)
{
    (void)state;
    daemon_runtime rt = {.prog = "test", .log_key = "test"};
    assert_int_equal(daemon_runtime_connect(&rt, "/nonexistent/kubeconfig"), -1);
    assert_null(rt.client);
    daemon_runtime_free(&rt);
    assert_null(rt.rest_metrics);
}

static void test_connect_makes_a_client_with_metrics(void **state)
{
    (void)state;
    char path[] = "/tmp/daemon-runtime-kubeconfig-XXXXXX";
    test_kubeconfig_write(path, "http://127.0.0.1:1");
    daemon_runtime rt = {.prog = "test", .log_key = "test"};
    assert_int_equal(daemon_runtime_connect(&rt, path), 0);
    assert_non_null(rt.client);
    assert_non_null(rt.rest_metrics);
    daemon_runtime_free(&rt);
    assert_null(rt.client);
    unlink(path);
}

/* Without a metrics listener there is nothing to guard: the transport starts, no filter. */
static void test_transport_without_metrics_listener_has_no_filter(void **state)
{
    (void)state;
    char path[] = "/tmp/daemon-runtime-kubeconfig-XXXXXX";
    test_kubeconfig_write(path, "http://127.0.0.1:1");
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    daemon_runtime rt = {.prog = "test", .log_key = "test", .loop = &loop};
    assert_int_equal(daemon_runtime_connect(&rt, path), 0);
    olm_error err;
    assert_int_equal(daemon_runtime_start_transport(&rt, &err), 0);
    assert_non_null(rt.uc);
    assert_null(rt.authz);
    kube_uvcurl_close(rt.uc, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    daemon_runtime_free(&rt);
    unlink(path);
}

/* The close count-down: the transport closes after the daemon's own hold and every stop it
 * counted are done, not before. */
static void test_transport_closes_after_the_last_stop(void **state)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    daemon_runtime rt = {.prog = "t", .log_key = "t", .loop = &loop};
    olm_error err;
    rt.uc = kube_uvcurl_new(&loop, &err);
    assert_non_null(rt.uc);
    daemon_runtime_closing_begin(&rt);
    daemon_runtime_closing_add(&rt); /* an informer stopping */
    daemon_runtime_closing_add(&rt); /* a watch stopping */
    daemon_runtime_stop_watches(&rt); /* none running: nothing counted */
    daemon_runtime_closing_done(&rt); /* the daemon's hold */
    daemon_runtime_closing_done(&rt);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_non_null(rt.uc); /* one stop still pending */
    daemon_runtime_closing_done(&rt);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_null(rt.uc);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* registries.conf: a missing default is no error, a named file that is missing is, with the
 * flag in the message; both are freed with the runtime. */
static void test_follow_registries(void **state)
{
    daemon_runtime rt = {0};
    char msg[512];
    assert_int_equal(daemon_runtime_follow_registries(&rt, "/nonexistent/registries.conf", msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--registries-conf: "));
    assert_null(rt.registries);
    setenv("CONTAINERS_REGISTRIES_CONF", "/nonexistent/default.conf", 1);
    assert_int_equal(daemon_runtime_follow_registries(&rt, NULL, msg, sizeof msg), 0);
    assert_non_null(rt.registries);
    daemon_runtime_free(&rt);
    assert_null(rt.registries);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_is_host_pid_random),
        cmocka_unit_test(test_signals_reach_the_daemon_once),
        cmocka_unit_test(test_connect_fails_on_a_missing_kubeconfig),
        cmocka_unit_test(test_connect_makes_a_client_with_metrics),
        cmocka_unit_test(test_transport_without_metrics_listener_has_no_filter),
        cmocka_unit_test(test_transport_closes_after_the_last_stop),
        cmocka_unit_test(test_follow_registries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
