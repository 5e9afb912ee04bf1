/* clusterextension_controller: the ClusterExtension controller's setup, beside its reconciler
 * (upstream's SetupWithManager): what triggers a reconcile, what its caches keep, its work
 * queue, the drift watcher and token cache the reconciles share, and its metrics.  Each part
 * is owned by the daemon runtime, which stops them in order (daemon_runtime.h).
 *
 * Triggers: ClusterExtension create/delete and updates that change the generation,
 * deletionTimestamp or finalizers (our own status writes do not retrigger); ClusterCatalog
 * create/delete and resolvedSource changes requeue every ClusterExtension; so do the
 * ClusterCatalog cache's first sync (resolutions before it saw no catalogs) and new
 * --global-pull-secret credentials; with BoxcutterRuntime, any event of a ClusterObjectSet labeled
 * as an extension's requeues that extension.  Drift: after a successful reconcile the drift watcher
 * (drift.h) watches the installed objects' kinds with the extension's ServiceAccount token;
 * a deletion or change enqueues the key and the reconcile re-applies the recorded objects.
 *
 * Loop thread only (the reconciles run on the threadpool). */
#ifndef OLM_CLUSTEREXTENSION_CONTROLLER_H
#define OLM_CLUSTEREXTENSION_CONTROLLER_H

#include "clusterextension.h"
#include "daemon_runtime.h"
#include "strbuf.h"

typedef struct clusterextension_controller {
    daemon_runtime *rt;
    kube_informer *extensions, *catalogs;
    kube_informer *revisions; /* BoxcutterRuntime only: ClusterObjectSets owned by extensions */
    kube_workqueue *wq;
    catalog_client *cc;
    clusterextension_reconciler *rec;
    clusterextension_token_cache *tokens; /* tokens, or impersonation credentials (impersonating) */
    bool impersonating;
    /* Impersonating: what the credentials' mint reads, and the ServiceAccounts it keeps in a
     * watch when it may (NULL otherwise: a GET per ServiceAccount). */
    clusterextension_identity_source identity;
    kube_informer *service_accounts;
    drift_watcher *drift;
} clusterextension_controller;

typedef struct clusterextension_controller_config {
    /* .admin, .catalogs, .catalog_client, .tokens, .drift and .pull.registry.auth_store: filled in here */
    clusterextension_reconciler_config reconciler;
    catalog_client_options catalog_client;
    unsigned concurrency;           /* reconciles at once */
    const char *global_pull_secret; /* NS/NAME, or NULL */
    clusterextension_identity_mode identity_mode; /* auto: decided at start (an access review) */
} clusterextension_controller_config;

/* Both informers, the catalog client, the pull-secret watch, the token cache, the drift
 * watcher, the reconciler and the work queue, started on rt (at start, or once this replica
 * leads).  0, or -1 with err (what was started is owned, and stops with the runtime). */
int clusterextension_controller_start(clusterextension_controller *c, daemon_runtime *rt,
                                      const clusterextension_controller_config *cfg, olm_error *err);

/* Once no reconcile runs (the runtime's after_drain): frees the reconciler. */
void clusterextension_controller_after_drain(clusterextension_controller *c);

/* After the loop: the catalog client and the token cache. */
void clusterextension_controller_free(clusterextension_controller *c);

/* Whether nothing is queued or running (then idle connections may go). */
bool clusterextension_controller_idle(const clusterextension_controller *c);

/* The controller's /metrics series (operator_controller_*, olm_clusterextension_info). */
int clusterextension_controller_metrics(clusterextension_controller *c, strbuf *out);

/* ------------------------------------------------------------ triggers, cache, metrics */

/* Whether a watch update of a ClusterExtension calls for a reconcile: a change of
 * generation, deletionTimestamp or finalizers, except our own finalizer appearing (the
 * reconcile that added it carries on with the updated object). */
bool clusterextension_update_needs_reconcile(const json_t *old_obj, const json_t *new_obj);

/* What the ClusterExtension cache keeps of each object, in place: parsed, only what the
 * update filter and the metrics read (metadata's key, resourceVersion, generation,
 * deletionTimestamp and finalizers; spec.source.catalog.packageName; status.install; each
 * condition's type and status), and the whole object as compact JSON text under
 * CE_CACHE_TEXT_KEY (clusterextension_cached_text), which reconciles parse instead of a GET
 * (clusterextension_cached.c).  A whole ClusterExtension (status messages, the last-applied
 * annotation) is ~20 KB in jansson against a few KB of text; at 1,000 extensions the parsed
 * cache was the biggest part of the heap.  Out of memory: the object stays whole (and has
 * no text: reconciles then GET it). */
#define CE_CACHE_TEXT_KEY "olmv1.cachedText"
void clusterextension_cache_form(json_t *obj);
const char *clusterextension_cached_text(const json_t *cached);

/* BoxcutterRuntime: what the revision (ClusterObjectSet) cache keeps, in place: name, uid,
 * resourceVersion and the owner label (spec and status, a few KB each, are read by the
 * reconcile from the apiserver), and "readHash", a hash of what that reconcile reads of it
 * (labels, annotations, deletion, spec, status).  An update whose hash is the same -- only
 * the teardown finalizer the ClusterObjectSet controller adds on its first pass -- calls for
 * no reconcile of the owner (clusterextension_revision_update_needs_reconcile). */
void clusterextension_revision_cache_form(json_t *obj);
bool clusterextension_revision_update_needs_reconcile(const json_t *old_obj, const json_t *new_obj);

typedef struct clusterextension_metrics_sources {
    const json_t *extensions;           /* the cache's objects (cache form), or NULL */
    clusterextension_reconciler *rec;   /* or NULL before the controllers start */
    size_t catalog_cache_entries, queue_depth, drift_watches, drift_extensions;
    unsigned long long tokens_requested;
} clusterextension_metrics_sources;

/* operator_controller_* series: reconciles (counters, the duration histogram), extensions
 * and installed ones, catalog cache, queue depth, drift watches, TokenRequests. */
void clusterextension_metrics_render(const clusterextension_metrics_sources *s, strbuf *b);
/* olm_clusterextension_info{name,package,version,catalog} 1 per extension. */
void clusterextension_info_metrics_render(const clusterextension_metrics_sources *s, strbuf *b);

#endif
