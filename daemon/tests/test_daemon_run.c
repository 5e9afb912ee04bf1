/* daemon_runtime_run (daemon_run.c): the start-up order both daemons follow, run for real on
 * the default loop with a kubeconfig whose API server does not answer, the health listener on
 * a free port and a client thread that asks it what probes and scrapers ask, then sends
 * SIGTERM.
 *
 * What is checked: interrupted pulls swept from <cache>/<pull_cache> before anything runs;
 * the hooks in order (before_start, start_controllers, log_started; after_drain once at the
 * end); /healthz "ok"; /readyz 503 "informers not synced" while the controllers' informer
 * cannot list; /metrics the daemon's series then the work queue's and build_info under the
 * spec's name, 503 once the daemon's hook fails; an unknown path Go's 404; SIGTERM a shutdown
 * with exit code 0 that closes everything, the default loop included.  With --leader-elect:
 * campaigning, ready while standing by without the Lease, leader_election_master_status 0,
 * no controllers.  A start_controllers failure: shutdown with exit code 1, no "started" line.
 * A start_servers failure, or a health port in use after the daemon's own server is up: one
 * line "<prog>: <why>" on stderr, return 1, the loop never ran and the server already up is
 * closed again.  A kubeconfig that cannot be read, a cache dir that cannot be made: 1.
 *
 * Mutation checks: each test was seen to fail with its line broken on purpose (the
 * production line edited, the test run, the line restored):
 *   daemon_run.c:30   SIGTERM shuts down with exit code 1 -> test_run_serves_until_sigterm,
 *       test_leader_election_stands_by
 *   daemon_run.c:98   daemon_runtime_watch_signals dropped -> test_run_serves_until_sigterm (killed by SIGTERM)
 *   daemon_run.c:114  `if (!s->leader_elect)` -> `if (1)` -> test_leader_election_stands_by
 *   daemon_run.c:107  no campaign (`rc == 0 && 0`) -> test_leader_election_stands_by
 *   daemon_run.c:43   rt->controllers_started not set -> test_run_serves_until_sigterm
 *   daemon_run.c:40   start_controllers failure shuts down with exit code 0 -> test_start_controllers_failure_exits_1
 *   daemon_run.c:112  start_on_every_replica failure shuts down with exit code 0
 *       -> test_start_on_every_replica_failure_exits_1
 *   daemon_run.c:116  `if (!rt->stopping)` -> `if (1)` -> test_start_controllers_failure_exits_1
 *   daemon_run.c:94   sweep_interrupted_pulls dropped -> test_run_serves_until_sigterm
 *   daemon_run.c:78   daemon_runtime_stop_servers dropped -> test_start_servers_failure_closes_what_was_up
 *       (the daemon's server keeps the loop alive: the alarm in main ends the hang)
 *   daemon_run.c:71   the health listener not owned -> test_run_serves_until_sigterm (never stopped: the alarm)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <ftw.h>

#include "daemon_runtime.h"
#include "test_kubeconfig.h"
#include "olm_fs.h"
#include "stderr_capture.h"

typedef struct fetched {
    int status;
    strbuf body;
} fetched;

typedef struct app {
    daemon_runtime rt;
    daemon_spec spec;
    olm_daemon_flags flags;
    char dir[32], cache[64], kubeconfig[64], health_addr[32];
    kube_informer *inf;
    kube_workqueue *wq;
    olm_http_server *server;  /* the daemon's own (catalogd's catalog server) */
    const char *server_error; /* start_servers fails with this after starting its server */
    bool controllers_fail, every_replica_fails;
    atomic_int metrics_fail;
    char calls[256];          /* the hooks, in order */
    uv_thread_t client;
    bool client_started;
    int port;
    fetched healthz, readyz, metrics, metrics_failing, unknown;
} app;

static void called(app *a, const char *hook)
{
    strncat(a->calls, hook, sizeof a->calls - strlen(a->calls) - 2);
    strcat(a->calls, ";");
}

/* ------------------------------------------------------------ the client thread */

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    strbuf_append(arg, data, size * n);
    return size * n;
}

static void get(int port, const char *path, fetched *f)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &f->body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    long status = 0;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    f->status = (int)status;
    curl_easy_cleanup(h);
}

/* What a kubelet and a scraper ask, then what a kubelet stopping the Pod sends. */
static void client(void *arg)
{
    app *a = arg;
    get(a->port, "/healthz", &a->healthz);
    get(a->port, "/readyz", &a->readyz);
    get(a->port, "/metrics", &a->metrics);
    get(a->port, "/debug/pprof/", &a->unknown);
    atomic_store(&a->metrics_fail, 1);
    get(a->port, "/metrics", &a->metrics_failing);
    kill(getpid(), SIGTERM);
}

/* ------------------------------------------------------------ the daemon's hooks */

static void before_start(void *data)
{
    called(data, "before_start");
}

static kube_wq_result no_reconcile(const char *key, void *data)
{
    (void)key, (void)data;
    return (kube_wq_result){KUBE_WQ_OK};
}

/* An informer that cannot list (the API server does not answer) and a work queue. */
static int start_controllers(void *data, olm_error *err)
{
    app *a = data;
    called(a, "start_controllers");
    if (a->controllers_fail)
        return olm_error_set(err, "no CRDs");
    kube_watch_options wo = {.path = "/api/v1/namespaces"};
    kube_informer_handlers h = {0};
    if (!(a->inf = kube_informer_new(a->rt.uc, kube_client_config(a->rt.client), &wo, &h, a, err)))
        return -1;
    daemon_runtime_own_informer(&a->rt, &a->inf);
    kube_workqueue_options qo = {.concurrency = 1};
    if (!(a->wq = kube_workqueue_new(a->rt.loop, &qo, no_reconcile, a, err)))
        return -1;
    daemon_runtime_own_workqueue(&a->rt, &a->wq, "widget");
    return kube_informer_start(a->inf, err);
}

/* What runs whether this replica leads or not (catalogd's followers). */
static int start_on_every_replica(void *data, olm_error *err)
{
    app *a = data;
    called(a, "every_replica");
    return a->every_replica_fails ? olm_error_set(err, "no store") : 0;
}

static void after_drain(void *data)
{
    called(data, "after_drain");
}

static int metrics(void *data, strbuf *out)
{
    app *a = data;
    if (atomic_load(&a->metrics_fail))
        return -1;
    strbuf_puts(out, "# TYPE own_total counter\nown_total 3\n");
    return 0;
}

static void log_started(void *data)
{
    app *a = data;
    called(a, "log_started");
    assert_non_null(a->rt.listeners.health);
    a->port = olm_http_server_port(a->rt.listeners.health);
    assert_int_equal(uv_thread_create(&a->client, client, a), 0);
    a->client_started = true;
}

static int not_found(const char *path, strbuf *body, const char **content_type, void *data)
{
    (void)path, (void)content_type, (void)data;
    strbuf_puts(body, "404 page not found\n");
    return 404;
}

static int start_servers(void *data, char *msg, size_t msgsz)
{
    app *a = data;
    called(a, "start_servers");
    olm_http_server_opts o = {.host = "127.0.0.1", .name = "--catalogs-addr", .log_key = "t", .text = not_found};
    olm_error err;
    if (!(a->server = olm_http_server_start(a->rt.loop, &o, &err))) {
        snprintf(msg, msgsz, "%s", err.msg);
        return -1;
    }
    daemon_runtime_own_server(&a->rt, &a->server);
    if (a->server_error) {
        snprintf(msg, msgsz, "%s", a->server_error);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ setup */

static app *new_app(void)
{
    app *a = calloc(1, sizeof *a);
    assert_non_null(a);
    snprintf(a->kubeconfig, sizeof a->kubeconfig, "/tmp/daemon-run-kubeconfig-XXXXXX");
    test_kubeconfig_write(a->kubeconfig, "http://127.0.0.1:1");
    snprintf(a->dir, sizeof a->dir, "/tmp/daemon-run-XXXXXX");
    assert_non_null(mkdtemp(a->dir));
    snprintf(a->cache, sizeof a->cache, "%s/cache", a->dir); /* created by the run */
    snprintf(a->health_addr, sizeof a->health_addr, "127.0.0.1:0");
    a->flags = (olm_daemon_flags){.health_addr = a->health_addr, .metrics_addr = "0"};
    a->rt = (daemon_runtime){.prog = "t", .log_key = "t", .flags = &a->flags};
    a->spec = (daemon_spec){.rt = &a->rt, .app = a, .kubeconfig = a->kubeconfig, .cache_flag = "--cache-dir",
                            .cache_dir = a->cache, .pull_cache = "bundles", .lease_namespace = "ns",
                            .lease_name = "the-lease", .metrics_name = "t_daemon", .before_start = before_start,
                            .start_controllers = start_controllers, .after_drain = after_drain,
                            .metrics = metrics, .log_started = log_started};
    a->healthz.body = a->readyz.body = a->metrics.body = a->metrics_failing.body = a->unknown.body =
        (strbuf)STRBUF_INIT;
    return a;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void free_app(app *a)
{
    if (a->client_started)
        uv_thread_join(&a->client);
    daemon_runtime_free(&a->rt);
    unlink(a->kubeconfig);
    nftw(a->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    strbuf_free(&a->healthz.body);
    strbuf_free(&a->readyz.body);
    strbuf_free(&a->metrics.body);
    strbuf_free(&a->metrics_failing.body);
    strbuf_free(&a->unknown.body);
    free(a);
}

/* What stderr receives while daemon_runtime_run runs (the caller frees it); its result in *rc. */
static char *run_capturing_stderr(app *a, int *rc, bool *started)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    *rc = daemon_runtime_run(&a->rt, &a->spec, started);
    return stderr_capture_end(&c, 8192);
}

/* ------------------------------------------------------------ the tests */

static void test_run_serves_until_sigterm(void **state)
{
    (void)state;
    app *a = new_app();
    char stale[256], kept[256];
    snprintf(stale, sizeof stale, "%s/bundles/ext1/.sha256:4567.pull-x1Y2z3/rootfs", a->cache);
    snprintf(kept, sizeof kept, "%s/bundles/ext1/sha256:4567", a->cache);
    assert_int_equal(olm_mkdir_p(stale), 0);
    assert_int_equal(olm_mkdir_p(kept), 0);

    bool started = false;
    assert_int_equal(daemon_runtime_run(&a->rt, &a->spec, &started), 0);
    assert_true(started);
    assert_int_equal(a->rt.exit_code, 0);
    assert_true(a->rt.controllers_started);
    assert_string_equal(a->calls, "before_start;start_controllers;log_started;after_drain;");
    *strrchr(stale, '/') = '\0';
    assert_int_equal(access(stale, F_OK), -1);
    assert_int_equal(access(kept, F_OK), 0);
    /* everything stopped, the loop closed (run returned 0, not -1) */
    assert_null(a->rt.listeners.health);
    assert_null(a->inf);
    assert_null(a->wq);
    assert_null(a->rt.uc);
    assert_false(a->rt.signals_on);

    assert_int_equal(a->healthz.status, 200);
    assert_string_equal(strbuf_str(&a->healthz.body), "ok");
    assert_int_equal(a->readyz.status, 503);
    assert_string_equal(strbuf_str(&a->readyz.body), "informers not synced");
    assert_int_equal(a->unknown.status, 404);
    assert_string_equal(strbuf_str(&a->unknown.body), "404 page not found\n");
    assert_int_equal(a->metrics.status, 200);
    const char *m = strbuf_str(&a->metrics.body);
    const char *own = strstr(m, "own_total 3\n"), *queue = strstr(m, "controller=\"widget\"");
    const char *build = strstr(m, "\nt_daemon_build_info{version=");
    assert_non_null(own);
    assert_non_null(queue);
    assert_non_null(build);
    assert_true(own < queue && queue < build);
    assert_null(strstr(m, "leader_election_master_status"));
    assert_int_equal(a->metrics_failing.status, 503);
    free_app(a);
}

/* --leader-elect: the controllers wait for the Lease, which an API server that does not
 * answer never grants; the replica is ready meanwhile, and says it is no leader. */
static void test_leader_election_stands_by(void **state)
{
    (void)state;
    app *a = new_app();
    a->spec.leader_elect = true;
    a->spec.start_on_every_replica = start_on_every_replica;
    bool started = false;
    int rc;
    char *log = run_capturing_stderr(a, &rc, &started);
    assert_int_equal(rc, 0);
    assert_true(started);
    assert_int_equal(a->rt.exit_code, 0);
    assert_false(a->rt.controllers_started);
    assert_string_equal(a->calls, "before_start;every_replica;log_started;after_drain;");
    assert_non_null(strstr(log, " INFO t=- campaigning for Lease ns/the-lease as "));
    assert_null(a->rt.leader); /* stopped with the watches */
    assert_int_equal(a->readyz.status, 200);
    assert_string_equal(strbuf_str(&a->readyz.body), "ok");
    assert_int_equal(a->metrics.status, 200);
    assert_non_null(strstr(strbuf_str(&a->metrics.body), "\nleader_election_master_status{name=\"the-lease\"} 0\n"));
    free_app(a);
    free(log);
}

/* The controllers cannot start: the daemon shuts down with exit code 1 by itself, and never
 * says it runs. */
static void test_start_controllers_failure_exits_1(void **state)
{
    (void)state;
    app *a = new_app();
    a->controllers_fail = true;
    bool started = false;
    int rc;
    char *err = run_capturing_stderr(a, &rc, &started);
    assert_int_equal(rc, 0);
    assert_true(started);
    assert_int_equal(a->rt.exit_code, 1);
    assert_false(a->rt.controllers_started);
    assert_string_equal(a->calls, "before_start;start_controllers;after_drain;");
    assert_non_null(strstr(err, " ERROR t=- starting the reconciler: no CRDs\n"));
    assert_null(a->rt.listeners.health);
    assert_null(a->rt.uc);
    free_app(a);
    free(err);
}

/* What every replica runs cannot start: the same, before any campaign or controller. */
static void test_start_on_every_replica_failure_exits_1(void **state)
{
    (void)state;
    app *a = new_app();
    a->spec.leader_elect = true;
    a->spec.start_on_every_replica = start_on_every_replica;
    a->every_replica_fails = true;
    bool started = false;
    int rc;
    char *err = run_capturing_stderr(a, &rc, &started);
    assert_int_equal(rc, 0);
    assert_true(started);
    assert_int_equal(a->rt.exit_code, 1);
    assert_string_equal(a->calls, "before_start;every_replica;after_drain;");
    assert_non_null(strstr(err, " ERROR t=- starting: no store\n"));
    assert_null(strstr(err, "campaigning"));
    assert_null(a->rt.leader);
    assert_null(a->rt.uc);
    free_app(a);
    free(err);
}

/* The daemon's own server is up, then start_servers fails: one line, 1, nothing else ran, and
 * the server is closed again before run returns. */
static void test_start_servers_failure_closes_what_was_up(void **state)
{
    (void)state;
    app *a = new_app();
    a->spec.start_servers = start_servers;
    a->server_error = "--catalogs-addr 127.0.0.1:1: no";
    bool started = false;
    int rc;
    char *err = run_capturing_stderr(a, &rc, &started);
    assert_int_equal(rc, 1);
    assert_false(started);
    assert_string_equal(a->calls, "start_servers;");
    assert_string_equal(err, "t: --catalogs-addr 127.0.0.1:1: no\n");
    assert_null(a->server);
    assert_null(a->rt.listeners.health);
    assert_false(daemon_runtime_servers_open(&a->rt));
    free_app(a);
    free(err);
}

/* The health port is taken: after the daemon's own server came up.  One line naming the flag
 * and the address, 1, and the daemon's server closed again. */
static void test_health_port_in_use_closes_the_daemon_server(void **state)
{
    (void)state;
    int busy = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(busy >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(busy, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(busy, 1), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(busy, (struct sockaddr *)&sa, &len), 0);

    app *a = new_app();
    a->spec.start_servers = start_servers;
    snprintf(a->health_addr, sizeof a->health_addr, "127.0.0.1:%d", ntohs(sa.sin_port));
    bool started = false;
    int rc;
    char *err = run_capturing_stderr(a, &rc, &started);
    assert_int_equal(rc, 1);
    assert_false(started);
    assert_string_equal(a->calls, "start_servers;");
    char want[256];
    snprintf(want, sizeof want, "t: --health-probe-bind-address %s: listen on %s: ", a->health_addr,
             a->health_addr);
    assert_memory_equal(err, want, strlen(want));
    assert_non_null(strchr(err, '\n'));
    assert_string_equal(strchr(err, '\n'), "\n"); /* one line */
    assert_null(a->server);
    assert_false(daemon_runtime_servers_open(&a->rt));
    free_app(a);
    close(busy);
    free(err);
}

/* Before anything binds: a kubeconfig that cannot be read, a cache dir that cannot be made. */
static void test_connect_and_cache_dir_failures_return_1(void **state)
{
    (void)state;
    app *a = new_app();
    a->spec.kubeconfig = "/nonexistent/kubeconfig";
    bool started = false;
    assert_int_equal(daemon_runtime_run(&a->rt, &a->spec, &started), 1);
    assert_false(started);
    assert_int_equal(access(a->cache, F_OK), -1); /* nothing made yet */
    assert_string_equal(a->calls, "");
    free_app(a);

    a = new_app();
    char file[64];
    snprintf(file, sizeof file, "%s/file", a->dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(a->cache, sizeof a->cache, "%s/file/cache", a->dir); /* under a regular file */
    int rc;
    char *err = run_capturing_stderr(a, &rc, &started);
    assert_int_equal(rc, 1);
    assert_false(started);
    assert_string_equal(a->calls, "");
    assert_non_null(strstr(err, "--cache-dir "));
    assert_non_null(strstr(err, ": cannot create it: "));
    free_app(a);
    free(err);
}

int main(void)
{
    /* a shutdown that never ends (a mutation of the code under test) fails instead of hanging */
    alarm(120);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_serves_until_sigterm),
        cmocka_unit_test(test_leader_election_stands_by),
        cmocka_unit_test(test_start_controllers_failure_exits_1),
        cmocka_unit_test(test_start_on_every_replica_failure_exits_1),
        cmocka_unit_test(test_start_servers_failure_closes_what_was_up),
        cmocka_unit_test(test_health_port_in_use_closes_the_daemon_server),
        cmocka_unit_test(test_connect_and_cache_dir_failures_return_1),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
