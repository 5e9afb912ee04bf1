/* catalog_server lifecycle: h2o configuration, the libuv listener, TLS, the registry. */
#include "catalog_server_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

/* Upstream sets NextProtos=["http/1.1"]: HTTP/2 is off.  Static: h2o keeps the pointer. */
static const h2o_iovec_t alpn_http11[] = {{H2O_STRLIT("http/1.1")}, {NULL, 0}};

/* Compression threshold: klauspost gzhttp's DefaultMinSize (1 KiB); the upstream docs quote
 * ">1400 bytes" as the effect on catalogs.  The handler decides per response with
 * compress_hint (it knows the body size, even for /metas which has no Content-Length). */
#define GZIP_QUALITY 6 /* zlib's default level, as Go's gzip.DefaultCompression */

/* Only GET and HEAD are served, and neither has a body worth reading; h2o reads a request
 * body into memory before the handler runs (1 GiB by default).  Past this it answers 413. */
#define MAX_REQUEST_BODY 4096

static void free_handle(uv_handle_t *h) { free(h); }

static void on_connection(uv_stream_t *listener, int status)
{
    catalog_server *s = listener->data;
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
    catalog_server *s = h->data;
    olm_tls_server_free(s->tls);
    catalog_metrics_free(s->metrics);
    free(s);
}

/* Every context the server uses speaks HTTP/1.1 only, as upstream (NextProtos). */
static void register_alpn(void *ssl_ctx, void *arg)
{
    (void)arg;
    h2o_ssl_register_alpn_protocols(ssl_ctx, alpn_http11);
}

static int listen_on(catalog_server *s, const catalog_server_opts *o, olm_error *err)
{
    struct sockaddr_storage ss;
    int rc = uv_ip4_addr(o->host, o->port, (struct sockaddr_in *)&ss);
    if (rc != 0)
        rc = uv_ip6_addr(o->host, o->port, (struct sockaddr_in6 *)&ss);
    if (rc != 0)
        return olm_error_set(err, "listen address %s is not an IP address", o->host);
    if ((rc = uv_tcp_bind(&s->listener, (struct sockaddr *)&ss, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&s->listener, 128, on_connection)) != 0)
        return olm_error_set(err, "listen on %s:%d: %s", o->host, o->port, uv_strerror(rc));
    int len = sizeof ss;
    if ((rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len)) != 0)
        return olm_error_set(err, "getsockname: %s", uv_strerror(rc));
    s->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                            : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return 0;
}

static void configure(catalog_server *s)
{
    h2o_config_init(&s->config);
    s->config.server_name = h2o_iovec_init(NULL, 0); /* Go sends no Server header */
    s->config.http1.upgrade_to_http2 = 0;           /* HTTP/1.1 only, like upstream */
    s->config.http1.req_timeout = 5000;             /* upstream ReadTimeout 5s */
    s->config.max_request_entity_size = MAX_REQUEST_BODY;
    h2o_hostconf_t *host = h2o_config_register_host(&s->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    server_handler *h = (server_handler *)h2o_create_handler(path, sizeof *h);
    h->super.on_req = catalog_http_on_req;
    h->srv = s;
    h2o_compress_args_t zargs = {.min_size = 0, .gzip = {GZIP_QUALITY}, .brotli = {-1}};
    h2o_compress_register(path, &zargs);
    server_logger *l = (server_logger *)h2o_create_logger(path, sizeof *l);
    l->super.log_access = catalog_http_on_log;
    l->srv = s;
}

catalog_server *catalog_server_start(uv_loop_t *loop, const catalog_server_opts *o, olm_error *err)
{
    if ((o->tls_cert && *o->tls_cert) != (o->tls_key && *o->tls_key)) {
        olm_error_set(err, "TLS needs both a certificate and a key");
        return NULL;
    }
    catalog_server *s = calloc(1, sizeof *s);
    if (!s || !(s->metrics = catalog_metrics_new())) {
        free(s);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    s->loop = loop;
    s->access_log = o->access_log;
    s->metrics_cb = o->metrics;
    s->metrics_arg = o->metrics_arg;
    s->no_metrics = o->no_metrics;
    olm_tls_server_opts to = {.cert = o->tls_cert, .key = o->tls_key, .profile = o->tls_profile,
                              .configure = register_alpn, .log_key = "catalog", .log_name = o->name};
    if (o->tls_cert && *o->tls_cert && !(s->tls = olm_tls_server_new(&to, err))) {
        catalog_metrics_free(s->metrics);
        free(s);
        return NULL;
    }
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;
    if (listen_on(s, o, err) < 0) {
        /* The listener handle is initialised and lives inside s: free s once it is closed. */
        uv_close((uv_handle_t *)&s->listener, free_failed_server);
        return NULL;
    }
    configure(s);
    h2o_context_init(&s->ctx, loop, &s->config);
    s->accept_ctx.ctx = &s->ctx;
    s->accept_ctx.hosts = s->config.hosts;
    s->accept_ctx.ssl_ctx = s->tls ? olm_tls_server_ctx(s->tls) : NULL;
    uv_timer_init(loop, &s->drain_timer);
    s->drain_timer.data = s;
    return s;
}

int catalog_server_port(const catalog_server *s) { return s->port; }

void catalog_server_set_gate(catalog_server *s, const olm_http_gate *gate)
{
    s->gate = gate ? *gate : (olm_http_gate){0};
}

store_view *catalog_server_find(const catalog_server *s, const char *name)
{
    for (size_t i = 0; i < s->ncats; i++)
        if (strcmp(s->cats[i].name, name) == 0)
            return s->cats[i].view;
    return NULL;
}

int catalog_server_set_catalog(catalog_server *s, const char *name, store_view *view)
{
    for (size_t i = 0; i < s->ncats; i++) {
        if (strcmp(s->cats[i].name, name) == 0) {
            store_view *old = s->cats[i].view;
            s->cats[i].view = store_view_retain(view);
            store_view_release(old);
            return 0;
        }
    }
    if (s->ncats == s->capcats) {
        size_t cap = s->capcats ? s->capcats * 2 : 8;
        catalog_entry *c = realloc(s->cats, cap * sizeof *c);
        if (!c)
            return -1;
        s->cats = c;
        s->capcats = cap;
    }
    char *n = strdup(name);
    if (!n)
        return -1;
    s->cats[s->ncats++] = (catalog_entry){n, store_view_retain(view)};
    return 0;
}

void catalog_server_remove_catalog(catalog_server *s, const char *name)
{
    for (size_t i = 0; i < s->ncats; i++) {
        if (strcmp(s->cats[i].name, name) == 0) {
            free(s->cats[i].name);
            store_view_release(s->cats[i].view);
            s->cats[i] = s->cats[--s->ncats];
            return;
        }
    }
}

size_t catalog_server_catalog_count(const catalog_server *s) { return s->ncats; }

catalog_metrics *catalog_server_metrics(catalog_server *s) { return s->metrics; }

int catalog_server_render_metrics(const catalog_server *s, strbuf *out)
{
    return catalog_metrics_render(s->metrics, s->ncats, out);
}

static bool conns_open(catalog_server *s)
{
    return !h2o_linklist_is_empty(&s->ctx.http1._conns) || !h2o_linklist_is_empty(&s->ctx.http2._conns);
}

static void on_drain_timer_closed(uv_handle_t *h)
{
    catalog_server *s = h->data;
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
    catalog_server *s = t->data;
    bool open = conns_open(s);
    if (open && uv_now(s->loop) < s->drain_deadline)
        return;
    uv_timer_stop(t);
    if (open) {
        if (s->on_stopped)
            s->on_stopped(s->stop_arg, false);
        return;
    }
    h2o_context_dispose(&s->ctx);
    h2o_config_dispose(&s->config);
    for (size_t i = 0; i < s->ncats; i++) {
        free(s->cats[i].name);
        store_view_release(s->cats[i].view);
    }
    free(s->cats);
    olm_tls_server_free(s->tls);
    catalog_metrics_free(s->metrics);
    uv_close((uv_handle_t *)t, on_drain_timer_closed);
}

void catalog_server_stop(catalog_server *s, unsigned grace_ms, void (*done)(void *arg, bool clean), void *arg)
{
    s->on_stopped = done;
    s->stop_arg = arg;
    uv_close((uv_handle_t *)&s->listener, NULL); /* embedded in s, which outlives the close */
    /* Ends keep-alive after the current response on every connection.  Not
     * h2o_context_request_shutdown(): its HTTP/2 half arms a GOAWAY timer that is still
     * linked when we dispose the context (h2o_timeout_dispose asserts), and we speak only
     * HTTP/1.1, for which that call does nothing but set this flag. */
    s->ctx.shutdown_requested = 1;
    s->drain_deadline = uv_now(s->loop) + grace_ms;
    uv_timer_start(&s->drain_timer, on_drain_tick, 0, 10);
}
