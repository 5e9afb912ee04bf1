/* objectset: the ClusterObjectSet controller (operator-controller's BoxcutterRuntime gate), as
 * upstream operator-controller df2c201's clusterobjectset_controller.go over boxcutter v0.14.0.
 *
 * A ClusterObjectSet (COS) is a revision: ordered phases of objects (inline, or by reference to
 * immutable Secrets of type olm.operatorframework.io/object-data), rolled out phase by phase
 * with server-side apply (field manager olm.operatorframework.io); a phase's objects must pass
 * spec.progressionProbes before the next phase is applied.  Each applied object gets the
 * controller ownerReference of its COS, the label app.kubernetes.io/managed-by
 * olm.operatorframework.io, the label olm.operatorframework.io/owner-name of the COS's, and the
 * annotation olm.operatorframework.io/revision (the COS's spec.revision).  collisionProtection
 * (object > phase > spec, default Prevent) says what happens to an object that already exists
 * and is not ours: Prevent refuses it unless a sibling revision (same owner-name label, lower
 * revision) controls it; IfNoController adopts it when nobody controls it; None adopts anything.
 *
 * Status: Available, Progressing and Succeeded with upstream's reasons and messages, and
 * status.observedPhases (sha256 of each phase's resolved content: a Secret replaced with other
 * content blocks the revision).  lifecycleState Archived tears the objects down (last phase
 * first) and releases those a later revision has taken over; once complete the teardown
 * finalizer goes.  A deleted COS only loses its finalizer (its objects are garbage collected
 * through their ownerReferences), as upstream.  progressDeadlineMinutes: a rollout not done by
 * creationTimestamp + deadline turns Progressing False ProgressDeadlineExceeded.
 *
 * Identity: upstream applies with operator-controller's own identity.  Here too, unless the COS
 * carries the annotations olm.operatorframework.io/service-account-name and
 * olm.operatorframework.io/service-account-namespace: then everything of its objects (reads,
 * applies, deletes) is done with a short-lived token of that ServiceAccount (the project's
 * least-privilege decision).  Secrets and the COS itself are always operator-controller's.
 *
 * Threading: objectset_reconcile runs on the threadpool; setup is loop thread. */
#ifndef OLM_OBJECTSET_H
#define OLM_OBJECTSET_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon_runtime.h"
#include "kube_client.h"
#include "kube_informer.h"
#include "kube_workqueue.h"
#include "olm_error.h"

#define OBJECTSET_API_VERSION "olm.operatorframework.io/v1"
#define OBJECTSET_KIND "ClusterObjectSet"
#define OBJECTSET_PATH "/apis/olm.operatorframework.io/v1/clusterobjectsets"
#define OBJECTSET_FIELD_MANAGER "olm.operatorframework.io"
#define OBJECTSET_FINALIZER "olm.operatorframework.io/teardown"

/* Where a pass gets the token of the ServiceAccount it acts as (Identity, above): a cache
 * shared with the ClusterExtension controller (operator_controller_main.c wires its token
 * cache) spares the TokenRequest -- an apiserver write and a signature -- of every pass.
 * get: 0 with *token malloc'd (the caller zeroes and frees it), or -1 with err.  rejected:
 * the pass that used `token` failed (perhaps a 401: the ServiceAccount made again, the key
 * rotated); the next pass mints a fresh one.  Any thread. */
typedef struct objectset_token_source {
    int (*get)(void *data, const char *ns, const char *sa, char **token, olm_error *err);
    void (*rejected)(void *data, const char *ns, const char *sa, const char *token);
    void *data;
} objectset_token_source;

typedef struct objectset_reconciler_config {
    kube_client *admin;          /* operator-controller's own identity; borrowed */
    kube_informer *sets;         /* the ClusterObjectSet cache (siblings); borrowed; NULL: list from the API */
    uint64_t minute_ms;          /* a progressDeadlineMinutes minute; 0: 60000 (tests shorten it) */
    uint64_t poll_ms;            /* re-probe while a rollout waits on objects not watched; 0: 2000 */
    uint64_t poll_max_ms;        /* ... growing with the rollout's age up to this; 0: 10000 */
    uint64_t resync_ms;          /* re-apply and re-probe a rolled-out revision; 0: 30000 */
    uint64_t watched_resync_ms;  /* the same when every type of its objects is watched (a change of
                                  * one queues the set, as upstream, which never resyncs); 0: 300000 */
    time_t (*now)(void);         /* NULL: time() */
    struct objectset_watches *watches; /* the applied objects' watches (objectset_watch.h); NULL: none */
    objectset_token_source tokens; /* the ServiceAccount tokens of Identity; .get NULL: a TokenRequest per pass */
} objectset_reconciler_config;

typedef struct objectset_reconciler objectset_reconciler;

objectset_reconciler *objectset_reconciler_new(const objectset_reconciler_config *cfg, olm_error *err);
void objectset_reconciler_free(objectset_reconciler *r);
/* Whether resourceVersion `rv` of COS `name` is the echo of this process's own last write of
 * it (the status at the end of a pass, the finalizer): the pass that wrote it already saw
 * everything that version holds, so the informer need not queue another (each such echo was
 * a whole pass: a GET of the set, of its Secret and of every object).  A match is consumed.
 * A write by anyone else makes another resourceVersion, which still queues.  Any thread. */
bool objectset_reconciler_own_write(objectset_reconciler *r, const char *name, const char *rv);
/* Drops what is remembered of COS `name` (it was deleted). */
void objectset_reconciler_forget(objectset_reconciler *r, const char *name);
/* kube_workqueue_reconcile_fn: key is the COS name. */
kube_wq_result objectset_reconcile(const char *key, void *data);

/* The objects of every phase of `cos`, phase order (inline, or read from the referenced Secrets
 * as `admin`, gunzipped).  A new array, or NULL with err (a Secret or key missing, bad data). */
json_t *objectset_objects(kube_client *admin, const json_t *cos, olm_error *err);

/* ------------------------------------------------------------ the controller (loop thread) */

typedef struct objectset_controller {
    daemon_runtime *rt;
    kube_informer *sets;
    struct objectset_watches *watches;
    kube_workqueue *wq;
    objectset_reconciler *rec;
} objectset_controller;

typedef struct objectset_controller_config {
    unsigned concurrency;  /* 0: 1 */
    uint64_t minute_ms;    /* see objectset_reconciler_config */
    uint64_t watched_resync_ms; /* see objectset_reconciler_config (--drift-repair-interval, the
                                 * gate-off backstop too) */
    objectset_token_source tokens; /* see objectset_reconciler_config */
} objectset_controller_config;

/* Starts the informer on ClusterObjectSets and the work queue, each owned by rt. */
int objectset_controller_start(objectset_controller *c, daemon_runtime *rt, const objectset_controller_config *cfg,
                               olm_error *err);
/* After the drain: frees the reconciler. */
void objectset_controller_after_drain(objectset_controller *c);

#endif
