/* Shared between the clusterextension_*.c files; not a public interface. */
#ifndef OLM_CLUSTEREXTENSION_INTERNAL_H
#define OLM_CLUSTEREXTENSION_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "applier.h"
#include "bundle.h"
#include "clusterextension.h"
#include "resolve.h"
#include "install_record.h"
#include "revision.h"

/* clusterextension_info.c: extension -> the catalog its installed bundle was resolved from. */
typedef struct clusterextension_infos clusterextension_infos;
clusterextension_infos *clusterextension_infos_new(void); /* NULL when out of memory */
void clusterextension_infos_free(clusterextension_infos *m);
void clusterextension_infos_set(clusterextension_infos *m, const char *extension, const char *catalog);
/* Drops the extension's entry; the table shrinks with the entries (none left: nothing held). */
void clusterextension_infos_forget(clusterextension_infos *m, const char *extension);
/* Entries the table has room for (for tests). */
size_t clusterextension_infos_capacity(clusterextension_infos *m);
/* spec.progressDeadlineMinutes: when `generation` of the extension started failing (now, on
 * its first failure, or when the generation changed); _succeeded stops the clock. */
time_t clusterextension_infos_failing_since(clusterextension_infos *m, const char *extension, int64_t generation,
                                            time_t now);
void clusterextension_infos_succeeded(clusterextension_infos *m, const char *extension);
/* BoxcutterRuntime: whether the Secrets of the extension's revision `uid` are known to carry
 * its ownerReference (this process set them, or saw them so); _set_ records it. */
bool clusterextension_infos_secrets_owned(clusterextension_infos *m, const char *extension, const char *uid);
void clusterextension_infos_set_secrets_owned(clusterextension_infos *m, const char *extension, const char *uid);

/* clusterextension_revision_same.c: the revisions found to hold a rendering in other bytes
 * (any thread). */
typedef struct clusterextension_same clusterextension_same;
clusterextension_same *clusterextension_same_new(void); /* NULL when out of memory */
void clusterextension_same_free(clusterextension_same *s);
void clusterextension_same_forget(clusterextension_same *s, const char *extension);

struct clusterextension_reconciler {
    clusterextension_reconciler_config cfg;
    char *system_namespace, *cache_dir, *bundle_cache; /* owned copies */
    clusterextension_token_cache *own_tokens; /* when cfg.tokens was NULL; cfg.tokens then points here */
    atomic_uint_fast64_t total, errors, terminal, micros_total, micros_max, repaired;
    atomic_uint_fast64_t duration_buckets[CE_DURATION_NBOUNDS];
    clusterextension_infos *infos;
    atomic_bool system_namespace_seen; /* applier_ctx.system_namespace_seen */
    /* clusterextension_record_memo.c: Secret name -> the record Secret as this process last
     * saw it (compact text), filled by one LIST at the first reconcile, under records_lock. */
    pthread_mutex_t records_lock;
    bool records_filled;
    json_t *records;
    /* clusterextension_cached.c: name -> the newest resourceVersion of the ClusterExtension
     * this process wrote or read, under known_lock. */
    pthread_mutex_t known_lock;
    json_t *known_versions;
    /* BoxcutterRuntime off (clusterextension_revision_retire.c): the extensions that still have
     * ClusterObjectSet revisions, found by one LIST on the first need; under retire_mu. */
    pthread_mutex_t retire_mu;
    bool retire_scanned;
    json_t *retire_names; /* owned: object, name -> true */
    clusterextension_same *same;
};

/* clusterextension_cached.c: a copy of the ClusterExtension `name` from the informer's cache
 * when it is the newest this process knows of (or it knows none), else NULL (then it is read
 * with a GET).  _known records an object this process wrote or read (the newest it knows);
 * _forget_known drops the entry of an extension that is gone. */
json_t *clusterextension_extension_cached(clusterextension_reconciler *r, const char *name);
void clusterextension_extension_known(clusterextension_reconciler *r, const json_t *obj);
void clusterextension_extension_forget_known(clusterextension_reconciler *r, const char *name);
/* clusterextension_cached.c: a write from this reconcile's copy was refused (409): the next
 * reconcile reads the extension with a GET, whatever the cache holds. */
void clusterextension_extension_stale(clusterextension_reconciler *r, const char *name);
/* clusterextension_revision_retire.c: whether clusterextension_revisions_retire may write `name`'s
 * record in this reconcile (its revisions not scanned yet, or some to take over): then the
 * record listed before is not used. */
bool clusterextension_retire_may_write(clusterextension_reconciler *r, const char *name);

/* clusterextension_record_memo.c: the record Secret of `extension` as this process last saw it
 * (a copy, owned by the caller), or NULL (none, or not known: read it).  _seen is
 * applier_ctx.record_seen (data: the reconciler); _forget drops the entry of an extension
 * that is gone. */
json_t *clusterextension_record_memo_get(clusterextension_reconciler *r, const char *extension);
void clusterextension_record_memo_seen(void *data, const char *extension, const json_t *secret);
void clusterextension_record_memo_forget(clusterextension_reconciler *r, const char *extension);

/* The target of this reconcile: the resolved bundle, or the installed one in the
 * fallback and maintain cases.  Strings owned. */
typedef struct clusterextension_target {
    char *name, *version, *image, *package;
} clusterextension_target;

/* State of one reconcile (one thread). */
typedef struct clusterextension_run {
    clusterextension_reconciler *r;
    json_t *ce;             /* owned: the object as read (status updates go on it) */
    const char *name;       /* metadata.name, borrowed from ce */
    int64_t generation;
    applier_ctx actx;       /* as_sa set once a token is there */
    kube_client *as_sa;     /* owned */
    clusterextension_token token;         /* owned: the token as_sa authenticates with */
    install_record rec;     /* zero when have_rec is false */
    bool have_rec;          /* a record exists; a pending one installs nothing (clusterextension_installed) */
    catalog_set cats;
    resolve_result res;
    bool resolved;          /* res is filled (resolve succeeded) */
    clusterextension_target target;
    bool have_target;
    /* Outcome, filled by the step that stopped the pipeline (or success). */
    clusterextension_progress progress;
    char *message;          /* owned; NULL for success */
    bool installed_changed; /* a new bundle was applied: installed = target */
    bool no_helm_release;   /* actx.no_helm_release points here */
    json_t *memo_record;    /* owned: the record Secret clusterextension_record_memo.c had, or NULL */
    bool deprecation_known; /* compute deprecation conditions at the end */
    uint64_t retry_within_ms; /* a retryable failure: retry no later than this (0: the back-off decides) */
    /* The probes (clusterextension_available.c): what the apply or repair saw of each object,
     * "<group>/<Kind>/<ns>/<name>" -> {"d": digest, "l": its failure line (absent: it passes)};
     * owned.  `probed`: this reconcile saw the installed objects (a successful apply, repair or
     * maintain), so it sets Available. */
    json_t *observed;
    bool probed;
    /* BoxcutterRuntime (clusterextension_revision.c): the extension's ClusterObjectSets as
     * listed (owned) and read (revs borrows from revs_list), upstream's RevisionStates over
     * them; `migrating`: this install builds revision 1 from the install record. */
    bool revs_read;
    json_t *revs_list;
    revision_info *revs;
    size_t nrevs;
    ssize_t rev_installed;
    size_t *rev_rolling;
    size_t nrev_rolling;
    bool migrating;
    bool no_properties; /* the rendered bundle has no olm.properties annotation (none on the revision) */
} clusterextension_run;

/* A bundle is installed: there is a record, and it is not a pending one (the objects a
 * failed first install left, which only the uninstall and the next apply use). */
static inline bool clusterextension_installed(const clusterextension_run *run)
{
    return run->have_rec && !run->rec.pending;
}

/* clusterextension_steps.c: applier_ctx.identity (data: the run): the ServiceAccount's
 * client, made when the applier first needs it. */
int clusterextension_identity(void *data, olm_error *err);

/* Steps (clusterextension_steps.c).  Each returns 0 to go on, -1 when the outcome
 * (progress + message) was set and the pipeline stops. */
int clusterextension_step_resolve(clusterextension_run *run);
int clusterextension_step_install(clusterextension_run *run);

/* clusterextension_run.c: sets the outcome; `fmt` NULL means success.  Always returns -1 (stop). */
int clusterextension_fail(clusterextension_run *run, clusterextension_progress progress, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with the `error for resolved bundle "<n>" with version "<v>": ` prefix. */
int clusterextension_fail_bundle(clusterextension_run *run, clusterextension_progress progress, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* clusterextension_run.c: a DEBUG line "<step> took <ms> ms[: detail]" for the reconcile
 * step that started at t0_ms (olm_time_mono_ms); nothing unless debug lines are on. */
void clusterextension_debug_step(const clusterextension_run *run, const char *step, double t0_ms, const char *fmt,
                                 ...) __attribute__((format(printf, 4, 5)));

/* clusterextension_certs.c: the certificate provider for `b`'s webhooks (any, when it has
 * none).  0, or -1 with the outcome set (Retrying: no provider, or discovery failed). */
int clusterextension_cert_provider(clusterextension_run *run, const bundle *b, render_cert_provider *out);

/* clusterextension_available.c: the applier's observe callback (applier_ctx.observe; `data` is
 * the run): probes each live object it is handed and keeps the result in run->observed. */
void clusterextension_observe(void *data, const json_t *live);
/* Maintain mode (nothing is applied): reads the recorded objects as the apply identity and
 * probes them.  0 (run->probed set), or -1 when one could not be read (Available is then left
 * as it is). */
int clusterextension_probe_recorded(clusterextension_run *run);
/* Available from run->observed over the record's objects, in the record's order (objects not
 * observed, e.g. left by a failed prune, do not count).  *failures is malloc'd (NULL when all
 * pass).  0, or -1 when memory ran out. */
int clusterextension_available(const clusterextension_run *run, bool *available, char **failures);
/* The probe digest of each record object as observed (0: not observed), in the record's order,
 * for the drift watcher; NULL when nothing was probed or memory ran out.  Caller frees. */
uint64_t *clusterextension_probe_digests(const clusterextension_run *run);

/* applier_ctx.unchanged (`data` is the run): true when the drift watcher's shared watch of the
 * object's type holds it with `content_hash` (drift_watcher_lookup), passing its probes or
 * failing them with the line the watch kept; the object then counts as observed (as the watch
 * saw it, with that hash) without a request. */
bool clusterextension_known_unchanged(void *data, const install_object_ref *ref, uint64_t content_hash);
/* The content hash of each record object as observed (0: not observed, or unknown), in the
 * record's order, for the drift watcher; NULL when nothing was observed or memory ran out.
 * Caller frees. */
uint64_t *clusterextension_content_hashes(const clusterextension_run *run);

/* Tells the drift watcher what this extension installed (the record's kinds, the
 * token); no-op without a drift watcher or a token.  Failures are logged. */
void clusterextension_drift_post(clusterextension_run *run);
/* Stops the drift watches of `extension` (no-op without a drift watcher). */
void clusterextension_drift_forget(clusterextension_reconciler *r, const char *extension);

/* A string field by dotted path in the CE ("" when absent). */
const char *clusterextension_str(const json_t *ce, const char *path);

/* The ServiceAccount bundle content is applied with: spec.serviceAccount.name, or "" (the
 * controller's own identity) when there is none or the controller ignores the field. */
static inline const char *clusterextension_service_account(const clusterextension_run *run)
{
    return run->r->cfg.ignore_service_account ? "" : clusterextension_str(run->ce, "spec.serviceAccount.name");
}

void clusterextension_target_free(clusterextension_target *t);
/* Sets run->target (copies); 0, or -1 with the outcome set (out of memory). */
int clusterextension_set_target(clusterextension_run *run, const char *name, const char *version, const char *image,
                                const char *package);

/* ------------------------------------------------------------ BoxcutterRuntime */

/* clusterextension_revision.c.  Lists the extension's ClusterObjectSets into run->revs and
 * upstream's RevisionStates; the installed revision's bundle becomes run->rec (a record with
 * no objects), so resolution and the status read what is installed as in the default mode.
 * 0, or -1 with err. */
int clusterextension_revisions_read(clusterextension_run *run, olm_error *err);
/* A revision still rolls out: the target is the oldest such (upstream resolves nothing then).
 * 1 when it set the target, 0 when none rolls out, -1 with the outcome set. */
int clusterextension_revision_rolling_target(clusterextension_run *run);
/* The rendered objects as the next revision, unless the latest revision holds them already
 * (then only its mutable fields are brought up to date); its Secrets first, their owner
 * references after.  0, or -1 with err. */
int clusterextension_revision_put(clusterextension_run *run, const json_t *objects, const char *properties,
                                  olm_error *err);
/* clusterextension_revision_same.c: whether the latest revision `cur`, whose packed phases
 * differ from `b`'s (built with cur's name), holds the same objects all the same: its Secrets
 * read and the objects compared by meaning (revision_equivalent), the answer remembered for the
 * revision and rendering.  1 (logged), 0, or -1 with err. */
int clusterextension_revision_same(clusterextension_run *run, const revision_info *cur, const revision_built *b,
                                   olm_error *err);
/* Deletion: deletes the extension's revisions; 1 while some are still there (their own
 * teardown runs), 0 once none are left (their object Secrets are then deleted), -1 with err. */
int clusterextension_revisions_delete(clusterextension_run *run, olm_error *err);
void clusterextension_revisions_free(clusterextension_run *run);
/* clusterextension_revision_retire.c, BoxcutterRuntime off: an extension installed with the
 * gate on has only ClusterObjectSet revisions.  Its installed revision (newest Succeeded
 * Active one; pending when none succeeded) becomes the install record, over any older one, with
 * the objects of its Active revisions; their controller ownerReferences to the revisions are
 * removed, then the revisions (teardown finalizer off, deleted with propagationPolicy Orphan)
 * and their object Secrets.  Nothing is re-created.  0 (also when there is nothing to take
 * over), or -1 with err. */
int clusterextension_revisions_retire(clusterextension_run *run, olm_error *err);
void clusterextension_retire_free(clusterextension_reconciler *r);


/* clusterextension_revision_status.c (pure): on a successful gate-mode reconcile, upstream's
 * ApplyBundleWithBoxcutter status: Available and Progressing mirrored from the installed
 * revision, Progressing from the newest rolling one (the old Progressing kept when neither has
 * one), status.activeRevisions (installed first, then the rolling ones with their Available and
 * Progressing).  `status` is the computed new status (changed in place), `old_status` the one
 * read.  -1 on out of memory. */
/* Installed False when nothing is installed: reason Absent while the newest rolling revision
 * is not Retrying (determineFailureReason), else it stays Failed.  -1 on out of memory. */
int clusterextension_revision_installed_reason(json_t *status, const revision_info *revs, const size_t *rolling,
                                               size_t nrolling, int64_t generation, const char *now);
int clusterextension_revision_status(json_t *status, const json_t *old_status, const revision_info *revs,
                                     ssize_t installed, const size_t *rolling, size_t nrolling, int64_t generation,
                                     const char *now);

#endif
