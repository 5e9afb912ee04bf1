/* drift_watch: one (extension, collection path) watch on the loop thread: its token
 * config (drift_cfg, shared by an extension's watches and freed, token zeroed, when the
 * last one has closed), start, halt and release, what it has seen, and its own events,
 * sync and errors (drift.h; structures in drift_internal.h).  The shared watches
 * (drift_shared.c) are built on these; the extensions and the mailbox (drift_watcher.c)
 * on both. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift_internal.h"
#include "olm_log.h"
#include "probe.h"

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

void drift_cfg_unref(drift_cfg *c)
{
    if (c && --c->refs == 0) {
        kube_config_free(&c->cfg); /* zeroes the token */
        if (c->credential)
            explicit_bzero(c->credential, strlen(c->credential));
        free(c->credential);
        free(c);
    }
}

drift_cfg *drift_cfg_new(drift_watcher *d, const char *token, olm_error *err)
{
    drift_cfg *c = calloc(1, sizeof *c);
    if (!c || !(c->credential = strdup(token))) {
        free(c);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    c->refs = 1;
    if (kube_credential_is_impersonation(token)) { /* base's own credentials, as that user */
        if (kube_config_with_credential(d->base, token, &c->cfg, err) != 0) {
            drift_cfg_unref(c);
            return NULL;
        }
        return c;
    }
    c->cfg.server = strdup(d->base->server);
    c->cfg.ca_file = d->base->ca_file ? strdup(d->base->ca_file) : NULL; /* the path, not a copy of the file */
    c->cfg.insecure_skip_tls_verify = d->base->insecure_skip_tls_verify;
    c->cfg.token = strdup(token);
    if (!c->cfg.server || (d->base->ca_file && !c->cfg.ca_file) || !c->cfg.token) {
        drift_cfg_unref(c);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    return c;
}

void drift_keys_free(char **keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
}

static void watch_free(drift_watch *w)
{
    drift_published_withdraw(w);
    drift_cfg_unref(w->cfg);
    free(w->path);
    free(w->resource);
    free(w->ns);
    drift_keys_free(w->keys, w->nkeys);
    free(w->probes);
    free(w->contents);
    json_decref(w->seen);
    json_decref(w->probed);
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
    drift_close_done(d);
}

void drift_watch_halt(drift_watch *w)
{
    if (!w->handle)
        return;
    drift_watcher *d = w->d;
    drift_published_withdraw(w);
    void *h = w->handle;
    w->handle = NULL;
    w->closing = true;
    d->active--;
    d->pending_closes++;
    d->be.stop(d->be.data, h, watch_closed, w); /* may call watch_closed at once */
}

/* `w` is already unlinked from its extension and out of any shared watch
 * (drift_shared_detach). */
void drift_watch_release(drift_watch *w)
{
    w->sh = NULL;
    drift_watch_halt(w);
    w->ext = NULL;
    if (!w->closing)
        watch_free(w);
    else
        w->released = true; /* watch_closed frees it */
}

/* Takes over p->path and p->keys. */
drift_watch *drift_watch_new(drift_watcher *d, drift_ext *e, drift_path *p)
{
    drift_watch *w = calloc(1, sizeof *w);
    if (!w || !(w->seen = json_object()) || !(w->probed = json_object())) {
        if (w)
            json_decref(w->seen);
        free(w);
        return NULL;
    }
    w->d = d;
    w->ext = e;
    w->path = p->path;
    w->resource = p->resource;
    w->ns = p->ns;
    w->keys = p->keys;
    w->probes = p->probes;
    w->contents = p->contents;
    w->nkeys = p->nkeys;
    p->path = NULL;
    p->resource = NULL;
    p->ns = NULL;
    p->keys = NULL;
    p->probes = NULL;
    p->contents = NULL;
    p->nkeys = 0;
    w->cfg = e->cfg; /* NULL: a tokenless extension (drift_spec.tokenless) */
    if (e->cfg)
        e->cfg->refs++;
    return w;
}

void drift_watch_start_own(drift_watch *w)
{
    drift_watcher *d = w->d;
    w->covered = false;
    w->synced = false;
    drift_published_withdraw(w);
    json_object_clear(w->seen);
    json_object_clear(w->probed);
    if (!w->cfg) {
        /* A tokenless extension no shared watch covers: its reconcile brings a token
         * (drift_spec.tokenless). */
        drift_request_reconcile(w, "no credential");
        return;
    }
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

void drift_request_reconcile(drift_watch *w, const char *why)
{
    olm_log(OLM_LOG_DEBUG, "clusterExtension", w->ext->name, "drift watch of %s: %s: reconciling", w->path, why);
    w->d->cb.enqueue_after(w->ext->name, w->d->coalesce_ms, w->d->cb.data);
}

/* ------------------------------------------------------------ probes (drift.h) */

uint64_t drift_probed_get(const json_t *probed, const char *key)
{
    const json_t *v = json_object_get(probed, key);
    if (json_is_object(v))
        v = json_object_get(v, "d");
    return v ? (uint64_t)json_integer_value(v) : PROBE_DIGEST_PASS;
}

char *drift_probed_line(const json_t *probed, const char *key)
{
    const char *line = json_string_value(json_object_get(json_object_get(probed, key), "l"));
    return line ? strdup(line) : NULL;
}

uint64_t drift_probed_set(json_t *probed, const char *key, uint64_t digest, const char *line)
{
    uint64_t prev = drift_probed_get(probed, key);
    if (digest == PROBE_DIGEST_PASS)
        json_object_del(probed, key);
    else if (digest != 0)
        json_object_set_new(probed, key,
                            line ? json_pack("{s:I, s:s}", "d", (json_int_t)digest, "l", line)
                                 : json_integer((json_int_t)digest));
    return prev;
}

uint64_t drift_probe(const json_t *obj, char **line)
{
    uint64_t digest;
    return probe_verdict(obj, &digest, line) == 0 ? digest : 0;
}

/* w's expected digest of `key`, NULL when `key` is not one of its recorded objects. */
static uint64_t *expected(drift_watch *w, const char *key)
{
    for (size_t i = 0; i < w->nkeys; i++)
        if (strcmp(w->keys[i], key) == 0)
            return w->probes ? &w->probes[i] : NULL;
    return NULL;
}

bool drift_watch_probe_changed(drift_watch *w, const char *key, uint64_t prev, uint64_t now)
{
    uint64_t *exp = now ? expected(w, key) : NULL;
    if (!exp)
        return false;
    uint64_t told = *exp ? *exp : prev;
    if (now == told)
        return false;
    *exp = now;
    return true;
}

bool drift_watch_probes_differ(drift_watch *w, const json_t *seen, const json_t *probed)
{
    bool differ = false;
    for (size_t i = 0; w->probes && !w->d->ignore_probes && i < w->nkeys; i++) {
        if (!w->probes[i] || !json_object_get(seen, w->keys[i]))
            continue; /* unknown, or not seen (a missing object is the missing check's) */
        uint64_t now = drift_probed_get(probed, w->keys[i]);
        if (now != w->probes[i]) {
            w->probes[i] = now;
            differ = true;
        }
    }
    return differ;
}

bool drift_watch_contents_differ(drift_watch *w, const json_t *seen)
{
    bool differ = false;
    for (size_t i = 0; w->contents && i < w->nkeys; i++) {
        const json_t *h = w->contents[i] ? json_object_get(seen, w->keys[i]) : NULL;
        if (!h)
            continue; /* unknown, or not seen (a missing object is the missing check's) */
        uint64_t now = (uint64_t)json_integer_value(h);
        if (now != w->contents[i]) {
            w->contents[i] = now;
            differ = true;
        }
    }
    return differ;
}

void drift_watch_recheck(drift_watch *w)
{
    if (!w->ext)
        return;
    /* Both are checked (each counts what it found as told). */
    bool differ = w->covered ? drift_shared_probes_differ(w)
                             : w->synced && drift_watch_probes_differ(w, w->seen, w->probed) |
                                                drift_watch_contents_differ(w, w->seen);
    if (differ)
        drift_request_reconcile(w, "probes or contents differ");
}

void drift_watch_own_event(drift_watch *w, kube_watch_event_type type, const json_t *obj)
{
    if (!w->ext)
        return;
    char *key = kube_object_key(obj);
    if (!key)
        return;
    if (type == KUBE_WATCH_DELETED) {
        json_object_del(w->seen, key);
        json_object_del(w->probed, key);
        drift_published_put(w, key);
        if (w->synced)
            drift_request_reconcile(w, "object deleted");
        free(key);
        return;
    }
    json_int_t h = (json_int_t)drift_content_hash(obj);
    json_t *old = json_object_get(w->seen, key);
    bool changed = !old || json_integer_value(old) != h;
    json_object_set_new(w->seen, key, json_integer(h));
    char *line = NULL;
    uint64_t digest = w->d->ignore_probes ? 0 : drift_probe(obj, &line);
    uint64_t prev = drift_probed_set(w->probed, key, digest, line);
    free(line);
    drift_published_put(w, key);
    /* ADDED after the sync is an object coming (back) with our labels: our own apply.  Its
     * probes count all the same (a status the extension's condition does not show yet). */
    bool ask = w->synced && ((type == KUBE_WATCH_MODIFIED && changed) || drift_watch_probe_changed(w, key, prev, digest));
    free(key);
    if (ask)
        drift_request_reconcile(w, "object changed or its probes");
}

void drift_watch_own_synced(drift_watch *w)
{
    if (!w->ext)
        return;
    json_object_del(w->ext->forbidden, w->path); /* it works now: log a later 403 again */
    free(w->last_error);                          /* ... and a later failure */
    w->last_error = NULL;
    if (w->synced)
        return; /* a relist: its differences came as events */
    w->synced = true;
    drift_published_all(w);
    /* An object deleted between the apply and this LIST raised no event; one whose status
     * changed what its probes say (a Deployment turned available) raised none either. */
    bool ask = drift_watch_probes_differ(w, w->seen, w->probed) | drift_watch_contents_differ(w, w->seen);
    for (size_t i = 0; i < w->nkeys && !ask; i++)
        ask = !json_object_get(w->seen, w->keys[i]);
    if (ask)
        drift_request_reconcile(w, "at sync: probes, contents or an object missing");
}

static void halt_all(drift_ext *e)
{
    for (drift_watch *w = e->watches; w; w = w->next)
        drift_watch_halt(w);
}

void drift_watch_own_error(drift_watch *w, long http_status, const char *msg)
{
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
                d->cb.token_rejected(e->ns, e->sa, e->cfg->credential, d->cb.data);
            d->cb.enqueue_after(e->name, d->coalesce_ms, d->cb.data);
        }
        halt_all(e);
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

drift_ext *drift_ext_by_name(drift_watcher *d, const char *name)
{
    json_t *v = json_object_get(d->by_name, name);
    return v ? (drift_ext *)(intptr_t)json_integer_value(v) : NULL;
}

drift_watch *drift_watch_replace(drift_watch *w)
{
    drift_ext *e = w->ext;
    drift_watch *n = calloc(1, sizeof *n);
    if (!n || !(n->seen = json_object()) || !(n->probed = json_object())) {
        if (n)
            json_decref(n->seen);
        free(n);
        return NULL;
    }
    n->d = w->d;
    n->ext = e;
    n->path = w->path;
    n->resource = w->resource;
    n->ns = w->ns;
    n->keys = w->keys;
    n->probes = w->probes;
    n->contents = w->contents;
    n->nkeys = w->nkeys;
    w->path = w->resource = w->ns = NULL;
    w->keys = NULL;
    w->probes = NULL;
    w->contents = NULL;
    w->nkeys = 0;
    n->sub = w->sub; /* the subscription moves over, its count unchanged */
    w->sub = NULL;
    n->cfg = e->cfg;
    if (e->cfg)
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

void drift_close_done(drift_watcher *d)
{
    d->pending_closes--;
    if (!d->stopping || d->pending_closes > 0)
        return;
    drift_posts_free(drift_posts_take(d));
    pthread_mutex_destroy(&d->lock);
    pthread_mutex_destroy(&d->cache_lock);
    json_decref(d->by_name);
    json_decref(d->own_seen);
    json_decref(d->own_probed);
    void (*cb)(void *) = d->closed;
    void *data = d->closed_data;
    free(d);
    if (cb)
        cb(data);
}
