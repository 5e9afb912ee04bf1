/* fake_watch_server: an in-process HTTP/1.1 server on 127.0.0.1 for the tests of watches
 * (kube's watch, informer and leader tests, controller/drift's kube backend).
 *
 * Why not fake_http_server.h (the shared one-request-at-a-time server): a watch needs a
 * response that streams (chunked encoding, pieces written with pauses so they reach curl as
 * separate reads) and stays open while other requests are served.  So here every connection
 * gets its own thread and a handler that writes the response itself with the fws_* helpers.
 * Header-only (static functions: each test binary takes what it uses).
 *
 * The handler runs on a connection thread; it must lock `s->lock` around any
 * state it shares with other connections or the test.  Every response closes the
 * connection (no keep-alive), which keeps request accounting simple. */
#ifndef OLM_TESTSUPPORT_FAKE_WATCH_SERVER_H
#define OLM_TESTSUPPORT_FAKE_WATCH_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define FWS_MAX_CONNS 256
#define FWS_UNUSED __attribute__((unused))

typedef struct fws_request {
    char method[16];
    char target[4096]; /* path?query as sent */
    char *body;        /* NUL-terminated, malloc'd, freed after the handler */
    size_t body_len;
    unsigned seq;      /* 0-based order of arrival */
} fws_request;

struct fws_server;
typedef struct fws_conn {
    struct fws_server *s;
    int fd;
} fws_conn;

typedef void (*fws_handler)(fws_conn *c, const fws_request *req, void *user);

typedef struct fws_server {
    int fd;
    int port;
    char url[64];
    pthread_t accept_thread;
    pthread_t conns[FWS_MAX_CONNS];
    unsigned n_conns;
    pthread_mutex_t lock; /* for the handler's and the test's shared state */
    atomic_int stop;
    atomic_uint seq;
    fws_handler handler;
    void *user;
} fws_server;

typedef struct fws_conn_arg {
    fws_server *s;
    int fd;
} fws_conn_arg;

FWS_UNUSED static int fws_write(fws_conn *c, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A complete response with Content-Length. */
FWS_UNUSED static int fws_respond(fws_conn *c, int status, const char *body)
{
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n",
                      status, strlen(body));
    return fws_write(c, head, (size_t)hl) == 0 ? fws_write(c, body, strlen(body)) : -1;
}

FWS_UNUSED static int fws_chunked_begin(fws_conn *c, int status)
{
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                      "Connection: close\r\n\r\n",
                      status);
    return fws_write(c, head, (size_t)hl);
}

/* One HTTP chunk, then a short pause so that the next chunk is a separate read
 * on the client side (not guaranteed, which is why the parser also has pure tests). */
FWS_UNUSED static int fws_chunk(fws_conn *c, const char *data, size_t len)
{
    char sz[32];
    int n = snprintf(sz, sizeof sz, "%zx\r\n", len);
    if (fws_write(c, sz, (size_t)n) != 0 || fws_write(c, data, len) != 0 || fws_write(c, "\r\n", 2) != 0)
        return -1;
    usleep(2000);
    return 0;
}

/* Sends `text` as several chunks cut at `cut` bytes each (events straddle chunks). */
FWS_UNUSED static int fws_chunks_cut(fws_conn *c, const char *text, size_t cut)
{
    size_t len = strlen(text);
    for (size_t off = 0; off < len; off += cut)
        if (fws_chunk(c, text + off, len - off < cut ? len - off : cut) != 0)
            return -1;
    return 0;
}

FWS_UNUSED static int fws_chunked_end(fws_conn *c)
{
    return fws_write(c, "0\r\n\r\n", 5);
}

/* Blocks until the client closes the connection or the server stops: a watch the
 * test ends from the client side. */
FWS_UNUSED static void fws_hold_open(fws_conn *c)
{
    char buf[256];
    while (!atomic_load(&c->s->stop)) {
        struct pollfd p = {c->fd, POLLIN, 0};
        int r = poll(&p, 1, 20);
        if (r < 0)
            return;
        if (r > 0 && recv(c->fd, buf, sizeof buf, 0) <= 0)
            return;
    }
}

static int fws_read_request(int fd, fws_request *req)
{
    size_t cap = 16384, len = 0, need = (size_t)-1, hdr_end = 0;
    char *buf = malloc(cap);
    if (!buf)
        return -1;
    while (!hdr_end || len < need) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
        if (n <= 0) {
            free(buf);
            return -1;
        }
        len += (size_t)n;
        buf[len] = '\0';
        char *e;
        if (!hdr_end && (e = strstr(buf, "\r\n\r\n")) != NULL) {
            hdr_end = (size_t)(e - buf) + 4;
            char *cl = strcasestr(buf, "\r\nContent-Length:");
            need = hdr_end + (cl && cl < e ? strtoul(cl + 17, NULL, 10) : 0);
        }
    }
    char *sp1 = strchr(buf, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2) {
        free(buf);
        return -1;
    }
    snprintf(req->method, sizeof req->method, "%.*s", (int)(sp1 - buf), buf);
    snprintf(req->target, sizeof req->target, "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
    req->body_len = need - hdr_end;
    req->body = strndup(buf + hdr_end, req->body_len);
    free(buf);
    return req->body ? 0 : -1;
}

static void *fws_conn_thread(void *arg)
{
    fws_conn_arg a = *(fws_conn_arg *)arg;
    free(arg);
    fws_request req;
    memset(&req, 0, sizeof req);
    if (fws_read_request(a.fd, &req) == 0) {
        req.seq = atomic_fetch_add(&a.s->seq, 1);
        fws_conn c = {a.s, a.fd};
        a.s->handler(&c, &req, a.s->user);
    }
    free(req.body);
    shutdown(a.fd, SHUT_WR);
    close(a.fd);
    return NULL;
}

static void *fws_accept_thread(void *arg)
{
    fws_server *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, 20) <= 0)
            continue;
        int cfd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0)
            continue;
        fws_conn_arg *a = malloc(sizeof *a);
        if (!a || s->n_conns >= FWS_MAX_CONNS) {
            free(a);
            close(cfd);
            continue;
        }
        a->s = s;
        a->fd = cfd;
        if (pthread_create(&s->conns[s->n_conns], NULL, fws_conn_thread, a) != 0) {
            free(a);
            close(cfd);
            continue;
        }
        s->n_conns++;
    }
    return NULL;
}

/* Listens on 127.0.0.1:<ephemeral port>; 0 or -1. */
FWS_UNUSED static int fws_start(fws_server *s, fws_handler handler, void *user)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->handler = handler;
    s->user = user;
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
    if (pthread_create(&s->accept_thread, NULL, fws_accept_thread, s) != 0) {
        close(s->fd);
        return -1;
    }
    return 0;
}

/* Stops accepting, lets held-open handlers return, joins every thread. */
FWS_UNUSED static void fws_stop(fws_server *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->accept_thread, NULL);
    for (unsigned i = 0; i < s->n_conns; i++)
        pthread_join(s->conns[i], NULL);
    close(s->fd);
    pthread_mutex_destroy(&s->lock);
}

#endif
