/* upgradeable_reconcile_watch: the event-driven form of the upgrade check.  Two
 * informers, ClusterExtensions and install record Secrets, each caching only what the
 * check reads (their transform keeps the slim copy: each extension's name, each record's
 * labels and record.json), which the passes work from; and a watch of ClusterVersion
 * "version", a trigger only.  Every event queues the one key "olm"; the work queue
 * deduplicates a burst of events into one pass and never runs two passes at once, and
 * passes are spaced out (upgradeable_internal.h).  An update whose slim copy equals the
 * cached one queues nothing: during a burst of installs most events are ClusterExtension
 * status writes, which change nothing a pass reads.
 *
 * With BoxcutterRuntime (opts.revisions) a third informer caches the ClusterObjectSets (slim:
 * owner, bundle, olm.properties, revision, installed or not): an extension's installed revision
 * is its install then (upgradeable_revisions.c).
 *
 * A pass works from the caches once both informers have listed (so never from a cache
 * that is still filling) and lost no event (out of memory); until then -- or for good,
 * when they cannot list, e.g. 403, or once one lost an event -- it lists through REST
 * (upgradeable_reconcile_once), whose failures become the fail-closed conditions.  Either
 * way the cluster version is read through REST.  (Listing every ClusterExtension and
 * record through REST for every pass cost, at 1,000 extensions, more CPU in
 * operator-controller and the apiserver than the installs.)
 *
 * Whether config.openshift.io/v1 is served is asked once at start; when the API server
 * cannot answer then (it is down, or still starting, as often beside a restarted
 * operator-controller), the question is asked again on the threadpool with back-off (5 s,
 * doubling up to 5 min) until it has an answer, instead of leaving OpenShift's upgrade
 * blocking off until the next restart.
 *
 * Thread affinity: everything here runs on the loop thread except reconcile_cb and
 * probe_work, which run on a threadpool thread and touch only the borrowed client, the
 * copied options, the atomics and the informers' readers. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install_record.h"
#include "kube_informer.h"
#include "kube_watch.h"
#include "kube_uvcurl.h"
#include "kube_workqueue.h"
#include "olm_log.h"
#include "olm_time.h"
#include "upgradeable_internal.h"
#include "upgradeable_reconciler.h"

#define KEY "olm"
#define RESYNC_MS (10u * 60u * 1000u) /* library-go resyncs status periodically too */
#define I_EXTENSIONS 0 /* inf[] and slot[] */
#define I_RECORDS 1
#define I_REVISIONS 2 /* BoxcutterRuntime (opts.revisions) only */
#define NINFORMERS 3
#define PROBE_FIRST_MS 5000u     /* the first retry of an unanswered discovery */
#define PROBE_MAX_MS 300000u     /* and the longest wait between two */

typedef struct informer_slot {
    struct upgradeable_reconciler *r;
    int i;
    unsigned lost; /* loop thread: the informer's lost events seen so far */
} informer_slot;

struct upgradeable_reconciler {
    uv_loop_t *loop;
    kube_client *client; /* borrowed */
    char *system_namespace, *version_override; /* owned copies */
    upgradeable_reconcile_opts opts;           /* points at the copies */
    kube_uvcurl *uc;
    /* The extensions and the records, each cached as its slim copy; passes read them. */
    kube_informer *inf[NINFORMERS];
    informer_slot slot[NINFORMERS];
    kube_watch *version_watch; /* ClusterVersion "version": a trigger only */
    kube_workqueue *wq;
    bool stopping;
    int closing; /* informer/watch/uvcurl closes still pending */
    void (*done_cb)(void *data);
    void *done_data;
    atomic_uint passes;
    /* When the last pass started and ended (olm_time_mono_ms): written by the pass on its
     * thread, read by enqueue on the loop thread. */
    _Atomic uint64_t pass_start_ms, pass_end_ms;
    atomic_bool running;
    /* While the discovery is unanswered: the retry timer and the probe on the threadpool. */
    uv_timer_t retry;
    bool retry_on, probing;
    uint64_t retry_ms;
    uv_work_t probe;
    int probe_rc;
    bool probe_served;
    olm_error probe_err;
};

uint64_t upgradeable_pass_delay_ms(uint64_t now_ms, uint64_t last_start_ms, uint64_t last_end_ms, bool running)
{
    uint64_t took = last_end_ms > last_start_ms ? last_end_ms - last_start_ms : 0;
    uint64_t gap = took * UPGRADEABLE_PASS_GAP_FACTOR;
    if (gap < UPGRADEABLE_PASS_GAP_MIN_MS)
        gap = UPGRADEABLE_PASS_GAP_MIN_MS;
    if (running)
        return gap;
    if (!last_end_ms || now_ms >= last_end_ms + gap)
        return 0;
    return last_end_ms + gap - now_ms;
}

/* The informer's cache is what passes read: it has listed and lost no event (one not started,
 * the revisions' without the gate, has nothing to lose). */
static bool intact(kube_informer *inf)
{
    return !inf || (kube_informer_has_synced(inf) && kube_informer_lost_events(inf) == 0);
}

/* One pass: from the caches once both informers have listed (and lost nothing), else
 * through REST. */
static int run_pass(upgradeable_reconciler *r, olm_error *err)
{
    if (!intact(r->inf[I_EXTENSIONS]) || !intact(r->inf[I_RECORDS]) || !intact(r->inf[I_REVISIONS]))
        return upgradeable_reconcile_once(r->client, &r->opts, err);
    json_t *ces = kube_informer_list_by_key(r->inf[I_EXTENSIONS]);
    json_t *secrets = ces ? kube_informer_list_by_key(r->inf[I_RECORDS]) : NULL;
    json_t *revs = secrets && r->inf[I_REVISIONS] ? kube_informer_list_by_key(r->inf[I_REVISIONS]) : NULL;
    int rc = secrets && (revs || !r->inf[I_REVISIONS])
                 ? upgradeable_reconcile_lists(r->client, &r->opts, ces, secrets, revs, err)
                 : olm_error_set(err, "upgradeable: out of memory");
    json_decref(ces);
    json_decref(secrets);
    json_decref(revs);
    return rc;
}

static kube_wq_result reconcile_cb(const char *key, void *data)
{
    upgradeable_reconciler *r = data;
    olm_error err;
    atomic_store(&r->running, true);
    atomic_store(&r->pass_start_ms, (uint64_t)olm_time_mono_ms());
    int rc = run_pass(r, &err);
    atomic_store(&r->pass_end_ms, (uint64_t)olm_time_mono_ms());
    atomic_store(&r->running, false);
    atomic_fetch_add(&r->passes, 1);
    if (rc < 0) {
        olm_log(OLM_LOG_ERROR, "clusterOperator", UPGRADEABLE_CO_NAME, "upgradeable check: %s (will retry)", err.msg);
        return (kube_wq_result){.kind = KUBE_WQ_ERROR, .requeue_after_ms = 0};
    }
    return (kube_wq_result){.kind = KUBE_WQ_REQUEUE_AFTER, .requeue_after_ms = RESYNC_MS};
}

static void enqueue(upgradeable_reconciler *r)
{
    olm_error err;
    uint64_t delay = upgradeable_pass_delay_ms((uint64_t)olm_time_mono_ms(), atomic_load(&r->pass_start_ms),
                                               atomic_load(&r->pass_end_ms), atomic_load(&r->running));
    if (r->wq && !r->stopping && kube_workqueue_add_after(r->wq, KEY, delay, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterOperator", UPGRADEABLE_CO_NAME, "upgradeable check: could not queue a pass: %s",
                err.msg);
}

static void on_add(json_t *obj, void *data)
{
    (void)obj;
    enqueue(((informer_slot *)data)->r);
}

static void on_update(json_t *old_obj, json_t *new_obj, void *data)
{
    informer_slot *slot = data;
    /* Both are slim copies: equal ones mean nothing a pass reads changed (the resync
     * still comes). */
    if (!upgradeable_copy_unchanged(intact(slot->r->inf[slot->i]), old_obj, new_obj))
        enqueue(slot->r);
}

static void on_delete(json_t *obj, void *data)
{
    (void)obj;
    enqueue(((informer_slot *)data)->r);
}

static void on_synced(void *data)
{
    enqueue(((informer_slot *)data)->r);
}

static void on_error(const char *msg, void *data)
{
    informer_slot *slot = data;
    olm_log(kube_informer_error_is_transient(slot->r->inf[slot->i]) ? OLM_LOG_WARN : OLM_LOG_ERROR, "clusterOperator",
            UPGRADEABLE_CO_NAME, "upgradeable check: watch: %s", msg);
    unsigned lost = kube_informer_lost_events(slot->r->inf[slot->i]);
    if (lost != slot->lost) { /* passes list through REST from now on: one should see the lost change */
        slot->lost = lost;
        enqueue(slot->r);
    }
}

static void on_version_event(kube_watch_event_type type, json_t *obj, void *data)
{
    (void)type;
    (void)obj;
    enqueue(data);
}

static void on_version_synced(void *data)
{
    enqueue(data);
}

static void on_version_error(const char *msg, void *data)
{
    upgradeable_reconciler *r = data;
    olm_log(kube_watch_error_is_transient(r->version_watch) ? OLM_LOG_WARN : OLM_LOG_ERROR, "clusterOperator",
            UPGRADEABLE_CO_NAME, "upgradeable check: watch: %s", msg);
}

/* kube_informer_transform over the slim copies: the informers keep only what passes read. */
static json_t *slim_extension(const json_t *obj, void *data)
{
    (void)data;
    return upgradeable_slim_extension(obj);
}

static json_t *slim_record(const json_t *obj, void *data)
{
    (void)data;
    return upgradeable_slim_record(obj);
}

static json_t *slim_revision(const json_t *obj, void *data)
{
    (void)data;
    return upgradeable_slim_revision(obj);
}

static void free_reconciler(upgradeable_reconciler *r)
{
    void (*cb)(void *) = r->done_cb;
    void *cb_data = r->done_data;
    free(r->system_namespace);
    free(r->version_override);
    free(r);
    if (cb)
        cb(cb_data);
}

static void uvcurl_closed(void *data)
{
    free_reconciler(data);
}

static void one_closed(void *data)
{
    upgradeable_reconciler *r = data;
    if (--r->closing > 0)
        return;
    if (r->uc)
        kube_uvcurl_close(r->uc, uvcurl_closed, r);
    else
        free_reconciler(r);
}

static void retry_closed(uv_handle_t *h)
{
    one_closed(h->data);
}

/* Phase 2, once no pass or probe runs: the retry timer, the informers and the watch, then
 * the multi handle they share. */
static void stop_watches(upgradeable_reconciler *r)
{
    r->closing = 1; /* held until every stop was issued */
    if (r->retry_on) {
        r->closing++;
        r->retry_on = false;
        uv_close((uv_handle_t *)&r->retry, retry_closed);
    }
    for (int i = 0; i < NINFORMERS; i++) {
        if (r->inf[i]) {
            r->closing++;
            kube_informer_stop(r->inf[i], one_closed, r);
            r->inf[i] = NULL;
        }
    }
    if (r->version_watch) {
        r->closing++;
        kube_watch_stop(r->version_watch, one_closed, r);
        r->version_watch = NULL;
    }
    one_closed(r);
}

static void wq_done(void *data)
{
    upgradeable_reconciler *r = data;
    r->wq = NULL;
    stop_watches(r);
}

void upgradeable_reconciler_stop(upgradeable_reconciler *r, void (*done_cb)(void *data), void *data)
{
    if (!r || r->stopping)
        return;
    r->stopping = true;
    r->done_cb = done_cb;
    r->done_data = data;
    if (r->wq)
        kube_workqueue_shutdown(r->wq, false, wq_done, r); /* waits for a running pass */
    else if (!r->probing)
        stop_watches(r); /* else probe_done does, once the probe has returned */
}

unsigned upgradeable_reconciler_passes(const upgradeable_reconciler *r)
{
    return atomic_load(&((upgradeable_reconciler *)r)->passes);
}

static int start_informer(upgradeable_reconciler *r, int i, const char *path, const char *label,
                          kube_informer_transform slim, olm_error *err)
{
    kube_watch_options wo = {.path = path, .label_selector = label, .keep_metadata_only = true};
    kube_informer_handlers h = {on_add, on_update, on_delete, on_synced, on_error};
    r->slot[i] = (informer_slot){.r = r, .i = i};
    r->inf[i] = kube_informer_new(r->uc, kube_client_config(r->client), &wo, &h, &r->slot[i], err);
    if (!r->inf[i])
        return -1;
    kube_informer_set_transform(r->inf[i], slim);
    return kube_informer_start(r->inf[i], err);
}

static int start_version_watch(upgradeable_reconciler *r, olm_error *err)
{
    kube_watch_options wo = {.path = "/apis/config.openshift.io/v1/clusterversions",
                             .field_selector = "metadata.name=version",
                             .keep_metadata_only = true};
    kube_watch_handlers h = {on_version_event, on_version_synced, on_version_error};
    r->version_watch = kube_watch_new(r->uc, kube_client_config(r->client), &wo, &h, r, err);
    return r->version_watch ? kube_watch_start(r->version_watch, err) : -1;
}

/* After discovery said config.openshift.io/v1 is served: the informers, the watch and the
 * work queue, and a first pass.  0, or -1 with err (what was started is stopped with the
 * reconciler). */
static int start_watching(upgradeable_reconciler *r, olm_error *err)
{
    char *secrets_path = NULL;
    if (asprintf(&secrets_path, "/api/v1/namespaces/%s/secrets", r->system_namespace) < 0)
        return olm_error_set(err, "out of memory");
    int rc = 0;
    if (!(r->uc = kube_uvcurl_new(r->loop, err)))
        rc = -1;
    kube_workqueue_options qo = {.concurrency = 1};
    if (rc == 0 && !(r->wq = kube_workqueue_new(r->loop, &qo, reconcile_cb, r, err)))
        rc = -1;
    if (rc == 0)
        rc = start_informer(r, I_EXTENSIONS, "/apis/olm.operatorframework.io/v1/clusterextensions", NULL,
                            slim_extension, err);
    if (rc == 0)
        rc = start_informer(r, I_RECORDS, secrets_path, INSTALL_RECORD_LABEL "=true", slim_record, err);
    if (rc == 0 && r->opts.revisions)
        rc = start_informer(r, I_REVISIONS, "/apis/olm.operatorframework.io/v1/clusterobjectsets",
                            "olm.operatorframework.io/owner-name", slim_revision, err);
    if (rc == 0)
        rc = start_version_watch(r, err);
    free(secrets_path);
    if (rc == 0)
        enqueue(r); /* writes the condition even when no watched object exists */
    return rc;
}

static void retry_later(upgradeable_reconciler *r);

static void probe_work(uv_work_t *w)
{
    upgradeable_reconciler *r = w->data;
    r->probe_rc = kube_group_version_served(r->client, UPGRADEABLE_OPENSHIFT_API, &r->probe_served, &r->probe_err);
}

static void probe_done(uv_work_t *w, int status)
{
    (void)status;
    upgradeable_reconciler *r = w->data;
    r->probing = false;
    if (r->stopping) {
        stop_watches(r);
        return;
    }
    if (r->probe_rc < 0) {
        olm_log(OLM_LOG_WARN, "upgradeable", NULL, "is %s served? %s; asking again in %llu s",
                UPGRADEABLE_OPENSHIFT_API, r->probe_err.msg, (unsigned long long)(r->retry_ms / 1000));
        retry_later(r);
        return;
    }
    if (!r->probe_served) {
        olm_log(OLM_LOG_INFO, "upgradeable", NULL, "%s is not served: not OpenShift, no upgrade blocking",
                UPGRADEABLE_OPENSHIFT_API);
        return; /* idle until stopped */
    }
    olm_error err;
    if (start_watching(r, &err) != 0) {
        olm_log(OLM_LOG_ERROR, "upgradeable", NULL, "OpenShift upgradeable check not started: %s", err.msg);
        return;
    }
    olm_log(OLM_LOG_INFO, "upgradeable", NULL, "%s is served: OpenShift upgrade blocking started",
            UPGRADEABLE_OPENSHIFT_API);
}

static void on_retry(uv_timer_t *t)
{
    upgradeable_reconciler *r = t->data;
    if (r->stopping || r->probing)
        return;
    r->probe.data = r;
    if (uv_queue_work(r->loop, &r->probe, probe_work, probe_done) == 0)
        r->probing = true;
    else
        retry_later(r);
}

/* The next probe after the current wait, which then doubles (up to PROBE_MAX_MS). */
static void retry_later(upgradeable_reconciler *r)
{
    if (!r->retry_on) {
        uv_timer_init(r->loop, &r->retry);
        r->retry.data = r;
        r->retry_on = true;
        r->retry_ms = PROBE_FIRST_MS;
    }
    uv_timer_start(&r->retry, on_retry, r->retry_ms, 0);
    r->retry_ms = r->retry_ms * 2 > PROBE_MAX_MS ? PROBE_MAX_MS : r->retry_ms * 2;
}

int upgradeable_reconciler_start(uv_loop_t *loop, kube_client *client, const upgradeable_reconcile_opts *opts,
                                 upgradeable_reconciler **out, olm_error *err)
{
    *out = NULL;
    bool served = false;
    olm_error derr;
    int drc = kube_group_version_served(client, UPGRADEABLE_OPENSHIFT_API, &served, &derr);
    if (drc == 0 && !served)
        return UPGRADEABLE_NOT_OPENSHIFT;
    upgradeable_reconciler *r = calloc(1, sizeof *r);
    if (!r)
        return olm_error_set(err, "out of memory");
    r->loop = loop;
    r->client = client;
    atomic_init(&r->passes, 0);
    atomic_init(&r->pass_start_ms, 0);
    atomic_init(&r->pass_end_ms, 0);
    atomic_init(&r->running, false);
    const char *ns = opts && opts->system_namespace && *opts->system_namespace
                         ? opts->system_namespace
                         : UPGRADEABLE_DEFAULT_SYSTEM_NAMESPACE;
    r->system_namespace = strdup(ns);
    if (opts && opts->cluster_version_override && *opts->cluster_version_override)
        r->version_override = strdup(opts->cluster_version_override);
    r->opts = (upgradeable_reconcile_opts){.system_namespace = r->system_namespace,
                                           .cluster_version_override = r->version_override,
                                           .revisions = opts && opts->revisions};
    int rc = 0;
    if (!r->system_namespace || (opts && opts->cluster_version_override && *opts->cluster_version_override &&
                                 !r->version_override))
        rc = olm_error_set(err, "out of memory");
    if (rc == 0 && drc == 0)
        rc = start_watching(r, err);
    if (rc < 0) {
        /* Tear down asynchronously like a stop; the caller gets no handle. */
        upgradeable_reconciler_stop(r, NULL, NULL);
        return -1;
    }
    if (drc < 0) {
        olm_log(OLM_LOG_WARN, "upgradeable", NULL, "is %s served? %s; asking again in %u s",
                UPGRADEABLE_OPENSHIFT_API, derr.msg, PROBE_FIRST_MS / 1000);
        retry_later(r);
    }
    *out = r;
    return 0;
}
