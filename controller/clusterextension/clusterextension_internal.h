/* Shared between the clusterextension_*.c files; not a public interface. */
#ifndef OLM_CLUSTEREXTENSION_INTERNAL_H
#define OLM_CLUSTEREXTENSION_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "applier.h"
#include "bundle.h"
#include "clusterextension.h"
#include "resolve.h"
#include "install_record.h"

struct ce_reconciler {
    ce_reconciler_config cfg;
    char *system_namespace, *cache_dir, *bundle_cache; /* owned copies */
    ce_token_cache *own_tokens; /* when cfg.tokens was NULL; cfg.tokens then points here */
    atomic_uint_fast64_t total, errors, terminal, micros_total, micros_max, repaired;
    atomic_uint_fast64_t duration_buckets[CE_DURATION_NBOUNDS];
};

/* The target of this reconcile: the resolved bundle, or the installed one in the
 * fallback and maintain cases.  Strings owned. */
typedef struct ce_target {
    char *name, *version, *image, *package;
} ce_target;

/* State of one reconcile (one thread). */
typedef struct ce_run {
    ce_reconciler *r;
    json_t *ce;             /* owned: the object as read (status updates go on it) */
    const char *name;       /* metadata.name, borrowed from ce */
    int64_t generation;
    applier_ctx actx;       /* as_sa set once a token is there */
    kube_client *as_sa;     /* owned */
    ce_token token;         /* owned: the token as_sa authenticates with */
    install_record rec;     /* zero when have_rec is false */
    bool have_rec;
    catalog_set cats;
    resolve_result res;
    bool resolved;          /* res is filled (resolve succeeded) */
    ce_target target;
    bool have_target;
    /* Outcome, filled by the step that stopped the pipeline (or success). */
    ce_progress progress;
    char *message;          /* owned; NULL for success */
    bool installed_changed; /* a new bundle was applied: installed = target */
    bool deprecation_known; /* compute deprecation conditions at the end */
} ce_run;

/* Steps (clusterextension_steps.c).  Each returns 0 to go on, -1 when the outcome
 * (progress + message) was set and the pipeline stops. */
int ce_step_resolve(ce_run *run);
int ce_step_install(ce_run *run);

/* Sets the outcome; `fmt` NULL means success.  Always returns -1 (stop). */
int ce_fail(ce_run *run, ce_progress progress, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with the `error for resolved bundle "<n>" with version "<v>": ` prefix. */
int ce_fail_bundle(ce_run *run, ce_progress progress, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Tells the drift watcher what this extension installed (the record's kinds, the
 * token); no-op without a drift watcher or a token.  Failures are logged. */
void ce_drift_post(ce_run *run);
/* Stops the drift watches of `extension` (no-op without a drift watcher). */
void ce_drift_forget(ce_reconciler *r, const char *extension);

/* A string field by dotted path in the CE ("" when absent). */
const char *ce_str(const json_t *ce, const char *path);

void ce_target_free(ce_target *t);

#endif
