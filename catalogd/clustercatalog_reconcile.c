/* The ClusterCatalog reconcile (§4.1), run on the work queue's threadpool threads.
 *
 * Shape of one run, as upstream's wrapper: read the object from the informer cache, work on
 * a deep copy, compute the new status, PUT it to /status (full update carrying the
 * resourceVersion read, so a stale read gives 409 and a retry), and only then patch the
 * finalizers.  Labels are the one metadata change: see ensure_name_label(). */
#include "clustercatalog_internal.h"
#include "kube_object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalogd_log.h"
#include "clustercatalog_status.h"
#include "olm_time.h"

#define CC_API_VERSION "olm.operatorframework.io/v1"
#define CC_KIND "ClusterCatalog"

clustercatalog_reconciler *clustercatalog_reconciler_new(const clustercatalog_reconciler_config *cfg, olm_error *err)
{
    clustercatalog_reconciler *r = calloc(1, sizeof *r);
    if (!r) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    r->cfg = *cfg;
    if (uv_mutex_init(&r->records_lock) != 0) {
        free(r);
        olm_error_set(err, "creating a mutex failed");
        return NULL;
    }
    if (uv_rwlock_init(&r->store_lock) != 0) {
        uv_mutex_destroy(&r->records_lock);
        free(r);
        olm_error_set(err, "creating a rwlock failed");
        return NULL;
    }
    return r;
}

void clustercatalog_reconciler_free(clustercatalog_reconciler *r)
{
    if (!r)
        return;
    clustercatalog_records_free(r);
    uv_rwlock_destroy(&r->store_lock);
    uv_mutex_destroy(&r->records_lock);
    free(r);
}

static uint64_t now_ms(void)
{
    return clustercatalog_wall_ms();
}

static json_t *meta(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static kube_wq_result wq(kube_wq_result_kind kind, uint64_t after_ms)
{
    kube_wq_result res = {.kind = kind, .requeue_after_ms = after_ms};
    return res;
}

/* Done, and the catalog no longer exists: its poll requeue, if one is waiting, goes too. */
static kube_wq_result wq_gone(void)
{
    return (kube_wq_result){.kind = KUBE_WQ_OK, .gone = true};
}

/* Merge-patches the object and replaces *cur with the server's answer. */
static int patch_object(clustercatalog_reconciler *r, const char *name, json_t *patch, json_t **cur, olm_error *err)
{
    char *body = json_dumps(patch, JSON_COMPACT);
    if (!body)
        return olm_error_set(err, "out of memory");
    json_t *out = NULL;
    int rc = kube_patch(r->cfg.client, CC_API_VERSION, CC_KIND, NULL, name, NULL, KUBE_PATCH_MERGE, body, &out, err);
    free(body);
    if (rc == 0 && out) {
        json_decref(*cur);
        *cur = out;
    } else {
        json_decref(out);
    }
    return rc;
}

/* Upstream a mutating webhook sets the metadata.name label on every write.  This project's
 * local setup has no webhook (no serving certificates, no Service in front of catalogd), so
 * the reconciler keeps the label equal to the name itself.  With `add_finalizer` the same
 * PATCH adds our finalizer too (a new catalog needs both: one round trip instead of two),
 * the resourceVersion then making it a compare-and-swap on the list. */
static int ensure_name_label(clustercatalog_reconciler *r, const char *name, json_t **cur, bool add_finalizer,
                             olm_error *err)
{
    const char *have = json_string_value(json_object_get(json_object_get(meta(*cur), "labels"), CC_NAME_LABEL));
    bool label = !have || strcmp(have, name) != 0;
    add_finalizer = add_finalizer && !kube_object_has_finalizer(*cur, CC_FINALIZER);
    if (!label && !add_finalizer)
        return 0;
    json_t *md = json_object();
    if (!md)
        return olm_error_set(err, "out of memory");
    int bad = 0;
    if (label)
        bad |= json_object_set_new(md, "labels", json_pack("{s:s}", CC_NAME_LABEL, name));
    if (add_finalizer) {
        const char *rv = json_string_value(json_object_get(meta(*cur), "resourceVersion"));
        bad |= json_object_set_new(md, "finalizers", kube_object_finalizers_with(*cur, CC_FINALIZER, true));
        if (rv)
            bad |= json_object_set_new(md, "resourceVersion", json_string(rv));
    }
    json_t *patch = bad ? NULL : json_pack("{s:o}", "metadata", md);
    if (!patch) {
        if (bad)
            json_decref(md);
        return olm_error_set(err, "out of memory");
    }
    int rc = patch_object(r, name, patch, cur, err);
    json_decref(patch);
    if (rc == 0 && label)
        catalogd_log(CATALOGD_LOG_INFO, name, "set label %s=%s", CC_NAME_LABEL, name);
    if (rc == 0 && add_finalizer)
        catalogd_log(CATALOGD_LOG_INFO, name, "added finalizer %s", CC_FINALIZER);
    return rc;
}

/* Adds or removes our finalizer, keeping the others; the resourceVersion in the merge patch
 * makes it a compare-and-swap on the list. */
static int set_finalizer(clustercatalog_reconciler *r, const char *name, json_t **cur, bool present, olm_error *err)
{
    json_t *out = NULL;
    int rc = kube_object_set_finalizer(r->cfg.client, CC_API_VERSION, CC_KIND, *cur, CC_FINALIZER, present, NULL, &out,
                                       err);
    if (rc == 0 && out) {
        json_decref(*cur);
        *cur = out;
        catalogd_log(CATALOGD_LOG_INFO, name, "%s finalizer %s", present ? "added" : "removed", CC_FINALIZER);
    }
    return rc;
}

/* Whether a catalog lacks the name label or our finalizer (ensure_name_label's PATCH). */
static bool needs_label_patch(const json_t *cur, const char *name)
{
    const char *have = json_string_value(json_object_get(json_object_get(meta(cur), "labels"), CC_NAME_LABEL));
    return !have || strcmp(have, name) != 0 || !kube_object_has_finalizer(cur, CC_FINALIZER);
}

/* A new catalog's label + finalizer PATCH, run on a thread of its own beside the pull: a
 * round trip (5-7 ms) that only the store has to wait for (the finalizer is on the object
 * before any content is stored, as upstream), and the status write after it (which carries
 * the resourceVersion the PATCH answered). */
typedef struct label_patch {
    clustercatalog_reconciler *r;
    const char *name;
    json_t *obj; /* a copy of the object to patch; then the server's answer, until adopted */
    int rc;
    olm_error err;
    uv_thread_t thread;
    bool started, joined;
} label_patch;

static void label_patch_run(void *arg)
{
    label_patch *p = arg;
    p->rc = ensure_name_label(p->r, p->name, &p->obj, true, &p->err);
}

/* -1 when out of memory (nothing started). */
static int label_patch_start(label_patch *p, clustercatalog_reconciler *r, const char *name, const json_t *cur)
{
    *p = (label_patch){.r = r, .name = name};
    if (!(p->obj = json_deep_copy(cur)))
        return -1;
    p->started = true;
    if (uv_thread_create(&p->thread, label_patch_run, p) != 0) {
        label_patch_run(p); /* no thread to be had: in line */
        p->joined = true;
    }
    return 0;
}

/* Waits for the PATCH (NULL or never started: nothing to wait for); its result, err set on
 * failure. */
static int label_patch_wait(label_patch *p, olm_error *err)
{
    if (!p || !p->started)
        return 0;
    if (!p->joined) {
        uv_thread_join(&p->thread);
        p->joined = true;
    }
    if (p->rc != 0 && err)
        *err = p->err;
    return p->rc;
}

/* label_patch_wait, then a successful PATCH's answer replaces *cur (once), and with it
 * every string borrowed from *cur. */
static int label_patch_adopt(label_patch *p, json_t **cur, olm_error *err)
{
    int rc = label_patch_wait(p, err);
    if (rc == 0 && p && p->obj) {
        json_decref(*cur);
        *cur = p->obj;
        p->obj = NULL;
    }
    return rc;
}

static kube_wq_result kube_failed(const char *name, const char *what, int rc, const olm_error *err);

/* label_patch_adopt; when the PATCH failed, true with *res the reconcile's result. */
static bool label_patch_failed(label_patch *p, const char *name, json_t **cur, kube_wq_result *res)
{
    olm_error err;
    int rc = label_patch_adopt(p, cur, &err);
    if (rc != 0)
        *res = kube_failed(name, "patching the name label or finalizer", rc, &err);
    return rc != 0;
}

static void label_patch_end(label_patch *p)
{
    label_patch_wait(p, NULL);
    json_decref(p->obj);
    p->obj = NULL;
}

/* The store gate of clustercatalog_unpack: nothing is stored before the PATCH is done.
 * It only waits; *cur is replaced after the unpack, whose `ref` is borrowed from it. */
static int label_patch_gate(void *ctx, char *msg, size_t msgsz)
{
    olm_error err;
    int rc = label_patch_wait(ctx, &err);
    if (rc != 0)
        snprintf(msg, msgsz, "patching the name label or finalizer: %s", err.msg);
    return rc;
}

/* Writes `status` when it differs from the object's; *cur becomes the server's answer. */
static int write_status_now(clustercatalog_reconciler *r, const char *name, json_t **cur, json_t *status,
                            olm_error *err);

static int write_status(clustercatalog_reconciler *r, const char *name, json_t **cur, json_t *status, olm_error *err)
{
    double t0 = olm_time_mono_ms();
    int rc = write_status_now(r, name, cur, status, err);
    catalogd_log(CATALOGD_LOG_DEBUG, name, "status took %.1f ms%s", olm_time_mono_ms() - t0, rc ? ": failed" : "");
    return rc;
}

static int write_status_now(clustercatalog_reconciler *r, const char *name, json_t **cur, json_t *status,
                            olm_error *err)
{
    if (json_equal(json_object_get(*cur, "status"), status))
        return 0;
    if (json_object_set(*cur, "status", status) != 0)
        return olm_error_set(err, "out of memory");
    json_t *out = NULL;
    int rc = kube_update_status(r->cfg.client, *cur, &out, err);
    if (rc == 0 && out) {
        json_decref(*cur);
        *cur = out;
    } else {
        json_decref(out);
    }
    if (rc == 0) {
        json_t *p = clustercatalog_find_condition(status, CC_TYPE_PROGRESSING);
        json_t *s = clustercatalog_find_condition(status, CC_TYPE_SERVING);
        catalogd_log(CATALOGD_LOG_INFO, name, "status written: Progressing=%s/%s Serving=%s/%s",
                     p ? json_string_value(json_object_get(p, "status")) : "-",
                     p ? json_string_value(json_object_get(p, "reason")) : "-",
                     s ? json_string_value(json_object_get(s, "status")) : "-",
                     s ? json_string_value(json_object_get(s, "reason")) : "-");
    }
    return rc;
}

/* The result of a failed REST call: a conflict or any other error is retried with back-off. */
static kube_wq_result kube_failed(const char *name, const char *what, int rc, const olm_error *err)
{
    if (rc == KUBE_NOT_FOUND) /* deleted meanwhile: the delete event brings us back */
        return wq_gone();
    catalogd_log(rc == KUBE_CONFLICT ? CATALOGD_LOG_INFO : CATALOGD_LOG_WARN, name, "%s: %s%s", what, err->msg,
                 rc == KUBE_CONFLICT ? " (stale read; requeued)" : "");
    return wq(KUBE_WQ_ERROR, 0);
}

/* The object is gone from the cache (deleted, perhaps with its finalizer removed by hand):
 * make sure nothing of it is left on disk or served. */
static kube_wq_result reconcile_gone(clustercatalog_reconciler *r, const char *name)
{
    clustercatalog_record_drop(r, name);
    olm_error err;
    if (clustercatalog_remove_content(r, name, &err) != 0) {
        catalogd_log(CATALOGD_LOG_WARN, name, "removing content of deleted catalog: %s", err.msg);
        return wq(KUBE_WQ_ERROR, 0);
    }
    return wq_gone();
}

/* §4.1 step 1: availabilityMode Unavailable. */
static kube_wq_result reconcile_unavailable(clustercatalog_reconciler *r, const char *name, json_t **cur, int64_t gen)
{
    olm_error err;
    clustercatalog_record_drop(r, name);
    if (clustercatalog_remove_content(r, name, &err) != 0) {
        catalogd_log(CATALOGD_LOG_WARN, name, "removing content: %s", err.msg);
        return wq(KUBE_WQ_ERROR, 0);
    }
    json_t *status = json_deep_copy(json_object_get(*cur, "status"));
    if (!status)
        status = json_object();
    time_t now = time(NULL);
    clustercatalog_clear_served_source(status);
    int rc = clustercatalog_set_condition(status, CC_TYPE_PROGRESSING, "True", CC_REASON_SUCCEEDED, CC_MSG_UNAVAILABLE_MODE,
                              gen, now);
    rc |= clustercatalog_set_condition(status, CC_TYPE_SERVING, "False", CC_REASON_USER_UNAVAILABLE, CC_MSG_UNAVAILABLE_MODE,
                           gen, now);
    if (rc != 0) {
        json_decref(status);
        catalogd_log(CATALOGD_LOG_ERROR, name, "out of memory building status");
        return wq(KUBE_WQ_ERROR, 0);
    }
    rc = write_status(r, name, cur, status, &err);
    json_decref(status);
    if (rc != 0)
        return kube_failed(name, "writing status", rc, &err);
    if ((rc = set_finalizer(r, name, cur, false, &err)) != 0)
        return kube_failed(name, "removing finalizer", rc, &err);
    return wq(KUBE_WQ_OK, 0);
}

/* §4.1 step 2, deletion: remove the content, Serving False/Unavailable, release the finalizer. */
static kube_wq_result reconcile_deleting(clustercatalog_reconciler *r, const char *name, json_t **cur, int64_t gen)
{
    if (!kube_object_has_finalizer(*cur, CC_FINALIZER))
        return wq(KUBE_WQ_OK, 0); /* others' finalizers: nothing of ours left to do */
    olm_error err;
    clustercatalog_record_drop(r, name);
    json_t *status = json_deep_copy(json_object_get(*cur, "status"));
    if (!status)
        status = json_object();
    time_t now = time(NULL);
    int rc;
    if (clustercatalog_remove_content(r, name, &err) != 0) {
        rc = clustercatalog_set_condition(status, CC_TYPE_PROGRESSING, "True", CC_REASON_RETRYING, err.msg, gen, now);
        catalogd_log(CATALOGD_LOG_WARN, name, "removing content: %s", err.msg);
        olm_error e2;
        if (rc == 0)
            write_status(r, name, cur, status, &e2);
        json_decref(status);
        return wq(KUBE_WQ_ERROR, 0);
    }
    clustercatalog_clear_served_source(status);
    rc = clustercatalog_set_condition(status, CC_TYPE_SERVING, "False", CC_REASON_UNAVAILABLE, "", gen, now);
    if (rc == 0)
        rc = write_status(r, name, cur, status, &err);
    json_decref(status);
    if (rc != 0 && rc != KUBE_NOT_FOUND)
        return kube_failed(name, "writing status", rc, &err);
    if ((rc = set_finalizer(r, name, cur, false, &err)) != 0)
        return kube_failed(name, "removing finalizer", rc, &err);
    catalogd_log(CATALOGD_LOG_INFO, name, "content removed; catalog released for deletion");
    return wq(KUBE_WQ_OK, 0);
}

/* §4.1 step 3: does the catalog need a pull now?  When not, *after_ms is the wait until
 * the next poll (0: polling off). */
static bool needs_unpack(clustercatalog_reconciler *r, const char *name, const json_t *cur, int64_t gen, const clustercatalog_record *rec,
                         bool have_rec, const char *base_url, uint64_t *after_ms, unsigned *seed)
{
    *after_ms = 0;
    if (!have_rec || !clustercatalog_content_exists(r, name))
        return true;
    if (!clustercatalog_status_matches_success(json_object_get(cur, "status"), rec->ref, base_url, rec->last_unpacked, gen))
        return true;
    if (rec->generation != gen)
        return true;
    uint64_t interval = clustercatalog_poll_interval_ms(cur, r->cfg.poll_override_ms);
    if (!interval)
        return false;
    uint64_t now = now_ms();
    if (rec->last_poll_ms + interval <= now)
        return true;
    uint64_t next = rec->last_poll_ms + clustercatalog_jitter_ms(interval, seed);
    *after_ms = next > now ? next - now : 1;
    return false;
}

/* Progressing after a failed pull/store; Serving is left as it was (§4.1 step 5). */
static kube_wq_result reconcile_failed(clustercatalog_reconciler *r, const char *name, json_t **cur, int64_t gen,
                                       const char *msg, bool terminal)
{
    clustercatalog_record_drop(r, name); /* upstream: any error forces the next run to unpack again */
    catalogd_log(CATALOGD_LOG_WARN, name, "%s%s", msg, terminal ? " (terminal)" : "; will retry");
    json_t *status = json_deep_copy(json_object_get(*cur, "status"));
    if (!status)
        status = json_object();
    int rc = clustercatalog_set_condition(status, CC_TYPE_PROGRESSING, terminal ? "False" : "True",
                              terminal ? CC_REASON_BLOCKED : CC_REASON_RETRYING, msg, gen, time(NULL));
    olm_error err;
    if (rc == 0)
        rc = write_status(r, name, cur, status, &err);
    else
        olm_error_set(&err, "out of memory");
    json_decref(status);
    if (rc != 0)
        return kube_failed(name, "writing status", rc, &err);
    return wq(terminal ? KUBE_WQ_TERMINAL : KUBE_WQ_ERROR, 0);
}

/* `lp`: the label/finalizer PATCH still running (NULL: none); every path waits for it before
 * it writes or returns. */
static kube_wq_result reconcile_available(clustercatalog_reconciler *r, const char *name, json_t **cur, int64_t gen,
                                          label_patch *lp)
{
    char base_url[1200];
    snprintf(base_url, sizeof base_url, "%s/%s", r->cfg.url_root, name);
    clustercatalog_record rec;
    bool have_rec = clustercatalog_record_get(r, name, &rec);
    unsigned seed = (unsigned)now_ms() ^ (unsigned)(uintptr_t)name;
    uint64_t after = 0;
    kube_wq_result res;
    if (!needs_unpack(r, name, *cur, gen, &rec, have_rec, base_url, &after, &seed)) {
        free(rec.ref);
        if (label_patch_failed(lp, name, cur, &res))
            return res;
        return after ? wq(KUBE_WQ_REQUEUE_AFTER, after) : wq(KUBE_WQ_OK, 0);
    }

    /* §4.1 step 4: the source. */
    json_t *source = json_object_get(json_object_get(*cur, "spec"), "source");
    const char *type = json_string_value(json_object_get(source, "type"));
    const char *ref = json_string_value(json_object_get(json_object_get(source, "image"), "ref"));
    char msg[OLM_ERROR_MAX];
    if (!type || strcmp(type, "Image") != 0 || !ref) {
        free(rec.ref);
        if (!type || strcmp(type, "Image") != 0)
            snprintf(msg, sizeof msg, "unknown source type \"%s\"", type ? type : "");
        else
            snprintf(msg, sizeof msg, "error parsing ClusterCatalog \"%s\", image source is nil", name);
        if (label_patch_failed(lp, name, cur, &res))
            return res;
        return reconcile_failed(r, name, cur, gen, msg, true);
    }

    /* Steps 5-6. */
    char *digest_ref = NULL;
    time_t last_unpacked = 0;
    bool terminal = false;
    store_draft *draft = NULL;
    clustercatalog_store_gate gate = {.fn = lp ? label_patch_gate : NULL, .ctx = lp};
    int rc = clustercatalog_unpack(r, name, ref, have_rec ? rec.ref : NULL, &gate, &digest_ref, &last_unpacked, &draft,
                                   msg, sizeof msg, &terminal);
    free(rec.ref);
    if (label_patch_failed(lp, name, cur, &res)) {
        /* The gate stopped the store, so there is no draft; were there one, drop it. */
        clustercatalog_drop_draft(r, draft);
        free(digest_ref);
        return res;
    }
    if (rc != 0)
        return reconcile_failed(r, name, cur, gen, msg, terminal);

    /* Step 7. */
    clustercatalog_record nrec = {.ref = digest_ref, .last_unpacked = last_unpacked, .last_poll_ms = now_ms(), .generation = gen};
    json_t *status = json_deep_copy(json_object_get(*cur, "status"));
    if (!status)
        status = json_object();
    time_t now = time(NULL);
    olm_error err;
    rc = clustercatalog_set_condition(status, CC_TYPE_PROGRESSING, "True", CC_REASON_SUCCEEDED, CC_MSG_UNPACKED, gen, now);
    rc |= clustercatalog_set_condition(status, CC_TYPE_SERVING, "True", CC_REASON_AVAILABLE, CC_MSG_SERVING, gen, now);
    rc |= clustercatalog_set_served_source(status, digest_ref, base_url, last_unpacked);
    if (rc != 0 || clustercatalog_record_set(r, name, &nrec) != 0) {
        json_decref(status);
        free(digest_ref);
        clustercatalog_settle_store(r, name, draft);
        catalogd_log(CATALOGD_LOG_ERROR, name, "out of memory recording the unpack");
        return wq(KUBE_WQ_ERROR, 0);
    }
    /* The record stays even if the status write fails: the store holds this digest, and the
     * next run sees the status mismatch, resolves the ref again (one manifest request) and
     * writes the status without loading or storing the catalog again. */
    rc = write_status(r, name, cur, status, &err);
    json_decref(status);
    free(digest_ref);
    /* Served already, whatever the status write did: now the store is written. */
    if (clustercatalog_settle_store(r, name, draft) != 0)
        return wq(KUBE_WQ_ERROR, 0);
    if (rc != 0)
        return kube_failed(name, "writing status", rc, &err);
    uint64_t interval = clustercatalog_poll_interval_ms(*cur, r->cfg.poll_override_ms);
    return interval ? wq(KUBE_WQ_REQUEUE_AFTER, clustercatalog_jitter_ms(interval, &seed)) : wq(KUBE_WQ_OK, 0);
}

static kube_wq_result reconcile(const char *key, clustercatalog_reconciler *r);

void clustercatalog_reconciler_lead(clustercatalog_reconciler *r)
{
    atomic_store(&r->leading, true);
}

bool clustercatalog_reconciler_leading(clustercatalog_reconciler *r)
{
    return atomic_load(&r->leading);
}

kube_wq_result clustercatalog_reconcile(const char *key, void *data)
{
    double t0 = olm_time_mono_ms();
    clustercatalog_reconciler *r = data;
    bool leading = atomic_load(&r->leading);
    kube_wq_result res = leading ? reconcile(key, r) : clustercatalog_follow(key, r);
    static const char *const result[] = {"ok", "error (retried)", "requeue", "terminal error"};
    /* "reconcile ending", at the default level, as upstream's catalogd logs it: upstream's e2e
     * reads the leader's log for it ("catalog ... is reconciled"). */
    catalogd_log(leading ? CATALOGD_LOG_INFO : CATALOGD_LOG_DEBUG, key, "%s (%.1f ms: %s)",
                 leading ? "reconcile ending" : "follow ending", olm_time_mono_ms() - t0,
                 (unsigned)res.kind < 4 ? result[res.kind] : "?");
    return res;
}

static kube_wq_result reconcile(const char *key, clustercatalog_reconciler *r)
{
    json_t *cached = kube_informer_get(r->cfg.informer, key);
    if (!cached)
        return reconcile_gone(r, key);
    /* Cached objects are shared and immutable: work on our own copy. */
    json_t *cur = json_deep_copy(cached);
    json_decref(cached);
    if (!cur) {
        catalogd_log(CATALOGD_LOG_ERROR, key, "out of memory copying the object");
        return wq(KUBE_WQ_ERROR, 0);
    }
    const char *name = key; /* cluster-scoped: the key is the name */
    int64_t gen = json_integer_value(json_object_get(meta(cur), "generation"));
    bool deleting = json_object_get(meta(cur), "deletionTimestamp") != NULL;
    const char *mode = json_string_value(json_object_get(json_object_get(cur, "spec"), "availabilityMode"));
    bool unavailable = mode && strcmp(mode, "Unavailable") == 0;
    olm_error err;
    kube_wq_result res;
    /* A new catalog gets its label and our finalizer in one PATCH, and the pull runs in this
     * same run, beside it (label_patch): the finalizer is on the object (the PATCH succeeded)
     * before any content is stored.  Upstream stops after adding it and waits for the update
     * event; that event still comes, and finds everything done. */
    label_patch lp = {0};
    bool beside_pull = !deleting && !unavailable && needs_label_patch(cur, name);
    int rc = 0;
    if (beside_pull)
        rc = label_patch_start(&lp, r, name, cur) == 0 ? 0 : olm_error_set(&err, "out of memory");
    else if (!deleting)
        rc = ensure_name_label(r, name, &cur, !unavailable, &err);
    /* Read after the PATCH: it replaces `cur`, and with it every borrowed string. */
    mode = json_string_value(json_object_get(json_object_get(cur, "spec"), "availabilityMode"));
    unavailable = mode && strcmp(mode, "Unavailable") == 0;
    if (rc != 0)
        res = kube_failed(name, "patching the name label or finalizer", rc, &err);
    else if (beside_pull)
        res = reconcile_available(r, name, &cur, gen, &lp);
    else if (unavailable)
        res = reconcile_unavailable(r, name, &cur, gen);
    else if (deleting)
        res = reconcile_deleting(r, name, &cur, gen);
    else if (!kube_object_has_finalizer(cur, CC_FINALIZER))
        /* Add it and stop: the update event brings the catalog back with the finalizer. */
        res = (rc = set_finalizer(r, name, &cur, true, &err)) == 0 ? wq(KUBE_WQ_OK, 0)
                                                                   : kube_failed(name, "adding finalizer", rc, &err);
    else
        res = reconcile_available(r, name, &cur, gen, NULL);
    label_patch_end(&lp);
    json_decref(cur);
    return res;
}
