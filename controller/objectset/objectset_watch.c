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
 * the loop through a mutex and a uv_async_t; everything else is loop thread.
 *
 * This file starts and stops the watches; what they reported is objectset_watch_reports.c's,
 * the credentials offered for a refused type objectset_watch_offers.c's. */
#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "kube_watch.h"
#include "objectset_watch_internal.h"
#include "olm_log.h"

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

static void on_event(kube_watch_event_type type, json_t *obj, void *data)
{
    one_watch *ow = data;
    objectset_watch_event(ow->owner, ow->path, type, obj);
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

void objectset_watches_forget_set(objectset_watches *ws, const char *cos_uid, const char *name)
{
    if (!ws || !cos_uid)
        return;
    json_t *retired = json_array(); /* namespaces' paths no set asks for any more */
    pthread_mutex_lock(&ws->mu);
    for (size_t i = 0; name && i < ws->nknown; i++) {
        watched_path *wp = &ws->known[i];
        if (json_object_del(wp->askers, name) != 0 || !wp->borrow_only || json_object_size(wp->askers) > 0)
            continue;
        /* The last set with objects in that namespace is gone (its extension uninstalled):
         * the watch would hold its ServiceAccount's credential for nobody.  Another set that
         * asks later offers again. */
        watch_offers_drop(&wp->offers);
        if (wp->borrowing) {
            wp->borrowing = wp->borrowed_synced = false;
            objectset_watch_untrack_path(ws, wp->path);
            json_array_append_new(retired, json_string(wp->path));
        }
    }
    objectset_watch_forget_verdicts(ws, cos_uid);
    pthread_mutex_unlock(&ws->mu);
    size_t i;
    json_t *path;
    json_array_foreach(retired, i, path) {
        for (one_watch *ow = ws->watches; ow; ow = ow->next)
            if (ow->as && ow->w && strcmp(ow->path, json_string_value(path)) == 0)
                stop_one(ow); /* unlinked and freed once closed */
    }
    json_decref(retired);
}

/* Under mu.  Indexed: with the namespaced fallback there is a path per namespace. */
static watched_path *find_path(struct objectset_watches *ws, const char *path)
{
    json_int_t i = json_integer_value(json_object_get(ws->index, path));
    return i > 0 && (size_t)i <= ws->nknown ? &ws->known[i - 1] : NULL;
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
    bool in_namespace = wp && wp->borrow_only, again = false, first_of_type = false;
    if (wp) {
        wp->borrowing = wp->borrowed_synced = false;
        again = watch_offers_refused(&wp->offers, ow->as, status, ow->credential_hash);
        first_of_type = status == 403 && !wp->told_refusal;
        wp->told_refusal = wp->told_refusal || status == 403;
    }
    pthread_mutex_unlock(&ws->mu);
    /* A namespace refused leaves its objects polled: warned about, once per ServiceAccount (it
     * is asked again each DENIAL_SECONDS, as RBAC may have been mended).  A ServiceAccount
     * refused cluster-wide is what namespace-bound installers are, and their namespaces are
     * watched instead: said for the first one of the type, the others at debug level (1,000
     * such installers would say it 1,000 times). */
    if (status == 403 && in_namespace)
        olm_log(again ? OLM_LOG_DEBUG : OLM_LOG_WARN, "clusterObjectSet", NULL,
                "ServiceAccount %s may not list+watch %s either (%s); its revisions re-probe their objects there by "
                "polling",
                ow->as, ow->path, msg);
    else if (status == 403)
        olm_log(first_of_type ? OLM_LOG_INFO : OLM_LOG_DEBUG, "clusterObjectSet", NULL,
                "ServiceAccount %s may not list+watch %s either (%s); its revisions watch their objects of that type "
                "in their namespaces where it may, and other ServiceAccounts with revisions of that type are asked "
                "(the next refusals are logged at debug level)",
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
    objectset_watch_untrack_path(ws, ow->path);
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
    if (wp && wp->borrowing) {
        wp->borrowed_synced = true;
        watch_offers_allowed(&wp->offers, ow->as); /* a refusal later is news again */
    }
    pthread_mutex_unlock(&ow->owner->mu);
    /* From here on a change of such an object queues its set: said once, as it is what ends the polling. */
    if (first)
        olm_log(OLM_LOG_INFO, "clusterObjectSet", NULL,
                "watching %s?labelSelector=%s as ServiceAccount %s (listed); revisions with objects of that type no "
                "longer poll them",
                ow->path, OBJECTSET_WATCH_SELECTOR, ow->as);
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
    ow->credential_hash = as ? watch_offers_hash(credential) : 0;
    ow->next = ws->watches; /* listed before it can close (one_closed unlinks it) */
    ws->watches = ow;
    kube_watch_options wo = {.path = path, .label_selector = OBJECTSET_WATCH_SELECTOR, .drop_managed_fields = true, .transform = reduce};
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
        olm_log(OLM_LOG_INFO, "clusterObjectSet", NULL, "watching %s?labelSelector=%s", path, OBJECTSET_WATCH_SELECTOR);
    return true;
}

/* Under mu: the next offer to try, taken out of its path (the caller frees the strings). */
static char *take_offer(struct objectset_watches *ws, char **as, char **credential, char **set)
{
    for (size_t i = 0; i < ws->nknown; i++) {
        watched_path *wp = &ws->known[i];
        if (!wp->refused || wp->borrowing || !wp->offers.credential)
            continue;
        if (!watch_offers_take(&wp->offers, as, credential, set))
            continue; /* refused or rejected since it was offered: dropped */
        char *path = strdup(wp->path);
        if (path) {
            wp->borrowing = true;
            return path;
        }
        explicit_bzero(*credential, strlen(*credential)); /* out of memory: the offer is dropped */
        free(*credential);
        free(*as);
        free(*set);
        *as = *credential = *set = NULL;
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
        while (ws->nstarted < ws->nknown && ws->known[ws->nstarted].borrow_only)
            ws->nstarted++;
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
                              .written = json_object(), .latest = json_object(), .verdicts = json_object(),
                              .index = json_object()};
    pthread_mutex_init(&ws->mu, NULL);
    if (!ws->written || !ws->latest || !ws->verdicts || !ws->index ||
        uv_async_init(loop, &ws->async, on_async) != 0) {
        pthread_mutex_destroy(&ws->mu);
        json_decref(ws->written);
        json_decref(ws->latest);
        json_decref(ws->verdicts);
        json_decref(ws->index);
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

/* objectset_watches_want_as, and objectset_watches_want_in with borrow_only. */
static bool want(objectset_watches *ws, const char *path, const char *set, const char *as, const char *credential,
                 bool borrow_only)
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
        if (p && json_object_set_new(ws->index, path, json_integer((json_int_t)ws->nknown + 1)) == 0) {
            wp = &ws->known[ws->nknown++];
            /* A namespace's collection starts as refused to operator-controller: only a
             * ServiceAccount's credential is tried there. */
            *wp = (watched_path){.path = p, .askers = json_object(), .refused = borrow_only, .borrow_only = borrow_only};
            watch_offers_init(&wp->offers); /* without memory for refusals, none are remembered */
            wake = true;
        } else {
            free(p);
        }
    }
    if (wp && set && wp->askers && !json_object_get(wp->askers, set))
        json_object_set_new(wp->askers, set, json_true());
    /* This ServiceAccount's credential may do where operator-controller may not (its own watch
     * refused, or not answered yet: the offer waits), unless refused too or already rejected.
     * The newest offer replaces an older one (a fresher token). */
    if (wp && !wp->borrowed_synced && !wp->borrowing && watch_offers_put(&wp->offers, as, credential, set))
        wake = wake || wp->refused;
    pthread_mutex_unlock(&ws->mu);
    if (wake)
        uv_async_send(&ws->async);
    return watched;
}

bool objectset_watches_want_as(objectset_watches *ws, const char *path, const char *set, const char *as,
                               const char *credential)
{
    return want(ws, path, set, as, credential, false);
}

bool objectset_watches_want_in(objectset_watches *ws, const char *ns_path, const char *set, const char *as,
                               const char *credential)
{
    return as && credential && want(ws, ns_path, set, as, credential, true);
}

bool objectset_watches_want_object(objectset_watches *ws, const char *path, const char *ns_path, const char *set,
                                   const char *as, const char *credential)
{
    if (objectset_watches_want_as(ws, path, set, as, credential))
        return true;
    if (!ns_path || !as || !credential)
        return false;
    /* Refused cluster-wide to this ServiceAccount too: it may watch its own namespaces
     * (RoleBindings).  One that listed covers the object while the ServiceAccount is asked
     * again cluster-wide (its refusal expired: RBAC may have been mended). */
    return objectset_watches_refused_for(ws, path, as) ? objectset_watches_want_in(ws, ns_path, set, as, credential)
                                                       : objectset_watches_listed(ws, ns_path);
}

bool objectset_watches_listed(objectset_watches *ws, const char *path)
{
    if (!ws || !path)
        return false;
    pthread_mutex_lock(&ws->mu);
    const watched_path *wp = find_path(ws, path);
    bool listed = wp && (wp->refused ? wp->borrowed_synced : true);
    pthread_mutex_unlock(&ws->mu);
    return listed;
}

bool objectset_watches_refused_for(objectset_watches *ws, const char *path, const char *as)
{
    if (!ws || !path || !as)
        return false;
    pthread_mutex_lock(&ws->mu);
    const watched_path *wp = find_path(ws, path);
    bool refused = wp && wp->refused && !wp->borrowed_synced && watch_offers_denied(&wp->offers, as);
    pthread_mutex_unlock(&ws->mu);
    return refused;
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
        watch_offers_free(&wp->offers);
        json_decref(wp->askers);
        free(wp->path);
    }
    free(ws->known);
    json_decref(ws->index);
    json_decref(ws->written);
    json_decref(ws->latest);
    json_decref(ws->verdicts);
    pthread_mutex_destroy(&ws->mu);
    free(ws);
}
