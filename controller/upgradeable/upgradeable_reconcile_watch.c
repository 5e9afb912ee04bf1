/* upgradeable_reconcile_watch: the event-driven form of the upgrade check.  Three
 * watches: ClusterExtensions and install record Secrets, whose copies (only what the
 * check reads: each extension's name, each record's labels and record.json) the passes
 * work from, and ClusterVersion "version", a trigger only.  Every event queues the one key
 * "olm"; the work queue deduplicates a burst of events into one pass and never runs two
 * passes at once, and passes are spaced out (upgradeable_internal.h).
 *
 * A pass works from the copies once both watches have listed (so never from a cache that
 * is still filling); until then -- or for good, when they cannot list, e.g. 403 -- it
 * lists through REST (upgradeable_reconcile_once), whose failures become the fail-closed
 * conditions.  Either way the cluster version is read through REST.  (Listing every
 * ClusterExtension and record through REST for every pass cost, at 1,000 extensions, more
 * CPU in operator-controller and the apiserver than the installs.)
 *
 * Thread affinity: everything here runs on the loop thread except reconcile_cb, which
 * runs on a threadpool thread and touches only the borrowed client, the copied options,
 * the atomics and (under copies_lock) the copies. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install_record.h"
#include "kube_watch.h"
#include "kube_uvcurl.h"
#include "kube_workqueue.h"
#include "olm_log.h"
#include "olm_time.h"
#include "upgradeable_internal.h"
#include "upgradeable_reconciler.h"

#define KEY "olm"
#define RESYNC_MS (10u * 60u * 1000u) /* library-go resyncs status periodically too */
#define NWATCHES 3
#define W_EXTENSIONS 0 /* watch[] and copies[] */
#define W_RECORDS 1
#define NCOPIES 2

typedef struct watch_slot {
    struct upgradeable_reconciler *r;
    int i;
} watch_slot;

struct upgradeable_reconciler {
    uv_loop_t *loop;
    kube_client *client; /* borrowed */
    char *system_namespace, *version_override; /* owned copies */
    upgradeable_reconcile_opts opts;           /* points at the copies */
    kube_uvcurl *uc;
    kube_watch *watch[NWATCHES];
    watch_slot slot[NWATCHES];
    /* Object key -> what the check keeps of it, for the extensions and the records:
     * written on the loop thread, read by passes. */
    uv_mutex_t copies_lock;
    json_t *copies[NCOPIES];
    atomic_bool listed[NCOPIES]; /* that watch's first LIST is in copies[] */
    bool broken[NCOPIES];        /* loop thread: out of memory lost an event of that watch */
    kube_workqueue *wq;
    bool stopping;
    int closing; /* watch/uvcurl closes still pending */
    void (*done_cb)(void *data);
    void *done_data;
    atomic_uint passes;
    /* When the last pass started and ended (olm_time_mono_ms): written by the pass on its
     * thread, read by enqueue on the loop thread. */
    _Atomic uint64_t pass_start_ms, pass_end_ms;
    atomic_bool running;
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

typedef struct keyed {
    const char *key;
    json_t *obj;
} keyed;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

/* A new array of copies[i]'s objects in key order (the order the apiserver lists them
 * in: a record chosen among several for one extension is the same one), NULL when out
 * of memory.  Takes copies_lock. */
static json_t *snapshot(upgradeable_reconciler *r, int i)
{
    uv_mutex_lock(&r->copies_lock);
    size_t n = json_object_size(r->copies[i]), k = 0;
    keyed *v = malloc((n ? n : 1) * sizeof *v);
    json_t *arr = v ? json_array() : NULL;
    const char *key;
    json_t *obj;
    if (arr) {
        json_object_foreach (r->copies[i], key, obj)
            v[k++] = (keyed){key, obj};
        qsort(v, k, sizeof *v, by_key);
        for (size_t j = 0; j < k && arr; j++)
            if (json_array_append(arr, v[j].obj) != 0) {
                json_decref(arr);
                arr = NULL;
            }
    }
    uv_mutex_unlock(&r->copies_lock);
    free(v);
    return arr;
}

/* One pass: from the copies once both watches have listed, else through REST. */
static int run_pass(upgradeable_reconciler *r, olm_error *err)
{
    if (!atomic_load(&r->listed[W_EXTENSIONS]) || !atomic_load(&r->listed[W_RECORDS]))
        return upgradeable_reconcile_once(r->client, &r->opts, err);
    json_t *ces = snapshot(r, W_EXTENSIONS), *secrets = ces ? snapshot(r, W_RECORDS) : NULL;
    int rc = secrets ? upgradeable_reconcile_lists(r->client, &r->opts, ces, secrets, err)
                     : olm_error_set(err, "upgradeable: out of memory");
    json_decref(ces);
    json_decref(secrets);
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

static void on_event(kube_watch_event_type type, json_t *obj, void *data)
{
    watch_slot *slot = data;
    upgradeable_reconciler *r = slot->r;
    if (slot->i < NCOPIES) {
        char *key = kube_object_key(obj);
        json_t *keep = !key || type == KUBE_WATCH_DELETED ? NULL
                       : slot->i == W_EXTENSIONS          ? upgradeable_slim_extension(obj)
                                                          : upgradeable_slim_record(obj);
        int rc = 0;
        bool unchanged = false;
        uv_mutex_lock(&r->copies_lock);
        if (key && type == KUBE_WATCH_DELETED) {
            json_object_del(r->copies[slot->i], key);
        } else if (key && keep) {
            unchanged = upgradeable_copy_unchanged(atomic_load(&r->listed[slot->i]),
                                                   json_object_get(r->copies[slot->i], key), keep);
            rc = json_object_set_new(r->copies[slot->i], key, keep);
        } else {
            json_decref(keep);
            rc = -1;
        }
        uv_mutex_unlock(&r->copies_lock);
        free(key);
        if (rc != 0) { /* a copy short of one object: passes list through REST from now on */
            r->broken[slot->i] = true;
            atomic_store(&r->listed[slot->i], false);
        } else if (unchanged) {
            return; /* nothing a pass reads changed: no pass (the resync still comes) */
        }
    }
    enqueue(r);
}

static void on_synced(void *data)
{
    watch_slot *slot = data;
    if (slot->i < NCOPIES && !slot->r->broken[slot->i])
        atomic_store(&slot->r->listed[slot->i], true);
    enqueue(slot->r);
}
static void on_error(const char *msg, void *data)
{
    olm_log(OLM_LOG_ERROR, "clusterOperator", UPGRADEABLE_CO_NAME, "upgradeable check: watch: %s", msg);
}

static void free_reconciler(upgradeable_reconciler *r)
{
    void (*cb)(void *) = r->done_cb;
    void *cb_data = r->done_data;
    free(r->system_namespace);
    free(r->version_override);
    for (int i = 0; i < NCOPIES; i++)
        json_decref(r->copies[i]);
    uv_mutex_destroy(&r->copies_lock);
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

static void watch_closed(void *data)
{
    one_closed(data);
}

/* Phase 2, once no pass runs: the watches, then the multi handle they share. */
static void stop_watches(upgradeable_reconciler *r)
{
    r->closing = 1; /* held until every stop was issued */
    for (int i = 0; i < NWATCHES; i++) {
        if (r->watch[i]) {
            r->closing++;
            kube_watch_stop(r->watch[i], watch_closed, r);
            r->watch[i] = NULL;
        }
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
    else
        stop_watches(r);
}

unsigned upgradeable_reconciler_passes(const upgradeable_reconciler *r)
{
    return atomic_load(&((upgradeable_reconciler *)r)->passes);
}

static int start_watch(upgradeable_reconciler *r, int i, const char *path, const char *label, const char *field,
                       olm_error *err)
{
    kube_watch_options wo = {.path = path, .label_selector = label, .field_selector = field, .keep_metadata_only = true};
    kube_watch_handlers h = {on_event, on_synced, on_error};
    r->slot[i] = (watch_slot){r, i};
    r->watch[i] = kube_watch_new(r->uc, kube_client_config(r->client), &wo, &h, &r->slot[i], err);
    return r->watch[i] ? kube_watch_start(r->watch[i], err) : -1;
}

int upgradeable_reconciler_start(uv_loop_t *loop, kube_client *client, const upgradeable_reconcile_opts *opts,
                                 upgradeable_reconciler **out, olm_error *err)
{
    *out = NULL;
    bool served = false;
    if (kube_group_version_served(client, UPGRADEABLE_OPENSHIFT_API, &served, err) < 0)
        return -1;
    if (!served)
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
    for (int i = 0; i < NCOPIES; i++) {
        atomic_init(&r->listed[i], false);
        r->copies[i] = json_object();
    }
    int mrc = uv_mutex_init(&r->copies_lock);
    if (mrc != 0 || !r->copies[0] || !r->copies[1]) {
        if (mrc == 0)
            uv_mutex_destroy(&r->copies_lock);
        for (int i = 0; i < NCOPIES; i++)
            json_decref(r->copies[i]);
        free(r);
        return olm_error_set(err, "out of memory");
    }
    const char *ns = opts && opts->system_namespace && *opts->system_namespace
                         ? opts->system_namespace
                         : UPGRADEABLE_DEFAULT_SYSTEM_NAMESPACE;
    r->system_namespace = strdup(ns);
    if (opts && opts->cluster_version_override && *opts->cluster_version_override)
        r->version_override = strdup(opts->cluster_version_override);
    r->opts = (upgradeable_reconcile_opts){.system_namespace = r->system_namespace,
                                           .cluster_version_override = r->version_override};
    char *secrets_path = NULL;
    int rc = 0;
    if (!r->system_namespace || (opts && opts->cluster_version_override && *opts->cluster_version_override &&
                                 !r->version_override) ||
        asprintf(&secrets_path, "/api/v1/namespaces/%s/secrets", ns) < 0) {
        secrets_path = NULL;
        rc = olm_error_set(err, "out of memory");
    }
    if (rc == 0 && !(r->uc = kube_uvcurl_new(loop, err)))
        rc = -1;
    kube_workqueue_options qo = {.concurrency = 1};
    if (rc == 0 && !(r->wq = kube_workqueue_new(loop, &qo, reconcile_cb, r, err)))
        rc = -1;
    if (rc == 0)
        rc = start_watch(r, W_EXTENSIONS, "/apis/olm.operatorframework.io/v1/clusterextensions", NULL, NULL, err);
    if (rc == 0)
        rc = start_watch(r, W_RECORDS, secrets_path, INSTALL_RECORD_LABEL "=true", NULL, err);
    if (rc == 0)
        rc = start_watch(r, 2, "/apis/config.openshift.io/v1/clusterversions", NULL, "metadata.name=version", err);
    free(secrets_path);
    if (rc < 0) {
        /* Tear down asynchronously like a stop; the caller gets no handle. */
        upgradeable_reconciler_stop(r, NULL, NULL);
        return -1;
    }
    enqueue(r); /* writes the condition even when no watched object exists */
    *out = r;
    return 0;
}
