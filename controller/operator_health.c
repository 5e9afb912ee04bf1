/* operator_health: see the header. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "olm_log.h"
#include "olm_tls_server.h"
#include "operator_health.h"

#define REQ_MAX 8192
#define IDLE_MS 10000

typedef struct conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    struct conn *prev, *next;
    struct operator_health *srv;
    SSL *ssl;            /* NULL on a plain listener */
    char raw[4096];      /* TLS: ciphertext as read, before it goes into the SSL's read BIO */
    char buf[REQ_MAX];   /* the request, in plain text */
    size_t len;
    bool responded;
    int closing;         /* handles still to close */
    void *gate_wait;     /* the gate's handle while it decides */
    char method[8], path[1024];
} conn;

/* One uv_write with its bytes; freed by its callback. */
typedef struct out_write {
    uv_write_t req;
    bool close_after;
    char data[];
} out_write;

struct operator_health {
    uv_tcp_t listener;
    olm_tls_server *tls; /* NULL: plain HTTP */
    operator_health_handler handler;
    void *data;
    conn *conns;     /* open connections */
    size_t live;     /* connections not freed yet, open or closing */
    bool listener_closed;
    int port;
    bool stopping;
    void (*stop_cb)(void *);
    void *stop_data;
    olm_http_gate gate; /* check NULL: none */
};

/* Frees h once it is stopping and its last handle has closed. */
static void maybe_done(operator_health *h)
{
    if (!h->stopping || !h->listener_closed || h->live > 0)
        return;
    void (*cb)(void *) = h->stop_cb;
    void *d = h->stop_data;
    olm_tls_server_free(h->tls);
    free(h);
    if (cb)
        cb(d);
}

static void conn_handle_closed(uv_handle_t *hd)
{
    conn *c = hd->data;
    if (--c->closing > 0)
        return;
    operator_health *h = c->srv;
    SSL_free(c->ssl);
    free(c);
    h->live--;
    maybe_done(h);
}

static void conn_close(conn *c)
{
    if (c->closing)
        return;
    if (c->gate_wait) {
        c->srv->gate.cancel(c->gate_wait);
        c->gate_wait = NULL;
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        c->srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->closing = 2;
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, conn_handle_closed);
}

/* Also called with UV_ECANCELED for writes pending when the connection closes; those
 * callbacks run before the close callbacks, so c is still allocated. */
static void on_written(uv_write_t *req, int status)
{
    out_write *w = (out_write *)((char *)req - offsetof(out_write, req));
    conn *c = req->data;
    bool close = w->close_after || status < 0;
    free(w);
    if (close)
        conn_close(c);
}

/* Queues `len` bytes (copied); closes the connection after them when close_after. */
static int send_bytes(conn *c, const char *data, size_t len, bool close_after)
{
    out_write *w = malloc(sizeof *w + len);
    if (!w)
        return -1;
    memcpy(w->data, data, len);
    w->close_after = close_after;
    w->req.data = c;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
        free(w);
        return -1;
    }
    return 0;
}

/* TLS: sends what OpenSSL has written to its write BIO (handshake records, the response,
 * alerts, close_notify).  With close_after and nothing to send, closes at once. */
static int tls_flush(conn *c, bool close_after)
{
    BIO *wbio = SSL_get_wbio(c->ssl);
    size_t n = BIO_ctrl_pending(wbio);
    if (n == 0) {
        if (close_after)
            conn_close(c);
        return 0;
    }
    out_write *w = malloc(sizeof *w + n);
    if (!w)
        return -1;
    if (BIO_read(wbio, w->data, (int)n) != (int)n) {
        free(w);
        return -1;
    }
    w->close_after = close_after;
    w->req.data = c;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
        free(w);
        return -1;
    }
    return 0;
}

static const char *reason_of(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 503:
        return "Service Unavailable";
    default:
        return status >= 500 ? "Internal Server Error" : "Bad Request";
    }
}

/* Sends the whole response and closes after it. */
static void send_response(conn *c, int status, const char *ctype, const strbuf *body)
{
    bool head = strcmp(c->method, "HEAD") == 0;
    char *resp = NULL;
    int n = asprintf(&resp,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                     status, reason_of(status), ctype ? ctype : "text/plain; charset=utf-8", body->len,
                     head ? "" : strbuf_str(body));
    int rc = -1;
    if (n < 0)
        resp = NULL;
    else if (!c->ssl)
        rc = send_bytes(c, resp, (size_t)n, true);
    else if (SSL_write(c->ssl, resp, n) == n) {
        SSL_shutdown(c->ssl); /* queues close_notify behind the response */
        rc = tls_flush(c, true);
    }
    ERR_clear_error();
    free(resp);
    if (rc != 0)
        conn_close(c);
}

/* A response of one line of text, as net/http's http.Error writes it. */
static void send_text(conn *c, int status, const char *msg)
{
    strbuf body = STRBUF_INIT;
    strbuf_printf(&body, "%s\n", msg); /* out of memory: an empty body, the status still says it */
    send_response(c, status, NULL, &body);
    strbuf_free(&body);
}

/* The request passed the gate (or there is none): the handler answers it. */
static void serve(conn *c)
{
    strbuf body = STRBUF_INIT;
    const char *ctype = NULL;
    int status = c->srv->handler(c->path, &body, &ctype, c->srv->data);
    send_response(c, status, ctype, &body);
    strbuf_free(&body);
}

static void on_gate(int status, const char *msg, const char *detail, void *data)
{
    conn *c = data;
    c->gate_wait = NULL;
    if (detail)
        olm_log(OLM_LOG_ERROR, "metrics", NULL, "%s", detail);
    if (status == 200)
        serve(c);
    else
        send_text(c, status, msg);
}

/* The value of header `name` (lower case, with its colon) in the request head, copied into
 * out; NULL when absent or too long. */
static const char *find_header(const char *head, const char *name, char *out, size_t outsz)
{
    size_t nl = strlen(name);
    for (const char *p = strchr(head, '\n'); p; p = strchr(p, '\n')) {
        p++;
        if (strncasecmp(p, name, nl) != 0)
            continue;
        p += nl;
        p += strspn(p, " \t");
        size_t n = strcspn(p, "\r\n");
        if (n >= outsz)
            return NULL;
        memcpy(out, p, n);
        out[n] = '\0';
        return out;
    }
    return NULL;
}

static void respond(conn *c)
{
    c->responded = true;
    uv_read_stop((uv_stream_t *)&c->tcp);
    strbuf none = STRBUF_INIT; /* 400 and 405 have always been sent without a body */
    if (sscanf(c->buf, "%7s %1023s", c->method, c->path) != 2) {
        send_response(c, 400, NULL, &none);
        return;
    }
    char *q = strchr(c->path, '?');
    if (q)
        *q = '\0';
    if (strcmp(c->method, "GET") != 0 && strcmp(c->method, "HEAD") != 0) {
        send_response(c, 405, NULL, &none);
        return;
    }
    operator_health *h = c->srv;
    /* The filter guards /metrics, as controller-runtime wraps only that handler; every
     * other path is the handler's 404 (or its answer) as before. */
    if (!h->gate.check || strcmp(c->path, "/metrics") != 0) {
        serve(c);
        return;
    }
    char auth[REQ_MAX], verb[8], msg[512];
    for (size_t i = 0; i < sizeof verb; i++)
        verb[i] = (char)tolower((unsigned char)c->method[i]);
    int status = h->gate.check(h->gate.gate, find_header(c->buf, "authorization:", auth, sizeof auth), verb, c->path,
                               on_gate, c, &c->gate_wait, msg, sizeof msg);
    if (status == 200)
        serve(c);
    else if (status != 0)
        send_text(c, status, msg);
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf)
{
    conn *c = hd->data;
    if (c->ssl)
        *buf = uv_buf_init(c->raw, sizeof c->raw);
    else
        *buf = uv_buf_init(c->buf + c->len, (unsigned)(sizeof c->buf - 1 - c->len));
}

/* TLS: feeds `n` bytes of ciphertext to OpenSSL and appends the plain text it yields to
 * c->buf.  Returns 0 to go on, -1 when the connection is done (closed or closing). */
static int tls_input(conn *c, size_t n)
{
    if (BIO_write(SSL_get_rbio(c->ssl), c->raw, (int)n) != (int)n) {
        conn_close(c);
        return -1;
    }
    for (;;) {
        size_t room = sizeof c->buf - 1 - c->len;
        int got = room ? SSL_read(c->ssl, c->buf + c->len, (int)room) : -1;
        if (got > 0) {
            c->len += (size_t)got;
            continue;
        }
        int e = room ? SSL_get_error(c->ssl, got) : SSL_ERROR_SSL;
        ERR_clear_error();
        int rc = e == SSL_ERROR_WANT_READ /* handshake records to send, or half a record */
                     ? tls_flush(c, false)
                     /* close_notify, a failed handshake (plain HTTP on this port), a request
                      * too large: send whatever alert OpenSSL wrote, then close */
                     : tls_flush(c, true);
        if (rc != 0)
            conn_close(c);
        return rc != 0 || e != SSL_ERROR_WANT_READ ? -1 : 0;
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    conn *c = s->data;
    if (nread < 0) {
        conn_close(c);
        return;
    }
    if (nread == 0 || c->responded)
        return;
    if (!c->ssl)
        c->len += (size_t)nread;
    else if (tls_input(c, (size_t)nread) != 0)
        return;
    c->buf[c->len] = '\0';
    if (strstr(c->buf, "\r\n\r\n") || strstr(c->buf, "\n\n"))
        respond(c);
    else if (c->len >= sizeof c->buf - 1)
        conn_close(c);
}

static void on_idle(uv_timer_t *t)
{
    conn_close(t->data);
}

/* A server-side SSL on memory BIOs: OpenSSL never touches the socket, libuv does. */
static int tls_attach(conn *c, SSL_CTX *ctx)
{
    BIO *rbio = BIO_new(BIO_s_mem()), *wbio = BIO_new(BIO_s_mem());
    c->ssl = rbio && wbio ? SSL_new(ctx) : NULL;
    if (!c->ssl) {
        BIO_free(rbio);
        BIO_free(wbio);
        ERR_clear_error();
        return -1;
    }
    SSL_set_bio(c->ssl, rbio, wbio); /* the SSL owns both now */
    SSL_set_accept_state(c->ssl);
    return 0;
}

static void on_connection(uv_stream_t *server, int status)
{
    operator_health *h = server->data;
    if (status < 0)
        return;
    conn *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->srv = h;
    uv_tcp_init(server->loop, &c->tcp);
    uv_timer_init(server->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->next = h->conns;
    if (h->conns)
        h->conns->prev = c;
    h->conns = c;
    h->live++;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 ||
        (h->tls && tls_attach(c, olm_tls_server_ctx(h->tls)) != 0) ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_idle, IDLE_MS, 0);
}

static void listener_closed(uv_handle_t *hd)
{
    operator_health *h = hd->data;
    h->listener_closed = true;
    maybe_done(h);
}

operator_health *operator_health_start(uv_loop_t *loop, const operator_health_opts *o, olm_error *err)
{
    struct sockaddr_storage ss;
    if (uv_ip4_addr(o->host, o->port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(o->host, o->port, (struct sockaddr_in6 *)&ss) != 0) {
        olm_error_set(err, "invalid listen address %s", o->host);
        return NULL;
    }
    operator_health *h = calloc(1, sizeof *h);
    if (!h) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    olm_tls_server_opts to = {.cert = o->tls_cert, .key = o->tls_key, .profile = o->tls_profile,
                              .log_key = "clusterExtension", .log_name = o->name};
    if (o->tls_cert && o->tls_key && !(h->tls = olm_tls_server_new(&to, err))) {
        free(h);
        return NULL;
    }
    h->handler = o->handler;
    h->data = o->data;
    uv_tcp_init(loop, &h->listener);
    h->listener.data = h;
    int rc = uv_tcp_bind(&h->listener, (const struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&h->listener, 64, on_connection);
    if (rc != 0) {
        olm_error_set(err, "listening on %s:%d: %s", o->host, o->port, uv_strerror(rc));
        /* The handle must outlive its close: listener_closed frees h. */
        h->stopping = true;
        uv_close((uv_handle_t *)&h->listener, listener_closed);
        return NULL;
    }
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    uv_tcp_getsockname(&h->listener, (struct sockaddr *)&bound, &blen);
    h->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
    return h;
}

void operator_health_set_gate(operator_health *h, const olm_http_gate *gate)
{
    h->gate = gate ? *gate : (olm_http_gate){0};
}

int operator_health_port(const operator_health *h)
{
    return h->port;
}

void operator_health_stop(operator_health *h, void (*cb)(void *data), void *data)
{
    h->stop_cb = cb;
    h->stop_data = data;
    h->stopping = true;
    while (h->conns)
        conn_close(h->conns);
    uv_close((uv_handle_t *)&h->listener, listener_closed);
}
