/* objectset_reconcile: one pass over a ClusterObjectSet, as upstream's
 * ClusterObjectSetReconciler.Reconcile (clusterobjectset_controller.go) over boxcutter's
 * RevisionEngine: deleted -> finalizer off; referenced Secrets mutable -> Blocked; phases
 * resolved and digested (a changed digest -> Blocked); Archived -> teardown; else the phases in
 * order until one is not complete, then the conditions.  The status is written once at the end
 * when it changed. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_object.h"
#include "olm_log.h"
#include "olm_time.h"
#include "objectset_internal.h"
#include "objectset_watch.h"

#define SA_NAME_ANNOTATION "olm.operatorframework.io/service-account-name"
#define SA_NS_ANNOTATION "olm.operatorframework.io/service-account-namespace"
#define OWNER_NAME_LABEL "olm.operatorframework.io/owner-name"

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* boxcutter's ObjectRef.String(): "<group>/<version>, Kind=<Kind> <namespace>/<name>" (the
 * group empty for the core group; the namespace empty for a cluster-scoped object). */
void objectset_object_ref(strbuf *sb, const json_t *o)
{
    const char *av = str(o, "apiVersion");
    const char *ns = kube_object_string(o, "metadata.namespace");
    strbuf_printf(sb, "%s%s, Kind=%s %s/%s", strchr(av, '/') ? "" : "/", av, str(o, "kind"), ns ? ns : "",
                  kube_object_string(o, "metadata.name") ?: "");
}

objectset_reconciler *objectset_reconciler_new(const objectset_reconciler_config *cfg, olm_error *err)
{
    objectset_reconciler *r = calloc(1, sizeof *r);
    if (!r) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    r->cfg = *cfg;
    if (pthread_mutex_init(&r->own_lock, NULL) != 0 || !(r->own_writes = json_object()) ||
        !(r->last_read = json_object()) || !(r->rolling_secrets = json_object())) {
        json_decref(r->own_writes);
        json_decref(r->last_read);
        json_decref(r->rolling_secrets);
        free(r);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    if (!r->cfg.minute_ms)
        r->cfg.minute_ms = 60000;
    if (!r->cfg.poll_ms)
        r->cfg.poll_ms = 2000;
    if (!r->cfg.poll_max_ms)
        r->cfg.poll_max_ms = 10000;
    if (!r->cfg.resync_ms)
        r->cfg.resync_ms = 30000;
    if (!r->cfg.watched_resync_ms)
        r->cfg.watched_resync_ms = 300000;
    return r;
}

void objectset_reconciler_free(objectset_reconciler *r)
{
    if (!r)
        return;
    json_decref(r->own_writes);
    json_decref(r->last_read);
    json_decref(r->rolling_secrets);
    pthread_mutex_destroy(&r->own_lock);
    free(r);
}

/* Whether `cos` is worth keeping whole between passes: the revisions operator-controller makes
 * reference their objects in Secrets (a set is a few hundred bytes); a set written by hand with
 * its objects inline may be large, and is read again each pass. */
static bool keep_whole(const json_t *cos)
{
    size_t i, j;
    const json_t *ph, *o;
    json_array_foreach(kube_object_path(cos, "spec.phases"), i, ph) {
        json_array_foreach(json_object_get(ph, "objects"), j, o) {
            if (json_object_get(o, "object"))
                return false;
        }
    }
    return true;
}

/* Keeps (or, NULL, drops) the whole set as a GET or a write of ours returned it.  Called once,
 * at the end of a pass, when the pass knows whether the set is still rolling out: a set kept
 * at each GET and write was serialized there and then dropped by most passes. */
static void remember_read(objectset_reconciler *r, const char *name, const json_t *cos)
{
    const char *rv = kube_object_string(cos, "metadata.resourceVersion");
    json_t *kept = cos && rv && keep_whole(cos) ? json_deep_copy(cos) : NULL;
    json_object_del(json_object_get(kept, "metadata"), "managedFields"); /* an update without them keeps them */
    char *text = kept ? json_dumps(kept, JSON_COMPACT) : NULL;
    json_decref(kept);
    json_t *entry = text ? json_pack("{s:s, s:s}", "rv", rv, "text", text) : NULL;
    free(text);
    pthread_mutex_lock(&r->own_lock);
    if (entry)
        json_object_set_new(r->last_read, name, entry);
    else
        json_object_del(r->last_read, name);
    pthread_mutex_unlock(&r->own_lock);
}

/* The set a pass starts from.  The informer keeps a small form of each set with its
 * resourceVersion; when that is the version our last GET or write returned, that copy is the
 * set as it is (a resourceVersion names one content), so no GET: a revision rolling out is
 * passed ~9 times (its objects' changes), each pass had read it again.  Otherwise (another
 * writer, the informer behind, no informer) a GET, as upstream's cached client would read it
 * from its informer. */
static int read_set(objectset_reconciler *r, const char *key, json_t **out, bool *from_kept, olm_error *err)
{
    *out = NULL;
    *from_kept = false;
    json_t *small = r->cfg.sets ? kube_informer_get(r->cfg.sets, key) : NULL;
    const char *rv = kube_object_string(small, "metadata.resourceVersion");
    if (rv) {
        pthread_mutex_lock(&r->own_lock);
        const json_t *kept = json_object_get(r->last_read, key);
        const char *kept_rv = json_string_value(json_object_get(kept, "rv"));
        if (kept_rv && strcmp(kept_rv, rv) == 0)
            *out = json_loads(json_string_value(json_object_get(kept, "text")), 0, NULL);
        pthread_mutex_unlock(&r->own_lock);
    }
    json_decref(small);
    if (*out) {
        *from_kept = true;
        return 0;
    }
    return kube_get(r->cfg.admin, OBJECTSET_API_VERSION, OBJECTSET_KIND, NULL, key, out, err);
}

void objectset_note_own_write(objectset_reconciler *r, const char *name, const json_t *written)
{
    const char *rv = kube_object_string(written, "metadata.resourceVersion");
    pthread_mutex_lock(&r->own_lock);
    if (rv)
        json_object_set_new(r->own_writes, name, json_string(rv));
    else
        json_object_del(r->own_writes, name);
    pthread_mutex_unlock(&r->own_lock);
}

bool objectset_reconciler_own_write(objectset_reconciler *r, const char *name, const char *rv)
{
    if (!r || !name || !rv)
        return false;
    pthread_mutex_lock(&r->own_lock);
    const char *own = json_string_value(json_object_get(r->own_writes, name));
    bool echo = own && strcmp(own, rv) == 0;
    if (echo)
        json_object_del(r->own_writes, name);
    pthread_mutex_unlock(&r->own_lock);
    return echo;
}

void objectset_reconciler_forget(objectset_reconciler *r, const char *name)
{
    if (!r || !name)
        return;
    pthread_mutex_lock(&r->own_lock);
    json_object_del(r->own_writes, name);
    json_object_del(r->last_read, name);
    json_object_del(r->rolling_secrets, name);
    pthread_mutex_unlock(&r->own_lock);
}

/* The Secret reads a pass of `cos` starts with.  While a revision rolls out it is passed again
 * at each change of its objects (a Deployment's ~3), and its object Secrets are immutable: the
 * reads of its earlier passes of the same generation serve (a Secret found missing is not
 * kept, so it is read again).  Once rolled out (or blocked, retrying) each pass reads them
 * anew, as upstream's: a deleted Secret is then seen. */
static json_t *secrets_memo(objectset_reconciler *r, const char *name, const json_t *cos, char *id, size_t idlen)
{
    snprintf(id, idlen, "%s/%lld", kube_object_string(cos, "metadata.uid") ?: "",
             (long long)json_integer_value(kube_object_path(cos, "metadata.generation")));
    json_t *memo = NULL;
    pthread_mutex_lock(&r->own_lock);
    const json_t *kept = json_object_get(r->rolling_secrets, name);
    const char *for_id = json_string_value(json_object_get(kept, "for"));
    if (for_id && strcmp(for_id, id) == 0)
        memo = json_loads(json_string_value(json_object_get(kept, "text")), 0, NULL);
    json_object_del(r->rolling_secrets, name);
    pthread_mutex_unlock(&r->own_lock);
    return json_is_object(memo) ? memo : (json_decref(memo), json_object());
}

/* Whether a pass left the set rolling out (Progressing RollingOut): more passes are coming. */
static bool rolling_out(const json_t *status)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c) {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *reason = json_string_value(json_object_get(c, "reason"));
        if (type && strcmp(type, "Progressing") == 0)
            return reason && strcmp(reason, "RollingOut") == 0;
    }
    return false;
}

static void keep_secrets_memo(objectset_reconciler *r, const char *name, const char *id, json_t *memo)
{
    char *text = json_dumps(memo, JSON_COMPACT);
    json_t *entry = text ? json_pack("{s:s, s:s}", "for", id, "text", text) : NULL;
    free(text);
    if (!entry)
        return;
    pthread_mutex_lock(&r->own_lock);
    json_object_set_new(r->rolling_secrets, name, entry);
    pthread_mutex_unlock(&r->own_lock);
}

bool objectset_is_archived(const json_t *cos)
{
    const char *ls = kube_object_string(cos, "spec.lifecycleState");
    return ls && strcmp(ls, "Archived") == 0;
}

/* The other Active, not deleted revisions with the same owner-name label (none without it). */
static json_t *other_active(objectset_pass *p)
{
    json_t *out = json_array();
    const json_t *labels = kube_object_path(p->cos, "metadata.labels");
    const char *owner = json_string_value(json_object_get(labels, OWNER_NAME_LABEL));
    if (!owner || !out)
        return out;
    json_t *all = NULL;
    if (p->r->cfg.sets) {
        all = kube_informer_list(p->r->cfg.sets);
    } else {
        char sel[400];
        snprintf(sel, sizeof sel, "%s=%s", OWNER_NAME_LABEL, owner);
        kube_list_options lo = {.label_selector = sel};
        json_t *list = NULL;
        olm_error lerr;
        if (kube_list(p->r->cfg.admin, OBJECTSET_API_VERSION, OBJECTSET_KIND, NULL, &lo, &list, &lerr) == 0)
            all = json_incref(json_object_get(list, "items"));
        json_decref(list);
    }
    size_t i;
    json_t *o;
    json_array_foreach(all, i, o) {
        const char *on = json_string_value(json_object_get(kube_object_path(o, "metadata.labels"), OWNER_NAME_LABEL));
        if (!on || strcmp(on, owner) != 0 || strcmp(kube_object_string(o, "metadata.name") ?: "", p->name) == 0)
            continue;
        if (objectset_is_archived(o) || kube_object_string(o, "metadata.deletionTimestamp"))
            continue;
        json_array_append(out, o);
    }
    json_decref(all);
    return out;
}

/* The client the objects are handled with (objectset.h, Identity).  *owned tells whether the
 * caller frees it.  A token from the shared source is remembered in the pass (p->token) so a
 * failed pass can hand it back as rejected.  NULL with err. */
static kube_client *identity(objectset_pass *p, bool *owned, olm_error *err)
{
    *owned = false;
    const json_t *ann = kube_object_path(p->cos, "metadata.annotations");
    const char *sa = json_string_value(json_object_get(ann, SA_NAME_ANNOTATION));
    const char *ns = json_string_value(json_object_get(ann, SA_NS_ANNOTATION));
    if (!sa || !ns || !*sa || !*ns)
        return p->r->cfg.admin;
    char *token = NULL;
    time_t exp = 0;
    olm_error terr;
    const objectset_token_source *ts = &p->r->cfg.tokens;
    int rc = ts->get ? ts->get(ts->data, ns, sa, &token, &terr)
                     : kube_token_request(p->r->cfg.admin, ns, sa, 3600, NULL, &token, &exp, &terr);
    if (rc != 0) {
        olm_error_set(err, "failed to get a token for ServiceAccount %s/%s: %s", ns, sa, terr.msg);
        return NULL;
    }
    kube_client *c = kube_client_new_for_token(p->r->cfg.admin, token, NULL, err);
    if (ts->get && c) {
        p->token = token; /* kept for tokens.rejected; freed by the caller */
        p->token_ns = strdup(ns); /* p->cos may be replaced (the finalizer patch) */
        p->token_sa = strdup(sa);
    } else {
        explicit_bzero(token, strlen(token));
        free(token);
    }
    *owned = c != NULL;
    return c;
}

int objectset_set_finalizer(objectset_pass *p, bool present, olm_error *err)
{
    json_t *latest = NULL;
    olm_error ferr;
    int rc = kube_object_set_finalizer(p->r->cfg.admin, OBJECTSET_API_VERSION, OBJECTSET_KIND, p->cos,
                                       OBJECTSET_FINALIZER, present, NULL, &latest, &ferr);
    if (rc != 0)
        return olm_error_set(err, "%s teardown finalizer: %s", present ? "adding" : "removing", ferr.msg);
    if (latest) {
        objectset_note_own_write(p->r, p->name, latest);
        json_decref(p->cos);
        p->cos = latest;
    }
    return 0;
}

/* Every type the phases hold is watched (upstream's establishWatch, before the rollout).
 * p->watched tells whether all of them already were. */
static void watch_kinds(objectset_pass *p, const objectset_phases *ph)
{
    p->watched = p->r->cfg.watches != NULL;
    if (!p->r->cfg.watches)
        return;
    /* The credential this pass acts with (identity()), offered for the types operator-controller
     * may not watch itself. */
    char as[512] = "";
    if (p->token && p->token_ns && p->token_sa)
        snprintf(as, sizeof as, "%s/%s", p->token_ns, p->token_sa);
    for (size_t i = 0; i < ph->n; i++) {
        size_t j;
        const json_t *o;
        json_array_foreach(ph->items[i].objects, j, o) {
            kube_resource_info ri;
            olm_error rerr;
            if (kube_resolve_kind(p->r->cfg.admin, str(o, "apiVersion"), str(o, "kind"), &ri, &rerr) != 0) {
                p->watched = false;
                continue; /* the rollout reports it */
            }
            const char *ns = kube_object_string(o, "metadata.namespace");
            char *path = kube_resource_path(&ri, NULL, NULL, NULL, &rerr);
            char *ns_path = ri.namespaced && ns && *ns ? kube_resource_path(&ri, ns, NULL, NULL, &rerr) : NULL;
            if (!objectset_watches_want_object(p->r->cfg.watches, path, ns_path, p->name, *as ? as : NULL, p->token))
                p->watched = false;
            free(ns_path);
            free(path);
        }
    }
}

static kube_wq_result reconcile(objectset_pass *p)
{
    if (kube_object_string(p->cos, "metadata.deletionTimestamp")) {
        olm_error ferr;
        if (objectset_set_finalizer(p, false, &ferr) != 0) {
            olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "%s", ferr.msg);
            return objectset_failed();
        }
        return objectset_ok();
    }
    time_t now = p->r->cfg.now ? p->r->cfg.now() : time(NULL);
    p->remaining_ms = objectset_deadline_remaining_ms(p->cos, p->r->cfg.minute_ms, now, &p->has_deadline);
    time_t created;
    const char *ct = kube_object_string(p->cos, "metadata.creationTimestamp");
    p->age_ms = ct && kube_parse_time(ct, &created) == 0 ? ((int64_t)now - (int64_t)created) * 1000 : -1;
    p->s.deadline_exceeded = p->has_deadline && p->remaining_ms <= 0;
    p->s.deadline_minutes = json_integer_value(json_object_get(json_object_get(p->cos, "spec"),
                                                               "progressDeadlineMinutes"));
    /* Blocked takes precedence over ProgressDeadlineExceeded: it is more actionable. */
    char *blocked = NULL;
    olm_error err;
    char memo_id[512];
    json_t *secrets = secrets_memo(p->r, p->name, p->cos, memo_id, sizeof memo_id); /* Secret reads */
    int im = objectset_check_immutable(p->r->cfg.admin, secrets, p->cos, &blocked, &err);
    if (im != 0) {
        objectset_mark_not_progressing(&p->s, "Blocked", im > 0 ? blocked : err.msg);
        free(blocked);
        json_decref(secrets);
        return objectset_ok();
    }
    const json_t *probes = json_object_get(json_object_get(p->cos, "spec"), "progressionProbes");
    objectset_phases ph = {0};
    if (probe_user_check(probes, &err) != 0 || objectset_resolve(p->r->cfg.admin, secrets, p->cos, &ph, &err) != 0) {
        json_decref(secrets);
        objectset_set_retrying(&p->s, err.msg);
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "converting to boxcutter revision: %s", err.msg);
        kube_wq_result res = objectset_failed();
        if (p->has_deadline && p->remaining_ms > 0)
            res.requeue_after_ms = (uint64_t)p->remaining_ms; /* the deadline-aware rate limiter */
        return res;
    }
    json_t *observed = json_object_get(p->s.status, "observedPhases");
    if (json_array_size(observed) == 0) {
        json_t *arr = json_array();
        for (size_t i = 0; i < ph.n; i++)
            json_array_append_new(arr, json_pack("{s:s, s:s}", "name", ph.items[i].name, "digest", ph.items[i].digest));
        json_object_set_new(p->s.status, "observedPhases", arr);
    } else {
        char *msg = objectset_verify_phases(observed, &ph);
        if (msg) {
            olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "resolved phases content changed, blocking: %s", msg);
            objectset_mark_not_progressing(&p->s, "Blocked", msg);
            free(msg);
            objectset_phases_free(&ph);
            json_decref(secrets);
            return objectset_ok();
        }
    }
    bool owned = false;
    kube_client *client = identity(p, &owned, &err);
    watch_kinds(p, &ph); /* with the credential identity() found, if any, to offer */
    if (!client) {
        objectset_set_retrying(&p->s, err.msg);
        objectset_phases_free(&ph);
        json_decref(secrets);
        return objectset_failed();
    }
    json_t *others = other_active(p);
    size_t nsib = json_array_size(others);
    const char **uids = calloc(nsib + 1, sizeof *uids);
    for (size_t i = 0; uids && i < nsib; i++)
        uids[i] = kube_object_string(json_array_get(others, i), "metadata.uid") ?: "";
    const char *owner = json_string_value(json_object_get(kube_object_path(p->cos, "metadata.labels"),
                                                          OWNER_NAME_LABEL));
    objectset_target t = {
        .client = client, .cos = p->cos,
        .revision = json_integer_value(json_object_get(json_object_get(p->cos, "spec"), "revision")),
        .owner_name = owner ? owner : "", .sibling_uids = uids, .nsiblings = uids ? nsib : 0, .probes = probes,
        .watches = p->r->cfg.watches};
    kube_wq_result res;
    if (objectset_is_archived(p->cos)) {
        res = objectset_archive(p, &t, &ph);
    } else if (objectset_set_finalizer(p, true, &err) != 0) {
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "error ensuring teardown finalizer: %s", err.msg);
        res = objectset_failed();
    } else {
        t.cos = p->cos; /* the patched version (its uid is the same) */
        res = objectset_roll_out(p, &t, &ph, others);
    }
    free(uids);
    json_decref(others);
    if (owned)
        kube_client_free(client);
    objectset_phases_free(&ph);
    if (rolling_out(p->s.status))
        keep_secrets_memo(p->r, p->name, memo_id, secrets);
    json_decref(secrets);
    return res;
}

kube_wq_result objectset_reconcile(const char *key, void *data)
{
    objectset_reconciler *r = data;
    json_t *cos = NULL;
    olm_error err;
    bool from_kept;
    int g = read_set(r, key, &cos, &from_kept, &err);
    if (g == KUBE_NOT_FOUND) {
        /* Gone: what a pass that ended after the informer's deletion kept of it goes too. */
        objectset_reconciler_forget(r, key);
        return (kube_wq_result){.kind = KUBE_WQ_OK, .gone = true};
    }
    if (g != 0) {
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", key, "%s", err.msg);
        return objectset_failed();
    }
    char now[OLM_TIME_RFC3339_SIZE];
    olm_time_rfc3339(r->cfg.now ? r->cfg.now() : time(NULL), now);
    json_t *before = json_object_get(cos, "status");
    objectset_pass p = {.r = r, .cos = cos, .name = key,
              .s = {.status = before ? json_deep_copy(before) : json_object(),
                    .generation = json_integer_value(json_object_get(json_object_get(cos, "metadata"), "generation")),
                    .now = now}};
    json_incref(cos);
    kube_wq_result res = reconcile(&p);
    if (p.token) {
        if (res.kind == KUBE_WQ_ERROR && r->cfg.tokens.rejected && p.token_ns && p.token_sa)
            r->cfg.tokens.rejected(r->cfg.tokens.data, p.token_ns, p.token_sa, p.token);
        explicit_bzero(p.token, strlen(p.token));
        free(p.token);
        free(p.token_ns);
        free(p.token_sa);
    }
    json_t *written = NULL;
    bool write_failed = false;
    if (p.s.status && (before ? !json_equal(before, p.s.status) : json_object_size(p.s.status) > 0)) {
        json_t *body = json_deep_copy(p.cos);
        if (body) {
            json_object_set(body, "status", p.s.status);
            if (kube_update_status(r->cfg.admin, body, &written, &err) != 0) {
                olm_log(OLM_LOG_ERROR, "clusterObjectSet", key, "error updating status: %s", err.msg);
                res = objectset_failed();
                write_failed = true;
            } else if (written) {
                objectset_note_own_write(r, key, written);
            }
        }
        write_failed = write_failed || !body || !written;
        json_decref(body);
    }
    /* Kept only while it rolls out, as its Secrets: a rolled-out set is passed rarely, and 1,000
     * of them need not stay in memory for it.  What is kept is the set as it now is: our status
     * write's answer, else the finalizer patch's (p.cos replaced), else the GET's; one from the
     * kept copy is kept already. */
    if (!rolling_out(p.s.status) || write_failed)
        remember_read(r, key, NULL);
    else if (written || p.cos != cos || !from_kept)
        remember_read(r, key, written ? written : p.cos);
    json_decref(written);
    json_decref(p.s.status);
    json_decref(p.cos);
    json_decref(cos);
    return res;
}
