/* drift_watcher: the watcher on the loop thread (see drift.h): the extensions (token,
 * watches, refresh timer), applying the specs posted to the mailbox, the backend's event
 * entry points (to a shared watch or the extension's own), and start-up and shutdown.
 * (structures in drift_internal.h; one watch in drift_watch.c; shared watches in
 * drift_shared.c) */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift_internal.h"
#include "olm_log.h"

/* ------------------------------------------------------------ extensions */

static void timer_closed(uv_handle_t *h)
{
    drift_watcher *d = h->data;
    free(h);
    drift_close_done(d);
}

static void on_refresh(uv_timer_t *t)
{
    drift_ext *e = t->data;
    /* The reconcile gets a fresh token from the cache and posts it: the watches are
     * re-created before the old token expires. */
    e->d->cb.enqueue_after(e->name, 0, e->d->cb.data);
}

/* Every watch of `e` goes (its token changed, or `e` is gone); the shared watches it ran
 * get another runner in drift_shared_settle. */
static void release_all_watches(drift_ext *e)
{
    drift_shared_runner_changed(e);
    while (e->watches) {
        drift_watch *w = e->watches;
        e->watches = w->next;
        w->next = NULL;
        drift_shared_detach(w);
        drift_watch_release(w);
    }
}

static void ext_free(drift_watcher *d, drift_ext *e)
{
    release_all_watches(e);
    if (e->refresh) {
        uv_timer_stop(e->refresh);
        e->refresh->data = d;
        d->pending_closes++;
        uv_close((uv_handle_t *)e->refresh, timer_closed);
    }
    drift_cfg_unref(e->cfg);
    free(e->name);
    free(e->ns);
    free(e->sa);
    json_decref(e->forbidden);
    free(e);
}

static void ext_remove(drift_watcher *d, const char *name)
{
    drift_ext **pp = &d->exts;
    while (*pp && strcmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    if (!*pp)
        return;
    drift_ext *e = *pp;
    *pp = e->next;
    d->nexts--;
    json_object_del(d->by_name, e->name);
    ext_free(d, e);
}

static drift_ext *ext_new(drift_watcher *d, const char *name)
{
    drift_ext *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->d = d;
    e->name = strdup(name);
    e->forbidden = json_object();
    e->refresh = malloc(sizeof *e->refresh);
    if (!e->name || !e->forbidden || !e->refresh) {
        free(e->name);
        json_decref(e->forbidden);
        free(e->refresh);
        free(e);
        return NULL;
    }
    if (json_object_set_new(d->by_name, name, json_integer((json_int_t)(intptr_t)e)) != 0) {
        free(e->name);
        json_decref(e->forbidden);
        free(e->refresh);
        free(e);
        return NULL;
    }
    uv_timer_init(d->loop, e->refresh);
    e->refresh->data = e;
    e->next = d->exts;
    d->exts = e;
    d->nexts++;
    return e;
}

static drift_path *spec_find_path(drift_spec *s, const char *path)
{
    for (size_t i = 0; i < s->npaths; i++)
        if (s->paths[i].path && strcmp(s->paths[i].path, path) == 0)
            return &s->paths[i];
    return NULL;
}

static bool replace_str(char **dst, const char *src)
{
    char *c = strdup(src ? src : "");
    if (!c)
        return false;
    free(*dst);
    *dst = c;
    return true;
}

/* Loop thread.  Makes the extension's watches match `s` (consumed). */
static void apply_spec(drift_watcher *d, drift_spec *s)
{
    if (!s->token && !s->tokenless) {
        ext_remove(d, s->extension);
        return;
    }
    olm_error err;
    drift_ext *e = drift_ext_by_name(d, s->extension);
    if (!e && !(e = ext_new(d, s->extension))) {
        drift_logf(d, s->extension, "drift watch: out of memory");
        return;
    }
    if (!replace_str(&e->ns, s->ns) || !replace_str(&e->sa, s->sa)) {
        drift_logf(d, s->extension, "drift watch: out of memory");
        return;
    }
    if (s->tokenless) {
        /* Keeps the token it has (drift.h); one the apiserver rejected goes, and with it
         * the watches that used it. */
        if (e->cfg && e->rejected) {
            release_all_watches(e);
            drift_cfg_unref(e->cfg);
            e->cfg = NULL;
            e->rejected = false;
        }
    } else if (e->rejected && strcmp(e->cfg->credential, s->token) == 0) {
        /* Posted by a reconcile that took the token from the cache before the 401 dropped
         * it: the next reconcile mints a new one. */
        d->cb.enqueue_after(e->name, d->coalesce_ms, d->cb.data);
        return;
    }
    if (!s->tokenless && (!e->cfg || strcmp(e->cfg->credential, s->token) != 0)) {
        drift_cfg *c = drift_cfg_new(d, s->token, &err);
        if (!c) {
            drift_logf(d, s->extension, "drift watch: %s", err.msg);
            return;
        }
        /* Every watch used the old token: start them all again with the new one. */
        release_all_watches(e);
        drift_cfg_unref(e->cfg);
        e->cfg = c;
        e->rejected = false;
    }
    /* Kinds no longer installed stop; kinds still installed keep their watch. */
    for (drift_watch **pp = &e->watches; *pp;) {
        drift_watch *w = *pp;
        drift_path *p = spec_find_path(s, w->path);
        if (!p) {
            *pp = w->next;
            w->next = NULL;
            drift_shared_detach(w);
            drift_watch_release(w);
            continue;
        }
        drift_keys_free(w->keys, w->nkeys);
        free(w->probes);
        free(w->contents);
        w->keys = p->keys;
        w->probes = p->probes;
        w->contents = p->contents;
        w->nkeys = p->nkeys;
        p->keys = NULL;
        p->probes = NULL;
        p->contents = NULL;
        p->nkeys = 0;
        free(p->path);
        p->path = NULL; /* handled */
        /* What the reconcile saw may already be old: its status written, the watch has seen more. */
        drift_watch_recheck(w);
        pp = &w->next;
    }
    for (size_t i = 0; i < s->npaths; i++) {
        if (!s->paths[i].path)
            continue;
        drift_watch *w = drift_watch_new(d, e, &s->paths[i]);
        if (!w) {
            drift_logf(d, e->name, "drift watch: out of memory");
            continue;
        }
        w->next = e->watches;
        e->watches = w;
        if (!drift_shared_attach(w))
            drift_watch_start_own(w);
    }
    if (s->tokenless)
        return; /* the refresh of the token it keeps stays as it was */
    uv_timer_stop(e->refresh);
    if (s->refresh_at > 0) {
        time_t now = time(NULL);
        uint64_t ms = s->refresh_at > now ? (uint64_t)(s->refresh_at - now) * 1000u : 0;
        uv_timer_start(e->refresh, on_refresh, ms < d->min_refresh_ms ? d->min_refresh_ms : ms, 0);
    }
}

/* ------------------------------------------------------------ the mailbox */

void drift_watcher_flush(drift_watcher *d)
{
    drift_post *p = drift_posts_take(d);
    for (drift_post *q = p; q && !d->stopping; q = q->next)
        apply_spec(d, &q->spec);
    drift_shared_settle(d);
    drift_posts_free(p);
}

static void on_async(uv_async_t *a)
{
    drift_watcher_flush(a->data);
}

/* ------------------------------------------------------------ the backend's events */

/* A shared watch's backend watch reports to the shared watch; any other to itself. */
void drift_watch_event(drift_watch *w, kube_watch_event_type type, const json_t *obj)
{
    if (w->sh)
        drift_shared_event(w->sh, type, obj);
    else
        drift_watch_own_event(w, type, obj);
}

void drift_watch_synced(drift_watch *w)
{
    if (w->sh)
        drift_shared_synced(w->sh);
    else
        drift_watch_own_synced(w);
}

void drift_watch_error(drift_watch *w, long http_status, const char *msg)
{
    if (w->sh)
        drift_shared_error(w->sh, http_status, msg);
    else
        drift_watch_own_error(w, http_status, msg);
}

/* ------------------------------------------------------------ lifecycle */

drift_watcher *drift_watcher_new(uv_loop_t *loop, const kube_config *base, const drift_backend *backend,
                                       const drift_callbacks *cb, const drift_watcher_options *opts,
                                       olm_error *err)
{
    if (!backend || !backend->start || !backend->stop || !cb || !cb->enqueue_after) {
        olm_error_set(err, "drift watch: a backend and an enqueue callback are required");
        return NULL;
    }
    drift_watcher *d = calloc(1, sizeof *d);
    if (!d) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    d->loop = loop;
    /* base's server and the path of its CA file, not a copy of the file (base is borrowed for
     * the watcher's life, drift.h; drift_cfg_new reads it): libcurl puts a watch on a
     * connection already open only when the TLS settings match, the CA file's path
     * included.  With a copy of the CA written
     * elsewhere, the first posts opened one connection per kind (100 extensions: 4 more to the
     * apiserver, besides the informers' one), which then stayed open after the last extension
     * was gone (~90 KiB of TLS and HTTP/2 state each). */
    d->base = base;
    d->be = *backend;
    d->cb = *cb;
    d->coalesce_ms = opts && opts->coalesce_ms ? opts->coalesce_ms : 1000;
    d->min_refresh_ms = opts && opts->min_refresh_ms ? opts->min_refresh_ms : 1000;
    d->refusal_quiet_ms = opts && opts->refusal_quiet_ms ? opts->refusal_quiet_ms : 10 * 60 * 1000;
    d->per_extension_only = opts && opts->per_extension_only;
    d->ignore_probes = opts && opts->ignore_probes;
    d->by_name = json_object();
    d->own_seen = json_object();
    d->own_probed = json_object();
    const char *failed = !d->by_name || !d->own_seen || !d->own_probed ? "out of memory" : NULL;
    bool have_lock = !failed && pthread_mutex_init(&d->lock, NULL) == 0;
    bool have_cache_lock = have_lock && pthread_mutex_init(&d->cache_lock, NULL) == 0;
    if (!failed && !have_cache_lock)
        failed = "pthread_mutex_init failed";
    int rc = failed ? 0 : uv_async_init(loop, &d->async, on_async);
    if (failed || rc != 0) {
        if (failed)
            olm_error_set(err, "%s", failed);
        else
            olm_error_set(err, "uv_async_init: %s", uv_strerror(rc));
        if (have_cache_lock)
            pthread_mutex_destroy(&d->cache_lock);
        if (have_lock)
            pthread_mutex_destroy(&d->lock);
        json_decref(d->by_name);
        json_decref(d->own_seen);
        json_decref(d->own_probed);
        free(d);
        return NULL;
    }
    d->async.data = d;
    return d;
}

int drift_watcher_lookup(drift_watcher *d, const char *resource, const char *key, uint64_t *content,
                         uint64_t *probe, char **line)
{
    if (line)
        *line = NULL;
    if (!d || !resource || !key)
        return 0;
    pthread_mutex_lock(&d->cache_lock);
    int found = drift_shared_lookup(d, resource, key, content, probe, line);
    if (!found)
        found = drift_published_lookup(d, resource, key, content, probe, line);
    pthread_mutex_unlock(&d->cache_lock);
    return found;
}

size_t drift_watcher_active(const drift_watcher *d)
{
    return d->active;
}

size_t drift_watcher_extensions(const drift_watcher *d)
{
    return d->nexts;
}

size_t drift_watcher_shared(const drift_watcher *d)
{
    return d->nshared;
}

static void async_closed(uv_handle_t *h)
{
    drift_watcher *d = h->data;
    drift_close_done(d);
}

void drift_watcher_stop(drift_watcher *d, void (*closed)(void *data), void *data)
{
    if (d->stopping)
        return;
    d->stopping = true;
    d->closed = closed;
    d->closed_data = data;
    d->pending_closes++; /* the async handle; also keeps drift_close_done from freeing the watcher before the end */
    while (d->exts) {
        drift_ext *e = d->exts;
        d->exts = e->next;
        d->nexts--;
        json_object_del(d->by_name, e->name);
        ext_free(d, e); /* the last subscriber of a shared watch frees it */
    }
    uv_close((uv_handle_t *)&d->async, async_closed);
}
