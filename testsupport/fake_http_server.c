/* fake_http_server: the request/response mode (see fake_http_server.h), and what both modes
 * share (fake_http_internal.h): the listening socket and the reading of a request. */
#include "fake_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_http_internal.h"

/* ------------------------------------------------------------ shared */

int fake_http_listen(fake_http_server *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(s->fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(s->fd, 64) < 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &al) < 0) {
        close(s->fd);
        return -1;
    }
    s->port = ntohs(a.sin_port);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
    return 0;
}

static ssize_t conn_recv(fake_http_conn *c, char *buf, size_t n)
{
    if (!c->ssl)
        return recv(c->fd, buf, n, 0);
    int r = SSL_read(c->ssl, buf, (int)n);
    return r > 0 ? r : -1;
}

bool fake_http_send(fake_http_conn *c, const void *buf, size_t len)
{
    if (c->ssl)
        return len == 0 || SSL_write(c->ssl, buf, (int)len) == (int)len;
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* The request's bytes (headers, then Content-Length bytes of body) in a malloc'd buffer;
 * NULL when the peer went away first. */
static char *read_bytes(fake_http_conn *c, size_t *hdr_end_out, size_t *need_out)
{
    char *buf = NULL;
    size_t len = 0, cap = 0, hdr_end = 0, need = (size_t)-1;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        ssize_t n = conn_recv(c, buf + len, cap - len - 1);
        if (n <= 0) {
            free(buf);
            return NULL;
        }
        len += (size_t)n;
        buf[len] = '\0';
        /* Not a request line (a TLS ClientHello sent to plain HTTP, say): hang up at once, as
         * a real server does, rather than wait for a "\r\n\r\n" that never comes. */
        if (buf[0] < 'A' || buf[0] > 'Z') {
            free(buf);
            return NULL;
        }
        if (!hdr_end) {
            char *e = strstr(buf, "\r\n\r\n");
            if (e) {
                hdr_end = (size_t)(e - buf) + 4;
                size_t cl = 0;
                char *clh = strcasestr(buf, "\r\nContent-Length:");
                if (clh && clh < e)
                    cl = strtoul(clh + 17, NULL, 10);
                need = hdr_end + cl;
            }
        }
        if (hdr_end && len >= need)
            break;
    }
    *hdr_end_out = hdr_end;
    *need_out = need;
    return buf;
}

int fake_http_read_request(fake_http_conn *c, fake_http_request *req)
{
    memset(req, 0, sizeof *req);
    size_t hdr_end, need;
    char *buf = read_bytes(c, &hdr_end, &need);
    if (!buf)
        return -1;
    char *sp1 = strchr(buf, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    char *eol = strstr(buf, "\r\n");
    if (!sp1 || !sp2 || !eol) {
        free(buf);
        return -1;
    }
    snprintf(req->method, sizeof req->method, "%.*s", (int)(sp1 - buf), buf);
    snprintf(req->target, sizeof req->target, "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
    req->headers = strndup(eol + 2, hdr_end - (size_t)(eol + 2 - buf));
    req->body_len = need - hdr_end;
    req->body = strndup(buf + hdr_end, req->body_len);
    free(buf);
    req->seq = (unsigned)atomic_fetch_add(&c->s->n_seen, 1);
    return 0;
}

void fake_http_request_free(fake_http_request *req)
{
    free(req->headers);
    free(req->body);
    req->headers = req->body = NULL;
}

/* ------------------------------------------------------------ request/response mode */

static void push(fake_http_server *s, fake_http_response r)
{
    pthread_mutex_lock(&s->lock);
    if (s->n_queue < FAKE_HTTP_MAX)
        s->queue[s->n_queue++] = r;
    pthread_mutex_unlock(&s->lock);
}

void fake_http_push(fake_http_server *s, int status, const char *body)
{
    push(s, (fake_http_response){status, NULL, body, NULL, NULL});
}

void fake_http_push_ct(fake_http_server *s, int status, const char *content_type, const char *body)
{
    push(s, (fake_http_response){status, content_type, body, NULL, NULL});
}

void fake_http_push_headers(fake_http_server *s, int status, const char *headers, const char *body)
{
    push(s, (fake_http_response){status, NULL, body, headers, NULL});
}

size_t fake_http_count(fake_http_server *s)
{
    return atomic_load(&s->n_seen);
}

const char *fake_http_header(const fake_http_request *r, const char *name, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = r->headers; p && *p;) {
        const char *eol = strstr(p, "\r\n");
        if (!eol)
            break;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t vl = (size_t)(eol - v);
            if (vl >= len)
                vl = len - 1;
            memcpy(buf, v, vl);
            buf[vl] = '\0';
            return buf;
        }
        p = eol + 2;
    }
    return buf;
}

static void serve_one(fake_http_server *s, fake_http_conn *c)
{
    fake_http_request req;
    if (fake_http_read_request(c, &req) != 0)
        return;
    fake_http_response resp = {500, "text/plain", "fake_http_server: no response queued", NULL, NULL};
    pthread_mutex_lock(&s->lock);
    if (s->handler) {
        pthread_mutex_unlock(&s->lock);
        s->handler(s, &req, &resp);
        pthread_mutex_lock(&s->lock);
    } else if (s->next < s->n_queue) {
        resp = s->queue[s->next++];
    }
    if (s->n_reqs < FAKE_HTTP_MAX)
        s->reqs[s->n_reqs++] = req;
    else
        fake_http_request_free(&req);
    pthread_mutex_unlock(&s->lock);
    const char *body = resp.body_owned ? resp.body_owned : resp.body ? resp.body : "";
    char head[1024];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d Fake\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
                      resp.status, resp.content_type ? resp.content_type : "application/json", strlen(body),
                      resp.headers ? resp.headers : "");
    if (fake_http_send(c, head, (size_t)hl))
        (void)fake_http_send(c, body, strlen(body));
    free(resp.body_owned);
}

static void *serve(void *arg)
{
    fake_http_server *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        fake_http_conn c = {.s = s, .fd = accept(s->fd, NULL, NULL)};
        if (c.fd < 0)
            continue;
        if (fake_http_accept_tls(&c))
            serve_one(s, &c);
        fake_http_close(&c);
    }
    return NULL;
}

int fake_http_start(fake_http_server *s)
{
    if (fake_http_listen(s) != 0)
        return -1;
    if (pthread_create(&s->thread, NULL, serve, s) != 0) {
        close(s->fd);
        return -1;
    }
    return 0;
}

int fake_http_start_tls(fake_http_server *s, const char *cert_file, const char *key_file)
{
    return fake_http_start_tls_max(s, cert_file, key_file, 0);
}

int fake_http_start_tls_max(fake_http_server *s, const char *cert_file, const char *key_file, int max_version)
{
    void *ctx = fake_http_tls_context(cert_file, key_file, max_version);
    if (!ctx)
        return -1;
    if (fake_http_start(s) != 0) {
        SSL_CTX_free(ctx);
        return -1;
    }
    fake_http_use_tls(s, ctx);
    return 0;
}

/* ------------------------------------------------------------ TLS, both modes */

void *fake_http_tls_context(const char *cert_file, const char *key_file, int max_version)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
        (max_version && SSL_CTX_set_max_proto_version(ctx, max_version) != 1)) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

void fake_http_tls_free(void *ctx)
{
    SSL_CTX_free(ctx);
}

void fake_http_use_tls(fake_http_server *s, void *ctx)
{
    /* Set before any client can connect: the tests learn the URL from us. */
    pthread_mutex_lock(&s->lock);
    s->tls = ctx;
    pthread_mutex_unlock(&s->lock);
    snprintf(s->url, sizeof s->url, "https://127.0.0.1:%d", s->port);
}

bool fake_http_accept_tls(fake_http_conn *c)
{
    pthread_mutex_lock(&c->s->lock);
    SSL_CTX *tls = c->s->tls;
    pthread_mutex_unlock(&c->s->lock);
    if (!tls)
        return true;
    SSL *ssl = SSL_new(tls);
    c->ssl = ssl;
    if (ssl && SSL_set_fd(ssl, c->fd) == 1 && SSL_accept(ssl) == 1)
        return true;
    ERR_clear_error();
    return false;
}

void fake_http_close(fake_http_conn *c)
{
    if (c->ssl) {
        SSL_shutdown(c->ssl);
        SSL_free(c->ssl);
        c->ssl = NULL;
        ERR_clear_error();
    }
    shutdown(c->fd, SHUT_WR);
    close(c->fd);
}

void fake_http_stop(fake_http_server *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    /* the streaming mode's connection threads (fake_http_stream.c) */
    for (unsigned i = 0; i < s->n_conns; i++)
        pthread_join(s->conns[i], NULL);
    s->n_conns = 0;
    close(s->fd);
    for (size_t i = 0; i < s->n_reqs; i++)
        fake_http_request_free(&s->reqs[i]);
    SSL_CTX_free(s->tls);
    pthread_mutex_destroy(&s->lock);
}
