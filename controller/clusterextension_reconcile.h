/* clusterextension_reconcile: the ClusterExtension reconciler (olmv1-behaviour.md §2.2
 * as adapted by the "decided" section).
 *
 * One reconcile of ClusterExtension <name>, run on a threadpool thread by the work queue:
 *   1. GET the object (fresh, not the informer copy: the status update needs its
 *      resourceVersion).  Gone → done.
 *   2. Finalizer CE_FINALIZER: added on first sight; on deletion the install record's
 *      objects are uninstalled (applier_uninstall), the bundle cache is removed, and the
 *      finalizer released.
 *   3. Installed state from the install record (applier_read_record).
 *   4. Resolve: the ClusterCatalog informer's objects → catalog_client_collect →
 *      resolve_bundle; resolution errors handled as §2.2 step 4 (incl. the fallback to
 *      the installed bundle when no catalog matches any more).
 *   5. Pull the bundle image (oci_pull_cached under <cache>/bundles/<name>/<digest>);
 *      a failed pull of the installed bundle keeps it (maintain mode).
 *   6. Load, validate spec.config.inline (terminal InvalidConfiguration), render.
 *   7. A token of spec.serviceAccount.name in spec.namespace: the apply identity
 *      (clusterextension_token_cache.h: reused between reconciles; a 401 drops it and
 *      the apply is retried once with a fresh one).
 *   8. CRD upgrade-safety preflight unless enforcement is None.
 *   9. applier_apply (or applier_repair when the installed bundle and its object set
 *      are unchanged: the periodic drift repair).
 *  10. Status (clusterextension_status.h), written only when it changed; a 409 retries.
 *  11. On success, the install record's kinds and the token go to the drift watcher
 *      (clusterextension_drift_watch.h), which watches the installed objects and
 *      enqueues the extension when one is deleted or changed; deletion stops them.
 * Errors retry with the work queue's back-off; terminal errors (Blocked,
 * InvalidConfiguration) do not.  Success requeues after repair_interval_ms when set.
 *
 * Threading: ce_reconcile may run for different keys on several threads at once; the
 * work queue never runs one key twice at a time.  The reconciler's counters are
 * atomic; everything else it holds is read-only after ce_reconciler_new. */
#ifndef OLM_CLUSTEREXTENSION_RECONCILE_H
#define OLM_CLUSTEREXTENSION_RECONCILE_H

#include <stdint.h>

#include "catalog_client.h"
#include "clusterextension_drift_watch.h"
#include "clusterextension_token_cache.h"
#include "kube_client.h"
#include "kube_informer.h"
#include "kube_workqueue.h"
#include "oci_pull.h"
#include "olm_error.h"

#define CE_FINALIZER "olm.operatorframework.io/cleanup"
#define CE_API_VERSION "olm.operatorframework.io/v1"
#define CE_KIND "ClusterExtension"

typedef struct ce_reconciler_config {
    kube_client *admin;             /* the controller's identity (borrowed) */
    kube_informer *catalogs;        /* ClusterCatalog cache (borrowed) */
    catalog_client *catalog_client; /* borrowed */
    const char *system_namespace;   /* install records live here */
    const char *cache_dir;          /* bundles unpack under <cache_dir>/bundles */
    oci_pull_opts pull;             /* registry options for bundle images (strings borrowed) */
    uint64_t repair_interval_ms;    /* requeue after success for drift repair; 0: never */
    int64_t token_seconds;          /* ServiceAccount token lifetime; 0: 3600 */
    ce_token_cache *tokens;         /* borrowed; NULL: the reconciler keeps its own */
    ce_drift_watcher *drift;        /* borrowed; NULL: no watch-based drift repair */
    /* The CRD upgrade-safety check (crd_upgrade_safety_check); NULL skips the
     * preflight.  A pointer so the reconciler can be tested and built without it. */
    int (*crd_check)(const json_t *existing, const json_t *desired, olm_error *err);
} ce_reconciler_config;

typedef struct ce_reconciler ce_reconciler;

/* Strings of `cfg` are copied; the pointers it holds are borrowed and must outlive the
 * reconciler. */
ce_reconciler *ce_reconciler_new(const ce_reconciler_config *cfg, olm_error *err);
void ce_reconciler_free(ce_reconciler *r);

/* The work queue's reconcile function; `data` is the ce_reconciler. */
kube_wq_result ce_reconcile(const char *key, void *data);

/* Upper bounds, in seconds, of the reconcile duration histogram's buckets: from a no-op
 * reconcile (tens of ms) to a first install that pulls a bundle and waits for CRDs. */
#define CE_DURATION_NBOUNDS 11
extern const double ce_duration_bounds[CE_DURATION_NBOUNDS];

/* Counters since start (any thread). */
typedef struct ce_reconcile_stats {
    uint64_t total, errors, terminal;
    uint64_t duration_buckets[CE_DURATION_NBOUNDS]; /* reconciles per bucket, not cumulative */
    uint64_t micros_total; /* summed wall time of reconciles */
    uint64_t micros_max;
    uint64_t repaired_objects;
} ce_reconcile_stats;
void ce_reconciler_stats(ce_reconciler *r, ce_reconcile_stats *out);

#endif
