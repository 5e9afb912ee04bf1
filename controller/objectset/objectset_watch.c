/* objectset_watch: the applied objects' watches (upstream's tracking cache): one cluster-wide
 * list+watch per resource type a ClusterObjectSet has objects of, selected by the label
 * app.kubernetes.io/managed-by=olm.operatorframework.io that every applied object carries.
 * Any change of such an object (a new resourceVersion: its status too, as upstream's
 * ResourceVersionChangedPredicate) queues the ClusterObjectSet its controller ownerReference
 * names, so probes are evaluated again when a PVC binds or a Deployment loses readiness.
 *
 * The watches run with operator-controller's own identity.  Where it may not list+watch a
 * type (the least-privilege RBAC without config/rbac-upstream-rights: 403), the type is watched
 * with the credential of a ServiceAccount whose revisions have objects of it (the credential
 * the revision's own pass acts with, offered through objectset_watches_want_as), as the drift
 * watches do with the extensions' (drift.h says why that widens nobody's privileges: the watch
 * reads what that identity may read, and its events only queue the set named by the object's
 * controller ownerReference, whose pass reads and writes with its own identity).  A
 * ServiceAccount refused too (403) is not asked again for that type; a credential rejected
 * (401: expired) waits for the next one offered.  Until such a watch has listed, the type is
 * left to the reconciler's polling (objectset.h), and one line says so.
 *
 * Threading: objectset_watch_want runs on the threadpool (reconciles) and hands the path to
 * the loop through a mutex and a uv_async_t; everything else is loop thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_object.h"
#include "kube_watch.h"
#include "objectset_watch.h"
#include "olm_hash.h"
#include "olm_log.h"

#define SELECTOR "app.kubernetes.io/managed-by=olm.operatorframework.io"
/* A ServiceAccount refused (403) is asked again after this long: RBAC may have been mended. */
#define DENIAL_SECONDS 600
#define REJECTED_KEPT 4 /* credentials rejected (401) per type, not tried again */

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

/* One resource type asked for (under objectset_watches.mu). */
typedef struct watched_path {
    char *path;
    bool refused;        /* operator-controller's own watch was refused (401/403) */
    /* After a refusal: a watch with a ServiceAccount's credential. */
    char *offer_as, *offer_credential, *offer_set; /* the newest one offered and not yet tried, and by which set */
    bool borrowing;      /* such a watch is starting or running */
    bool borrowed_synced; /* ... and has listed: its events cover the type */
    json_t *denied;      /* ServiceAccount -> when it was refused (403): not asked again for DENIAL_SECONDS */
    uint64_t rejected[REJECTED_KEPT]; /* hashes of credentials rejected (401), newest at rejected_next - 1 */
    size_t rejected_next;
    json_t *askers;      /* the sets that asked for this type (queued when a watch of it ends) */
} watched_path;

struct objectset_watches {
    uv_loop_t *loop;
    kube_uvcurl *uc;
    const kube_config *cfg;
    void (*enqueue)(const char *name, void *data);
    void *data;
    pthread_mutex_t mu;
    watched_path *known;  /* every path asked for (under mu) */
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

/* Keep what the relist comparison and the event handler read: identity, resourceVersion and
 * the ownerReferences. */
static void reduce(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *keep[] = {"name", "namespace", "resourceVersion", "ownerReferences", "uid"};
    json_t *small = json_object();
    for (size_t i = 0; small && i < sizeof keep / sizeof *keep; i++) {
        json_t *v = json_object_get(md, keep[i]);
        if (v)
            json_object_set(small, keep[i], v);
    }
    kube_object_reduce(obj, small, NULL);
}

void objectset_watches_note_write(objectset_watches *ws, const json_t *written)
{
    const char *uid = kube_object_string(written, "metadata.uid");
    const char *rv = kube_object_string(written, "metadata.resourceVersion");
    if (!ws || !uid || !rv)
        return;
    pthread_mutex_lock(&ws->mu);
    if (ws->written)
        json_object_set_new(ws->written, uid, json_string(rv));
    pthread_mutex_unlock(&ws->mu);
}

/* Whether obj is the version our own write made (objectset_watches_note_write); consumed. */
static bool own_write(struct objectset_watches *ws, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    const char *rv = kube_object_string(obj, "metadata.resourceVersion");
    if (!uid || !rv)
        return false;
    pthread_mutex_lock(&ws->mu);
    const char *mine = json_string_value(json_object_get(ws->written, uid));
    bool echo = mine && strcmp(mine, rv) == 0;
    if (echo)
        json_object_del(ws->written, uid);
    pthread_mutex_unlock(&ws->mu);
    return echo;
}

static void forget_write(struct objectset_watches *ws, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    pthread_mutex_lock(&ws->mu);
    if (uid)
        json_object_del(ws->written, uid);
    pthread_mutex_unlock(&ws->mu);
}

/* What the watches last reported of each object, and which watch (path; "" for the tests'
 * events): objectset_watches_unchanged reads it, a watch that ends takes its entries away. */
static void track(struct objectset_watches *ws, const char *path, kube_watch_event_type type, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    const char *rv = kube_object_string(obj, "metadata.resourceVersion");
    if (!uid)
        return;
    pthread_mutex_lock(&ws->mu);
    if (type == KUBE_WATCH_DELETED || !rv)
        json_object_del(ws->latest, uid);
    else
        json_object_set_new(ws->latest, uid, json_pack("[s,s]", rv, path));
    pthread_mutex_unlock(&ws->mu);
}

/* Under mu: a watch of `path` ended; what it reported may be out of date by the time another
 * one lists (a deletion meanwhile is no event of the next watch), so it no longer vouches. */
static void untrack_path(struct objectset_watches *ws, const char *path)
{
    const char *uid;
    json_t *v, *tmp;
    json_object_foreach_safe(ws->latest, tmp, uid, v) {
        const char *p = json_string_value(json_array_get(v, 1));
        if (p && strcmp(p, path) == 0)
            json_object_del(ws->latest, uid);
    }
}

static void handle_event(objectset_watches *ws, const char *path, kube_watch_event_type type, const json_t *obj)
{
    track(ws, path, type, obj);
    if (type == KUBE_WATCH_DELETED)
        forget_write(ws, obj);
    else if (own_write(ws, obj))
        return;
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r) {
        const char *kind = json_string_value(json_object_get(r, "kind"));
        const char *name = json_string_value(json_object_get(r, "name"));
        if (json_is_true(json_object_get(r, "controller")) && kind && name && strcmp(kind, "ClusterObjectSet") == 0)
            ws->enqueue(name, ws->data);
    }
}

void objectset_watches_handle_event(objectset_watches *ws, kube_watch_event_type type, const json_t *obj)
{
    handle_event(ws, "", type, obj);
}

static void on_event(kube_watch_event_type type, json_t *obj, void *data)
{
    one_watch *ow = data;
    handle_event(ow->owner, ow->path, type, obj);
}

void objectset_watches_verdict(objectset_watches *ws, const char *key, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    const char *rv = kube_object_string(obj, "metadata.resourceVersion");
    if (!ws || !key)
        return;
    pthread_mutex_lock(&ws->mu);
    if (uid && rv)
        json_object_set_new(ws->verdicts, key, json_pack("[s,s]", uid, rv));
    else
        json_object_del(ws->verdicts, key);
    pthread_mutex_unlock(&ws->mu);
}

void objectset_watches_verdict_drop(objectset_watches *ws, const char *key)
{
    if (!ws || !key)
        return;
    pthread_mutex_lock(&ws->mu);
    json_object_del(ws->verdicts, key);
    pthread_mutex_unlock(&ws->mu);
}

bool objectset_watches_unchanged(objectset_watches *ws, const char *key)
{
    if (!ws || !key)
        return false;
    pthread_mutex_lock(&ws->mu);
    const json_t *v = json_object_get(ws->verdicts, key);
    const char *uid = json_string_value(json_array_get(v, 0)), *rv = json_string_value(json_array_get(v, 1));
    const char *seen = uid ? json_string_value(json_array_get(json_object_get(ws->latest, uid), 0)) : NULL;
    bool same = seen && rv && strcmp(seen, rv) == 0;
    pthread_mutex_unlock(&ws->mu);
    return same;
}

void objectset_watches_forget_set(objectset_watches *ws, const char *cos_uid, const char *name)
{
    if (!ws || !cos_uid)
        return;
    size_t n = strlen(cos_uid);
    pthread_mutex_lock(&ws->mu);
    for (size_t i = 0; name && i < ws->nknown; i++)
        json_object_del(ws->known[i].askers, name);
    const char *k;
    json_t *v, *tmp;
    json_object_foreach_safe(ws->verdicts, tmp, k, v) {
        if (strncmp(k, cos_uid, n) == 0 && k[n] == '\n')
            json_object_del(ws->verdicts, k);
    }
    pthread_mutex_unlock(&ws->mu);
}

static void watch_closed(void *data)
{
    struct objectset_watches *ws = data;
    if (--ws->pending == 0 && ws->closed)
        ws->closed(ws->closed_data);
}

static void one_watch_free(one_watch *ow)
{
    kube_config_free(&ow->cfg); /* zeroes a token */
    free(ow->path);
    free(ow->as);
    free(ow->set);
    free(ow);
}

/* A watch's stop has closed: it leaves the list, its credential with it. */
static void one_closed(void *data)
{
    one_watch *ow = data;
    struct objectset_watches *ws = ow->owner;
    for (one_watch **l = &ws->watches; *l; l = &(*l)->next)
        if (*l == ow) {
            *l = ow->next;
            break;
        }
    one_watch_free(ow);
    watch_closed(ws);
}

static void stop_one(one_watch *ow)
{
    if (!ow->w)
        return;
    ow->owner->pending++;
    kube_watch *w = ow->w;
    ow->w = NULL;
    kube_watch_stop(w, one_closed, ow);
}

/* Under mu. */
static watched_path *find_path(struct objectset_watches *ws, const char *path)
{
    for (size_t i = 0; i < ws->nknown; i++)
        if (strcmp(ws->known[i].path, path) == 0)
            return &ws->known[i];
    return NULL;
}

static bool is_denied(const watched_path *wp, const char *as)
{
    const json_t *t = json_object_get(wp->denied, as);
    return t && time(NULL) - (time_t)json_integer_value(t) < DENIAL_SECONDS;
}

static uint64_t credential_hash(const char *credential)
{
    return olm_fnv1a_str(OLM_FNV1A_OFFSET, credential);
}

static bool was_rejected(const watched_path *wp, const char *credential)
{
    uint64_t h = credential_hash(credential);
    for (size_t i = 0; i < REJECTED_KEPT; i++)
        if (wp->rejected[i] == h)
            return true;
    return false;
}

static void drop_offer(watched_path *wp)
{
    if (wp->offer_credential)
        explicit_bzero(wp->offer_credential, strlen(wp->offer_credential));
    free(wp->offer_credential);
    free(wp->offer_as);
    free(wp->offer_set);
    wp->offer_credential = wp->offer_as = wp->offer_set = NULL;
}

/* Loop thread: queues every set that asked for `path` (its watch ended: each pass polls again,
 * reads what the watch no longer vouches for, and offers its credential). */
static void queue_askers(struct objectset_watches *ws, const char *path)
{
    pthread_mutex_lock(&ws->mu);
    watched_path *wp = find_path(ws, path);
    json_t *names = wp && wp->askers ? json_deep_copy(wp->askers) : NULL;
    pthread_mutex_unlock(&ws->mu);
    const char *name;
    json_t *v;
    json_object_foreach(names, name, v)
        ws->enqueue(name, ws->data);
    json_decref(names);
}

/* A watch of a ServiceAccount's ended with `status` (401/403): the type waits for another. */
static void borrowed_refused(one_watch *ow, long status, const char *msg)
{
    struct objectset_watches *ws = ow->owner;
    pthread_mutex_lock(&ws->mu);
    watched_path *wp = find_path(ws, ow->path);
    if (wp) {
        wp->borrowing = wp->borrowed_synced = false;
        if (status == 403 && wp->denied)
            json_object_set_new(wp->denied, ow->as, json_integer((json_int_t)time(NULL)));
        if (status == 401) /* the same credential offered again would be rejected again */
            wp->rejected[wp->rejected_next++ % REJECTED_KEPT] = ow->credential_hash;
    }
    pthread_mutex_unlock(&ws->mu);
    if (status == 403)
        olm_log(OLM_LOG_WARN, "clusterObjectSet", NULL,
                "ServiceAccount %s may not list+watch %s either (%s); another one with revisions of that type will be "
                "asked, meanwhile ClusterObjectSets re-probe those objects by polling",
                ow->as, ow->path, msg);
    else
        olm_log(OLM_LOG_INFO, "clusterObjectSet", NULL,
                "the watch of %s as ServiceAccount %s lost its credential (%s); the revisions with objects of that "
                "type poll them until one offers a fresh one",
                ow->path, ow->as, msg);
}

static void on_error(const char *msg, void *data)
{
    one_watch *ow = data;
    long st = kube_watch_last_status(ow->w);
    if (st != 401 && st != 403)
        return; /* retried by the watch */
    struct objectset_watches *ws = ow->owner;
    if (ow->as) {
        borrowed_refused(ow, st, msg);
    } else {
        olm_log(OLM_LOG_WARN, "clusterObjectSet", NULL,
                "operator-controller may not list+watch %s (%s); it is watched as a ServiceAccount of the revisions "
                "that have objects of it where one may, meanwhile ClusterObjectSets re-probe them by polling",
                ow->path, msg);
        pthread_mutex_lock(&ws->mu);
        watched_path *wp = find_path(ws, ow->path);
        if (wp)
            wp->refused = true;
        pthread_mutex_unlock(&ws->mu);
    }
    pthread_mutex_lock(&ws->mu);
    untrack_path(ws, ow->path);
    pthread_mutex_unlock(&ws->mu);
    /* The sets told the type was watched (operator-controller's own watch counts as watched from
     * the start; a ServiceAccount's once it had listed) resync rarely: queue them once, to poll.
     * A ServiceAccount's watch refused before it listed told nobody (and queueing then would make
     * every set offer, be refused, and queue them all again). */
    char *path = !ow->as || ow->synced ? strdup(ow->path) : NULL;
    /* Stopped, never retried; freed once closed. */
    stop_one(ow);
    if (path)
        queue_askers(ws, path);
    free(path);
    uv_async_send(&ws->async); /* an offer may be waiting already */
}

static void on_synced(void *data)
{
    one_watch *ow = data;
    ow->synced = true;
    if (!ow->as)
        return;
    pthread_mutex_lock(&ow->owner->mu);
    watched_path *wp = find_path(ow->owner, ow->path);
    bool first = wp && wp->borrowing && !wp->borrowed_synced;
    if (wp && wp->borrowing)
        wp->borrowed_synced = true;
    pthread_mutex_unlock(&ow->owner->mu);
    /* From here on a change of such an object queues its set: said once, as it is what ends the polling. */
    if (first)
        olm_log(OLM_LOG_INFO, "clusterObjectSet", NULL,
                "watching %s?labelSelector=%s as ServiceAccount %s (listed); revisions with objects of that type no "
                "longer poll them",
                ow->path, SELECTOR, ow->as);
}

/* Starts a watch of `path` as operator-controller (as NULL) or as ServiceAccount `as` with
 * `credential`.  False when it could not start (logged). */
static bool start_one(struct objectset_watches *ws, const char *path, const char *as, const char *credential,
                      const char *set)
{
    one_watch *ow = calloc(1, sizeof *ow);
    if (!ow || !(ow->path = strdup(path)) || (as && !(ow->as = strdup(as))) || (set && !(ow->set = strdup(set)))) {
        if (ow)
            one_watch_free(ow);
        return false;
    }
    ow->owner = ws;
    ow->credential_hash = as ? credential_hash(credential) : 0;
    ow->next = ws->watches; /* listed before it can close (one_closed unlinks it) */
    ws->watches = ow;
    kube_watch_options wo = {.path = path, .label_selector = SELECTOR, .drop_managed_fields = true, .transform = reduce};
    kube_watch_handlers h = {on_event, on_synced, on_error};
    olm_error err;
    bool cfg_ok = !as || kube_config_with_credential(ws->cfg, credential, &ow->cfg, &err) == 0;
    if (!cfg_ok || !(ow->w = kube_watch_new(ws->uc, as ? &ow->cfg : ws->cfg, &wo, &h, ow, &err)) ||
        kube_watch_start(ow->w, &err) != 0) {
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", NULL, "watch %s%s%s: %s", path, as ? " as ServiceAccount " : "",
                as ? as : "", err.msg);
        if (ow->w) {
            stop_one(ow); /* unlinked and freed once closed */
        } else {
            ws->watches = ow->next;
            one_watch_free(ow);
        }
        return false;
    }
    if (!as) /* a ServiceAccount's watch is logged once it has listed (on_synced) */
        olm_log(OLM_LOG_INFO, "clusterObjectSet", NULL, "watching %s?labelSelector=%s", path, SELECTOR);
    return true;
}

/* Under mu: the next offer to try, taken out of its path (the caller frees the strings). */
static char *take_offer(struct objectset_watches *ws, char **as, char **credential, char **set)
{
    for (size_t i = 0; i < ws->nknown; i++) {
        watched_path *wp = &ws->known[i];
        if (!wp->refused || wp->borrowing || !wp->offer_credential)
            continue;
        char *path = NULL;
        if (is_denied(wp, wp->offer_as) || was_rejected(wp, wp->offer_credential) || !(path = strdup(wp->path))) {
            drop_offer(wp);
            continue;
        }
        wp->borrowing = true;
        *as = wp->offer_as;
        *credential = wp->offer_credential;
        *set = wp->offer_set;
        wp->offer_as = wp->offer_credential = wp->offer_set = NULL;
        return path;
    }
    return NULL;
}

static void on_async(uv_async_t *a)
{
    struct objectset_watches *ws = a->data;
    if (ws->stopping)
        return;
    for (;;) {
        char *path = NULL;
        pthread_mutex_lock(&ws->mu);
        if (ws->nstarted < ws->nknown)
            path = strdup(ws->known[ws->nstarted++].path);
        pthread_mutex_unlock(&ws->mu);
        if (!path)
            break;
        start_one(ws, path, NULL, NULL, NULL);
        free(path);
    }
    for (;;) {
        char *as = NULL, *credential = NULL, *set = NULL;
        pthread_mutex_lock(&ws->mu);
        char *path = take_offer(ws, &as, &credential, &set);
        pthread_mutex_unlock(&ws->mu);
        if (!path)
            break;
        if (!start_one(ws, path, as, credential, set)) {
            pthread_mutex_lock(&ws->mu);
            watched_path *wp = find_path(ws, path);
            if (wp)
                wp->borrowing = false; /* the next offer tries again */
            pthread_mutex_unlock(&ws->mu);
        }
        explicit_bzero(credential, strlen(credential));
        free(credential);
        free(as);
        free(set);
        free(path);
    }
}

objectset_watches *objectset_watches_new(uv_loop_t *loop, kube_uvcurl *uc, const kube_config *cfg,
                                         void (*enqueue)(const char *name, void *data), void *data, olm_error *err)
{
    objectset_watches *ws = calloc(1, sizeof *ws);
    if (!ws) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    *ws = (objectset_watches){.loop = loop, .uc = uc, .cfg = cfg, .enqueue = enqueue, .data = data,
                              .written = json_object(), .latest = json_object(), .verdicts = json_object()};
    pthread_mutex_init(&ws->mu, NULL);
    if (uv_async_init(loop, &ws->async, on_async) != 0) {
        pthread_mutex_destroy(&ws->mu);
        free(ws);
        olm_error_set(err, "uv_async_init failed");
        return NULL;
    }
    ws->async.data = ws;
    return ws;
}

bool objectset_watches_want(objectset_watches *ws, const char *path)
{
    return objectset_watches_want_as(ws, path, NULL, NULL, NULL);
}

bool objectset_watches_want_as(objectset_watches *ws, const char *path, const char *set, const char *as,
                               const char *credential)
{
    if (!ws || !path)
        return false;
    bool wake = false, watched = false;
    pthread_mutex_lock(&ws->mu);
    watched_path *wp = find_path(ws, path);
    if (wp) {
        watched = !wp->refused || wp->borrowed_synced;
    } else {
        watched_path *n = realloc(ws->known, (ws->nknown + 1) * sizeof *n);
        char *p = n ? strdup(path) : NULL;
        if (n)
            ws->known = n;
        if (p) {
            wp = &ws->known[ws->nknown++];
            *wp = (watched_path){.path = p, .denied = json_object(), .askers = json_object()};
            wake = true;
        }
    }
    if (wp && set && wp->askers && !json_object_get(wp->askers, set))
        json_object_set_new(wp->askers, set, json_true());
    /* This ServiceAccount's credential may do where operator-controller may not (its own watch
     * refused, or not answered yet: the offer waits), unless refused too or already rejected.
     * The newest offer replaces an older one (a fresher token). */
    if (wp && !wp->borrowed_synced && !wp->borrowing && as && credential && !is_denied(wp, as) &&
        !was_rejected(wp, credential)) {
        drop_offer(wp);
        wp->offer_as = strdup(as);
        wp->offer_credential = strdup(credential);
        wp->offer_set = set ? strdup(set) : NULL;
        if (!wp->offer_as || !wp->offer_credential || (set && !wp->offer_set))
            drop_offer(wp);
        else
            wake = wake || wp->refused;
    }
    pthread_mutex_unlock(&ws->mu);
    if (wake)
        uv_async_send(&ws->async);
    return watched;
}

size_t objectset_watches_active(const objectset_watches *ws)
{
    size_t n = 0;
    for (const one_watch *ow = ws ? ws->watches : NULL; ow; ow = ow->next)
        n += ow->w != NULL;
    return n;
}

static void async_closed(uv_handle_t *h)
{
    watch_closed(h->data);
}

void objectset_watches_stop(objectset_watches *ws, void (*closed)(void *data), void *data)
{
    ws->stopping = true;
    ws->closed = closed;
    ws->closed_data = data;
    ws->pending++; /* the async handle */
    for (one_watch *ow = ws->watches; ow; ow = ow->next)
        stop_one(ow);
    uv_close((uv_handle_t *)&ws->async, async_closed);
}

void objectset_watches_free(objectset_watches *ws)
{
    if (!ws)
        return;
    while (ws->watches) { /* all stopped and closed by now: these never started a watch */
        one_watch *ow = ws->watches;
        ws->watches = ow->next;
        one_watch_free(ow);
    }
    for (size_t i = 0; i < ws->nknown; i++) {
        watched_path *wp = &ws->known[i];
        drop_offer(wp);
        json_decref(wp->denied);
        json_decref(wp->askers);
        free(wp->path);
    }
    free(ws->known);
    json_decref(ws->written);
    json_decref(ws->latest);
    json_decref(ws->verdicts);
    pthread_mutex_destroy(&ws->mu);
    free(ws);
}
