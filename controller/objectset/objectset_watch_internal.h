/* objectset_watch_internal: the parts of the applied objects' watches (objectset_watch.h):
 * the watches themselves (objectset_watch.c), what they reported (objectset_watch_reports.c)
 * and the ServiceAccount credentials offered for a type operator-controller may not watch
 * (objectset_watch_offers.c). */
#ifndef OLM_OBJECTSET_WATCH_INTERNAL_H
#define OLM_OBJECTSET_WATCH_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "olm_refusal_streak.h"
#include <uv.h>

#include "objectset_watch.h"

#define OBJECTSET_WATCH_SELECTOR "app.kubernetes.io/managed-by=olm.operatorframework.io"
#define OBJECTSET_WATCH_REJECTED_KEPT 4 /* credentials rejected (401) per type, not tried again */

typedef struct one_watch {
    struct objectset_watches *owner;
    char *path;
    kube_watch *w;
    char *as;        /* "ns/name" of the ServiceAccount it runs as; NULL: operator-controller itself */
    char *set;       /* the ClusterObjectSet whose pass offered as's credential */
    uint64_t credential_hash; /* of as's credential, to refuse it again once rejected (401) */
    bool synced;     /* it has listed: sets may have been told the type is watched (loop thread) */
    kube_config cfg; /* as's credential (zeroed for operator-controller's own); freed when stopped */
    struct one_watch *next;
} one_watch;

/* The credentials offered for one type, after operator-controller's own watch of it was
 * refused (under objectset_watches.mu). */
typedef struct watch_offers {
    char *as, *credential, *set; /* the newest one offered and not yet tried, and by which set */
    json_t *denied;      /* ServiceAccount -> when it was refused (403): not asked again for a while */
    uint64_t rejected[OBJECTSET_WATCH_REJECTED_KEPT]; /* hashes of credentials rejected (401) */
    size_t rejected_next; /* the newest at rejected_next - 1 */
    olm_refusal_streak refusals; /* 403s since the last watch that listed (ms of time()) */
} watch_offers;

/* One resource type asked for (under objectset_watches.mu). */
typedef struct watched_path {
    char *path;
    bool refused;         /* operator-controller's own watch was refused (401/403) */
    bool borrow_only;     /* a namespace's collection of a type refused cluster-wide: no own watch */
    watch_offers offers;  /* after a refusal: a ServiceAccount's credential to watch it with */
    bool borrowing;       /* such a watch is starting or running */
    bool borrowed_synced; /* ... and has listed: its events cover the type */
    bool told_refusal;    /* a ServiceAccount's refusal of it was logged at INFO */
    json_t *askers;       /* the sets that asked for this type (queued when a watch of it ends) */
} watched_path;

struct objectset_watches {
    uv_loop_t *loop;
    kube_uvcurl *uc;
    const kube_config *cfg;
    void (*enqueue)(const char *name, void *data);
    void *data;
    pthread_mutex_t mu;
    watched_path *known;  /* every path asked for (under mu) */
    json_t *index;        /* path -> its index in known + 1 (under mu) */
    json_t *written;      /* uid -> resourceVersion of our newest write (under mu) */
    json_t *latest;       /* uid -> [resourceVersion, path] the watches last reported (under mu) */
    json_t *verdicts;     /* verdict key -> [uid, resourceVersion] found in order (under mu) */
    size_t nknown, nstarted;
    uv_async_t async;
    one_watch *watches;   /* loop thread */
    bool stopping;
    int pending;          /* closes still to come */
    void (*closed)(void *data);
    void *closed_data;
};

/* ------------------------------------------- offers (objectset_watch_offers.c), under mu */

/* False on out of memory (then refusals are not remembered). */
bool watch_offers_init(watch_offers *o);
void watch_offers_free(watch_offers *o);
uint64_t watch_offers_hash(const char *credential);
/* Forgets the waiting offer (its credential wiped). */
void watch_offers_drop(watch_offers *o);
/* Whether ServiceAccount `as` was refused (403) lately. */
bool watch_offers_denied(const watch_offers *o, const char *as);
/* Keeps `credential` of ServiceAccount `as` (offered by `set`, may be NULL) as the one to try
 * next, replacing an older offer (a fresher token), unless `as` was refused (403) lately or
 * that credential was rejected (401).  True when kept. */
bool watch_offers_put(watch_offers *o, const char *as, const char *credential, const char *set);
/* Takes the waiting offer (the caller frees the three strings; *set may be NULL), unless it
 * has been refused or rejected since it was made (then dropped).  False: none to try. */
bool watch_offers_take(watch_offers *o, char **as, char **credential, char **set);
/* A watch with ServiceAccount `as`'s credential has listed: an earlier refusal is forgotten. */
void watch_offers_allowed(watch_offers *o, const char *as);
/* A watch with ServiceAccount `as`'s credential (hash `credential_hash`) ended with `status`:
 * 403 refuses `as` for a while, 401 the credential for good.  True when `as` had been refused
 * before and has not listed since (asked again once its refusal expired). */
bool watch_offers_refused(watch_offers *o, const char *as, long status, uint64_t credential_hash);

/* ------------------------------------- what the watches reported (objectset_watch_reports.c) */

/* Loop thread: one event of the watch of `path` ("" for the tests'). */
void objectset_watch_event(objectset_watches *ws, const char *path, kube_watch_event_type type, const json_t *obj);
/* Under mu: a watch of `path` ended; what it reported no longer vouches for anything. */
void objectset_watch_untrack_path(objectset_watches *ws, const char *path);
/* Under mu: every verdict of the set with uid `cos_uid`. */
void objectset_watch_forget_verdicts(objectset_watches *ws, const char *cos_uid);

#endif
