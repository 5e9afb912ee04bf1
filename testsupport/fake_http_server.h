/* fake_http_server: a tiny blocking HTTP/1.1 server on 127.0.0.1 for unit tests.
 *
 * The ONE HTTP fake of the unit tests (olm_testsupport, built for tests only): the kube/
 * REST tests queue canned answers on it, fake_apiserver.h and the fake catalogds of
 * controller/ are handlers on top of it, and the watch tests and oci/'s hostile registries
 * (bytes dripped, responses cut short) use its streaming mode.
 *
 * Request/response mode (fake_http_start, fake_http_start_tls): one pthread accepts
 * connections one at a time, reads a request (Content-Length bodies only, which is all
 * libcurl sends for POSTFIELDS), records it, and answers with the next queued canned
 * response (or `handler` when set), then closes the connection.  When the queue is empty it
 * answers 500 so that a missing expectation shows up as a test failure rather than a hang.
 *
 * Streaming mode (fake_http_start_streaming, fake_http_stream.c): every connection gets a
 * thread of its own and a handler that writes the response itself with the fake_http_write
 * helpers: a watch, chunked and held open while other requests are served.  The handler
 * runs on a connection thread; it must lock `s->lock` around any state it shares with other
 * connections or the test.  Nothing is recorded in this mode.  Every response closes its
 * connection (no keep-alive), which keeps request accounting simple. */
#ifndef OLM_TESTSUPPORT_FAKE_HTTP_SERVER_H
#define OLM_TESTSUPPORT_FAKE_HTTP_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define FAKE_HTTP_MAX 64

typedef struct fake_http_request {
    char method[16];
    char target[4096]; /* path?query as sent */
    char *headers;     /* raw header block (lines after the request line), malloc'd */
    char *body;        /* malloc'd, NUL-terminated */
    size_t body_len;
    unsigned seq;      /* 0-based order of arrival */
} fake_http_request;

typedef struct fake_http_response {
    int status;
    const char *content_type; /* NULL: application/json */
    const char *body;         /* borrowed; must outlive the server */
    const char *headers;      /* extra header lines, each ending in "\r\n", or NULL (borrowed) */
    char *body_owned;         /* set by a handler instead of body: malloc'd, freed once sent */
} fake_http_response;

struct fake_http_server;
/* Optional: fills *resp for a request (called on the server thread). */
typedef void (*fake_http_handler)(struct fake_http_server *s, const fake_http_request *req,
                                  fake_http_response *resp);

/* One connection of the streaming mode. */
typedef struct fake_http_conn {
    struct fake_http_server *s;
    int fd;
    void *ssl; /* SSL * when serving HTTPS, else NULL */
} fake_http_conn;
typedef void (*fake_http_stream_handler)(fake_http_conn *c, const fake_http_request *req, void *user);

#define FAKE_HTTP_MAX_CONNS 256

typedef struct fake_http_server {
    int fd;
    int port;
    pthread_t thread;
    pthread_mutex_t lock;
    atomic_int stop;
    fake_http_response queue[FAKE_HTTP_MAX];
    size_t n_queue, next;
    fake_http_request reqs[FAKE_HTTP_MAX]; /* the first FAKE_HTTP_MAX requests */
    size_t n_reqs;
    atomic_size_t n_seen; /* every request, recorded or not */
    fake_http_handler handler;
    void *user;
    char url[64]; /* "http(s)://127.0.0.1:<port>" */
    void *tls;    /* SSL_CTX * when serving HTTPS, else NULL */
    /* streaming mode */
    fake_http_stream_handler stream;
    void *stream_user;
    pthread_t conns[FAKE_HTTP_MAX_CONNS];
    unsigned n_conns;
} fake_http_server;

/* Listens on 127.0.0.1:<ephemeral>; returns 0 or -1.  Set `handler`/`user` before the
 * first request is sent. */
int fake_http_start(fake_http_server *s);
/* The same over TLS with the PEM certificate chain and key files: a client that does not
 * trust the certificate fails the handshake, and nothing is recorded or answered. */
int fake_http_start_tls(fake_http_server *s, const char *cert_file, const char *key_file);
/* fake_http_start_tls speaking at most `max_version` (OpenSSL's, e.g. TLS1_2_VERSION): an old
 * server, for the tests of what a client's TLS profile still accepts. */
int fake_http_start_tls_max(fake_http_server *s, const char *cert_file, const char *key_file, int max_version);
void fake_http_stop(fake_http_server *s);

/* Streaming mode: `handler` answers every request on a connection thread of its own. */
int fake_http_start_streaming(fake_http_server *s, fake_http_stream_handler handler, void *user);
/* The same over TLS (as fake_http_start_tls). */
int fake_http_start_streaming_tls(fake_http_server *s, fake_http_stream_handler handler, void *user,
                                  const char *cert_file, const char *key_file);
/* What a streaming handler writes with (0, or -1 when the client went away). */
int fake_http_write(fake_http_conn *c, const void *buf, size_t len);
/* A complete JSON response with Content-Length. */
int fake_http_respond(fake_http_conn *c, int status, const char *body);
int fake_http_chunked_begin(fake_http_conn *c, int status);
/* One HTTP chunk, then a short pause so that the next chunk is a separate read on the
 * client side (not guaranteed, which is why a client's parser needs pure tests too). */
int fake_http_chunk(fake_http_conn *c, const char *data, size_t len);
/* `text` as several chunks cut at `cut` bytes each (events straddle chunks). */
int fake_http_chunks_cut(fake_http_conn *c, const char *text, size_t cut);
int fake_http_chunked_end(fake_http_conn *c);
/* Blocks until the client closes the connection or the server stops: a watch the test
 * ends from the client side. */
void fake_http_hold_open(fake_http_conn *c);

/* Canned answers, used in order when there is no handler. */
void fake_http_push(fake_http_server *s, int status, const char *body);
void fake_http_push_ct(fake_http_server *s, int status, const char *content_type, const char *body);
/* A response with extra header lines (e.g. "Retry-After: 1\r\n"). */
void fake_http_push_headers(fake_http_server *s, int status, const char *headers, const char *body);

/* Number of requests received so far (all of them, also past FAKE_HTTP_MAX). */
size_t fake_http_count(fake_http_server *s);

/* Value of header `name` in a recorded request, copied into buf ("" if absent). */
const char *fake_http_header(const fake_http_request *r, const char *name, char *buf, size_t len);

#endif
