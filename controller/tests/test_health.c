/* operator_health: plain and TLS listeners answer one request each; a TLS listener survives
 * clients that speak plain HTTP or do not trust it; a port in use and a bad key pair are
 * errors at start; stopping frees everything (ASan checks the leaks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "operator_health.h"

#define FIX "../../util/tests/fixtures/tls/"

static int handler(const char *path, strbuf *body, const char **ctype, void *data)
{
    (void)data;
    if (strcmp(path, "/metrics") != 0) {
        strbuf_puts(body, "not found\n");
        return 404;
    }
    *ctype = "text/plain; version=0.0.4";
    strbuf_puts(body, "up 1\n");
    return 200;
}

typedef struct fetch {
    const char *scheme, *path;
    char url[128];
    const char *cafile; /* NULL: the system store (which does not trust the fixture) */
    const char *auth;   /* an Authorization header, or NULL */
    const char *rotate_from, *rotate_to; /* before fetching: copy <from>.crt/.key over <to>.crt/.key */
    long timeout;       /* seconds; 0: 10 */
    CURLcode rc;
    long status;
    char body[256];
    size_t len;
} fetch;

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    fetch *f = arg;
    size_t len = size * n, room = sizeof f->body - 1 - f->len;
    memcpy(f->body + f->len, data, len < room ? len : room);
    f->len += len < room ? len : room;
    f->body[f->len] = '\0';
    return len;
}

static void copy_file(const char *from, const char *to)
{
    char tmp[512], buf[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    FILE *in = fopen(from, "rb"), *out = fopen(tmp, "wb");
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    rename(tmp, to); /* a new inode, as the kubelet's swap of a Secret volume gives */
}

/* What a certificate rotation does to the mounted files; the server looks at most once a second. */
static void rotate(const char *from, const char *to)
{
    char f[256], t[256];
    snprintf(f, sizeof f, "%s.crt", from);
    snprintf(t, sizeof t, "%s.crt", to);
    copy_file(f, t);
    snprintf(f, sizeof f, "%s.key", from);
    snprintf(t, sizeof t, "%s.key", to);
    copy_file(f, t);
    usleep(1100 * 1000);
}

static void do_fetch(fetch *f)
{
    if (f->rotate_from)
        rotate(f->rotate_from, f->rotate_to);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, f->url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, f->timeout ? f->timeout : 10L);
    struct curl_slist *hl = NULL;
    char hdr[256];
    if (f->auth) {
        snprintf(hdr, sizeof hdr, "Authorization: %s", f->auth);
        hl = curl_slist_append(NULL, hdr);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    }
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (f->cafile)
        curl_easy_setopt(h, CURLOPT_CAINFO, f->cafile);
    f->rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &f->status);
    curl_easy_cleanup(h);
    curl_slist_free_all(hl);
}

/* The client side runs on a thread of its own while the loop serves. */
typedef struct session {
    uv_loop_t loop;
    uv_async_t done;
    uv_thread_t thread;
    operator_health *h;
    fetch *fetches;
    size_t n;
} session;

static void run_fetches(void *arg)
{
    session *s = arg;
    for (size_t i = 0; i < s->n; i++)
        do_fetch(&s->fetches[i]);
    uv_async_send(&s->done);
}

static void on_done(uv_async_t *a)
{
    session *s = a->data;
    operator_health_stop(s->h, NULL, NULL);
    uv_close((uv_handle_t *)a, NULL);
}

/* Serves with `o` (and `gate`, when not NULL) until every fetch has run, then stops;
 * *loop_out (when not NULL) is the serving loop meanwhile. */
static void serve_and_fetch_gated(operator_health_opts *o, const olm_http_gate *gate, fetch *fetches, size_t n,
                                  uv_loop_t **loop_out)
{
    session s = {.fetches = fetches, .n = n};
    assert_int_equal(uv_loop_init(&s.loop), 0);
    if (loop_out)
        *loop_out = &s.loop;
    olm_error err;
    o->host = "127.0.0.1";
    o->handler = handler;
    s.h = operator_health_start(&s.loop, o, &err);
    assert_non_null(s.h);
    operator_health_set_gate(s.h, gate);
    for (size_t i = 0; i < n; i++)
        snprintf(fetches[i].url, sizeof fetches[i].url, "%s://127.0.0.1:%d%s", fetches[i].scheme,
                 operator_health_port(s.h), fetches[i].path);
    uv_async_init(&s.loop, &s.done, on_done);
    s.done.data = &s;
    assert_int_equal(uv_thread_create(&s.thread, run_fetches, &s), 0);
    assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
    uv_thread_join(&s.thread);
    assert_int_equal(uv_loop_close(&s.loop), 0);
}

static void serve_and_fetch(operator_health_opts *o, fetch *fetches, size_t n)
{
    serve_and_fetch_gated(o, NULL, fetches, n, NULL);
}

/* A gate like the metrics filter: no token 401 and "no" 403 at once; "ok" 200 a little later
 * (on a timer, as a review answers); "slow" never (until the listener stops). */
typedef struct fake_gate {
    uv_loop_t *loop;
    uv_timer_t timer;
    olm_http_gate_done done;
    void *req;
    int cancelled, checks;
    char last_verb[8], last_path[64];
} fake_gate;

static void gate_answer(uv_timer_t *t)
{
    fake_gate *g = t->data;
    g->done(200, "", NULL, g->req);
    g->req = NULL;
    uv_close((uv_handle_t *)t, NULL);
}

static int gate_check(void *gate, const char *authorization, const char *verb, const char *path,
                      olm_http_gate_done done, void *req_data, void **handle, char *msg, size_t msgsz)
{
    fake_gate *g = gate;
    g->checks++;
    snprintf(g->last_verb, sizeof g->last_verb, "%s", verb);
    snprintf(g->last_path, sizeof g->last_path, "%s", path);
    *handle = NULL;
    if (!authorization) {
        snprintf(msg, msgsz, "Unauthorized");
        return 401;
    }
    if (strcmp(authorization, "Bearer no") == 0) {
        snprintf(msg, msgsz, "Authorization denied for user no");
        return 403;
    }
    g->done = done;
    g->req = req_data;
    *handle = g;
    if (strcmp(authorization, "Bearer ok") == 0) {
        uv_timer_init(g->loop, &g->timer);
        g->timer.data = g;
        uv_timer_start(&g->timer, gate_answer, 10, 0);
    }
    return 0;
}

static void gate_cancel(void *handle)
{
    fake_gate *g = handle;
    g->cancelled++;
    g->req = NULL;
}

static void test_gate(void **state)
{
    (void)state;
    operator_health_opts o = {0};
    fetch f[] = {
        {.scheme = "http", .path = "/metrics"},
        {.scheme = "http", .path = "/metrics", .auth = "Bearer no"},
        {.scheme = "http", .path = "/metrics?x=1", .auth = "Bearer ok"},
        {.scheme = "http", .path = "/healthz"},        /* not guarded: the handler's 404 */
        {.scheme = "http", .path = "/metrics", .auth = "Bearer slow", .timeout = 1},
    };
    fake_gate g = {0};
    olm_http_gate gate = {.check = gate_check, .cancel = gate_cancel, .gate = &g};
    serve_and_fetch_gated(&o, &gate, f, 5, &g.loop);
    assert_int_equal(f[0].status, 401);
    assert_string_equal(f[0].body, "Unauthorized\n");
    assert_int_equal(f[1].status, 403);
    assert_string_equal(f[1].body, "Authorization denied for user no\n");
    assert_int_equal(f[2].status, 200);
    assert_string_equal(f[2].body, "up 1\n");
    assert_int_equal(f[3].status, 404);
    assert_int_equal(f[4].rc, CURLE_OPERATION_TIMEDOUT);
    assert_int_equal(g.checks, 4);
    assert_string_equal(g.last_verb, "get");
    assert_string_equal(g.last_path, "/metrics");
    assert_int_equal(g.cancelled, 1); /* the slow one, when the listener stopped */
}

static void test_plain(void **state)
{
    (void)state;
    operator_health_opts o = {0};
    fetch f[] = {{.scheme = "http", .path = "/metrics"}, {.scheme = "http", .path = "/healthz"}};
    serve_and_fetch(&o, f, 2);
    assert_int_equal(f[0].rc, CURLE_OK);
    assert_int_equal(f[0].status, 200);
    assert_string_equal(f[0].body, "up 1\n");
    assert_int_equal(f[1].status, 404);
}

static void test_tls(void **state)
{
    (void)state;
    operator_health_opts o = {.tls_cert = FIX "server.crt", .tls_key = FIX "server.key"};
    fetch f[] = {
        {.scheme = "https", .path = "/metrics", .cafile = FIX "server.crt"},
        {.scheme = "http", .path = "/metrics"},                      /* plain HTTP on the TLS port */
        {.scheme = "https", .path = "/metrics", .cafile = FIX "other.crt"}, /* not trusted */
        {.scheme = "https", .path = "/nope", .cafile = FIX "server.crt"},
        {.scheme = "https", .path = "/metrics", .cafile = FIX "server.crt"}, /* still serving */
    };
    serve_and_fetch(&o, f, 5);
    assert_int_equal(f[0].rc, CURLE_OK);
    assert_int_equal(f[0].status, 200);
    assert_string_equal(f[0].body, "up 1\n");
    assert_int_not_equal(f[1].rc, CURLE_OK);
    assert_int_equal(f[2].rc, CURLE_PEER_FAILED_VERIFICATION);
    assert_int_equal(f[3].status, 404);
    assert_int_equal(f[4].rc, CURLE_OK);
    assert_string_equal(f[4].body, "up 1\n");
}

/* Rotated files: the next connection is served the new certificate; a bad pair keeps it. */
static void test_tls_reload(void **state)
{
    (void)state;
    char dir[] = "/tmp/olm-health-XXXXXX", base[64], cert[128], key[128];
    assert_non_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/tls", dir);
    snprintf(cert, sizeof cert, "%s.crt", base);
    snprintf(key, sizeof key, "%s.key", base);
    copy_file(FIX "server.crt", cert);
    copy_file(FIX "server.key", key);
    char half[64];
    snprintf(half, sizeof half, "%s/half", dir); /* the rotated certificate with the old key */
    snprintf(cert, sizeof cert, "%s.crt", half);
    copy_file(FIX "rotated.crt", cert);
    snprintf(cert, sizeof cert, "%s.key", half);
    copy_file(FIX "server.key", cert);
    snprintf(cert, sizeof cert, "%s.crt", base);
    operator_health_opts o = {.tls_cert = cert, .tls_key = key};
    fetch f[] = {
        {.scheme = "https", .path = "/metrics", .cafile = FIX "server.crt"},
        {.scheme = "https", .path = "/metrics", .cafile = FIX "rotated.crt", .rotate_from = FIX "rotated",
         .rotate_to = base},
        {.scheme = "https", .path = "/metrics", .cafile = FIX "server.crt"}, /* no longer served */
        {.scheme = "https", .path = "/metrics", .cafile = FIX "rotated.crt", .rotate_from = half, .rotate_to = base},
    };
    serve_and_fetch(&o, f, 4);
    assert_int_equal(f[0].rc, CURLE_OK);
    assert_int_equal(f[1].rc, CURLE_OK);
    assert_string_equal(f[1].body, "up 1\n");
    assert_int_equal(f[2].rc, CURLE_PEER_FAILED_VERIFICATION);
    assert_int_equal(f[3].rc, CURLE_OK); /* the half-rotated pair was refused: still the rotated one */
    const char *names[] = {"tls.crt", "tls.key", "half.crt", "half.key"};
    for (size_t i = 0; i < 4; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    assert_int_equal(rmdir(dir), 0);
}

static void test_start_errors(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    olm_error err;
    operator_health_opts o = {.host = "127.0.0.1", .handler = handler};
    operator_health *first = operator_health_start(&loop, &o, &err);
    assert_non_null(first);
    o.port = operator_health_port(first);
    assert_null(operator_health_start(&loop, &o, &err));
    assert_non_null(strstr(err.msg, "address already in use"));
    o.port = 0;
    o.tls_cert = FIX "server.crt";
    o.tls_key = FIX "other.key";
    assert_null(operator_health_start(&loop, &o, &err));
    assert_non_null(strstr(err.msg, "TLS: " FIX "other.key: ")); /* OpenSSL checks the pair as it loads the key */
    o.host = "localhost";
    assert_null(operator_health_start(&loop, &o, &err));
    assert_string_equal(err.msg, "invalid listen address localhost");
    operator_health_stop(first, NULL, NULL);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0); /* closes the failed listener too */
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_start_errors),
        cmocka_unit_test(test_tls_reload),
        cmocka_unit_test(test_gate),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
