/* catalog_server lifecycle: its handlers on an olm_http_server (the listener, TLS, h2o and
 * stopping are shared with the daemons' other listeners), the registry. */
#include "olm_array.h"
#include "catalog_server_internal.h"

#include <stdlib.h>
#include <string.h>

/* Compression threshold: klauspost gzhttp's DefaultMinSize (1 KiB); the upstream docs quote
 * ">1400 bytes" as the effect on catalogs.  The handler decides per response with
 * compress_hint (it knows the body size, even for /metas which has no Content-Length). */
#define GZIP_QUALITY 6 /* zlib's default level, as Go's gzip.DefaultCompression */

/* The handlers on "/" (the listener, TLS and the h2o settings are olm_http_server's). */
static void configure(h2o_pathconf_t *path, void *arg)
{
    catalog_server *s = arg;
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
    s->ready_cb = o->ready;
    s->ready_arg = o->ready_arg;
    s->no_metrics = o->no_metrics;
    s->no_metas = o->no_metas;
    s->graphql_501 = o->graphql_501;
    olm_http_server_opts ho = {.host = o->host, .port = o->port, .tls_cert = o->tls_cert, .tls_key = o->tls_key,
                               .tls_profile = o->tls_profile, .name = o->name, .log_key = "catalog",
                               .configure = configure, .arg = s};
    if (!(s->http = olm_http_server_start(loop, &ho, err))) {
        catalog_metrics_free(s->metrics);
        free(s);
        return NULL;
    }
    return s;
}

int catalog_server_port(const catalog_server *s) { return olm_http_server_port(s->http); }

void catalog_server_set_gate(catalog_server *s, const olm_http_gate *gate)
{
    olm_http_server_set_gate(s->http, gate);
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
    if (OLM_ARRAY_RESERVE(s->cats, s->capcats, s->ncats + 1) < 0)
        return -1;
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

bool catalog_server_serves(const catalog_server *s, const char *name, const char **source)
{
    store_view *v = catalog_server_find(s, name);
    *source = v ? store_view_source(v) : NULL;
    return v != NULL;
}

catalog_metrics *catalog_server_metrics(catalog_server *s) { return s->metrics; }

int catalog_server_render_metrics(const catalog_server *s, strbuf *out)
{
    return catalog_metrics_render(s->metrics, s->ncats, out);
}

static void on_http_stopped(void *arg, bool clean)
{
    catalog_server *s = arg;
    void (*done)(void *, bool) = s->on_stopped;
    void *done_arg = s->stop_arg;
    if (clean) { /* else h2o may still use the registry: leave it (the caller exits) */
        for (size_t i = 0; i < s->ncats; i++) {
            free(s->cats[i].name);
            store_view_release(s->cats[i].view);
        }
        free(s->cats);
        catalog_metrics_free(s->metrics);
        free(s);
    }
    if (done)
        done(done_arg, clean);
}

void catalog_server_stop(catalog_server *s, unsigned grace_ms, void (*done)(void *arg, bool clean), void *arg)
{
    s->on_stopped = done;
    s->stop_arg = arg;
    olm_http_server_stop(s->http, grace_ms, on_http_stopped, s);
}
