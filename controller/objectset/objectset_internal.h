/* objectset_internal: the parts of the ClusterObjectSet reconciler (objectset.h). */
#ifndef OLM_OBJECTSET_INTERNAL_H
#define OLM_OBJECTSET_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "kube_workqueue.h"
#include "objectset.h"
#include "probe.h"
#include "strbuf.h"

struct objectset_reconciler {
    objectset_reconciler_config cfg;
    pthread_mutex_t own_lock;
    json_t *own_writes; /* COS name -> the resourceVersion our last write of it made (under own_lock) */
    /* Kept as JSON text: a parsed object costs jansson ~10x its text, 1,000 sets ~60 MiB. */
    json_t *last_read;  /* COS name -> {"rv", "text"}: the whole set as our last GET or write of it
                         * returned (under own_lock) */
    json_t *rolling_secrets; /* COS name -> {"for": "<uid>/<generation>", "text": its passes' Secret
                              * reads}, kept while it rolls out (under own_lock) */
};

/* Records that this process's write of COS `name` made `rv` (objectset_reconciler_own_write). */
void objectset_note_own_write(objectset_reconciler *r, const char *name, const json_t *written);

/* --------------------------------------------------- resolve (objectset_resolve.c) */

typedef enum objectset_cp { OBJECTSET_CP_PREVENT, OBJECTSET_CP_IF_NO_CONTROLLER, OBJECTSET_CP_NONE } objectset_cp;

typedef struct objectset_phase {
    const char *name;  /* borrowed from the COS */
    json_t *objects;   /* array of resolved objects, owned (before the controller's additions) */
    objectset_cp *cp;  /* per object, owned */
    char *digest;      /* "sha256:<hex>", owned */
} objectset_phase;

typedef struct objectset_phases {
    objectset_phase *items;
    size_t n;
} objectset_phases;

void objectset_phases_free(objectset_phases *p);

/* A referenced Secret, read once per pass: `memo` (a JSON object owned by the pass, keyed
 * "ns/name"; NULL: no memo) keeps what was read, so the immutability check and every ref into
 * the same Secret (a bundle's objects share one) cost one GET between them.  Not across
 * passes: a Secret may be deleted and made again with other content (Blocked says so).
 * *out is a new reference.  0, or the kube_get result with err. */
int objectset_get_secret(kube_client *admin, json_t *memo, const char *ns, const char *name, json_t **out,
                         olm_error *err);
/* The Secrets the COS references that are not immutable, as upstream's message:
 * "the following secrets are not immutable (referenced secrets must have immutable set to
 * true): ns/a, ns/b".  0: all immutable (or missing: resolving reports those), 1: *msg set
 * (caller frees), -1: err (the API failed). */
int objectset_check_immutable(kube_client *admin, json_t *memo, const json_t *cos, char **msg, olm_error *err);
/* Resolves every phase's objects (inline, or the Secret key, gunzipped when it starts with the
 * gzip magic) and digests them.  0, or -1 with err in upstream's words. */
int objectset_resolve(kube_client *admin, json_t *memo, const json_t *cos, objectset_phases *out, olm_error *err);
/* sha256 of {"name":..,"objects":[..]} as Go's json.Marshal writes it. */
char *objectset_phase_digest(const char *name, const json_t *objects);
/* Compares status.observedPhases with the phases' digests: NULL when they agree, else
 * upstream's message (caller frees). */
char *objectset_verify_phases(const json_t *observed, const objectset_phases *p);

/* --------------------------------------------------- objects (objectset_object.c) */

typedef enum objectset_action {
    OBJECTSET_CREATED, OBJECTSET_UPDATED, OBJECTSET_PROGRESSED, OBJECTSET_COLLISION
} objectset_action;

typedef struct objectset_target {
    kube_client *client;       /* the identity the objects are handled with */
    const json_t *cos;         /* borrowed */
    json_int_t revision;
    const char *owner_name;    /* the COS's olm.operatorframework.io/owner-name label, "" when none */
    const char *const *sibling_uids; /* other active revisions of the same owner */
    size_t nsiblings;
    const json_t *probes;      /* spec.progressionProbes, may be NULL */
    struct objectset_watches *watches; /* told of our writes (objectset_watches_note_write); may be NULL */
} objectset_target;

typedef struct objectset_object_result {
    objectset_action action;
    json_t *obj;               /* as last seen; owned */
    probe_result probe;
    char *collision;           /* a collision's description; owned */
} objectset_object_result;

void objectset_object_result_free(objectset_object_result *r);
/* Reconciles one object (boxcutter's ObjectEngine.Reconcile).  0, or -1 with err. */
int objectset_object_reconcile(const objectset_target *t, const json_t *desired, objectset_cp cp,
                               objectset_object_result *out, olm_error *err);
/* Tears one object down (ObjectEngine.Teardown): *gone true when it is gone or no longer ours.
 * 0, or -1 with err. */
int objectset_object_teardown(const objectset_target *t, const json_t *desired, bool *gone, olm_error *err);

/* --------------------------------------------------- status (objectset_status.c) */

typedef struct objectset_status {
    json_t *status;        /* the status being built (a copy), owned */
    json_int_t generation;
    const char *now;       /* RFC 3339 */
    bool deadline_exceeded;
    json_int_t deadline_minutes;
} objectset_status;

void objectset_mark_progressing(objectset_status *s, const char *reason, const char *msg);
bool objectset_mark_not_progressing(objectset_status *s, const char *reason, const char *msg);
bool objectset_mark_available(objectset_status *s, const char *status, const char *reason, const char *msg);
void objectset_mark_succeeded(objectset_status *s);
void objectset_set_retrying(objectset_status *s, const char *msg);
/* Both conditions to Archived; true when that changed anything. */
bool objectset_mark_archived(objectset_status *s);
/* durationUntilDeadline: *has false when there is none (no deadline, Succeeded, Archived,
 * deleting); else the milliseconds left (<= 0: exceeded). */
int64_t objectset_deadline_remaining_ms(const json_t *cos, uint64_t minute_ms, time_t now, bool *has);

/* How long a rollout waiting on objects that are not watched waits before probing again, for a
 * revision created age_ms ago: poll_ms at first, then a quarter of its age, at most cap_ms
 * (10 s by default: a rollout's end is seen at most that late).  1,000 revisions polled every
 * 2 s were 150,000 requests in 4 minutes, a saturated apiserver (BoxcutterRuntime, the sbs
 * bench's least-privilege controller, which may not watch Deployments).  Watches are the real
 * answer (not done: the objects' watches run with the controller's own rights only). */
uint64_t objectset_poll_wait(uint64_t poll_ms, uint64_t cap_ms, int64_t age_ms);

/* --------------------------------------------------- one pass (objectset_reconcile.c) */

/* One pass's state. */
typedef struct objectset_pass {
    objectset_reconciler *r;
    json_t *cos;          /* the latest version we know (after our own patches); owned */
    objectset_status s;
    const char *name;
    int64_t remaining_ms;
    int64_t age_ms;       /* since the revision was created (-1: unknown) */
    bool has_deadline;
    bool watched;         /* every type of its objects is watched: no need to poll */
    char *token;          /* the shared source's token this pass acts with, or NULL; owned */
    char *token_ns, *token_sa; /* its ServiceAccount; owned */
} objectset_pass;

static inline kube_wq_result objectset_ok(void)
{
    return (kube_wq_result){.kind = KUBE_WQ_OK};
}

static inline kube_wq_result objectset_after(uint64_t ms)
{
    return (kube_wq_result){.kind = KUBE_WQ_REQUEUE_AFTER, .requeue_after_ms = ms ? ms : 1};
}

static inline kube_wq_result objectset_failed(void)
{
    return (kube_wq_result){.kind = KUBE_WQ_ERROR};
}

bool objectset_is_archived(const json_t *cos);
/* The teardown finalizer on or off; p->cos becomes the patched object.  0, or -1 with err. */
int objectset_set_finalizer(objectset_pass *p, bool present, olm_error *err);
/* boxcutter's ObjectRef.String(): "<group>/<version>, Kind=<Kind> <namespace>/<name>". */
void objectset_object_ref(strbuf *sb, const json_t *o);
/* The rollout of an Active revision (objectset_rollout.c); `others`: the other active revisions
 * of its owner. */
kube_wq_result objectset_roll_out(objectset_pass *p, objectset_target *t, const objectset_phases *ph,
                                  const json_t *others);
/* boxcutter's static revision validation (objectset_validate.c): NULL when valid, else its
 * message (caller frees). */
char *objectset_validate(const char *name, json_int_t revision, const objectset_phases *ph);
/* Archive: teardown, then Archived, then the finalizer off (objectset_archive.c). */
kube_wq_result objectset_archive(objectset_pass *p, const objectset_target *t, const objectset_phases *ph);

#endif
