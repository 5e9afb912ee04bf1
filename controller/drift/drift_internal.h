/* drift_internal: the watcher's structures, shared by drift_watch.c (one watch),
 * drift_shared.c (one watch per resource type for many extensions), drift_mailbox.c
 * (posts from other threads) and drift_watcher.c (the extensions, the backend's entry
 * points, start and stop), in that order of layers.  Loop thread only, except the
 * mailbox. */
#ifndef OLM_DRIFT_INTERNAL_H
#define OLM_DRIFT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "drift.h"

typedef struct drift_cfg {
    kube_config cfg;
    /* What cfg was made from: a token, or an impersonation (kube_config.h), whose cfg.token
     * is operator-controller's own (or none).  Compared with each new spec's, zeroed when freed. */
    char *credential;
    unsigned refs;
} drift_cfg;

typedef struct drift_ext drift_ext;
typedef struct drift_shared drift_shared;

/* One (extension, collection path) watch, or the backend watch of a shared watch (`sh`
 * set, `ext` NULL).  An extension's watch is running (handle set), covered (its
 * resource's shared watch reports for it; no handle of its own), closing (stopped, the
 * backend's close callback not run yet) or idle (never started, or closed after a
 * 403/401).  Its struct is freed when it is both released and not closing. */
struct drift_watch {
    drift_watcher *d;
    drift_ext *ext;    /* NULL once stopped, and for a shared watch's backend watch */
    drift_shared *sh;  /* the backend watch of this shared watch; NULL once released */
    drift_shared *sub; /* an extension's watch: the shared watch of its resource (counted in nsubs) */
    char *path;
    char *resource;    /* the type's cluster-wide path */
    char *ns;          /* namespace of a namespaced path; NULL: cluster-wide */
    char **keys;       /* expected objects (owned) */
    uint64_t *probes;  /* beside keys: the probe digest the extension's status says (drift.h); 0: unknown; owned */
    uint64_t *contents; /* beside keys: the content hash the reconcile saw (drift.h); 0: unknown; owned */
    size_t nkeys;
    drift_cfg *cfg;    /* one reference */
    void *handle;      /* the backend's; NULL once stopped */
    bool closing;      /* stopped; the backend's close callback has not run yet */
    bool released;     /* unlinked while closing: freed by the close callback */
    bool synced;
    bool covered;
    bool published;    /* an own watch's objects answer drift_watcher_lookup (drift_published.c) */
    json_t *seen;      /* key -> content hash (integer) */
    json_t *probed;    /* key -> probe digest (integer) of each object seen that fails its probes */
    char *last_error;  /* last logged error, to log each distinct one once */
    drift_watch *next;
};

struct drift_ext {
    drift_watcher *d;
    char *name, *ns, *sa;
    drift_cfg *cfg;       /* one reference; NULL before the first spec */
    drift_watch *watches;
    uv_timer_t *refresh;  /* allocated: closes asynchronously */
    bool rejected;        /* a 401 was handled for this token */
    json_t *forbidden;    /* path -> true: a 403 was logged (once per path until it works) */
    drift_ext *next;
};

/* A posted request: a spec to apply, or (spec.token NULL) forget the extension. */
typedef struct drift_post {
    drift_spec spec;
    struct drift_post *next;
} drift_post;

struct drift_watcher {
    uv_loop_t *loop;
    /* The server and CA of every watch (its credentials are not used): drift_watcher_new's
     * `base`, borrowed for the watcher's life.  Its CA file is the one the daemon's own
     * watches use: libcurl shares a connection only between transfers with the same TLS
     * settings (CA path included), so the watches of all extensions can be streams of the
     * informers' HTTP/2 connection. */
    const kube_config *base;
    drift_backend be;
    drift_callbacks cb;
    uint64_t coalesce_ms, min_refresh_ms, refusal_quiet_ms;
    bool per_extension_only;
    bool ignore_probes;
    drift_ext *exts;
    json_t *by_name;   /* extension name -> drift_ext * (as an integer): where shared events go */
    size_t nexts, active, nshared;
    drift_shared *shares;
    uv_async_t async;
    pthread_mutex_t lock;
    drift_post *posts; /* guarded by lock */
    /* Guards what drift_watcher_lookup reads from other threads: the list of shared watches,
     * each one's `seen`, `probed` and `synced`.  Taken by the loop thread only around changes
     * of those (never around a callback). */
    pthread_mutex_t cache_lock;
    /* What the extensions' own watches publish for drift_watcher_lookup (drift_published.c):
     * "<resource>\n<key>" -> content hash, and -> probe digest of those failing their probes.
     * Guarded by cache_lock. */
    json_t *own_seen, *own_probed;
    bool stopping;
    unsigned pending_closes;
    void (*closed)(void *data);
    void *closed_data;
};

/* drift_watch.c: one watch (for drift_shared.c and drift_watcher.c) */
void drift_logf(drift_watcher *d, const char *ext, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
drift_cfg *drift_cfg_new(drift_watcher *d, const char *token, olm_error *err);
void drift_cfg_unref(drift_cfg *c);
void drift_keys_free(char **keys, size_t n);
/* Takes over p->path, p->resource, p->ns and p->keys; not linked, not started. */
drift_watch *drift_watch_new(drift_watcher *d, drift_ext *e, drift_path *p);
void drift_watch_halt(drift_watch *w);
/* `w` is unlinked and detached from its shared watch. */
void drift_watch_release(drift_watch *w);
void drift_watch_start_own(drift_watch *w);
void drift_request_reconcile(drift_watch *w, const char *why);
/* What an extension's own watch does with its backend's reports. */
void drift_watch_own_event(drift_watch *w, kube_watch_event_type type, const json_t *obj);
void drift_watch_own_synced(drift_watch *w);
void drift_watch_own_error(drift_watch *w, long http_status, const char *msg);
drift_ext *drift_ext_by_name(drift_watcher *d, const char *name);
/* The probe side (drift.h).  `probed` maps the key of each object seen that fails its probes
 * to its digest, with the line the Available condition gives it when there is one ({"d":
 * digest, "l": line}); absent, an object passes (or was not seen). */
uint64_t drift_probed_get(const json_t *probed, const char *key);
/* The failing object's line (a copy, caller frees), or NULL when none is kept. */
char *drift_probed_line(const json_t *probed, const char *key);
/* Records `digest` (0: unknown, kept as it was) of `key`, with its line (NULL: none); returns
 * the previous digest. */
uint64_t drift_probed_set(json_t *probed, const char *key, uint64_t digest, const char *line);
/* What the probes say of `obj`: its digest (probe.h), and, when it fails them, *line its
 * line in the Available condition (probe_describe; NULL when memory ran out).  Caller frees
 * *line. */
uint64_t drift_probe(const json_t *obj, char **line);
/* After the sync, an event's digest `now` of `key` (which had `prev`): true when it is not what
 * w's extension's status was computed from (which it then counts as told). */
bool drift_watch_probe_changed(drift_watch *w, const char *key, uint64_t prev, uint64_t now);
/* At a sync or a post: true when an object of w's that `seen` holds has another digest in
 * `probed` than w expects (each then counts as told). */
bool drift_watch_probes_differ(drift_watch *w, const json_t *seen, const json_t *probed);
/* At a sync or a post: true when an object of w's that `seen` holds has another content hash
 * than the one w's post relied on (each then counts as told). */
bool drift_watch_contents_differ(drift_watch *w, const json_t *seen);
/* After a post gave w new keys and digests: asks for a reconcile when what its watch (own or
 * shared) has seen differs. */
void drift_watch_recheck(drift_watch *w);
/* A fresh struct for the same path and keys as `w` (which is released), linked in its
 * place in w->ext's list; returns it (NULL on out of memory, `w` then stays). */
drift_watch *drift_watch_replace(drift_watch *w);
/* drift_published.c: an own watch's objects for drift_watcher_lookup.  Loop thread, except
 * drift_published_lookup (any thread, cache_lock held). */
/* `key` of w->seen / w->probed as it is now (absent: withdrawn), once w has published. */
void drift_published_put(drift_watch *w, const char *key);
/* At w's first sync: every object it has seen, and from then on each event's. */
void drift_published_all(drift_watch *w);
/* w stops or starts over: none of its objects answers any more. */
void drift_published_withdraw(drift_watch *w);
int drift_published_lookup(drift_watcher *d, const char *resource, const char *key, uint64_t *content,
                           uint64_t *probe, char **line);
/* One of the watcher's pending closes has finished; after the last one of a stopping
 * watcher, frees it and calls its `closed` callback. */
void drift_close_done(drift_watcher *d);

/* drift_mailbox.c */
drift_post *drift_posts_take(drift_watcher *d);
void drift_posts_free(drift_post *p);

/* drift_shared.c */
/* A new extension's watch `w` (linked, not started): joins its resource's shared watch.
 * Returns true when covered (nothing to start), false when it must run its own. */
bool drift_shared_attach(drift_watch *w);
/* An extension's watch is released: leaves its shared watch (freed when unused). */
void drift_shared_detach(drift_watch *w);
/* Shared watches run by `e`'s token: `e` is gone or has a new token; called before
 * e's watches are released. */
void drift_shared_runner_changed(drift_ext *e);
/* After a batch of posts: shared watches without a runner get one (or give up). */
void drift_shared_settle(drift_watcher *d);
void drift_shared_event(drift_shared *sh, kube_watch_event_type type, const json_t *obj);
void drift_shared_synced(drift_shared *sh);
void drift_shared_error(drift_shared *sh, long http_status, const char *msg);
/* A covered `w`: true when its shared watch has synced and saw one of w's objects with another
 * probe digest or content hash than w expects (drift_watch_probes_differ, _contents_differ). */
bool drift_shared_probes_differ(drift_watch *w);
/* drift_watcher_lookup, under d->cache_lock. */
int drift_shared_lookup(drift_watcher *d, const char *resource, const char *key, uint64_t *content, uint64_t *probe,
                        char **line);

#endif
