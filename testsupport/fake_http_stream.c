/* fake_http_server's streaming mode (see fake_http_server.h): a thread per connection and a
 * handler that writes the response itself, for watches that stream and stay open. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_http_internal.h"

int fake_http_write(fake_http_conn *c, const void *buf, size_t len)
{
    return fake_http_send(c, buf, len) ? 0 : -1;
}

int fake_http_respond(fake_http_conn *c, int status, const char *body)
{
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n",
                      status, strlen(body));
    return fake_http_write(c, head, (size_t)hl) == 0 ? fake_http_write(c, body, strlen(body)) : -1;
}

int fake_http_chunked_begin(fake_http_conn *c, int status)
{
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                      "Connection: close\r\n\r\n",
                      status);
    return fake_http_write(c, head, (size_t)hl);
}

int fake_http_chunk(fake_http_conn *c, const char *data, size_t len)
{
    char sz[32];
    int n = snprintf(sz, sizeof sz, "%zx\r\n", len);
    if (fake_http_write(c, sz, (size_t)n) != 0 || fake_http_write(c, data, len) != 0 ||
        fake_http_write(c, "\r\n", 2) != 0)
        return -1;
    usleep(2000);
    return 0;
}

int fake_http_chunks_cut(fake_http_conn *c, const char *text, size_t cut)
{
    size_t len = strlen(text);
    for (size_t off = 0; off < len; off += cut)
        if (fake_http_chunk(c, text + off, len - off < cut ? len - off : cut) != 0)
            return -1;
    return 0;
}

int fake_http_chunked_end(fake_http_conn *c)
{
    return fake_http_write(c, "0\r\n\r\n", 5);
}

void fake_http_hold_open(fake_http_conn *c)
{
    char buf[256]; /* what a client sends now is of no interest: only whether it went away */
    while (!atomic_load(&c->s->stop)) {
        struct pollfd p = {c->fd, POLLIN, 0};
        int r = poll(&p, 1, 20);
        if (r < 0)
            return;
        if (r > 0 && recv(c->fd, buf, sizeof buf, 0) <= 0)
            return;
    }
}

/* One connection: its request, the handler, then close. */
static void *conn_thread(void *arg)
{
    fake_http_conn c = *(fake_http_conn *)arg;
    free(arg);
    fake_http_request req;
    if (fake_http_accept_tls(&c) && fake_http_read_request(&c, &req) == 0) {
        c.s->stream(&c, &req, c.s->stream_user);
        fake_http_request_free(&req);
    }
    fake_http_close(&c);
    return NULL;
}

static void *accept_thread(void *arg)
{
    fake_http_server *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, 20) <= 0)
            continue;
        int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        fake_http_conn *c = malloc(sizeof *c);
        if (!c || s->n_conns >= FAKE_HTTP_MAX_CONNS) {
            free(c);
            close(fd);
            continue;
        }
        *c = (fake_http_conn){.s = s, .fd = fd};
        if (pthread_create(&s->conns[s->n_conns], NULL, conn_thread, c) != 0) {
            free(c);
            close(fd);
            continue;
        }
        s->n_conns++;
    }
    return NULL;
}

int fake_http_start_streaming(fake_http_server *s, fake_http_stream_handler handler, void *user)
{
    if (fake_http_listen(s) != 0)
        return -1;
    s->stream = handler;
    s->stream_user = user;
    if (pthread_create(&s->thread, NULL, accept_thread, s) != 0) {
        close(s->fd);
        return -1;
    }
    return 0;
}

int fake_http_start_streaming_tls(fake_http_server *s, fake_http_stream_handler handler, void *user,
                                  const char *cert_file, const char *key_file)
{
    void *ctx = fake_http_tls_context(cert_file, key_file, 0);
    if (!ctx)
        return -1;
    if (fake_http_start_streaming(s, handler, user) != 0) {
        fake_http_tls_free(ctx);
        return -1;
    }
    fake_http_use_tls(s, ctx);
    return 0;
}
