/* catalog_server: catalogd's HTTP/1.1 (+TLS) server, h2o on a caller's libuv loop.
 *
 * Routes (shared/spec/olmv1-behaviour.md §4.4):
 *   GET|HEAD /catalogs/{name}/api/v1/all     the whole catalog.jsonl (Range, conditionals)
 *   GET|HEAD /catalogs/{name}/api/v1/metas   ?schema=&package=&name= selection from the index
 *   /healthz                                  "ok"
 *   /readyz                                   "ok", or 503 with why (the `ready` callback)
 *   /metrics                                  Prometheus text (catalog_metrics.h)
 * A request body over 4 KiB is refused with 413 (nothing served takes one).
 * Bodies are sent straight from the store view's mmap (no per-request copy).  When the client
 * accepts gzip and the body is large enough, the whole catalog (/all, unfiltered /metas) is
 * sent from the gzip form the store wrote beside it (never compressed here), and a /metas
 * selection is compressed by h2o's compress filter.
 *
 * The server keeps a registry name -> store_view.  Each request takes its own reference to
 * the view it serves, so replacing a catalog never disturbs a response in flight.
 *
 * Threads: every function here must be called on the loop thread (the reconciler updates
 * the registry from its after-work callbacks).  Nothing here blocks. */
#ifndef OLM_CATALOG_SERVER_H
#define OLM_CATALOG_SERVER_H

#include <stdbool.h>
#include <stdio.h>
#include <uv.h>

#include "catalog_metrics.h"
#include "catalog_store.h"
#include "olm_error.h"
#include "olm_http_gate.h"
#include "olm_tls_profile.h"
#include "strbuf.h"

typedef struct catalog_server catalog_server;

typedef struct catalog_server_opts {
    const char *host;     /* listen address, e.g. "127.0.0.1" (IPv4 or IPv6 literal) */
    int port;             /* 0 picks an ephemeral port: see catalog_server_port */
    const char *tls_cert; /* PEM certificate chain; TLS iff both cert and key are set */
    const char *tls_key;  /* PEM private key; both reloaded for new connections when they change */
    const olm_tls_profile *tls_profile; /* NULL: intermediate */
    const char *name;     /* for log lines, e.g. "--catalogs-server-addr" */
    FILE *access_log;     /* one line per request; NULL for none.  Borrowed. */
    /* What /metrics shows: NULL for this server's own metrics, else this callback's text
     * (a second listener that shows the catalog server's; return -1 for a 503). */
    int (*metrics)(strbuf *out, void *arg);
    void *metrics_arg;
    bool no_metrics; /* /metrics is 404 here (it is served on a listener of its own) */
    bool no_metas;   /* --feature-gates APIV1MetasHandler=false: /api/v1/metas is not a route (404) */
    bool graphql_501; /* GraphQLCatalogQueries=true, not built: /api/v1/graphql answers 501 */
    /* /readyz: true, or false with why in `why` (503).  NULL: always ready. */
    bool (*ready)(void *arg, strbuf *why);
    void *ready_arg;
} catalog_server_opts;

/* Binds, listens and starts serving on `loop`.  NULL with err set on failure (bad address,
 * port in use, unreadable certificate...). */
catalog_server *catalog_server_start(uv_loop_t *loop, const catalog_server_opts *opts, olm_error *err);

int catalog_server_port(const catalog_server *s); /* the bound port */

/* Serves `view` for `name` from now on (takes its own reference; the caller keeps its own).
 * A previous view of that name is released (requests still using it keep it alive).
 * -1 on out of memory (the registry is then unchanged). */
int catalog_server_set_catalog(catalog_server *s, const char *name, store_view *view);
void catalog_server_remove_catalog(catalog_server *s, const char *name);
size_t catalog_server_catalog_count(const catalog_server *s);
/* Whether `name` is served, and then the digest ref its content came from (*source; NULL
 * when unknown).  Borrowed until the catalog is replaced or removed. */
bool catalog_server_serves(const catalog_server *s, const char *name, const char **source);

/* From now on every request for /metrics first passes `gate` (copied; its object borrowed until the
 * server stopped): the metrics filter of the --metrics-bind-address listener.  NULL: none. */
void catalog_server_set_gate(catalog_server *s, const olm_http_gate *gate);

/* Appends this server's /metrics text to `out`; -1 on out of memory. */
int catalog_server_render_metrics(const catalog_server *s, strbuf *out);

/* For the reconciler: unpack results shown on /metrics.  Borrowed; lives with the server. */
catalog_metrics *catalog_server_metrics(catalog_server *s);

/* Stops accepting, waits up to `grace_ms` for open connections to finish, then frees the
 * server and calls done(arg, true).  If connections are still open at the deadline the
 * server's h2o context cannot be torn down safely: done(arg, false) is called and the
 * server is left allocated (the caller is expected to exit). */
void catalog_server_stop(catalog_server *s, unsigned grace_ms, void (*done)(void *arg, bool clean), void *arg);

#endif
