/* olm_http_listeners: see the header. */
#include "daemon_listeners.h"

#include <stdio.h>
#include <string.h>

#include "olm_parse.h"

#define CT_METRICS "text/plain; version=0.0.4; charset=utf-8"
#define NOT_FOUND "404 page not found\n" /* Go's http.NotFound */

static int not_found(strbuf *body)
{
    strbuf_puts(body, NOT_FOUND);
    return 404;
}

static int serve_metrics(olm_http_listeners *l, strbuf *body, const char **ctype)
{
    if (l->opts.metrics(body, l->opts.arg) < 0) {
        strbuf_reset(body);
        strbuf_puts(body, "503 Service Unavailable\n");
        return 503;
    }
    *ctype = CT_METRICS;
    return 200;
}

static int on_health(const char *path, strbuf *body, const char **ctype, void *data)
{
    olm_http_listeners *l = data;
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0)
        return l->opts.health(path, body, l->opts.arg);
    /* With --metrics-bind-address, /metrics is served there only, behind its filter. */
    if (strcmp(path, "/metrics") == 0 && !l->metrics_listener)
        return serve_metrics(l, body, ctype);
    return not_found(body);
}

static int on_metrics(const char *path, strbuf *body, const char **ctype, void *data)
{
    return strcmp(path, "/metrics") == 0 ? serve_metrics(data, body, ctype) : not_found(body);
}

/* One listener for `flag`; NULL with msg naming the flag and the address on failure. */
static olm_http_server *listen_for(uv_loop_t *loop, olm_http_listeners *l, const char *flag, const char *addr,
                                   bool tls, olm_http_text_handler handler, char *msg, size_t msgsz)
{
    const olm_daemon_flags *f = l->opts.flags;
    char host[256];
    int port;
    olm_parse_listen_addr(addr, host, sizeof host, &port); /* checked by the flag parser */
    olm_http_server_opts o = {.host = host, .port = port, .tls_cert = tls ? f->tls_cert : NULL,
                              .tls_key = tls ? f->tls_key : NULL, .tls_profile = &f->tls, .name = flag,
                              .log_key = l->opts.log_key, .text = handler, .arg = l};
    olm_error err;
    olm_http_server *s = olm_http_server_start(loop, &o, &err);
    if (!s)
        snprintf(msg, msgsz, "%s %s: %s", flag, addr, err.msg);
    return s;
}

int olm_http_listeners_start(uv_loop_t *loop, const olm_http_listeners_opts *opts, olm_http_listeners *l, char *msg,
                             size_t msgsz)
{
    const olm_daemon_flags *f = opts->flags;
    *l = (olm_http_listeners){.opts = *opts, .metrics_listener = !olm_listen_off(f->metrics_addr)};
    if (!olm_listen_off(f->health_addr) &&
        !(l->health = listen_for(loop, l, "--health-probe-bind-address", f->health_addr, false, on_health, msg, msgsz)))
        return -1;
    if (l->metrics_listener && !(l->metrics = listen_for(loop, l, "--metrics-bind-address", f->metrics_addr,
                                                         f->tls_cert != NULL, on_metrics, msg, msgsz))) {
        olm_http_listeners_stop(l, 0);
        return -1;
    }
    return 0;
}

static void slot_stopped(void *arg, bool clean)
{
    (void)clean; /* not clean: logged by the server; the process exits */
    *(olm_http_server **)arg = NULL;
}

void olm_http_server_stop_slot(olm_http_server **slot, unsigned grace_ms)
{
    if (*slot)
        olm_http_server_stop(*slot, grace_ms, slot_stopped, slot);
}

void olm_http_listeners_stop(olm_http_listeners *l, unsigned grace_ms)
{
    olm_http_server_stop_slot(&l->health, grace_ms);
    olm_http_server_stop_slot(&l->metrics, grace_ms);
}
