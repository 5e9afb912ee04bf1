/* catalog_publish: the mailbox from the ClusterCatalog reconciles (threadpool threads) to the
 * catalog server (the loop thread).  A reconcile's "serve this view", "remove this catalog",
 * "record this unpack" is queued under a mutex and wakes the loop (uv_async_t), which applies
 * them to the server in the order they were published. */
#ifndef OLMV1_CATALOG_PUBLISH_H
#define OLMV1_CATALOG_PUBLISH_H

#include <uv.h>

#include "catalog_server.h"
#include "clustercatalog_reconcile.h"

typedef struct catalog_publish_item catalog_publish_item;

typedef struct catalog_publisher {
    uv_async_t async;
    uv_mutex_t lock; /* guards head/tail: publish runs on any thread */
    catalog_publish_item *head, *tail;
    catalog_server **srv; /* where the server is when there is one (it comes and goes) */
} catalog_publisher;

/* On the loop thread, before any reconcile runs.  0, or -1 with err. */
int catalog_publisher_init(catalog_publisher *p, uv_loop_t *loop, catalog_server **srv, olm_error *err);

/* clustercatalog_reconciler_config.publish: any thread; `data` is the publisher. */
void catalog_publisher_publish(const clustercatalog_publish_event *ev, void *data);

/* Loop thread, no reconcile running any more: applies what is queued and closes the wake-up
 * handle.  After the loop has run the close, catalog_publisher_destroy. */
void catalog_publisher_close(catalog_publisher *p);
void catalog_publisher_destroy(catalog_publisher *p);

#endif
