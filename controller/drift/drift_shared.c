/* drift_shared: one cluster-wide watch per resource type for all extensions (drift.h
 * says why this widens no identity's privileges).
 *
 *   drift_shared   one resource type: its subscribers (the extensions' watches of that
 *                  type, counted), the backend watch (a drift_watch with `sh` set) run
 *                  with a runner's token, the objects seen (key -> content hash), and
 *                  the identities ("ns/sa") that got a 403 for it
 *
 * An extension's watch of the type is "covered" while the shared watch runs: it opens
 * nothing itself, and the shared watch's events for objects whose owner-name label names
 * its extension (and that are in its namespace, for a namespaced path) are judged
 * exactly as its own watch would (drift_watch.c): after the sync, DELETED or a MODIFIED
 * that changed content enqueues; at each (re)sync, an expected object missing enqueues.
 * An extension that joins a watch already synced cannot go by "missing": the objects its
 * apply has just created may still be on their way as ADDED events.  It goes by the
 * deletions seen instead (kept GONE_KEEP_MS): one of its objects deleted between its apply
 * and its joining enqueues it.
 *
 * The runner: the first subscriber whose identity is not known to be refused starts it.
 * A 403 (or 401) for the runner's identity, the runner's extension going away or getting
 * a new token leave it without a runner; drift_shared_settle (after each batch of posts,
 * or at once after an error) picks another subscriber's identity, or -- when every
 * subscriber's identity was refused -- stops it and lets each extension open its own
 * watch (so one identity's 403 never leaves another extension unwatched).  A watch that
 * starts syncing covers the subscribers that were running their own watches.  A shared
 * watch without subscribers is freed.
 *
 * Where installers are namespace-bound, every new identity would be refused, so after a few
 * refusals in a row no new one is asked for refusal_quiet_ms (olm_refusal_streak.h); then
 * the next one is, and a refusal starts another quiet period.  A cluster where some
 * installers may watch cluster-wide gets its shared watch back at the first of them asked
 * after a quiet period; until then their extensions watch on their own, which repairs the
 * same drift. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift_internal.h"
#include "install_record.h"
#include "olm_log.h"
#include "probe.h"

/* How long a deletion is remembered for extensions joining later; a reconcile posts
 * its watches right after its apply, so this is ample. */
#define GONE_KEEP_MS 120000

struct drift_shared {
    drift_watcher *d;
    char *resource;      /* cluster-wide collection path: the key */
    size_t nsubs;        /* extensions' watches of the type (covered or not) */
    drift_watch *bw;     /* the backend watch; NULL: not running */
    drift_ext *runner;   /* whose token bw runs with; NULL: needs one (settle) */
    char *identity;      /* "ns/sa" of the token bw runs with */
    bool synced;         /* bw's current start has listed */
    json_t *seen;        /* key -> content hash */
    json_t *probed;      /* key -> probe digest of each object seen that fails its probes */
    json_t *gone;        /* key -> uv_now (ms) of its DELETED event, for GONE_KEEP_MS */
    json_t *denied;      /* identity -> true: 403 (may not list/watch the type cluster-wide) */
    olm_refusal_streak refusals; /* identities refused since the last sync (uv_now ms; see top) */
    drift_shared *next;
};

static char *identity_of(const drift_ext *e)
{
    char *id = NULL;
    if (asprintf(&id, "%s/%s", e->ns ? e->ns : "", e->sa ? e->sa : "") < 0)
        return NULL;
    return id;
}

static drift_shared *find(drift_watcher *d, const char *resource)
{
    for (drift_shared *sh = d->shares; sh; sh = sh->next)
        if (strcmp(sh->resource, resource) == 0)
            return sh;
    return NULL;
}

/* Each extension watch of sh's type, in turn. */
#define FOREACH_SUB(d, sh, e, w)                                                                                       \
    for (drift_ext *e = (d)->exts; e; e = e->next)                                                                     \
        for (drift_watch *w = e->watches, *w##_next; w && ((w##_next = w->next), 1); w = w##_next)                     \
            if (w->sub == (sh))

#define CACHE_LOCK(d) pthread_mutex_lock(&(d)->cache_lock)
#define CACHE_UNLOCK(d) pthread_mutex_unlock(&(d)->cache_lock)

static void halt(drift_shared *sh)
{
    if (!sh->bw)
        return;
    drift_watch *bw = sh->bw;
    CACHE_LOCK(sh->d);
    sh->bw = NULL;
    sh->synced = false;
    CACHE_UNLOCK(sh->d);
    bw->sh = NULL; /* nothing more is delivered */
    drift_watch_release(bw);
    sh->d->nshared--;
}

/* Every covered subscriber opens its own watch (the shared one stops). */
static void uncover_all(drift_shared *sh)
{
    FOREACH_SUB(sh->d, sh, e, w)
    if (w->covered)
        drift_watch_start_own(w);
}

/* (Re)starts the backend watch with `e`'s token.  False when it could not start. */
static bool start(drift_shared *sh, drift_ext *e)
{
    drift_watcher *d = sh->d;
    if (!e->cfg)
        return false; /* tokenless (drift_spec.tokenless): nothing to run it with */
    halt(sh);
    char *id = identity_of(e);
    drift_watch *bw = calloc(1, sizeof *bw);
    if (!id || !bw || !(bw->path = strdup(sh->resource))) {
        free(id);
        free(bw);
        drift_logf(d, e->name, "shared drift watch of %s: out of memory", sh->resource);
        return false;
    }
    free(sh->identity);
    sh->identity = id;
    sh->runner = e;
    CACHE_LOCK(d);
    json_object_clear(sh->seen);
    json_object_clear(sh->probed);
    CACHE_UNLOCK(d);
    json_object_clear(sh->gone);
    bw->d = d;
    bw->sh = sh;
    bw->cfg = e->cfg;
    e->cfg->refs++;
    /* The covered subscribers check their expected objects again at this start's sync. */
    FOREACH_SUB(d, sh, e2, w)
    if (w->covered)
        w->synced = false;
    olm_error err;
    bw->handle = d->be.start(d->be.data, &bw->cfg->cfg, sh->resource, OWNER_KIND_LABEL "=ClusterExtension", bw, &err);
    if (!bw->handle) {
        drift_logf(d, e->name, "shared drift watch of %s: %s", sh->resource, err.msg);
        bw->sh = NULL;
        drift_watch_release(bw);
        sh->runner = NULL;
        return false;
    }
    CACHE_LOCK(d);
    sh->bw = bw;
    CACHE_UNLOCK(d);
    d->active++;
    d->nshared++;
    return true;
}

static void shared_free(drift_shared *sh)
{
    drift_watcher *d = sh->d;
    halt(sh);
    CACHE_LOCK(d);
    for (drift_shared **pp = &d->shares; *pp; pp = &(*pp)->next)
        if (*pp == sh) {
            *pp = sh->next;
            break;
        }
    CACHE_UNLOCK(d);
    free(sh->resource);
    free(sh->identity);
    json_decref(sh->seen);
    json_decref(sh->probed);
    json_decref(sh->gone);
    json_decref(sh->denied);
    free(sh);
}

static drift_shared *shared_new(drift_watcher *d, const char *resource)
{
    drift_shared *sh = calloc(1, sizeof *sh);
    if (!sh || !(sh->resource = strdup(resource)) || !(sh->seen = json_object()) || !(sh->gone = json_object()) ||
        !(sh->denied = json_object()) || !(sh->probed = json_object())) {
        if (sh) {
            free(sh->resource);
            json_decref(sh->seen);
            json_decref(sh->gone);
            json_decref(sh->denied);
        }
        free(sh);
        return NULL;
    }
    sh->d = d;
    CACHE_LOCK(d);
    sh->next = d->shares;
    d->shares = sh;
    CACHE_UNLOCK(d);
    return sh;
}

/* No new identity is asked now (see top). */
static bool quiet(const drift_shared *sh)
{
    return olm_refusal_streak_quiet(&sh->refusals, uv_now(sh->d->loop));
}

static bool refused(const drift_shared *sh, const drift_ext *e)
{
    char *id = identity_of(e);
    bool r = !id || json_object_get(sh->denied, id) != NULL;
    free(id);
    return r;
}

/* After the shared watch's sync: `w` (covered) checks its expected objects, and what their
 * probes say. */
static void check_expected(drift_shared *sh, drift_watch *w)
{
    w->synced = true;
    bool ask = drift_watch_probes_differ(w, sh->seen, sh->probed) | drift_watch_contents_differ(w, sh->seen);
    for (size_t i = 0; i < w->nkeys && !ask; i++)
        ask = !json_object_get(sh->seen, w->keys[i]);
    if (ask)
        drift_request_reconcile(w, "at shared sync: probes, contents or an object missing");
}

bool drift_shared_probes_differ(drift_watch *w)
{
    drift_shared *sh = w->sub;
    return sh && sh->synced && w->synced &&
           (drift_watch_probes_differ(w, sh->seen, sh->probed) | drift_watch_contents_differ(w, sh->seen));
}

int drift_shared_lookup(drift_watcher *d, const char *resource, const char *key, uint64_t *content, uint64_t *probe,
                        char **line)
{
    drift_shared *sh = find(d, resource);
    const json_t *h = sh && sh->bw && sh->synced ? json_object_get(sh->seen, key) : NULL;
    if (!h)
        return 0;
    *content = (uint64_t)json_integer_value(h);
    *probe = drift_probed_get(sh->probed, key);
    if (line)
        *line = drift_probed_line(sh->probed, key);
    return 1;
}

bool drift_shared_attach(drift_watch *w)
{
    drift_watcher *d = w->d;
    if (d->per_extension_only || !w->resource || d->stopping)
        return false;
    drift_shared *sh = find(d, w->resource);
    if (!sh && !(sh = shared_new(d, w->resource)))
        return false;
    w->sub = sh;
    sh->nsubs++;
    if (!sh->bw && (refused(sh, w->ext) || quiet(sh) || !start(sh, w->ext)))
        return false;
    w->covered = true;
    w->synced = false;
    if (sh->synced) {
        /* Joining a running watch: deletions it saw count, absences do not (see top); nor
         * do the probes or contents of objects it has not seen yet. */
        w->synced = true;
        bool ask = drift_watch_probes_differ(w, sh->seen, sh->probed) | drift_watch_contents_differ(w, sh->seen);
        for (size_t i = 0; i < w->nkeys && !ask; i++)
            ask = json_object_get(sh->gone, w->keys[i]) != NULL;
        if (ask)
            drift_request_reconcile(w, "joining: probes, contents or a deletion");
    }
    return true;
}

void drift_shared_detach(drift_watch *w)
{
    drift_shared *sh = w->sub;
    if (!sh)
        return;
    w->sub = NULL;
    w->covered = false;
    if (--sh->nsubs == 0)
        shared_free(sh);
}

void drift_shared_runner_changed(drift_ext *e)
{
    for (drift_shared *sh = e->d->shares; sh; sh = sh->next)
        if (sh->runner == e)
            sh->runner = NULL; /* bw keeps its (refcounted) token until settle replaces it */
}

/* A runner for `sh`, or stop it and uncover everyone.  `except`: an identity not to use now. */
static void settle_one(drift_shared *sh, const char *except)
{
    drift_watcher *d = sh->d;
    if (d->stopping || sh->runner)
        return;
    for (drift_ext *e = quiet(sh) ? NULL : d->exts; e; e = e->next) {
        if (!e->cfg || e->rejected)
            continue;
        bool subscribed = false;
        for (drift_watch *w = e->watches; w && !subscribed; w = w->next)
            subscribed = w->sub == sh;
        if (!subscribed || refused(sh, e))
            continue;
        char *id = identity_of(e);
        bool skip = !id || (except && strcmp(id, except) == 0);
        free(id);
        if (!skip && start(sh, e))
            return;
    }
    halt(sh);
    uncover_all(sh);
}

void drift_shared_settle(drift_watcher *d)
{
    for (drift_shared *sh = d->shares; sh; sh = sh->next)
        if (!sh->runner && sh->nsubs > 0)
            settle_one(sh, NULL);
}

/* The subscriber `obj` is for: its owner's watch of this type, when covered and (for a
 * namespaced path) in that namespace. */
static drift_watch *target(drift_shared *sh, const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *owner = json_string_value(json_object_get(json_object_get(md, "labels"), OWNER_NAME_LABEL));
    drift_ext *e = owner ? drift_ext_by_name(sh->d, owner) : NULL;
    if (!e)
        return NULL;
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    for (drift_watch *w = e->watches; w; w = w->next)
        if (w->sub == sh && w->covered && (!w->ns || (ns && strcmp(ns, w->ns) == 0)))
            return w;
    return NULL;
}

void drift_shared_event(drift_shared *sh, kube_watch_event_type type, const json_t *obj)
{
    char *key = kube_object_key(obj);
    if (!key)
        return;
    uint64_t now = uv_now(sh->d->loop);
    if (type == KUBE_WATCH_DELETED) {
        CACHE_LOCK(sh->d);
        json_object_del(sh->seen, key);
        json_object_del(sh->probed, key);
        CACHE_UNLOCK(sh->d);
        if (json_object_size(sh->gone) >= 256) { /* forget old deletions now and then */
            const char *k;
            json_t *v, *tmp;
            json_object_foreach_safe(sh->gone, tmp, k, v) if (now - (uint64_t)json_integer_value(v) > GONE_KEEP_MS)
                json_object_del(sh->gone, k);
        }
        json_object_set_new(sh->gone, key, json_integer((json_int_t)now));
        free(key);
        drift_watch *w = sh->synced ? target(sh, obj) : NULL;
        if (w && w->synced)
            drift_request_reconcile(w, "object deleted");
        return;
    }
    json_object_del(sh->gone, key);
    json_int_t h = (json_int_t)drift_content_hash(obj);
    char *line = NULL;
    uint64_t digest = sh->d->ignore_probes ? 0 : drift_probe(obj, &line);
    CACHE_LOCK(sh->d);
    json_t *old = json_object_get(sh->seen, key);
    bool changed = !old || json_integer_value(old) != h;
    json_object_set_new(sh->seen, key, json_integer(h));
    uint64_t prev = drift_probed_set(sh->probed, key, digest, line);
    CACHE_UNLOCK(sh->d);
    free(line);
    drift_watch *w = sh->synced ? target(sh, obj) : NULL;
    /* ADDED after the sync is an object coming (back) with our labels: our own apply; its
     * probes count all the same (drift_watch.c). */
    if (w && w->synced &&
        ((type == KUBE_WATCH_MODIFIED && changed) || drift_watch_probe_changed(w, key, prev, digest)))
        drift_request_reconcile(w, "object changed or its probes");
    free(key);
}

void drift_shared_synced(drift_shared *sh)
{
    drift_watcher *d = sh->d;
    if (sh->synced)
        return; /* a relist: its differences came as events */
    CACHE_LOCK(d);
    sh->synced = true;
    CACHE_UNLOCK(d);
    olm_refusal_streak_reset(&sh->refusals);
    FOREACH_SUB(d, sh, e, w)
    {
        if (!w->covered) {
            /* It ran (or tried) its own watch: a fresh struct, covered from now on. */
            drift_watch *n = drift_watch_replace(w);
            if (!n)
                continue;
            w = n;
            w->covered = true;
        }
        if (!w->synced)
            check_expected(sh, w);
    }
}

void drift_shared_error(drift_shared *sh, long http_status, const char *msg)
{
    drift_watcher *d = sh->d;
    if (http_status != 401 && http_status != 403) {
        /* Retried by the watch itself (with back-off). */
        olm_log(OLM_LOG_DEBUG, "clusterExtension", sh->runner ? sh->runner->name : "", "shared drift watch of %s: %s",
                sh->resource, msg);
        return;
    }
    char *id = sh->identity ? strdup(sh->identity) : NULL;
    if (http_status == 403 && id) {
        json_object_set_new(sh->denied, id, json_true());
        olm_refusal_streak_refused(&sh->refusals, uv_now(d->loop), d->refusal_quiet_ms);
    }
    /* Expected where installers are namespace-scoped: not worth a warning, their own
     * watches take over (and log their own 403s). */
    olm_log(OLM_LOG_DEBUG, "clusterExtension", sh->runner ? sh->runner->name : "",
            "shared drift watch of %s with ServiceAccount %s: HTTP %ld", sh->resource, id ? id : "?", http_status);
    if (http_status == 401 && sh->runner && !sh->runner->rejected)
        d->cb.enqueue_after(sh->runner->name, d->coalesce_ms, d->cb.data); /* for a fresh token */
    sh->runner = NULL;
    halt(sh);
    settle_one(sh, id);
    free(id);
}
