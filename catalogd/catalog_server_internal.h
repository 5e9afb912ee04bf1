/* Private to catalog_server*.c and catalog_http*.c. */
#ifndef OLM_CATALOG_SERVER_INTERNAL_H
#define OLM_CATALOG_SERVER_INTERNAL_H

#include <h2o.h>

#include "catalog_server.h"
#include "olm_http_server.h"

typedef struct catalog_entry {
    char *name;       /* owned */
    store_view *view; /* one reference owned by the registry */
} catalog_entry;

typedef struct server_handler {
    h2o_handler_t super;
    catalog_server *srv;
} server_handler;

typedef struct server_logger {
    h2o_logger_t super;
    catalog_server *srv;
} server_logger;

struct catalog_server {
    uv_loop_t *loop;
    olm_http_server *http;    /* the listener, TLS and h2o (util/olm_http_server.h) */
    catalog_metrics *metrics; /* owned */
    FILE *access_log;         /* borrowed */
    int (*metrics_cb)(strbuf *out, void *arg); /* NULL: render `metrics` */
    void *metrics_arg;
    bool no_metrics;
    bool no_metas, graphql_501;
    bool (*ready_cb)(void *arg, strbuf *why); /* NULL: always ready */
    void *ready_arg;
    catalog_entry *cats;      /* owned array */
    size_t ncats, capcats;
    h2o_req_t *aborted_req;   /* set by a body generator h2o stopped, for the access log */
    void (*on_stopped)(void *arg, bool clean);
    void *stop_arg;
};

/* catalog_http.c: the one h2o handler behind every path. */
int catalog_http_on_req(h2o_handler_t *self, h2o_req_t *req);
/* catalog_http.c: the access logger; feeds the duration histogram. */
void catalog_http_on_log(h2o_logger_t *self, h2o_req_t *req);

store_view *catalog_server_find(const catalog_server *s, const char *name);

#endif
