/* clustercatalog_controller: the ClusterCatalog controller's setup, beside its reconciler (as
 * upstream's SetupWithManager): what triggers a reconcile (every add, update and delete of a
 * ClusterCatalog; every catalog again when --global-pull-secret's credentials arrive), the
 * cache it reads (the ClusterCatalog informer), its work queue, and when garbage collection
 * runs (first when the cache has synced, then every interval).  Each part is owned by the
 * daemon runtime, which stops them in order (daemon_runtime.h).
 *
 * Loop thread only. */
#ifndef OLM_CLUSTERCATALOG_CONTROLLER_H
#define OLM_CLUSTERCATALOG_CONTROLLER_H

#include <stdint.h>

#include "clustercatalog_reconcile.h"
#include "daemon_runtime.h"

typedef struct clustercatalog_controller {
    daemon_runtime *rt;
    kube_informer *inf;
    kube_workqueue *wq;
    clustercatalog_reconciler *rec;
    clustercatalog_gc_timer gc;
    uint64_t gc_interval_ms;
} clustercatalog_controller;

typedef struct clustercatalog_controller_config {
    clustercatalog_reconciler_config reconciler; /* .client, .informer, .pull.registry.auth_store: filled in here */
    unsigned concurrency;                        /* reconciles at once */
    uint64_t gc_interval_ms;
    const char *global_pull_secret;              /* NS/NAME, or NULL */
} clustercatalog_controller_config;

/* Before the loop runs: the GC timer (owned, drained at shutdown). */
void clustercatalog_controller_init(clustercatalog_controller *c, daemon_runtime *rt);

/* The informer, the pull-secret watch, the reconciler and the work queue, started on every
 * replica: until clustercatalog_controller_lead, its reconciles follow the leader (serve the
 * digest the leader resolved, write nothing).  0, or -1 with err. */
int clustercatalog_controller_start(clustercatalog_controller *c, const clustercatalog_controller_config *cfg,
                                    olm_error *err);

/* This replica leads (it holds the Lease, or runs without leader election): reconciles
 * write status from now on, and every catalog is reconciled again. */
void clustercatalog_controller_lead(clustercatalog_controller *c);

/* /readyz: true once the ClusterCatalog cache has synced and `serves` says that this
 * replica serves, for every catalog whose Serving condition is True, the digest in its
 * status.resolvedSource; else false with the first catalog that is not (or the cache) in
 * `why`.  `serves(name, &source, data)`: whether `name` is served, and from which digest. */
bool clustercatalog_controller_ready(clustercatalog_controller *c,
                                     bool (*serves)(const char *name, const char **source, void *data), void *data,
                                     strbuf *why);

/* Once no reconcile or GC runs (the runtime's after_drain): frees the reconciler. */
void clustercatalog_controller_after_drain(clustercatalog_controller *c);

#endif
