/* olm_http_server with a text callback (the daemons' health and metrics listeners): plain and
 * TLS listeners answer; a TLS listener survives clients that speak plain HTTP or do not trust
 * it; rotated certificate files are taken; the metrics filter guards /metrics; a port in use
 * and a bad key pair are errors at start; stopping frees everything (ASan checks the leaks).
 * olm_http_listeners: which listener serves which path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon_listeners.h"
#include "olm_http_server.h"

#define FIX "fixtures/tls/"

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
    const char *method; /* NULL: GET */
    char url[128];
    const char *cafile; /* NULL: the system store (which does not trust the fixture) */
    const char *auth;   /* an Authorization header, or NULL */
    const char *rotate_from, *rotate_to; /* before fetching: copy <from>.crt/.key over <to>.crt/.key */
    long timeout;       /* seconds; 0: 10 */
    CURLcode rc;
    long status;
    char body[256];
    size_t len;
    char ctype[128];    /* the response's Content-Type */
    char headers[1024]; /* the response's header block, lower-cased */
    size_t hlen;
} fetch;

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    fetch *f = arg;
    size_t len = size * n;
    for (size_t i = 0; i < len && f->hlen < sizeof f->headers - 1; i++)
        f->headers[f->hlen++] = (char)tolower((unsigned char)data[i]);
    f->headers[f->hlen] = '\0';
    return len;
}

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
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, f);
    if (f->method && strcmp(f->method, "HEAD") == 0)
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    else if (f->method)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, f->method);
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
    char *ct = NULL;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        snprintf(f->ctype, sizeof f->ctype, "%s", ct);
    curl_easy_cleanup(h);
    curl_slist_free_all(hl);
}

/* The client side runs on a thread of its own while the loop serves. */
typedef struct session {
    uv_loop_t loop;
    uv_async_t done;
    uv_thread_t thread;
    olm_http_server *h;
    olm_http_listeners *listeners; /* instead of h */
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

/* Run on the loop as the fetches are done, before the server stops: what the daemons do at
 * shutdown (kube_authz_free ends the checks still running). */
static void (*before_stop)(void);

static void on_done(uv_async_t *a)
{
    session *s = a->data;
    if (before_stop)
        before_stop();
    if (s->listeners)
        olm_http_listeners_stop(s->listeners, 1000);
    else
        olm_http_server_stop(s->h, 1000, NULL, NULL);
    uv_close((uv_handle_t *)a, NULL);
}

/* Serves with `o` (and `gate`, when not NULL) until every fetch has run, then stops;
 * *loop_out (when not NULL) is the serving loop meanwhile. */
static void serve_and_fetch_gated(olm_http_server_opts *o, const olm_http_gate *gate, fetch *fetches, size_t n,
                                  uv_loop_t **loop_out)
{
    session s = {.fetches = fetches, .n = n};
    assert_int_equal(uv_loop_init(&s.loop), 0);
    if (loop_out)
        *loop_out = &s.loop;
    olm_error err;
    o->host = "127.0.0.1";
    o->text = handler;
    s.h = olm_http_server_start(&s.loop, o, &err);
    assert_non_null(s.h);
    olm_http_server_set_gate(s.h, gate);
    for (size_t i = 0; i < n; i++)
        snprintf(fetches[i].url, sizeof fetches[i].url, "%s://127.0.0.1:%d%s", fetches[i].scheme,
                 olm_http_server_port(s.h), fetches[i].path);
    uv_async_init(&s.loop, &s.done, on_done);
    s.done.data = &s;
    assert_int_equal(uv_thread_create(&s.thread, run_fetches, &s), 0);
    assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
    uv_thread_join(&s.thread);
    assert_int_equal(uv_loop_close(&s.loop), 0);
}

static void serve_and_fetch(olm_http_server_opts *o, fetch *fetches, size_t n)
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
    int cancelled, checks, ended;
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

/* The check still running ends with 503, as kube_authz_free ends it. */
static fake_gate *running_gate;
static void end_running_checks(void)
{
    fake_gate *g = running_gate;
    if (g->req) {
        void *r = g->req;
        g->req = NULL;
        g->done(503, "shutting down", NULL, r);
        g->ended++;
    }
}

static void test_gate(void **state)
{
    (void)state;
    olm_http_server_opts o = {0};
    fetch f[] = {
        {.scheme = "http", .path = "/metrics"},
        {.scheme = "http", .path = "/metrics", .auth = "Bearer no"},
        {.scheme = "http", .path = "/metrics?x=1", .auth = "Bearer ok"},
        {.scheme = "http", .path = "/healthz"},        /* not guarded: the handler's 404 */
        {.scheme = "http", .path = "/metrics", .auth = "Bearer slow", .timeout = 1},
    };
    fake_gate g = {0};
    olm_http_gate gate = {.check = gate_check, .cancel = gate_cancel, .gate = &g};
    running_gate = &g;
    before_stop = end_running_checks;
    serve_and_fetch_gated(&o, &gate, f, 5, &g.loop);
    before_stop = NULL;
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
    /* The slow one's client gave up, unnoticed (h2o reads no more of a connection whose request
     * is being answered); its check ran until the shutdown ended it, and the connection with it. */
    assert_int_equal(g.ended + g.cancelled, 1);
}

static void test_plain(void **state)
{
    (void)state;
    olm_http_server_opts o = {0};
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
    olm_http_server_opts o = {.tls_cert = FIX "server.crt", .tls_key = FIX "server.key"};
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
    olm_http_server_opts o = {.tls_cert = cert, .tls_key = key};
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
    olm_http_server_opts o = {.host = "127.0.0.1", .text = handler};
    olm_http_server *first = olm_http_server_start(&loop, &o, &err);
    assert_non_null(first);
    o.port = olm_http_server_port(first);
    assert_null(olm_http_server_start(&loop, &o, &err));
    assert_non_null(strstr(err.msg, "listen on 127.0.0.1:"));
    assert_non_null(strstr(err.msg, "address already in use"));
    o.port = 0;
    o.tls_cert = FIX "server.crt";
    o.tls_key = FIX "other.key";
    assert_null(olm_http_server_start(&loop, &o, &err));
    assert_non_null(strstr(err.msg, "TLS: " FIX "other.key: ")); /* OpenSSL checks the pair as it loads the key */
    o.host = "localhost";
    assert_null(olm_http_server_start(&loop, &o, &err));
    assert_string_equal(err.msg, "listen address localhost is not an IP address");
    olm_http_server_stop(first, 1000, NULL, NULL);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0); /* closes the failed listener too */
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Only GET and HEAD; HEAD has the headers without the body; one request a connection (so
 * that stopping never waits on an idle keep-alive connection); the handler's content type,
 * or text/plain. */
static void test_methods_and_headers(void **state)
{
    (void)state;
    olm_http_server_opts o = {0};
    fetch f[] = {
        {.scheme = "http", .path = "/metrics"},
        {.scheme = "http", .path = "/metrics", .method = "HEAD"},
        {.scheme = "http", .path = "/metrics", .method = "POST"},
        {.scheme = "http", .path = "/nope"},
    };
    serve_and_fetch(&o, f, 4);
    assert_int_equal(f[0].status, 200);
    assert_string_equal(f[0].ctype, "text/plain; version=0.0.4");
    assert_non_null(strstr(f[0].headers, "\r\nconnection: close\r\n"));
    assert_non_null(strstr(f[0].headers, "\r\ncontent-length: 5\r\n"));
    assert_null(strstr(f[0].headers, "\r\nserver:")); /* Go sends none */
    assert_int_equal(f[1].status, 200);
    assert_int_equal(f[1].len, 0);
    assert_non_null(strstr(f[1].headers, "\r\ncontent-length: 5\r\n"));
    assert_int_equal(f[2].status, 405);
    assert_non_null(strstr(f[2].headers, "\r\nallow: get, head\r\n"));
    assert_int_equal(f[3].status, 404);
    assert_string_equal(f[3].ctype, "text/plain; charset=utf-8");
}

/* ---- olm_http_listeners */

typedef struct daemon_state {
    int metrics_fail;
} daemon_state;

static int daemon_health(const char *path, strbuf *body, void *arg)
{
    (void)arg;
    strbuf_printf(body, "%s ok\n", path);
    return strcmp(path, "/readyz") == 0 ? 503 : 200;
}

static int daemon_metrics(strbuf *body, void *arg)
{
    daemon_state *d = arg;
    if (d->metrics_fail)
        return -1;
    strbuf_puts(body, "up 1\n");
    return 0;
}

/* Starts the listeners the flags name, with "HEALTH" and "METRICS" in each fetch's path
 * replaced by the listener's port, and fetches until done. */
static void listeners_fetch(olm_daemon_flags *flags, daemon_state *d, fetch *fetches, size_t n)
{
    session s = {.fetches = fetches, .n = n};
    olm_http_listeners l;
    s.listeners = &l;
    assert_int_equal(uv_loop_init(&s.loop), 0);
    olm_http_listeners_opts o = {.flags = flags, .log_key = "test", .health = daemon_health, .metrics = daemon_metrics,
                                 .arg = d};
    char msg[256];
    assert_int_equal(olm_http_listeners_start(&s.loop, &o, &l, msg, sizeof msg), 0);
    for (size_t i = 0; i < n; i++) {
        const char *p = fetches[i].path;
        bool metrics = strncmp(p, "METRICS", 7) == 0;
        olm_http_server *srv = metrics ? l.metrics : l.health;
        assert_non_null(srv);
        snprintf(fetches[i].url, sizeof fetches[i].url, "%s://127.0.0.1:%d%s", fetches[i].scheme,
                 olm_http_server_port(srv), p + (metrics ? 7 : 6));
    }
    uv_async_init(&s.loop, &s.done, on_done);
    s.done.data = &s;
    assert_int_equal(uv_thread_create(&s.thread, run_fetches, &s), 0);
    assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
    uv_thread_join(&s.thread);
    assert_null(l.health);
    assert_null(l.metrics);
    assert_int_equal(uv_loop_close(&s.loop), 0);
}

/* Health listener alone: /healthz and /readyz are the daemon's, /metrics is served there too;
 * a metrics callback that fails is a 503; anything else is Go's 404. */
static void test_listeners_health_only(void **state)
{
    (void)state;
    olm_daemon_flags flags = {.health_addr = "127.0.0.1:0", .metrics_addr = "0"};
    daemon_state d = {0};
    fetch f[] = {
        {.scheme = "http", .path = "HEALTH/healthz"},
        {.scheme = "http", .path = "HEALTH/readyz"},
        {.scheme = "http", .path = "HEALTH/metrics"},
        {.scheme = "http", .path = "HEALTH/catalogs/x/api/v1/all"},
    };
    listeners_fetch(&flags, &d, f, 4);
    assert_int_equal(f[0].status, 200);
    assert_string_equal(f[0].body, "/healthz ok\n");
    assert_int_equal(f[1].status, 503);
    assert_string_equal(f[1].body, "/readyz ok\n");
    assert_int_equal(f[2].status, 200);
    assert_string_equal(f[2].body, "up 1\n");
    assert_string_equal(f[2].ctype, "text/plain; version=0.0.4; charset=utf-8");
    assert_int_equal(f[3].status, 404);
    assert_string_equal(f[3].body, "404 page not found\n");
    d.metrics_fail = 1;
    fetch g[] = {{.scheme = "http", .path = "HEALTH/metrics"}};
    listeners_fetch(&flags, &d, g, 1);
    assert_int_equal(g[0].status, 503);
}

/* With --metrics-bind-address, /metrics is served there only, over HTTPS with the TLS pair;
 * the health listener stays plain HTTP. */
static void test_listeners_metrics_tls(void **state)
{
    (void)state;
    olm_daemon_flags flags = {.health_addr = "127.0.0.1:0", .metrics_addr = "127.0.0.1:0",
                              .tls_cert = FIX "server.crt", .tls_key = FIX "server.key"};
    olm_tls_profile_default(&flags.tls); /* what the flag checks fill in */
    daemon_state d = {0};
    fetch f[] = {
        {.scheme = "http", .path = "HEALTH/metrics"},
        {.scheme = "http", .path = "HEALTH/healthz"},
        {.scheme = "https", .path = "METRICS/metrics", .cafile = FIX "server.crt"},
        {.scheme = "https", .path = "METRICS/healthz", .cafile = FIX "server.crt"},
        {.scheme = "http", .path = "METRICS/metrics"},
    };
    listeners_fetch(&flags, &d, f, 5);
    assert_int_equal(f[0].status, 404);
    assert_int_equal(f[1].status, 200);
    assert_int_equal(f[2].rc, CURLE_OK);
    assert_int_equal(f[2].status, 200);
    assert_string_equal(f[2].body, "up 1\n");
    assert_int_equal(f[3].status, 404);
    assert_int_not_equal(f[4].rc, CURLE_OK);
}

/* A metrics listener that cannot bind: one message naming the flag and the address, and the
 * health listener already up is closed again. */
static void test_listeners_start_error(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    olm_http_server_opts o = {.host = "127.0.0.1", .text = handler};
    olm_error err;
    olm_http_server *busy = olm_http_server_start(&loop, &o, &err);
    assert_non_null(busy);
    char addr[64], msg[512];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", olm_http_server_port(busy));
    olm_daemon_flags flags = {.health_addr = "127.0.0.1:0", .metrics_addr = addr};
    daemon_state d = {0};
    olm_http_listeners_opts lo = {.flags = &flags, .log_key = "test", .health = daemon_health,
                                  .metrics = daemon_metrics, .arg = &d};
    olm_http_listeners l;
    assert_int_equal(olm_http_listeners_start(&loop, &lo, &l, msg, sizeof msg), -1);
    char want[256];
    snprintf(want, sizeof want, "--metrics-bind-address %s: listen on %s: ", addr, addr);
    assert_memory_equal(msg, want, strlen(want));
    olm_http_server_stop(busy, 1000, NULL, NULL);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_null(l.health);
    assert_null(l.metrics);
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
        cmocka_unit_test(test_methods_and_headers),
        cmocka_unit_test(test_listeners_health_only),
        cmocka_unit_test(test_listeners_metrics_tls),
        cmocka_unit_test(test_listeners_start_error),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
