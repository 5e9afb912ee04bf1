/* clustercatalog_reconcile: the ClusterCatalog controller of catalogd (spec §4.1).
 *
 * clustercatalog_reconcile() is a kube_workqueue reconcile function: it runs on a libuv threadpool
 * thread, reads the ClusterCatalog from the informer cache, and does plain blocking work:
 * REST calls (kube_client), image pull (oci_pull_catalog), FBC load + validate, store write.
 * The loop thread is never touched from here: whatever the HTTP server must learn (a new
 * store view to serve, a catalog to drop, an unpack duration for /metrics) is handed to the
 * `publish` callback, which main implements with a mutex-guarded queue and a uv_async_t so
 * the server registry is only updated on the loop thread.
 *
 * State shared between reconciles of different catalogs (they run in parallel; the work
 * queue never runs two reconciles of the same key at once):
 *   - the per-catalog "stored catalog" records (digest ref, lastUnpacked, last successful
 *     poll, observed generation), behind a mutex;
 *   - a rwlock that store writes take shared and clustercatalog_reconciler_gc takes exclusive, because
 *     store_gc removes in-progress temp dirs (catalog_store.h).
 *
 * Ownership: the reconciler borrows the client, the informer and every string of its
 * config (they must outlive it); it owns its records. */
#ifndef OLM_CLUSTERCATALOG_RECONCILE_H
#define OLM_CLUSTERCATALOG_RECONCILE_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog_store.h"
#include "kube_client.h"
#include "kube_informer.h"
#include "kube_workqueue.h"
#include "oci_pull.h"
#include "olm_error.h"

/* Something the loop thread must apply to the HTTP server. */
typedef enum clustercatalog_publish_kind {
    CC_PUBLISH_SERVE,  /* serve `view` for `name` from now on */
    CC_PUBLISH_STORED, /* the same content, `view` now from the store on disk (it was served
                        * from memory): swap it in */
    CC_PUBLISH_GZIP,   /* the same content, `view` now with its gzip form: swap it in */
    CC_PUBLISH_REMOVE, /* stop serving `name` */
    CC_PUBLISH_UNPACK, /* an unpack (pull+load+validate+store) finished: /metrics */
} clustercatalog_publish_kind;

typedef struct clustercatalog_publish_event {
    clustercatalog_publish_kind kind;
    const char *name;   /* borrowed for the call */
    store_view *view;   /* SERVE, STORED, GZIP: the callee takes over this reference; else NULL */
    bool ok;            /* UNPACK: whether it succeeded */
    double seconds;     /* UNPACK: how long it took */
    int model_problems; /* UNPACK that succeeded: opm invariants the catalog breaks (served
                         * anyway); -1: not known */
} clustercatalog_publish_event;

typedef struct clustercatalog_reconciler_config {
    kube_client *client;       /* borrowed; safe from any thread */
    kube_informer *informer;   /* borrowed; the ClusterCatalog cache */
    const char *cache_dir;     /* stores in <cache_dir>/catalogs, image cache in <cache_dir>/unpack */
    const char *url_root;      /* "<scheme>://<external address>/catalogs" without a trailing '/' */
    oci_pull_opts pull;        /* registry options; strings borrowed */
    uint64_t poll_override_ms; /* test-only: replaces every pollIntervalMinutes; 0: off */
    /* Any thread; must not block for long. */
    void (*publish)(const clustercatalog_publish_event *ev, void *data);
    void *publish_data;
} clustercatalog_reconciler_config;

typedef struct clustercatalog_reconciler clustercatalog_reconciler;

/* Copies `cfg` (not the strings it points to).  NULL with err set when out of memory. */
clustercatalog_reconciler *clustercatalog_reconciler_new(const clustercatalog_reconciler_config *cfg, olm_error *err);
/* No reconcile or gc may be running. */
void clustercatalog_reconciler_free(clustercatalog_reconciler *r);

/* A reconciler follows until told to lead: its reconciles then write status and finalizers
 * (the leader, or the only replica); until then each serves the digest the leader wrote in
 * status.resolvedSource and writes nothing (clustercatalog_follow.c).  Any thread; a
 * replica never stops leading (losing the Lease ends the process). */
void clustercatalog_reconciler_lead(clustercatalog_reconciler *r);
bool clustercatalog_reconciler_leading(clustercatalog_reconciler *r);

/* The digest ref a follower serves for `catalog`: status.resolvedSource.image.ref when
 * Serving is True (the Serving condition's observedGeneration into *generation, may be
 * NULL), else NULL.  Borrowed from the object. */
const char *clustercatalog_followed_ref(const json_t *catalog, int64_t *generation);

/* The kube_workqueue_reconcile_fn; `data` is the clustercatalog_reconciler.  Threadpool thread. */
kube_wq_result clustercatalog_reconcile(const char *key, void *data);

/* §4.5: removes stores and unpack caches of catalogs that no longer exist (per the
 * informer, which must have synced) and publishes their removal.  Blocking; threadpool.
 * Returns 0, or -1 with err set. */
int clustercatalog_reconciler_gc(clustercatalog_reconciler *r, olm_error *err);

/* When garbage collection runs (clustercatalog_gc_timer.c): first when the cache has synced,
 * then every interval, on the threadpool, one run at a time, never once stopping.  Loop thread. */
typedef struct clustercatalog_gc_timer {
    uv_timer_t timer;
    uv_work_t work;
    clustercatalog_reconciler *rec;
    bool started, running, stopping;
    void (*idle)(void *data); /* set by stop: called when the run in progress ends */
    void *idle_data;
} clustercatalog_gc_timer;

void clustercatalog_gc_timer_init(clustercatalog_gc_timer *t, uv_loop_t *loop);
/* The cache has synced: a run now, then every interval_ms.  Later calls do nothing. */
void clustercatalog_gc_timer_start(clustercatalog_gc_timer *t, clustercatalog_reconciler *rec, uint64_t interval_ms);
/* No more runs; the timer handle is closed.  True when a run is still in progress: then
 * idle(data) is called on the loop once it ends (the reconciler must outlive it). */
bool clustercatalog_gc_timer_stop(clustercatalog_gc_timer *t, void (*idle)(void *data), void *data);

#endif
