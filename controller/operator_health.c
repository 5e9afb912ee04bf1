/* operator_health: see the header. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operator_health.h"

#define REQ_MAX 8192
#define IDLE_MS 10000

typedef struct conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_write_t wr;
    struct conn *prev, *next;
    struct operator_health *srv;
    char buf[REQ_MAX];
    size_t len;
    char *out; /* the response, freed after the write */
    int closing; /* handles still to close */
} conn;

struct operator_health {
    uv_tcp_t listener;
    operator_health_handler handler;
    void *data;
    conn *conns;
    int port;
    int pending; /* handles still closing at stop */
    bool stopping;
    void (*stop_cb)(void *);
    void *stop_data;
};

static void maybe_done(operator_health *h)
{
    if (h->pending > 0)
        return;
    void (*cb)(void *) = h->stop_cb;
    void *d = h->stop_data;
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
    free(c->out);
    free(c);
    if (h->stopping) {
        h->pending--;
        maybe_done(h);
    }
}

static void conn_close(conn *c)
{
    if (c->closing)
        return;
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

static void on_written(uv_write_t *w, int status)
{
    conn_close(w->data);
}

static const char *reason_of(int status)
{
    switch (status) {
    case 200:
        return "OK";
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

static void respond(conn *c)
{
    char method[8] = "", path[1024] = "";
    int status = 400;
    strbuf body = STRBUF_INIT;
    const char *ctype = NULL;
    if (sscanf(c->buf, "%7s %1023s", method, path) == 2) {
        char *q = strchr(path, '?');
        if (q)
            *q = '\0';
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
            status = 405;
        else
            status = c->srv->handler(path, &body, &ctype, c->srv->data);
    }
    bool head = strcmp(method, "HEAD") == 0;
    char *resp = NULL;
    int n = asprintf(&resp,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                     status, reason_of(status), ctype ? ctype : "text/plain; charset=utf-8", body.len,
                     head ? "" : strbuf_str(&body));
    strbuf_free(&body);
    if (n < 0) {
        conn_close(c);
        return;
    }
    c->out = resp;
    uv_buf_t b = uv_buf_init(resp, (unsigned)n);
    c->wr.data = c;
    uv_read_stop((uv_stream_t *)&c->tcp);
    if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0)
        conn_close(c);
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf)
{
    conn *c = hd->data;
    size_t room = sizeof c->buf - 1 - c->len;
    *buf = uv_buf_init(c->buf + c->len, (unsigned)room);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    conn *c = s->data;
    if (nread < 0) {
        conn_close(c);
        return;
    }
    c->len += (size_t)nread;
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
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_idle, IDLE_MS, 0);
}

static void listener_closed(uv_handle_t *hd)
{
    operator_health *h = hd->data;
    h->pending--;
    maybe_done(h);
}

operator_health *operator_health_start(uv_loop_t *loop, const char *host, int port, operator_health_handler handler, void *data,
                           olm_error *err)
{
    struct sockaddr_storage ss;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss) != 0) {
        olm_error_set(err, "invalid listen address %s", host);
        return NULL;
    }
    operator_health *h = calloc(1, sizeof *h);
    if (!h) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    h->handler = handler;
    h->data = data;
    uv_tcp_init(loop, &h->listener);
    h->listener.data = h;
    int rc = uv_tcp_bind(&h->listener, (const struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&h->listener, 64, on_connection);
    if (rc != 0) {
        olm_error_set(err, "listening on %s:%d: %s", host, port, uv_strerror(rc));
        /* The handle must outlive its close: listener_closed frees h. */
        h->stopping = true;
        h->pending = 1;
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

int operator_health_port(const operator_health *h)
{
    return h->port;
}

void operator_health_stop(operator_health *h, void (*cb)(void *data), void *data)
{
    h->stop_cb = cb;
    h->stop_data = data;
    h->stopping = true;
    int n = 1;
    for (conn *c = h->conns; c; c = c->next)
        n++;
    h->pending = n;
    while (h->conns)
        conn_close(h->conns);
    uv_close((uv_handle_t *)&h->listener, listener_closed);
}
