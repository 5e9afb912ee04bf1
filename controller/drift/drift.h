/* drift: watch-based drift repair (as upstream's contentmanager).
 *
 * After a successful reconcile, the reconcile posts what its extension installed: one
 * collection path per distinct resource type of the install record, the objects
 * expected in it, and the ServiceAccount token the reconcile used.  Watches are always
 * authenticated with such a token -- NOT operator-controller's own identity, which stays
 * least-privileged.
 *
 * Shared watches (the default; drift_shared.c): per resource type, ONE cluster-wide watch
 * filtered by  olm.operatorframework.io/owner-kind=ClusterExtension  reports for every
 * extension that installed objects of that type; events go to the extension named by the
 * object's owner-name label (and, for a namespaced path, only from that namespace).  It
 * runs with the token of one of those extensions' ServiceAccounts that the apiserver
 * lets list+watch the type cluster-wide; one that gets a 403 is not asked again, the next
 * one is tried, and when none can, each extension keeps its own watch as below (after
 * OLM_REFUSALS_BEFORE_QUIET refusals in a row, new ones are not asked for a while:
 * olm_refusal_streak.h).  So 1,000
 * extensions of five kinds cost five apiserver watches instead of 5,000, when at least
 * one installer may watch cluster-wide (common: installers bound by ClusterRoleBinding).
 *
 * Why this widens no identity's privileges: the shared watch is a read of exactly what
 * its identity X may read cluster-wide (the apiserver enforces it; a 403 ends the
 * attempt), so no request is made with any identity that it was not granted.  What X's
 * watch reports is not handed to any identity: it only makes operator-controller enqueue
 * the extension that owns the object, and that extension's repair is done, as always,
 * with ITS OWN ServiceAccount (the apply of applier_repair).  An extension whose
 * installer may not watch a type therefore gets its drift noticed sooner, but can still
 * only change what its installer may change.  Nothing of the objects reaches an
 * extension's status except what its own reconcile reads with its own token, and, through
 * drift_watcher_lookup, that an object its own apply wrote still has the content that apply
 * left (the record's hash, which covers its owner labels) and passes its probes: nothing the
 * apply's own answer did not already show it.
 *
 * Per-extension watches (fallback, or drift_watcher_options.per_extension_only): one
 * watch per (extension, resource type) with that extension's token, filtered by
 *     olm.operatorframework.io/owner-kind=ClusterExtension,olm.operatorframework.io/owner-name=<ext>
 * Namespaced kinds are watched in their namespace when every recorded object of the kind
 * is in one namespace (what a namespace-scoped ServiceAccount can do), cluster-wide
 * otherwise.
 *
 * After a watch's initial LIST, a DELETED event, or a MODIFIED event that changed
 * anything but status / resourceVersion / managedFields / generation, enqueues the
 * extension after a short coalescing delay (the work queue dedups), and the reconcile's
 * applier_repair re-applies the recorded objects.  Our own no-op re-applies write
 * nothing (the apiserver skips unchanged server-side applies), so they raise no event
 * and cannot loop; status churn (a Deployment's rollout) is filtered out above.  Events
 * of the initial LIST enqueue nothing, except that an expected object missing from it
 * (deleted between the apply and the watch) enqueues once.
 *
 * Status writes that can change the extension's Available condition enqueue too: each post
 * carries, per recorded object, the probe digest (probe.h) of the object as the reconcile saw
 * it, which is what its Available condition says.  After the sync, an ADDED or MODIFIED event
 * of a recorded object whose digest differs from that one enqueues the extension (once: the
 * digest then counts as told, until the next post), and so does, at a sync or a post, an
 * object already seen with another digest than the post's (it changed between the reconcile's
 * read and the watch).  Only the probes' inputs count: a Deployment's status write that leaves
 * its line in the condition as it was (a heartbeat, a counter the probes do not read) enqueues
 * nothing.  The watcher keeps the digest of an object only while it fails its probes (a
 * passing object costs no memory).  A post without digests (0) compares each event with the
 * object's previous digest instead.
 *
 * Content the reconcile relied on: each post also carries, per recorded object, the content
 * hash of the object as the reconcile saw it (0: unknown).  At a sync, when an extension joins
 * a shared watch already synced, and at each post, an object the watch holds with another hash
 * enqueues the extension (once: the hash then counts as told).  This closes the window between
 * a reconcile's read (or drift_watcher_lookup) and its post, when the extension's watch was not
 * there yet to judge an event.
 *
 * Watches are re-created when the set of kinds changes (an upgrade) or when the token
 * changes; the watcher asks for a reconcile at the token's refresh time so that a fresh
 * token arrives before the old one expires.  A 401 drops the token (token_rejected) and
 * asks for a reconcile; a 403 (the ServiceAccount may not list/watch the kind) logs one
 * line naming the verb and resource, and that kind is left to the periodic repair
 * (--drift-repair-interval).  Forgetting an extension (deleted, uninstalled) stops its
 * watches.
 *
 * Threading: drift_watcher_post / _forget may be called from any thread (the
 * reconciles on the threadpool): they queue the request under a mutex and wake the
 * loop with a uv_async_t, the same way results of threadpool work come back.
 * Everything else is loop thread only. */
#ifndef OLM_DRIFT_H
#define OLM_DRIFT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "install_record.h"
#include "olm_refusal_streak.h"
#include "kube_client.h"
#include "kube_config.h"
#include "kube_uvcurl.h"
#include "kube_watch.h"
#include "olm_error.h"

/* ------------------------------------------------------------ what to watch (any thread) */

typedef struct drift_path {
    char *path;  /* collection path, e.g. "/apis/apps/v1/namespaces/ns/deployments"; owned */
    char *resource; /* the type's cluster-wide collection path, e.g. "/apis/apps/v1/deployments"; owned */
    char *ns;       /* the namespace of a namespaced `path`, NULL when `path` is cluster-wide; owned */
    char **keys; /* keys ("ns/name" or "name") of the recorded objects in it; owned */
    uint64_t *probes; /* per key: the probe digest the extension's status was computed from
                       * (probe_digest), 0: unknown; owned */
    uint64_t *contents; /* per key: the content hash (drift_content_hash) the reconcile saw the
                         * object with, 0: unknown; owned */
    size_t nkeys;
} drift_path;

typedef struct drift_spec {
    char *extension;      /* owned */
    char *ns, *sa;        /* owned: the ServiceAccount the token belongs to */
    char *token;          /* owned, zeroed when freed */
    /* No token at hand (the reconcile needed none; token NULL): the extension keeps the
     * token it has (a 401 had rejected it: it drops it), and without one its kinds are
     * watched only through the shared watches, which run with other extensions' tokens.
     * When one of its watches is not covered by a running shared watch, the watcher asks
     * for a reconcile, which then finds the shared watch's cache unable to answer
     * (drift_watcher_lookup), reads the objects with a token, and posts it. */
    bool tokenless;
    time_t refresh_at;    /* ask for a reconcile then (fresh token); 0: never */
    drift_path *paths; /* owned, sorted by path, distinct */
    size_t npaths;
} drift_spec;

void drift_spec_free(drift_spec *s);

/* kind -> resource (kube_resolve_kind in production, the built-in table in tests). */
typedef int (*drift_resolve_fn)(void *data, const char *api_version, const char *kind, kube_resource_info *out,
                                   olm_error *err);

/* Fills spec->paths (replacing what was there) from the objects of `rec`; `probes` and
 * `contents` (each NULL: all unknown) hold rec->nobjects probe digests and content hashes, in
 * the record's order. */
int drift_spec_paths(drift_spec *spec, const install_record *rec, const uint64_t *probes, const uint64_t *contents,
                     drift_resolve_fn resolve, void *rdata, olm_error *err);

/* The owner-label selector of `extension`'s objects; caller frees. */
char *drift_selector(const char *extension);

/* kube_object_content_hash: a hash of what an object's owner may have changed: the object
 * without kind, apiVersion, status,
 * metadata.resourceVersion, metadata.managedFields, metadata.generation and the
 * Deployment controller's deployment.kubernetes.io/revision annotation. */
uint64_t drift_content_hash(const json_t *obj);

/* ------------------------------------------------------------ watches (loop thread) */

typedef struct drift_watch drift_watch; /* one watch of one extension */

/* What a backend watch reports, on the loop thread. */
void drift_watch_event(drift_watch *w, kube_watch_event_type type, const json_t *obj);
void drift_watch_synced(drift_watch *w);
void drift_watch_error(drift_watch *w, long http_status, const char *msg);

/* How watches are opened: kube_watch on a kube_uvcurl in production, a fake in tests. */
typedef struct drift_backend {
    /* Opens a list+watch of `path` with `selector` authenticated by `cfg` (borrowed until
     * `closed` of stop has run) that reports to `w`.  A handle, or NULL with err set. */
    void *(*start)(void *data, const kube_config *cfg, const char *path, const char *selector, drift_watch *w,
                   olm_error *err);
    /* Stops `handle`: nothing is reported after this returns; `closed(cdata)` runs once
     * the handle no longer uses its cfg (possibly before stop returns). */
    void (*stop)(void *data, void *handle, void (*closed)(void *cdata), void *cdata);
    void *data;
} drift_backend;

/* The kube_watch backend; `uc` is borrowed and must outlive the watcher. */
drift_backend drift_backend_kube(kube_uvcurl *uc);

typedef struct drift_callbacks {
    /* Reconcile `extension` after delay_ms.  Required. */
    void (*enqueue_after)(const char *extension, uint64_t delay_ms, void *data);
    /* The apiserver rejected `token` of ns/sa (401).  Optional. */
    void (*token_rejected)(const char *ns, const char *sa, const char *token, void *data);
    /* One log line (no newline) about `extension`.  Optional: olm_log. */
    void (*log)(const char *extension, const char *line, void *data);
    void *data;
} drift_callbacks;

typedef struct drift_watcher_options {
    uint64_t coalesce_ms;       /* delay before the reconcile an event asks for; 0: 1000 */
    uint64_t min_refresh_ms;    /* earliest refresh reconcile after a post; 0: 1000 */
    bool per_extension_only;    /* no shared watches: one per (extension, type) */
    bool ignore_probes;         /* status writes never enqueue (no Available condition to keep) */
    /* After OLM_REFUSALS_BEFORE_QUIET identities in a row refused a type's shared watch
     * (403), no new one is asked for this long (their extensions watch on their own); 0:
     * 10 minutes (olm_refusal_streak.h says why). */
    uint64_t refusal_quiet_ms;
} drift_watcher_options;

typedef struct drift_watcher drift_watcher;

/* `base` gives the server and CA (its credentials are replaced by each token);
 * borrowed, like `backend->data`, for the watcher's life.  opts may be NULL. */
drift_watcher *drift_watcher_new(uv_loop_t *loop, const kube_config *base, const drift_backend *backend,
                                       const drift_callbacks *cb, const drift_watcher_options *opts,
                                       olm_error *err);

/* Any thread.  Takes over *spec (zeroed on return, also on failure).  A later post
 * for the same extension replaces one not yet applied. */
int drift_watcher_post(drift_watcher *d, drift_spec *spec, olm_error *err);
/* Any thread.  Stops watching `extension`. */
int drift_watcher_forget(drift_watcher *d, const char *extension, olm_error *err);
/* Loop thread.  Applies what was posted now (otherwise the uv_async does it). */
void drift_watcher_flush(drift_watcher *d);

/* Any thread.  What the shared watch of `resource` (a type's cluster-wide collection path, as
 * drift_path.resource) has of the object `key` ("ns/name", or "name" when cluster-scoped): 1
 * when that watch runs, has synced and holds the object, with *content its content hash
 * (drift_content_hash) and *probe its probe digest (PROBE_DIGEST_PASS when it passes), and, when
 * `line` is not NULL, *line the failing object's line in the Available condition (as
 * probe_describe writes it from the object the watch holds; NULL when it passes or none is
 * kept; caller frees); 0 when it cannot say (no such watch, not synced, not seen).  A reconcile asks this instead of
 * reading the object; what it then posts carries the content hash it relied on, and the
 * watcher asks for another reconcile when the watch sees otherwise by the time the post
 * arrives (so an edit between the answer and the post is not lost). */
int drift_watcher_lookup(drift_watcher *d, const char *resource, const char *key, uint64_t *content,
                         uint64_t *probe, char **line);

/* Loop thread.  Watches running (started, not stopped or given up after a 403/401),
 * shared ones included. */
size_t drift_watcher_active(const drift_watcher *d);
/* Loop thread.  Shared watches running. */
size_t drift_watcher_shared(const drift_watcher *d);
/* Loop thread.  Extensions with a spec applied. */
size_t drift_watcher_extensions(const drift_watcher *d);

/* Loop thread.  Stops every watch; frees the watcher, then calls closed (may be NULL). */
void drift_watcher_stop(drift_watcher *d, void (*closed)(void *data), void *data);

#endif
