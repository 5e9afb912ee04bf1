/* olm_http_server: see the header. */
#include "olm_http_server.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_log.h"
#include "olm_tls_server.h"

/* Upstream sets NextProtos=["http/1.1"]: HTTP/2 is off.  Static: h2o keeps the pointer. */
static const h2o_iovec_t alpn_http11[] = {{H2O_STRLIT("http/1.1")}, {NULL, 0}};

#define READ_TIMEOUT_MS 5000   /* upstream's servers: ReadTimeout 5s */
#define MAX_REQUEST_BODY 4096  /* only GET and HEAD are served; h2o would buffer up to 1 GiB */
#define DRAIN_POLL_MS 10

#define CT_TEXT "text/plain; charset=utf-8"

struct olm_http_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t drain_timer;
    h2o_globalconf_t config;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    olm_tls_server *tls;  /* owned; NULL without TLS */
    int port;
    olm_http_gate gate;   /* check NULL: none */
    char log_key[32], name[64];
    olm_http_text_handler text;
    olm_http_post_handler post;
    void *arg;
    uint64_t drain_deadline;
    bool stopping;
    void (*on_stopped)(void *arg, bool clean);
    void *stop_arg;
};

typedef struct text_handler {
    h2o_handler_t super;
    olm_http_server *srv;
} text_handler;

/* ------------------------------------------------------------ responses */

const char *olm_http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Request Entity Too Large";
    case 503: return "Service Unavailable";
    default: return status >= 500 ? "Internal Server Error" : status >= 400 ? "Bad Request" : "OK";
    }
}

static void send_inline(h2o_req_t *req, int status, const char *ctype, const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = olm_http_reason(status);
    if (ctype)
        h2o_set_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, ctype, strlen(ctype), 1);
    req->res.content_length = len;
    h2o_send_inline(req, body, len); /* copies the body into the request's pool */
}

int olm_http_send_error(h2o_req_t *req, int status, const char *msg)
{
    size_t n = strlen(msg);
    char *body = h2o_mem_alloc_pool(&req->pool, n + 1);
    memcpy(body, msg, n);
    body[n] = '\n';
    ssize_t i;
    while ((i = h2o_find_header(&req->res.headers, H2O_TOKEN_CONTENT_LENGTH, -1)) != -1)
        h2o_delete_header(&req->res.headers, i);
    h2o_set_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("x-content-type-options"), 0,
                          H2O_STRLIT("nosniff"), 1);
    req->compress_hint = H2O_COMPRESS_HINT_DISABLE;
    send_inline(req, status, CT_TEXT, body, n + 1);
    return 0;
}

/* ------------------------------------------------------------ the gate (metrics filter) */

/* Lives in the request's pool while the gate decides; disposing the pool (the client went
 * away) cancels the check, so the callback never sees a freed request. */
typedef struct gate_wait {
    h2o_req_t *req;
    olm_http_server *srv;
    void (*cancel)(void *handle); /* the gate's, as it was when the check started */
    void *handle;                 /* NULL once decided */
    int (*serve)(h2o_req_t *req, void *arg);
    void *arg;
} gate_wait;

static void gate_wait_dispose(void *p)
{
    gate_wait *w = p;
    if (w->handle && w->cancel)
        w->cancel(w->handle);
}

static void on_gate(int status, const char *msg, const char *detail, void *data)
{
    gate_wait *w = data;
    w->handle = NULL;
    if (detail)
        olm_log(OLM_LOG_ERROR, w->srv->log_key, NULL, "metrics: %s", detail);
    if (status == 200)
        w->serve(w->req, w->arg);
    else
        olm_http_send_error(w->req, status, msg);
}

int olm_http_server_guard(olm_http_server *s, h2o_req_t *req, int (*serve)(h2o_req_t *req, void *arg), void *arg)
{
    /* The filter guards /metrics only, as controller-runtime wraps only that handler. */
    h2o_iovec_t p = req->path_normalized;
    if (!s->gate.check || !h2o_memis(p.base, p.len, H2O_STRLIT("/metrics")))
        return serve(req, arg);
    char verb[16] = "", auth[8192];
    for (size_t i = 0; i < req->method.len && i < sizeof verb - 1; i++)
        verb[i] = (char)tolower((unsigned char)req->method.base[i]);
    const char *path = h2o_strdup(&req->pool, p.base, p.len).base;
    ssize_t hi = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
    const char *authorization = NULL;
    if (hi >= 0 && req->headers.entries[hi].value.len < sizeof auth) {
        h2o_iovec_t v = req->headers.entries[hi].value;
        memcpy(auth, v.base, v.len);
        auth[v.len] = '\0';
        authorization = auth;
    }
    gate_wait *w = h2o_mem_alloc_shared(&req->pool, sizeof *w, gate_wait_dispose);
    *w = (gate_wait){.req = req, .srv = s, .cancel = s->gate.cancel, .serve = serve, .arg = arg};
    char msg[512] = "";
    int status = s->gate.check(s->gate.gate, authorization, verb, path, on_gate, w, &w->handle, msg, sizeof msg);
    memset(auth, 0, sizeof auth); /* a bearer token */
    if (status == 0)
        return 0; /* on_gate answers */
    w->handle = NULL;
    return status == 200 ? serve(req, arg) : olm_http_send_error(req, status, msg);
}

/* The gate of a stopping server: its owner is about to free the real one. */
static int gate_closed(void *gate, const char *authorization, const char *verb, const char *path,
                       olm_http_gate_done done, void *req_data, void **handle, char *msg, size_t msgsz)
{
    (void)gate, (void)authorization, (void)verb, (void)path, (void)done, (void)req_data;
    *handle = NULL;
    snprintf(msg, msgsz, "shutting down");
    return 503;
}

void olm_http_server_set_gate(olm_http_server *s, const olm_http_gate *gate)
{
    s->gate = gate ? *gate : (olm_http_gate){0};
}

/* ------------------------------------------------------------ text responses */

static int serve_text(h2o_req_t *req, void *arg)
{
    olm_http_server *s = arg;
    h2o_iovec_t p = req->path_normalized;
    const char *path = h2o_strdup(&req->pool, p.base, p.len).base;
    strbuf body = STRBUF_INIT;
    const char *ctype = NULL;
    int status = s->text(path, &body, &ctype, s->arg);
    send_inline(req, status, ctype ? ctype : CT_TEXT, strbuf_str(&body), body.len);
    strbuf_free(&body);
    return 0;
}

static int serve_post(h2o_req_t *req, olm_http_server *s)
{
    h2o_iovec_t p = req->path_normalized;
    const char *path = h2o_strdup(&req->pool, p.base, p.len).base;
    strbuf body = STRBUF_INIT;
    const char *ctype = NULL;
    int status = s->post(path, req->entity.base ? req->entity.base : "", req->entity.len, &body, &ctype, s->arg);
    send_inline(req, status, ctype ? ctype : CT_TEXT, strbuf_str(&body), body.len);
    strbuf_free(&body);
    return 0;
}

static int on_text_req(h2o_handler_t *self, h2o_req_t *req)
{
    olm_http_server *s = ((text_handler *)self)->srv;
    /* One request a connection, as probes and scrapers use them anyway: stopping then never
     * waits on an idle keep-alive connection. */
    req->http1_is_persistent = 0;
    if (s->post && h2o_memis(req->method.base, req->method.len, H2O_STRLIT("POST")))
        return serve_post(req, s);
    if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET")) &&
        !h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD"))) {
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, H2O_STRLIT("GET, HEAD"));
        send_inline(req, 405, NULL, NULL, 0);
        return 0;
    }
    return olm_http_server_guard(s, req, serve_text, s);
}

/* ------------------------------------------------------------ the listener */

static void free_handle(uv_handle_t *h) { free(h); }

static void on_connection(uv_stream_t *listener, int status)
{
    olm_http_server *s = listener->data;
    if (status < 0)
        return; /* e.g. EMFILE: keep listening; the client retries */
    uv_tcp_t *conn = malloc(sizeof *conn);
    if (!conn)
        return;
    uv_tcp_init(s->loop, conn);
    if (uv_accept(listener, (uv_stream_t *)conn) != 0) {
        uv_close((uv_handle_t *)conn, free_handle);
        return;
    }
    /* h2o owns the handle from here and closes it (calling free_handle) with the connection. */
    h2o_socket_t *sock = h2o_uv_socket_create((uv_stream_t *)conn, free_handle);
    if (s->tls) /* the current certificate: reloaded when its files changed */
        s->accept_ctx.ssl_ctx = olm_tls_server_ctx(s->tls);
    h2o_accept(&s->accept_ctx, sock);
}

/* Close callback of the listener of a server that failed to start. */
static void free_failed_server(uv_handle_t *h)
{
    olm_http_server *s = h->data;
    olm_tls_server_free(s->tls);
    free(s);
}

/* Every context the server uses speaks HTTP/1.1 only, as upstream (NextProtos). */
static void register_alpn(void *ssl_ctx, void *arg)
{
    (void)arg;
    h2o_ssl_register_alpn_protocols(ssl_ctx, alpn_http11);
}

static int parse_addr(const olm_http_server_opts *o, struct sockaddr_storage *ss, olm_error *err)
{
    if (uv_ip4_addr(o->host, o->port, (struct sockaddr_in *)ss) != 0 &&
        uv_ip6_addr(o->host, o->port, (struct sockaddr_in6 *)ss) != 0)
        return olm_error_set(err, "listen address %s is not an IP address", o->host);
    return 0;
}

static int listen_on(olm_http_server *s, const olm_http_server_opts *o, struct sockaddr_storage *ss, olm_error *err)
{
    int rc;
    if ((rc = uv_tcp_bind(&s->listener, (struct sockaddr *)ss, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&s->listener, 128, on_connection)) != 0)
        return olm_error_set(err, "listen on %s:%d: %s", o->host, o->port, uv_strerror(rc));
    int len = sizeof *ss;
    if ((rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)ss, &len)) != 0)
        return olm_error_set(err, "getsockname: %s", uv_strerror(rc));
    s->port = ntohs(ss->ss_family == AF_INET ? ((struct sockaddr_in *)ss)->sin_port
                                             : ((struct sockaddr_in6 *)ss)->sin6_port);
    return 0;
}

static void configure(olm_http_server *s, const olm_http_server_opts *o)
{
    h2o_config_init(&s->config);
    s->config.server_name = h2o_iovec_init(NULL, 0); /* Go sends no Server header */
    s->config.http1.upgrade_to_http2 = 0;           /* HTTP/1.1 only, like upstream */
    s->config.http1.req_timeout = READ_TIMEOUT_MS;
    s->config.max_request_entity_size = o->max_body ? o->max_body : MAX_REQUEST_BODY;
    h2o_hostconf_t *host = h2o_config_register_host(&s->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *root = h2o_config_register_path(host, "/", 0);
    if (o->configure) {
        o->configure(root, o->arg);
    } else {
        text_handler *h = (text_handler *)h2o_create_handler(root, sizeof *h);
        h->super.on_req = on_text_req;
        h->srv = s;
    }
}

olm_http_server *olm_http_server_start(uv_loop_t *loop, const olm_http_server_opts *o, olm_error *err)
{
    bool tls = o->tls_cert && *o->tls_cert;
    if (tls != (o->tls_key && *o->tls_key)) {
        olm_error_set(err, "TLS needs both a certificate and a key");
        return NULL;
    }
    if (!o->configure == !o->text) {
        olm_error_set(err, "a server needs handlers or a text callback (one of them)");
        return NULL;
    }
    struct sockaddr_storage ss;
    if (parse_addr(o, &ss, err) < 0)
        return NULL;
    olm_http_server *s = calloc(1, sizeof *s);
    if (!s) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    s->loop = loop;
    s->text = o->text;
    s->post = o->post;
    s->arg = o->arg;
    snprintf(s->log_key, sizeof s->log_key, "%s", o->log_key ? o->log_key : "-");
    snprintf(s->name, sizeof s->name, "%s", o->name ? o->name : "listener");
    olm_tls_server_opts to = {.cert = o->tls_cert, .key = o->tls_key, .profile = o->tls_profile,
                              .configure = register_alpn, .log_key = o->log_key, .log_name = o->name};
    if (tls && !(s->tls = olm_tls_server_new(&to, err))) {
        free(s);
        return NULL;
    }
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;
    if (listen_on(s, o, &ss, err) < 0) {
        /* The listener handle is initialised and lives inside s: free s once it is closed. */
        uv_close((uv_handle_t *)&s->listener, free_failed_server);
        return NULL;
    }
    configure(s, o);
    h2o_context_init(&s->ctx, loop, &s->config);
    s->accept_ctx.ctx = &s->ctx;
    s->accept_ctx.hosts = s->config.hosts;
    s->accept_ctx.ssl_ctx = s->tls ? olm_tls_server_ctx(s->tls) : NULL;
    uv_timer_init(loop, &s->drain_timer);
    s->drain_timer.data = s;
    return s;
}

int olm_http_server_port(const olm_http_server *s) { return s->port; }

/* ------------------------------------------------------------ stopping */

static bool conns_open(olm_http_server *s)
{
    return !h2o_linklist_is_empty(&s->ctx.http1._conns) || !h2o_linklist_is_empty(&s->ctx.http2._conns);
}

static void on_drain_timer_closed(uv_handle_t *h)
{
    olm_http_server *s = h->data;
    void (*done)(void *, bool) = s->on_stopped;
    void *arg = s->stop_arg;
    free(s);
    if (done)
        done(arg, true);
}

/* Polls until the last connection has closed (h2o keeps them in the context's lists), so
 * that the context is disposed only when nothing refers to it any more. */
static void on_drain_tick(uv_timer_t *t)
{
    olm_http_server *s = t->data;
    bool open = conns_open(s);
    if (open && uv_now(s->loop) < s->drain_deadline)
        return;
    uv_timer_stop(t);
    if (open) {
        olm_log(OLM_LOG_WARN, s->log_key, NULL, "%s: connections still open at shutdown; exiting anyway", s->name);
        if (s->on_stopped)
            s->on_stopped(s->stop_arg, false);
        return;
    }
    h2o_context_dispose(&s->ctx);
    h2o_config_dispose(&s->config);
    olm_tls_server_free(s->tls);
    uv_close((uv_handle_t *)t, on_drain_timer_closed);
}

void olm_http_server_stop(olm_http_server *s, unsigned grace_ms, void (*done)(void *arg, bool clean), void *arg)
{
    if (s->stopping)
        return; /* the first stop's callback stands */
    s->stopping = true;
    if (s->gate.check) /* a request read from now on must not reach the gate's object */
        s->gate = (olm_http_gate){.check = gate_closed};
    s->on_stopped = done;
    s->stop_arg = arg;
    uv_close((uv_handle_t *)&s->listener, NULL); /* embedded in s, which outlives the close */
    /* Ends keep-alive after the current response on every connection.  Not
     * h2o_context_request_shutdown(): its HTTP/2 half arms a GOAWAY timer that is still
     * linked when we dispose the context (h2o_timeout_dispose asserts), and we speak only
     * HTTP/1.1, for which that call does nothing but set this flag. */
    s->ctx.shutdown_requested = 1;
    s->drain_deadline = uv_now(s->loop) + grace_ms;
    uv_timer_start(&s->drain_timer, on_drain_tick, 0, DRAIN_POLL_MS);
}
