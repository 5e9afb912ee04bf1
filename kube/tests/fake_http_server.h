/* fake_http_server: a tiny blocking HTTP/1.1 server on 127.0.0.1 for unit tests.
 *
 * SHARED between the kube/ REST tests (test_kube_client.c) and the watch/informer
 * tests: include it from any kube/tests/test_*.c.  It is header-only because
 * kube/CMakeLists.txt builds each test from a single source file.  Do not change
 * the behaviour of existing functions without telling the other kube/ engineer;
 * adding functions is fine.
 *
 * One pthread accepts connections one at a time, reads a request (Content-Length
 * bodies only, which is all libcurl sends for POSTFIELDS), records it, and
 * answers with the next queued canned response (or `handler` when set), then
 * closes the connection.  When the queue is empty it answers 500 so that a
 * missing expectation shows up as a test failure rather than a hang. */
#ifndef OLM_KUBE_FAKE_HTTP_SERVER_H
#define OLM_KUBE_FAKE_HTTP_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define FAKE_HTTP_MAX 64

typedef struct fake_http_request {
    char method[16];
    char target[4096]; /* path?query as sent */
    char *headers;     /* raw header block (lines after the request line), malloc'd */
    char *body;        /* malloc'd, NUL-terminated */
    size_t body_len;
} fake_http_request;

typedef struct fake_http_response {
    int status;
    const char *content_type; /* NULL: application/json */
    const char *body;         /* borrowed; must outlive the server */
    const char *headers;      /* extra header lines, each ending in "\r\n", or NULL (borrowed) */
} fake_http_response;

struct fake_http_server;
/* Optional: fills *resp for a request (called on the server thread). */
typedef void (*fake_http_handler)(struct fake_http_server *s, const fake_http_request *req,
                                  fake_http_response *resp);

typedef struct fake_http_server {
    int fd;
    int port;
    pthread_t thread;
    pthread_mutex_t lock;
    _Atomic int stop;
    fake_http_response queue[FAKE_HTTP_MAX];
    size_t n_queue, next;
    fake_http_request reqs[FAKE_HTTP_MAX];
    size_t n_reqs;
    fake_http_handler handler;
    void *user;
    char url[64]; /* "http://127.0.0.1:<port>" */
} fake_http_server;

#define FAKE_UNUSED __attribute__((unused))

FAKE_UNUSED static void fake_http_push(fake_http_server *s, int status, const char *body)
{
    pthread_mutex_lock(&s->lock);
    if (s->n_queue < FAKE_HTTP_MAX)
        s->queue[s->n_queue++] = (fake_http_response){status, NULL, body, NULL};
    pthread_mutex_unlock(&s->lock);
}

FAKE_UNUSED static void fake_http_push_ct(fake_http_server *s, int status, const char *content_type, const char *body)
{
    pthread_mutex_lock(&s->lock);
    if (s->n_queue < FAKE_HTTP_MAX)
        s->queue[s->n_queue++] = (fake_http_response){status, content_type, body, NULL};
    pthread_mutex_unlock(&s->lock);
}

/* A response with extra header lines (e.g. "Retry-After: 1\r\n"). */
FAKE_UNUSED static void fake_http_push_headers(fake_http_server *s, int status, const char *headers, const char *body)
{
    pthread_mutex_lock(&s->lock);
    if (s->n_queue < FAKE_HTTP_MAX)
        s->queue[s->n_queue++] = (fake_http_response){status, NULL, body, headers};
    pthread_mutex_unlock(&s->lock);
}

/* Number of requests received so far. */
FAKE_UNUSED static size_t fake_http_count(fake_http_server *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->n_reqs;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Value of header `name` in a recorded request, copied into buf ("" if absent). */
FAKE_UNUSED static const char *fake_http_header(const fake_http_request *r, const char *name, char *buf, size_t len)
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

static void fake_http_serve_one(fake_http_server *s, int cfd)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    size_t hdr_end = 0;
    size_t need = (size_t)-1;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = (cap ? cap * 2 : 8192);
            char *nb = realloc(buf, cap);
            if (!nb)
                goto out;
            buf = nb;
        }
        ssize_t n = recv(cfd, buf + len, cap - len - 1, 0);
        if (n <= 0)
            goto out;
        len += (size_t)n;
        buf[len] = '\0';
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
    fake_http_request req;
    memset(&req, 0, sizeof req);
    char *sp1 = strchr(buf, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    char *eol = strstr(buf, "\r\n");
    if (!sp1 || !sp2 || !eol)
        goto out;
    snprintf(req.method, sizeof req.method, "%.*s", (int)(sp1 - buf), buf);
    snprintf(req.target, sizeof req.target, "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
    req.headers = strndup(eol + 2, hdr_end - (size_t)(eol + 2 - buf));
    req.body_len = need - hdr_end;
    req.body = strndup(buf + hdr_end, req.body_len);
    fake_http_response resp = {500, "text/plain", "fake_http_server: no response queued", NULL};
    pthread_mutex_lock(&s->lock);
    if (s->handler) {
        pthread_mutex_unlock(&s->lock);
        s->handler(s, &req, &resp);
        pthread_mutex_lock(&s->lock);
    } else if (s->next < s->n_queue) {
        resp = s->queue[s->next++];
    }
    if (s->n_reqs < FAKE_HTTP_MAX) {
        s->reqs[s->n_reqs++] = req;
    } else {
        free(req.headers);
        free(req.body);
    }
    pthread_mutex_unlock(&s->lock);
    const char *body = resp.body ? resp.body : "";
    char head[1024];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d Fake\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
                      resp.status, resp.content_type ? resp.content_type : "application/json", strlen(body),
                      resp.headers ? resp.headers : "");
    if (send(cfd, head, (size_t)hl, MSG_NOSIGNAL) == hl)
        (void)send(cfd, body, strlen(body), MSG_NOSIGNAL);
out:
    free(buf);
}

static void *fake_http_thread(void *arg)
{
    fake_http_server *s = arg;
    while (!s->stop) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int cfd = accept(s->fd, NULL, NULL);
        if (cfd < 0)
            continue;
        fake_http_serve_one(s, cfd);
        shutdown(cfd, SHUT_WR);
        close(cfd);
    }
    return NULL;
}

/* Listens on 127.0.0.1:<ephemeral>; returns 0 or -1. */
FAKE_UNUSED static int fake_http_start(fake_http_server *s)
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
    if (bind(s->fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(s->fd, 16) < 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &al) < 0) {
        close(s->fd);
        return -1;
    }
    s->port = ntohs(a.sin_port);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
    if (pthread_create(&s->thread, NULL, fake_http_thread, s) != 0) {
        close(s->fd);
        return -1;
    }
    return 0;
}

FAKE_UNUSED static void fake_http_stop(fake_http_server *s)
{
    s->stop = 1;
    pthread_join(s->thread, NULL);
    close(s->fd);
    for (size_t i = 0; i < s->n_reqs; i++) {
        free(s->reqs[i].headers);
        free(s->reqs[i].body);
    }
    pthread_mutex_destroy(&s->lock);
}

#endif
