/* drift_watch: the watcher's bookkeeping on the loop thread (see
 * drift.h).
 *
 *   drift_watcher   the extensions, the mailbox posts arrive in (mutex + uv_async)
 *   drift_ext          one extension: its token config, watches and refresh timer
 *   drift_watch     one (extension, collection path) watch and what it has seen
 *   drift_cfg          a kube_config with the extension's token, shared by its watches
 *                      and freed (token zeroed) when the last one has closed
 * (structures in drift_internal.h; the shared watches in drift_shared.c) */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift_internal.h"
#include "olm_log.h"

/* One line about the extension `ext`: to cb.log, else olm_log (a warning: watches that fail
 * leave drift to the periodic repair). */
void drift_logf(drift_watcher *d, const char *ext, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (d->cb.log)
        d->cb.log(ext, line, d->cb.data);
    else
        olm_log(OLM_LOG_WARN, "clusterExtension", ext, "%s", line);
}

static void maybe_finish(drift_watcher *d);

/* ------------------------------------------------------------ token configs */

void drift_cfg_unref(drift_cfg *c)
{
    if (c && --c->refs == 0) {
        kube_config_free(&c->cfg); /* zeroes the token */
        free(c);
    }
}

static drift_cfg *cfg_new(drift_watcher *d, const char *token, olm_error *err)
{
    drift_cfg *c = calloc(1, sizeof *c);
    if (!c) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    c->cfg.server = strdup(d->shared.server);
    c->cfg.ca_file = d->shared.ca_file ? strdup(d->shared.ca_file) : NULL; /* the file stays d's */
    c->cfg.insecure_skip_tls_verify = d->shared.insecure_skip_tls_verify;
    c->cfg.token = strdup(token);
    if (!c->cfg.server || (d->shared.ca_file && !c->cfg.ca_file) || !c->cfg.token) {
        kube_config_free(&c->cfg);
        free(c);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    c->refs = 1;
    return c;
}

/* ------------------------------------------------------------ one watch (states: drift_internal.h) */

static void keys_free(char **keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
}

static void watch_free(drift_watch *w)
{
    drift_cfg_unref(w->cfg);
    free(w->path);
    free(w->resource);
    free(w->ns);
    keys_free(w->keys, w->nkeys);
    json_decref(w->seen);
    free(w->last_error);
    free(w);
}

static void watch_closed(void *data)
{
    drift_watch *w = data;
    drift_watcher *d = w->d;
    w->closing = false;
    drift_cfg_unref(w->cfg); /* the backend no longer uses it */
    w->cfg = NULL;
    if (w->released)
        watch_free(w);
    d->pending_closes--;
    maybe_finish(d);
}

void drift_watch_halt(drift_watch *w)
{
    if (!w->handle)
        return;
    drift_watcher *d = w->d;
    void *h = w->handle;
    w->handle = NULL;
    w->closing = true;
    d->active--;
    d->pending_closes++;
    d->be.stop(d->be.data, h, watch_closed, w); /* may call watch_closed at once */
}

/* `w` is already unlinked from its extension. */
void drift_watch_release(drift_watch *w)
{
    drift_shared_detach(w);
    w->sh = NULL;
    drift_watch_halt(w);
    w->ext = NULL;
    if (!w->closing)
        watch_free(w);
    else
        w->released = true; /* watch_closed frees it */
}

/* Takes over p->path and p->keys. */
static drift_watch *watch_new(drift_watcher *d, drift_ext *e, drift_path *p)
{
    drift_watch *w = calloc(1, sizeof *w);
    if (!w || !(w->seen = json_object())) {
        free(w);
        return NULL;
    }
    w->d = d;
    w->ext = e;
    w->path = p->path;
    w->resource = p->resource;
    w->ns = p->ns;
    w->keys = p->keys;
    w->nkeys = p->nkeys;
    p->path = NULL;
    p->resource = NULL;
    p->ns = NULL;
    p->keys = NULL;
    p->nkeys = 0;
    w->cfg = e->cfg;
    e->cfg->refs++;
    return w;
}

void drift_watch_start_own(drift_watch *w)
{
    drift_watcher *d = w->d;
    w->covered = false;
    w->synced = false;
    json_object_clear(w->seen);
    olm_error err;
    char *sel = drift_selector(w->ext->name);
    if (!sel) {
        drift_logf(d, w->ext->name, "drift watch of %s: out of memory", w->path);
        return;
    }
    w->handle = d->be.start(d->be.data, &w->cfg->cfg, w->path, sel, w, &err);
    free(sel);
    if (!w->handle) {
        drift_logf(d, w->ext->name, "drift watch of %s: %s", w->path, err.msg);
        return;
    }
    d->active++;
}

void drift_request_reconcile(drift_watch *w)
{
    w->d->cb.enqueue_after(w->ext->name, w->d->coalesce_ms, w->d->cb.data);
}

void drift_watch_event(drift_watch *w, kube_watch_event_type type, const json_t *obj)
{
    if (w->sh) {
        drift_shared_event(w->sh, type, obj);
        return;
    }
    if (!w->ext)
        return;
    char *key = kube_object_key(obj);
    if (!key)
        return;
    if (type == KUBE_WATCH_DELETED) {
        json_object_del(w->seen, key);
        if (w->synced)
            drift_request_reconcile(w);
        free(key);
        return;
    }
    json_int_t h = (json_int_t)drift_content_hash(obj);
    json_t *old = json_object_get(w->seen, key);
    bool changed = !old || json_integer_value(old) != h;
    json_object_set_new(w->seen, key, json_integer(h));
    free(key);
    /* ADDED after the sync is an object coming (back) with our labels: our own apply. */
    if (w->synced && type == KUBE_WATCH_MODIFIED && changed)
        drift_request_reconcile(w);
}

void drift_watch_synced(drift_watch *w)
{
    if (w->sh) {
        drift_shared_synced(w->sh);
        return;
    }
    if (!w->ext)
        return;
    json_object_del(w->ext->forbidden, w->path); /* it works now: log a later 403 again */
    free(w->last_error);                          /* ... and a later failure */
    w->last_error = NULL;
    if (w->synced)
        return; /* a relist: its differences came as events */
    w->synced = true;
    /* An object deleted between the apply and this LIST raised no event. */
    for (size_t i = 0; i < w->nkeys; i++) {
        if (!json_object_get(w->seen, w->keys[i])) {
            drift_request_reconcile(w);
            break;
        }
    }
}

static void ext_halt_watches(drift_ext *e)
{
    for (drift_watch *w = e->watches; w; w = w->next)
        drift_watch_halt(w);
}

void drift_watch_error(drift_watch *w, long http_status, const char *msg)
{
    if (w->sh) {
        drift_shared_error(w->sh, http_status, msg);
        return;
    }
    drift_ext *e = w->ext;
    if (!e)
        return;
    drift_watcher *d = w->d;
    if (http_status == 401) {
        /* The token was rejected; every watch of the extension uses it. */
        if (!e->rejected) {
            e->rejected = true;
            drift_logf(d, e->name, "drift watch: the token of ServiceAccount %s/%s was rejected (HTTP 401); reconciling "
                  "for a new one", e->ns, e->sa);
            if (d->cb.token_rejected)
                d->cb.token_rejected(e->ns, e->sa, e->cfg->cfg.token, d->cb.data);
            d->cb.enqueue_after(e->name, d->coalesce_ms, d->cb.data);
        }
        ext_halt_watches(e);
        return;
    }
    if (http_status == 403) {
        if (!json_object_get(e->forbidden, w->path)) {
            json_object_set_new(e->forbidden, w->path, json_true());
            drift_logf(d, e->name, "drift watch: ServiceAccount %s/%s may not %s %s (HTTP 403); drift of those objects "
                  "is repaired only by the periodic check (--drift-repair-interval)",
                  e->ns, e->sa, w->synced ? "watch" : "list", w->path);
        }
        drift_watch_halt(w);
        return;
    }
    /* Anything else the watch retries by itself; say each distinct problem once. */
    if (!w->last_error || strcmp(w->last_error, msg) != 0) {
        free(w->last_error);
        w->last_error = strdup(msg);
        drift_logf(d, e->name, "drift watch: %s", msg);
    }
}

/* ------------------------------------------------------------ extensions */

drift_ext *drift_ext_by_name(drift_watcher *d, const char *name)
{
    json_t *v = json_object_get(d->by_name, name);
    return v ? (drift_ext *)(intptr_t)json_integer_value(v) : NULL;
}

drift_watch *drift_watch_replace(drift_watch *w)
{
    drift_ext *e = w->ext;
    drift_watch *n = calloc(1, sizeof *n);
    if (!n || !(n->seen = json_object())) {
        free(n);
        return NULL;
    }
    n->d = w->d;
    n->ext = e;
    n->path = w->path;
    n->resource = w->resource;
    n->ns = w->ns;
    n->keys = w->keys;
    n->nkeys = w->nkeys;
    w->path = w->resource = w->ns = NULL;
    w->keys = NULL;
    w->nkeys = 0;
    n->sub = w->sub; /* the subscription moves over, its count unchanged */
    w->sub = NULL;
    n->cfg = e->cfg;
    e->cfg->refs++;
    drift_watch **pp = &e->watches;
    while (*pp != w)
        pp = &(*pp)->next;
    *pp = n;
    n->next = w->next;
    w->next = NULL;
    drift_watch_release(w);
    return n;
}

static void timer_closed(uv_handle_t *h)
{
    drift_watcher *d = h->data;
    free(h);
    d->pending_closes--;
    maybe_finish(d);
}

static void on_refresh(uv_timer_t *t)
{
    drift_ext *e = t->data;
    /* The reconcile gets a fresh token from the cache and posts it: the watches are
     * re-created before the old token expires. */
    e->d->cb.enqueue_after(e->name, 0, e->d->cb.data);
}

static void ext_free(drift_watcher *d, drift_ext *e)
{
    drift_shared_runner_changed(e);
    while (e->watches) {
        drift_watch *w = e->watches;
        e->watches = w->next;
        w->next = NULL;
        drift_watch_release(w);
    }
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
    if (!s->token) {
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
    if (e->rejected && strcmp(e->cfg->cfg.token, s->token) == 0) {
        /* Posted by a reconcile that took the token from the cache before the 401 dropped
         * it: the next reconcile mints a new one. */
        d->cb.enqueue_after(e->name, d->coalesce_ms, d->cb.data);
        return;
    }
    if (!e->cfg || strcmp(e->cfg->cfg.token, s->token) != 0) {
        drift_cfg *c = cfg_new(d, s->token, &err);
        if (!c) {
            drift_logf(d, s->extension, "drift watch: %s", err.msg);
            return;
        }
        /* Every watch used the old token: start them all again with the new one (shared
         * watches it runs get a runner again in drift_shared_settle). */
        drift_shared_runner_changed(e);
        while (e->watches) {
            drift_watch *w = e->watches;
            e->watches = w->next;
            w->next = NULL;
            drift_watch_release(w);
        }
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
            drift_watch_release(w);
            continue;
        }
        keys_free(w->keys, w->nkeys);
        w->keys = p->keys;
        w->nkeys = p->nkeys;
        p->keys = NULL;
        p->nkeys = 0;
        free(p->path);
        p->path = NULL; /* handled */
        pp = &w->next;
    }
    for (size_t i = 0; i < s->npaths; i++) {
        if (!s->paths[i].path)
            continue;
        drift_watch *w = watch_new(d, e, &s->paths[i]);
        if (!w) {
            drift_logf(d, e->name, "drift watch: out of memory");
            continue;
        }
        w->next = e->watches;
        e->watches = w;
        if (!drift_shared_attach(w))
            drift_watch_start_own(w);
    }
    uv_timer_stop(e->refresh);
    if (s->refresh_at > 0) {
        time_t now = time(NULL);
        uint64_t ms = s->refresh_at > now ? (uint64_t)(s->refresh_at - now) * 1000u : 0;
        uv_timer_start(e->refresh, on_refresh, ms < d->min_refresh_ms ? d->min_refresh_ms : ms, 0);
    }
}

/* ------------------------------------------------------------ the mailbox */

static drift_post *take_posts(drift_watcher *d)
{
    pthread_mutex_lock(&d->lock);
    drift_post *p = d->posts;
    d->posts = NULL;
    pthread_mutex_unlock(&d->lock);
    return p;
}

static void free_posts(drift_post *p)
{
    while (p) {
        drift_post *next = p->next;
        drift_spec_free(&p->spec);
        free(p);
        p = next;
    }
}

void drift_watcher_flush(drift_watcher *d)
{
    drift_post *p = take_posts(d);
    for (drift_post *q = p; q && !d->stopping; q = q->next)
        apply_spec(d, &q->spec);
    drift_shared_settle(d);
    free_posts(p);
}

static void on_async(uv_async_t *a)
{
    drift_watcher_flush(a->data);
}

int drift_watcher_post(drift_watcher *d, drift_spec *spec, olm_error *err)
{
    drift_post *p = calloc(1, sizeof *p);
    if (!p || !spec->extension) {
        free(p);
        drift_spec_free(spec);
        return olm_error_set(err, "drift watch: out of memory");
    }
    p->spec = *spec;
    memset(spec, 0, sizeof *spec);
    pthread_mutex_lock(&d->lock);
    /* Keep order between extensions, and only the latest request of each. */
    drift_post **pp = &d->posts;
    while (*pp) {
        if (strcmp((*pp)->spec.extension, p->spec.extension) == 0) {
            drift_post *old = *pp;
            *pp = old->next;
            old->next = NULL;
            free_posts(old);
            continue;
        }
        pp = &(*pp)->next;
    }
    *pp = p;
    pthread_mutex_unlock(&d->lock);
    uv_async_send(&d->async);
    return 0;
}

int drift_watcher_forget(drift_watcher *d, const char *extension, olm_error *err)
{
    drift_spec s = {.extension = strdup(extension)};
    return drift_watcher_post(d, &s, err);
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
    /* A copy with its own CA file (when the CA came inline), its placeholder token dropped. */
    if (kube_config_with_token(base, "-", &d->shared, err) != 0) {
        free(d);
        return NULL;
    }
    explicit_bzero(d->shared.token, strlen(d->shared.token));
    free(d->shared.token);
    d->shared.token = NULL;
    d->be = *backend;
    d->cb = *cb;
    d->coalesce_ms = opts && opts->coalesce_ms ? opts->coalesce_ms : 1000;
    d->min_refresh_ms = opts && opts->min_refresh_ms ? opts->min_refresh_ms : 1000;
    d->per_extension_only = opts && opts->per_extension_only;
    if (!(d->by_name = json_object())) {
        kube_config_free(&d->shared);
        free(d);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    if (pthread_mutex_init(&d->lock, NULL) != 0) {
        kube_config_free(&d->shared);
        json_decref(d->by_name);
        free(d);
        olm_error_set(err, "pthread_mutex_init failed");
        return NULL;
    }
    int rc = uv_async_init(loop, &d->async, on_async);
    if (rc != 0) {
        pthread_mutex_destroy(&d->lock);
        kube_config_free(&d->shared);
        json_decref(d->by_name);
        free(d);
        olm_error_set(err, "uv_async_init: %s", uv_strerror(rc));
        return NULL;
    }
    d->async.data = d;
    return d;
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

static void maybe_finish(drift_watcher *d)
{
    if (!d->stopping || d->pending_closes > 0)
        return;
    free_posts(take_posts(d));
    pthread_mutex_destroy(&d->lock);
    kube_config_free(&d->shared); /* after every watch: removes the shared CA copy */
    json_decref(d->by_name);
    void (*cb)(void *) = d->closed;
    void *data = d->closed_data;
    free(d);
    if (cb)
        cb(data);
}

static void async_closed(uv_handle_t *h)
{
    drift_watcher *d = h->data;
    d->pending_closes--;
    maybe_finish(d);
}

void drift_watcher_stop(drift_watcher *d, void (*closed)(void *data), void *data)
{
    if (d->stopping)
        return;
    d->stopping = true;
    d->closed = closed;
    d->closed_data = data;
    d->pending_closes++; /* the async handle; also keeps maybe_finish off until the end */
    while (d->exts) {
        drift_ext *e = d->exts;
        d->exts = e->next;
        d->nexts--;
        json_object_del(d->by_name, e->name);
        ext_free(d, e); /* the last subscriber of a shared watch frees it */
    }
    uv_close((uv_handle_t *)&d->async, async_closed);
}
