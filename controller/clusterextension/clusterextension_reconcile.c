/* clusterextension_reconcile: the pipeline wrapper (finalizer, installed state, status
 * write, result); the steps are in clusterextension_steps.c. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clusterextension_internal.h"
#include "kube_object.h"
#include "olm_log.h"
#include "olm_time.h"

clusterextension_reconciler *clusterextension_reconciler_new(const clusterextension_reconciler_config *cfg, olm_error *err)
{
    clusterextension_reconciler *r = calloc(1, sizeof *r);
    if (!r) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    r->cfg = *cfg;
    r->system_namespace = strdup(cfg->system_namespace ? cfg->system_namespace : "olmv1-system");
    r->cache_dir = strdup(cfg->cache_dir ? cfg->cache_dir : ".");
    if (r->cache_dir && asprintf(&r->bundle_cache, "%s/bundles", r->cache_dir) < 0)
        r->bundle_cache = NULL;
    r->infos = clusterextension_infos_new();
    pthread_mutex_init(&r->retire_mu, NULL);
    r->same = clusterextension_same_new();
    r->known_versions = json_object();
    r->records = json_object();
    pthread_mutex_init(&r->known_lock, NULL);
    if (pthread_mutex_init(&r->records_lock, NULL) != 0) {
        pthread_mutex_destroy(&r->retire_mu);
        pthread_mutex_destroy(&r->known_lock);
        json_decref(r->known_versions);
        clusterextension_same_free(r->same);
        free(r->system_namespace);
        free(r->cache_dir);
        free(r->bundle_cache);
        clusterextension_infos_free(r->infos);
        free(r);
        olm_error_set(err, "pthread_mutex_init failed");
        return NULL;
    }
    if (!r->system_namespace || !r->cache_dir || !r->bundle_cache || !r->infos || !r->same || !r->known_versions ||
        !r->records) {
        clusterextension_reconciler_free(r);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    r->cfg.system_namespace = r->system_namespace;
    r->cfg.cache_dir = r->cache_dir;
    if (!r->cfg.tokens) {
        clusterextension_token_cache_options to = {.lifetime_seconds = cfg->token_seconds, .mint = clusterextension_token_mint_kube,
                                     .mint_data = cfg->admin};
        r->own_tokens = clusterextension_token_cache_new(&to, err);
        if (!r->own_tokens) {
            clusterextension_reconciler_free(r);
            return NULL;
        }
        r->cfg.tokens = r->own_tokens;
    }
    return r;
}

void clusterextension_reconciler_free(clusterextension_reconciler *r)
{
    if (!r)
        return;
    free(r->system_namespace);
    free(r->cache_dir);
    free(r->bundle_cache);
    clusterextension_token_cache_free(r->own_tokens);
    clusterextension_infos_free(r->infos);
    clusterextension_retire_free(r);
    clusterextension_same_free(r->same);
    json_decref(r->records);
    json_decref(r->known_versions);
    pthread_mutex_destroy(&r->known_lock);
    pthread_mutex_destroy(&r->records_lock);
    free(r);
}

const double clusterextension_duration_bounds[CE_DURATION_NBOUNDS] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};

void clusterextension_reconciler_stats(clusterextension_reconciler *r, clusterextension_reconcile_stats *out)
{
    for (size_t i = 0; i < CE_DURATION_NBOUNDS; i++)
        out->duration_buckets[i] = atomic_load(&r->duration_buckets[i]);
    out->total = atomic_load(&r->total);
    out->errors = atomic_load(&r->errors);
    out->terminal = atomic_load(&r->terminal);
    out->micros_total = atomic_load(&r->micros_total);
    out->micros_max = atomic_load(&r->micros_max);
    out->repaired_objects = atomic_load(&r->repaired);
}

/* ------------------------------------------------------------ finalizer */

/* Upstream's finalizers on an extension it installed.  We adopt such an extension, so we
 * also let it go: on deletion they are removed with ours (their caches are upstream's). */
static const char *const UPSTREAM_FINALIZERS[] = {"olm.operatorframework.io/cleanup-contentmanager-cache",
                                                  "olm.operatorframework.io/cleanup-unpack-cache", NULL};

static bool is_upstream_finalizer(const char *f)
{
    for (size_t i = 0; UPSTREAM_FINALIZERS[i]; i++)
        if (strcmp(f, UPSTREAM_FINALIZERS[i]) == 0)
            return true;
    return false;
}

/* Ours; with `or_upstream`, or one of upstream's. */
static bool has_finalizer_of(const json_t *ce, bool or_upstream)
{
    const json_t *fins = json_object_get(json_object_get(ce, "metadata"), "finalizers");
    size_t i;
    const json_t *f;
    json_array_foreach((json_t *)fins, i, f) {
        const char *s = json_string_value(f);
        if (s && (strcmp(s, CE_FINALIZER) == 0 || (or_upstream && is_upstream_finalizer(s))))
            return true;
    }
    return false;
}

/* No sign that anyone ever installed it (applier_ctx.never_installed): no bundle in its
 * status and none of upstream's finalizers. */
static bool never_installed(const json_t *ce)
{
    const json_t *fins = json_object_get(json_object_get(ce, "metadata"), "finalizers");
    size_t i;
    const json_t *f;
    json_array_foreach((json_t *)fins, i, f) {
        const char *s = json_string_value(f);
        if (s && is_upstream_finalizer(s))
            return false;
    }
    return !*clusterextension_str(ce, "status.install.bundle.name");
}

static bool has_finalizer(const json_t *ce)
{
    return has_finalizer_of(ce, false);
}

/* Adds or removes our finalizer (a removal takes upstream's too) by a merge PATCH carrying
 * the resourceVersion we read, so a concurrent change makes it fail (409) and the reconcile
 * retries.  On success run->ce becomes the updated object. */
static int set_finalizer(clusterextension_run *run, bool present, olm_error *err)
{
    json_t *updated = NULL;
    int rc = kube_object_set_finalizer(run->r->cfg.admin, CE_API_VERSION, CE_KIND, run->ce, CE_FINALIZER, present,
                                       UPSTREAM_FINALIZERS, &updated, err);
    if (rc == KUBE_CONFLICT)
        clusterextension_extension_stale(run->r, run->name);
    if (rc < 0) {
        olm_error_wrap(err, "error updating finalizers");
        return rc == KUBE_NOT_FOUND ? KUBE_NOT_FOUND : -1;
    }
    if (!updated)
        return 0; /* nothing to change */
    clusterextension_extension_known(run->r, updated);
    json_decref(run->ce);
    run->ce = updated;
    run->name = clusterextension_str(updated, "metadata.name");
    /* The applier borrows these from the object too: never from the one just freed. */
    run->actx.owner_uid = clusterextension_str(updated, "metadata.uid");
    run->actx.release_namespace = clusterextension_str(updated, "spec.namespace");
    return 0;
}

/* ------------------------------------------------------------ status */

/* The body of a status write: the status subresource keeps the stored metadata (managedFields
 * included) and spec whatever is sent, so only the identity and the write's preconditions
 * (uid, resourceVersion) go with the new status: ~1.5 KB for the apiserver to decode and
 * check instead of the whole object (kubectl's last-applied annotation, labels, spec, and
 * after a GET the managedFields: up to ~7 KB).  Takes `status`. */
static bool copy_keys(json_t *dst, const json_t *src, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(src, keys[i]);
        if (v && json_object_set(dst, keys[i], v) != 0)
            return false;
    }
    return true;
}

static json_t *status_write_body(const json_t *ce, json_t *status)
{
    static const char *const top[] = {"apiVersion", "kind"}, *const meta[] = {"name", "uid", "resourceVersion"};
    json_t *obj = json_object(), *md = json_object();
    bool ok = obj && md && copy_keys(obj, ce, top, 2) && copy_keys(md, json_object_get(ce, "metadata"), meta, 3) &&
              json_object_set(obj, "metadata", md) == 0 && json_object_set(obj, "status", status) == 0;
    json_decref(md);
    json_decref(status);
    if (!ok) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* write_status's answer when the object changed since the reconcile read it. */
#define STATUS_CONFLICT 1

/* Writes status when it changed: 0, STATUS_CONFLICT or -1.  Either failure makes the reconcile
 * retry (the next one recomputes from a fresh read). */
static int write_status(clusterextension_run *run, bool installed_read_failed, const char *record_error, olm_error *err)
{
    char now[OLM_TIME_RFC3339_SIZE];
    olm_time_rfc3339(time(NULL), now);
    clusterextension_installed_bundle ib = {0};
    bool installed = clusterextension_installed(run);
    if (installed) {
        ib.name = run->rec.bundle_name;
        ib.version = run->rec.bundle_version;
        ib.image = run->rec.bundle_image;
    }
    deprecation_condition dep[DEPRECATION_NCONDITIONS] = {{0}};
    bool have_dep = false;
    if (run->deprecation_known) {
        const char *const *chans = NULL;
        size_t nch = json_array_size(bundle_json_path(run->ce, "spec.source.catalog.channels"));
        const char **cv = calloc(nch ? nch : 1, sizeof *cv);
        if (!cv)
            return olm_error_set(err, "out of memory");
        for (size_t i = 0; i < nch; i++) {
            const char *c =
                json_string_value(json_array_get(bundle_json_path(run->ce, "spec.source.catalog.channels"), i));
            cv[i] = c ? c : "";
        }
        chans = cv;
        deprecation_input di = {
            .installed_bundle = installed ? run->rec.bundle_name : NULL,
            .deprecation = run->resolved ? run->res.deprecation : NULL,
            .has_catalog_data = run->resolved,
            .channels = chans,
            .nchannels = nch,
        };
        int drc = deprecation_conditions(&di, dep, err);
        free(cv);
        if (drc != 0)
            return -1;
        have_dep = true;
    }
    clusterextension_availability avail = {0};
    char *failures = NULL;
    if (run->probed && clusterextension_available(run, &avail.available, &failures) != 0) {
        if (have_dep)
            deprecation_conditions_free(dep);
        return olm_error_set(err, "out of memory");
    }
    avail.failures = failures;
    clusterextension_status_input in = {
        .generation = run->generation,
        .now = now,
        .installed = installed ? &ib : NULL,
        .installed_error = installed_read_failed ? record_error : NULL,
        .progress = run->progress,
        .progress_message = run->message,
        .deprecation = have_dep ? dep : NULL,
        .available = run->probed ? &avail : NULL,
        .no_available = run->r->cfg.no_available_condition,
    };
    const json_t *old = json_object_get(run->ce, "status");
    json_t *status = clusterextension_status_compute(old, &in, err);
    free(failures);
    if (have_dep)
        deprecation_conditions_free(dep);
    if (!status)
        return -1;
    /* Without the gate there are no revisions (any left were retired): none is active. */
    if (!run->r->cfg.boxcutter)
        json_object_del(status, "activeRevisions");
    /* BoxcutterRuntime: the revisions say what rolls out and how available it is. */
    if (run->r->cfg.boxcutter && run->revs_read && !installed_read_failed &&
        (clusterextension_revision_installed_reason(status, run->revs, run->rev_rolling, run->nrev_rolling,
                                                    run->generation, now) != 0 ||
         (run->progress == CE_PROGRESS_SUCCEEDED &&
          clusterextension_revision_status(status, old, run->revs, run->rev_installed, run->rev_rolling,
                                           run->nrev_rolling, run->generation, now) != 0))) {
        json_decref(status);
        return olm_error_set(err, "out of memory building the ClusterExtension status");
    }
    if (old && json_equal((json_t *)old, status)) {
        json_decref(status);
        return 0;
    }
    json_t *obj = status_write_body(run->ce, status);
    if (!obj)
        return olm_error_set(err, "out of memory");
    json_t *written = NULL;
    int rc = kube_update_status(run->r->cfg.admin, obj, &written, err);
    json_decref(obj);
    if (rc == KUBE_CONFLICT) {
        clusterextension_extension_stale(run->r, run->name);
        olm_error_set(err, "status not written: the ClusterExtension changed while this reconcile ran (an edit, "
                           "a deletion begun); reconciling again from its new version");
        return STATUS_CONFLICT;
    }
    if (rc < 0)
        return olm_error_wrap(err, "error updating status");
    if (written)
        clusterextension_extension_known(run->r, written);
    json_decref(written);
    return 0;
}

/* A failed status write's line: a conflict is the object changing under the reconcile, which
 * is expected and retried, so it is not an error line. */
static void log_status_failure(const clusterextension_run *run, int rc, const olm_error *err)
{
    olm_log(rc == STATUS_CONFLICT ? OLM_LOG_INFO : OLM_LOG_ERROR, "clusterExtension", run->name, "%s", err->msg);
}

/* ------------------------------------------------------------ deletion */

static void remove_bundle_cache(clusterextension_run *run)
{
    int fd = open(run->r->bundle_cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    olm_error err;
    if (oci_remove_tree_at(fd, run->name, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "removing the bundle cache: %s", err.msg);
    close(fd);
}

/* deletionTimestamp is set: uninstall what the record lists, then let the object go. */
static kube_wq_result_kind handle_delete(clusterextension_run *run)
{
    if (!has_finalizer_of(run->ce, true))
        return KUBE_WQ_OK;
    olm_error err;
    /* BoxcutterRuntime: the revisions go first (each one's controller tears its objects down);
     * the finalizer stays until they are gone. */
    if (run->r->cfg.boxcutter) {
        int left = clusterextension_revisions_delete(run, &err);
        if (left < 0) {
            olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "uninstall: %s", err.msg);
            clusterextension_fail(run, CE_PROGRESS_RETRYING, "error uninstalling: %s", err.msg);
            olm_error serr;
            write_status(run, false, NULL, &serr);
            return KUBE_WQ_ERROR;
        }
        if (left > 0) {
            run->retry_within_ms = 2000;
            return KUBE_WQ_REQUEUE_AFTER;
        }
    }
    /* BoxcutterRuntime off over an install made with it on: its revisions become the record. */
    int found = !run->r->cfg.boxcutter && clusterextension_revisions_retire(run, &err) != 0
                    ? -1
                    : applier_read_record(&run->actx, &run->rec, &err);
    if (found < 0) {
        /* A finalizer error is Progressing Retrying (§2.2 step 1): without it, an extension
         * whose record cannot be read (the apiserver failing, the Secret edited by hand) would
         * hang in deletion with nothing in its status to say why. */
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "reading the install record: %s", err.msg);
        char recerr[OLM_ERROR_MAX];
        snprintf(recerr, sizeof recerr, "%s", err.msg);
        clusterextension_fail(run, CE_PROGRESS_RETRYING, "error uninstalling: %s", recerr);
        olm_error serr;
        write_status(run, true, recerr, &serr);
        return KUBE_WQ_ERROR;
    }
    run->have_rec = found == 1;
    /* Its own uninstall must not look like drift. */
    clusterextension_drift_forget(run->r, run->name);
    const char *ns = clusterextension_str(run->ce, "spec.namespace"), *sa = clusterextension_service_account(run);
    if (run->have_rec) {
        /* Without a usable ServiceAccount (gone, its namespace being deleted too, or no longer
         * allowed a token) the applier falls back to the controller's identity.  Any other
         * token failure (timeout, 5xx, 429) is retried as it is, never read as "gone": the
         * fallback would end in advice to drop the finalizer over a passing fault. */
        kube_client *admin = run->r->cfg.admin;
        int trc = *sa ? clusterextension_token_cache_get(run->r->cfg.tokens, ns, sa, &run->token, &err) : KUBE_NOT_FOUND;
        if (trc == 0) {
            run->as_sa = kube_client_new_for_token(admin, run->token.value, NULL, &err);
        } else if (trc != KUBE_NOT_FOUND && trc != KUBE_FORBIDDEN && trc != KUBE_UNAUTHORIZED) {
            olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "uninstall: %s", err.msg);
            clusterextension_fail(run, CE_PROGRESS_RETRYING, "error uninstalling: requesting a token for service account \"%s\" in "
                    "namespace \"%s\": %s", sa, ns, err.msg);
            olm_error serr;
            write_status(run, false, NULL, &serr);
            return KUBE_WQ_ERROR;
        }
        run->actx.as_sa = run->as_sa ? run->as_sa : admin;
        if (applier_uninstall(&run->actx, &run->rec, &err) != 0) {
            /* A cached token of a ServiceAccount deleted and re-created since: mint anew next time. */
            if (run->as_sa && kube_client_unauthorized_count(run->as_sa) > 0)
                clusterextension_token_cache_invalidate(run->r->cfg.tokens, ns, sa, run->token.value);
            olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "uninstall: %s", err.msg);
            clusterextension_fail(run, CE_PROGRESS_RETRYING, "error uninstalling: %s", err.msg);
            olm_error serr;
            write_status(run, false, NULL, &serr);
            return KUBE_WQ_ERROR;
        }
        olm_log(OLM_LOG_INFO, "clusterExtension", run->name, "uninstalled %s %s (%zu objects)",
                run->rec.pending ? "what the failed install applied of bundle" : "bundle", run->rec.bundle_name,
                run->rec.nobjects);
    }
    remove_bundle_cache(run);
    if (*sa)
        clusterextension_token_cache_forget(run->r->cfg.tokens, ns, sa);
    const char *pkg = clusterextension_str(run->ce, "spec.source.catalog.packageName");
    if (*pkg && run->r->cfg.catalog_client)
        catalog_client_forget_package(run->r->cfg.catalog_client, pkg);
    int frc = set_finalizer(run, false, &err);
    if (frc != 0 && frc != KUBE_NOT_FOUND) { /* not found: gone already */
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "%s", err.msg);
        return KUBE_WQ_ERROR;
    }
    return KUBE_WQ_OK;
}

/* ------------------------------------------------------------ the pipeline */

/* spec.progressDeadlineMinutes (clusterextension.h): a retryable failure past the deadline is
 * reported as ProgressDeadlineExceeded; before it, the next retry is due by the deadline. */
static void check_deadline(clusterextension_run *run)
{
    const json_t *v = json_object_get(json_object_get(run->ce, "spec"), "progressDeadlineMinutes");
    json_int_t minutes = json_is_integer(v) ? json_integer_value(v) : 0;
    if (minutes <= 0)
        return;
    uint64_t minute_ms = run->r->cfg.deadline_minute_ms ? run->r->cfg.deadline_minute_ms : 60000;
    time_t now = time(NULL);
    time_t since = clusterextension_infos_failing_since(run->r->infos, run->name, run->generation, now);
    uint64_t elapsed_ms = (uint64_t)(now - since) * 1000u, deadline_ms = (uint64_t)minutes * minute_ms;
    if (elapsed_ms < deadline_ms) {
        run->retry_within_ms = deadline_ms - elapsed_ms + 1000; /* just past it: the clock has seconds */
        return;
    }
    char *msg = NULL;
    if (asprintf(&msg, CE_DEADLINE_MESSAGE, (long long)minutes, run->message ? run->message : "") < 0)
        return; /* out of memory: Retrying stays, which is still true */
    free(run->message);
    run->message = msg;
    run->progress = CE_PROGRESS_DEADLINE_EXCEEDED;
}

/* The installed state could not be read: Installed Unknown with why, Progressing Retrying. */
static kube_wq_result_kind installed_unreadable(clusterextension_run *run, const olm_error *why)
{
    clusterextension_fail(run, CE_PROGRESS_RETRYING, "retrying to get installed bundle");
    char recerr[OLM_ERROR_MAX];
    snprintf(recerr, sizeof recerr, "%s", why->msg);
    olm_error err;
    int src = write_status(run, true, recerr, &err);
    if (src != 0)
        log_status_failure(run, src, &err);
    return KUBE_WQ_ERROR;
}

/* BoxcutterRuntime: revision 1 from the install the default mode (or upstream's Helm) left,
 * without reinstalling: its bundle is rendered again and recorded as a revision that
 * adopts the objects (collisionProtection None) and is Succeeded at once.  1 when it made the
 * revision, 0 when there is nothing to migrate, or -1 with the outcome set. */
static int migrate_record(clusterextension_run *run)
{
    olm_error err;
    install_record rec = {0};
    int found = applier_read_record(&run->actx, &rec, &err);
    if (found < 0)
        return clusterextension_fail(run, CE_PROGRESS_RETRYING, "migrating storage: %s", err.msg);
    if (found == 0)
        return 0;
    if (rec.pending) {
        install_record_free(&rec);
        return 0; /* a failed first install: nothing deployed to migrate */
    }
    run->rec = rec;
    run->have_rec = true;
    if (clusterextension_set_target(run, rec.bundle_name, rec.bundle_version, rec.bundle_image, rec.package) != 0)
        return -1;
    run->migrating = true;
    int rc = clusterextension_step_install(run);
    run->migrating = false;
    if (rc != 0)
        return -1;
    olm_log(OLM_LOG_INFO, "clusterExtension", run->name, "migrated the install of bundle %s to revision %s-1",
            rec.bundle_name, run->name);
    clusterextension_target_free(&run->target);
    run->have_target = false;
    return 1;
}

static kube_wq_result_kind run_pipeline_revisions(clusterextension_run *run)
{
    olm_error err;
    if (clusterextension_revisions_read(run, &err) != 0)
        return installed_unreadable(run, &err);
    int rc = 0;
    if (run->nrevs == 0) {
        rc = migrate_record(run);
        /* Read again only when a revision was made: a first install has none to find. */
        if (rc == 1 && clusterextension_revisions_read(run, &err) != 0)
            return installed_unreadable(run, &err);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0) {
        rc = clusterextension_revision_rolling_target(run);
        if (rc == 0)
            rc = clusterextension_step_resolve(run);
        else if (rc == 1)
            rc = 0;
    }
    if (rc == 0)
        rc = clusterextension_step_install(run);
    kube_wq_result_kind kind = KUBE_WQ_OK;
    if (rc != 0) {
        kind = run->progress == CE_PROGRESS_RETRYING ? KUBE_WQ_ERROR : KUBE_WQ_TERMINAL;
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "%s", run->message ? run->message : "");
    }
    if (rc == 0 && run->resolved && run->res.catalog && run->res.catalog->name)
        clusterextension_infos_set(run->r->infos, run->name, run->res.catalog->name);
    int src = write_status(run, false, NULL, &err);
    if (src != 0) {
        log_status_failure(run, src, &err);
        return KUBE_WQ_ERROR;
    }
    return kind;
}

static kube_wq_result_kind run_pipeline(clusterextension_run *run)
{
    olm_error err;
    /* First sight: our finalizer goes on before anything is written for an extension, so one
     * without it (and without any sign of upstream's install) has no record of ours to read. */
    bool first_sight = !has_finalizer(run->ce) && run->actx.never_installed;
    int frc = has_finalizer(run->ce) ? 0 : set_finalizer(run, true, &err);
    if (frc == KUBE_NOT_FOUND) { /* deleted since the informer's copy: nothing to do */
        clusterextension_extension_forget_known(run->r, run->name);
        clusterextension_record_memo_forget(run->r, run->name);
        return KUBE_WQ_OK;
    }
    if (frc != 0) {
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "%s", err.msg);
        return KUBE_WQ_ERROR;
    }
    if (run->r->cfg.boxcutter)
        return run_pipeline_revisions(run);
    /* An install made with BoxcutterRuntime on: its revisions become the record first (then
     * the record listed before is not the newest: it is read). */
    bool retiring = clusterextension_retire_may_write(run->r, run->name);
    if (clusterextension_revisions_retire(run, &err) != 0)
        return installed_unreadable(run, &err);
    run->memo_record = retiring ? NULL : clusterextension_record_memo_get(run->r, run->name);
    run->actx.record_secret = run->memo_record;
    /* (Should one be there all the same, say after a finalizer removed by hand, the record's
     * create answers AlreadyExists and the write reads it then: applier_write_record.) */
    bool assume_none = first_sight && !run->actx.record_secret;
    if (assume_none)
        run->no_helm_release = true; /* as applier_read_record finds for one never installed */
    int found = assume_none ? 0 : applier_read_record(&run->actx, &run->rec, &err);
    run->actx.record_secret = NULL;
    /* Upstream may have installed another bundle since we wrote our record. */
    if (found == 1 && applier_refresh_record(&run->actx, clusterextension_str(run->ce, "status.install.bundle.name"),
                                             &run->rec, &err) < 0) {
        install_record_free(&run->rec);
        found = -1;
    }
    if (found < 0)
        return installed_unreadable(run, &err);
    run->have_rec = found == 1;
    int rc = clusterextension_step_resolve(run);
    if (rc == 0)
        rc = clusterextension_step_install(run);
    kube_wq_result_kind kind = KUBE_WQ_OK;
    if (rc != 0)
        kind = run->progress == CE_PROGRESS_RETRYING ? KUBE_WQ_ERROR : KUBE_WQ_TERMINAL;
    if (kind == KUBE_WQ_ERROR)
        check_deadline(run);
    else
        clusterextension_infos_succeeded(run->r->infos, run->name); /* done, or terminal: no clock */
    if (rc != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "%s", run->message ? run->message : "");
    else if (run->installed_changed)
        olm_log(OLM_LOG_INFO, "clusterExtension", run->name, "installed bundle %s version %s (%s)",
                run->rec.bundle_name, run->rec.bundle_version, run->rec.bundle_image);
    if (rc == 0 && run->resolved && run->res.catalog && run->res.catalog->name)
        clusterextension_infos_set(run->r->infos, run->name, run->res.catalog->name);
    double t0 = olm_time_mono_ms();
    int src = write_status(run, false, NULL, &err);
    if (src != 0) {
        clusterextension_debug_step(run, "status", t0, "failed");
        log_status_failure(run, src, &err);
        return KUBE_WQ_ERROR;
    }
    clusterextension_debug_step(run, "status", t0, NULL);
    return kind;
}

static void run_free(clusterextension_run *run)
{
    catalog_set_free(&run->cats);
    if (run->resolved)
        resolve_result_free(&run->res);
    if (run->have_rec)
        install_record_free(&run->rec);
    clusterextension_target_free(&run->target);
    kube_client_free(run->as_sa);
    clusterextension_token_free(&run->token);
    free(run->message);
    json_decref(run->observed);
    json_decref(run->memo_record);
    clusterextension_revisions_free(run);
    json_decref(run->ce);
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

kube_wq_result clusterextension_reconcile(const char *key, void *data)
{
    clusterextension_reconciler *r = data;
    uint64_t t0 = now_us();
    clusterextension_run run = {.r = r, .rev_installed = -1};
    olm_error err;
    kube_wq_result_kind kind;
    run.ce = clusterextension_extension_cached(r, key);
    int rc = KUBE_OK;
    if (!run.ce) {
        rc = kube_get(r->cfg.admin, CE_API_VERSION, CE_KIND, NULL, key, &run.ce, &err);
        if (rc == KUBE_OK)
            clusterextension_extension_known(r, run.ce);
    }
    if (rc == KUBE_NOT_FOUND) {
        clusterextension_extension_forget_known(r, key);
        clusterextension_record_memo_forget(r, key);
        clusterextension_drift_forget(r, key);
        clusterextension_infos_forget(r->infos, key);
        kind = KUBE_WQ_OK;
    } else if (rc < 0) {
        olm_log(OLM_LOG_ERROR, "clusterExtension", key, "reading the ClusterExtension: %s", err.msg);
        kind = KUBE_WQ_ERROR;
    } else {
        run.name = clusterextension_str(run.ce, "metadata.name");
        /* Both paths write conditions, each with observedGeneration = metadata.generation. */
        run.generation = (int64_t)json_integer_value(json_object_get(json_object_get(run.ce, "metadata"), "generation"));
        run.actx = (applier_ctx){.admin = r->cfg.admin, .as_sa = NULL, .system_namespace = r->system_namespace,
                                 .extension = key, .owner_uid = clusterextension_str(run.ce, "metadata.uid"),
                                 .release_namespace = clusterextension_str(run.ce, "spec.namespace"),
                                 .observe = r->cfg.no_available_condition ? NULL : clusterextension_observe,
                                 .observe_data = &run,
                                 .unchanged = r->cfg.drift ? clusterextension_known_unchanged : NULL,
                                 .unchanged_data = &run,
                                 .no_helm_release = &run.no_helm_release,
                                 .never_installed = never_installed(run.ce),
                                 .system_namespace_seen = &r->system_namespace_seen,
                                 .record_seen = clusterextension_record_memo_seen,
                                 .record_seen_data = r};
        if (json_object_get(json_object_get(run.ce, "metadata"), "deletionTimestamp"))
            kind = handle_delete(&run);
        else
            kind = run_pipeline(&run);
    }
    uint64_t retry_within_ms = run.retry_within_ms;
    run_free(&run);
    uint64_t dt = now_us() - t0;
    if (olm_log_enabled(OLM_LOG_DEBUG)) {
        static const char *const result[] = {"ok", "error (retried)", "requeue", "terminal error"};
        olm_log(OLM_LOG_DEBUG, "clusterExtension", key, "reconcile took %.1f ms: %s", (double)dt / 1e3,
                (unsigned)kind < 4 ? result[kind] : "?");
    }
    atomic_fetch_add(&r->total, 1);
    atomic_fetch_add(&r->micros_total, dt);
    for (size_t i = 0; i < CE_DURATION_NBOUNDS; i++)
        if ((double)dt / 1e6 <= clusterextension_duration_bounds[i]) {
            atomic_fetch_add(&r->duration_buckets[i], 1);
            break;
        }
    uint64_t max = atomic_load(&r->micros_max);
    while (dt > max && !atomic_compare_exchange_weak(&r->micros_max, &max, dt))
        ;
    if (kind == KUBE_WQ_ERROR)
        atomic_fetch_add(&r->errors, 1);
    if (kind == KUBE_WQ_TERMINAL)
        atomic_fetch_add(&r->terminal, 1);
    if (kind == KUBE_WQ_OK && rc == 0 && r->cfg.repair_interval_ms)
        return (kube_wq_result){.kind = KUBE_WQ_REQUEUE_AFTER, .requeue_after_ms = r->cfg.repair_interval_ms};
    /* Gone: the repair requeue its last reconcile scheduled has nothing left to repair. */
    return (kube_wq_result){.kind = kind, .requeue_after_ms = kind == KUBE_WQ_ERROR || kind == KUBE_WQ_REQUEUE_AFTER ? retry_within_ms : 0,
                            .gone = rc == KUBE_NOT_FOUND};
}
