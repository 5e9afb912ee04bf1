/* clusterextension_revision: with --feature-gates=BoxcutterRuntime=true, an extension's
 * installs and upgrades are ClusterObjectSet revisions (revision.h builds them), rolled out by
 * the ClusterObjectSet controller; this file reads them, creates the next one and deletes
 * them with the extension.  Upstream: applier/boxcutter.go (Boxcutter.Apply,
 * createExternalizedRevision, BoxcutterStorageMigrator) and controllers/boxcutter_reconcile_steps.go. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clusterextension_internal.h"
#include "olm_log.h"
#include "olm_time.h"
#include "strbuf.h"

#define COS_FIELD_MANAGER "olm.operatorframework.io/clusterextension-controller"

void clusterextension_revisions_free(clusterextension_run *run)
{
    free(run->revs);
    free(run->rev_rolling);
    json_decref(run->revs_list);
    run->revs = NULL;
    run->rev_rolling = NULL;
    run->revs_list = NULL;
    run->nrevs = run->nrev_rolling = 0;
    run->rev_installed = -1;
    run->revs_read = false;
}

static int list_revisions(clusterextension_run *run, json_t **out, olm_error *err)
{
    char sel[512];
    snprintf(sel, sizeof sel, REVISION_LABEL_OWNER_NAME "=%s", run->name);
    kube_list_options lo = {.label_selector = sel};
    if (kube_list(run->r->cfg.admin, REVISION_API_VERSION, REVISION_KIND, NULL, &lo, out, err) < 0)
        return olm_error_wrap(err, "listing revisions");
    return 0;
}

int clusterextension_revisions_read(clusterextension_run *run, olm_error *err)
{
    clusterextension_revisions_free(run);
    if (run->have_rec) {
        install_record_free(&run->rec);
        run->have_rec = false;
    }
    if (list_revisions(run, &run->revs_list, err) != 0)
        return -1;
    const json_t *items = json_object_get(run->revs_list, "items");
    if (revision_infos(items, &run->revs, &run->nrevs) != 0 ||
        !(run->rev_rolling = calloc(run->nrevs ? run->nrevs : 1, sizeof *run->rev_rolling)))
        return olm_error_set(err, "out of memory");
    revision_states(run->revs, run->nrevs, &run->rev_installed, run->rev_rolling, &run->nrev_rolling);
    run->revs_read = true;
    if (run->rev_installed < 0)
        return 0;
    const revision_info *in = &run->revs[run->rev_installed];
    install_record *rec = &run->rec;
    memset(rec, 0, sizeof *rec);
    rec->extension = strdup(run->name);
    rec->bundle_name = strdup(in->bundle_name);
    rec->bundle_version = strdup(in->bundle_version);
    rec->bundle_image = strdup(in->image);
    rec->package = strdup(in->package);
    rec->properties = strdup("[]");
    run->have_rec = true;
    if (!rec->extension || !rec->bundle_name || !rec->bundle_version || !rec->bundle_image || !rec->package ||
        !rec->properties)
        return olm_error_set(err, "out of memory");
    return 0;
}

int clusterextension_revision_rolling_target(clusterextension_run *run)
{
    if (run->nrev_rolling == 0)
        return 0;
    const revision_info *ro = &run->revs[run->rev_rolling[0]];
    /* SetDeprecationStatus(ext, installed, nil, false): the deprecation conditions go Unknown. */
    run->deprecation_known = true;
    return clusterextension_set_target(run, ro->bundle_name, ro->bundle_version, ro->image, ro->package) == 0 ? 1 : -1;
}

/* ------------------------------------------------------------ the next revision */

static int64_t deadline_minutes(const clusterextension_run *run)
{
    const json_t *v = json_object_get(json_object_get(run->ce, "spec"), "progressDeadlineMinutes");
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static int build(clusterextension_run *run, int64_t number, const json_t *objects, const char *properties,
                 revision_built *out, olm_error *err)
{
    revision_input in = {
        .extension = run->name,
        .extension_uid = clusterextension_str(run->ce, "metadata.uid"),
        .number = number,
        .system_namespace = run->r->system_namespace,
        .progress_deadline_minutes = deadline_minutes(run),
        .migrated = run->migrating,
        /* Least privilege (ARCHITECTURE.md decision 1): the objects are applied as the
         * extension's ServiceAccount, as in the default mode. */
        .service_account = clusterextension_service_account(run),
        .service_account_namespace = clusterextension_str(run->ce, "spec.namespace"),
    };
    revision_bundle b = {.name = run->target.name, .version = run->target.version, .image = run->target.image,
                         .package = run->target.package, .properties = properties};
    return revision_build(&in, &b, objects, out, err);
}

/* The mutable fields of the current revision (annotations, progressDeadlineMinutes) as the
 * apply upstream sends would leave them.  0, or -1 with err. */
static int update_current(clusterextension_run *run, const revision_info *cur, const json_t *desired, olm_error *err)
{
    const json_t *dm = json_object_get(desired, "metadata"), *cm = json_object_get(cur->object, "metadata");
    json_t *patch = json_object();
    if (!patch)
        return olm_error_set(err, "out of memory");
    const json_t *want_anns = json_object_get(dm, "annotations"), *have_anns = json_object_get(cm, "annotations");
    const char *k;
    json_t *v;
    json_t *anns = json_object();
    json_object_foreach((json_t *)want_anns, k, v) {
        if (!json_equal(v, json_object_get(have_anns, k)))
            json_object_set(anns, k, v);
    }
    if (json_object_size(anns))
        json_object_set_new(patch, "metadata", json_pack("{s:O}", "annotations", anns));
    json_decref(anns);
    const json_t *want_pd = json_object_get(json_object_get(desired, "spec"), "progressDeadlineMinutes");
    const json_t *have_pd = json_object_get(json_object_get(cur->object, "spec"), "progressDeadlineMinutes");
    if (!json_equal((json_t *)(want_pd ? want_pd : json_null()), (json_t *)(have_pd ? have_pd : json_null())))
        json_object_set_new(patch, "spec",
                            json_pack("{s:O}", "progressDeadlineMinutes", want_pd ? want_pd : json_null()));
    int rc = 0;
    if (json_object_size(patch)) {
        char *text = json_dumps(patch, JSON_COMPACT);
        rc = text ? kube_patch(run->r->cfg.admin, REVISION_API_VERSION, REVISION_KIND, NULL, cur->name, NULL,
                               KUBE_PATCH_MERGE, text, NULL, err)
                  : olm_error_set(err, "out of memory");
        free(text);
        if (rc < 0)
            olm_error_wrap(err, "patching %s Revision", cur->name);
    }
    json_decref(patch);
    return rc < 0 ? -1 : 0;
}

/* The controller owner reference of revision `name` (uid) on each Secret that lacks it. */
static int own_secrets(clusterextension_run *run, const char *name, const char *uid, const json_t *secrets,
                       olm_error *err)
{
    size_t i;
    const json_t *s;
    json_array_foreach((json_t *)secrets, i, s) {
        const json_t *refs = json_object_get(json_object_get(s, "metadata"), "ownerReferences");
        size_t j;
        const json_t *ref;
        bool has = false;
        json_array_foreach((json_t *)refs, j, ref) {
            const char *u = json_string_value(json_object_get(ref, "uid"));
            has = has || (u && strcmp(u, uid) == 0);
        }
        if (has)
            continue;
        json_t *list = json_is_array(refs) ? json_deep_copy(refs) : json_array();
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", REVISION_API_VERSION,
                                              "kind", REVISION_KIND, "name", name, "uid", uid, "controller", 1,
                                              "blockOwnerDeletion", 1));
        json_t *patch = json_pack("{s:{s:o}}", "metadata", "ownerReferences", list);
        char *text = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
        json_decref(patch);
        const char *sname = json_string_value(json_object_get(json_object_get(s, "metadata"), "name"));
        int rc = text ? kube_patch(run->r->cfg.admin, "v1", "Secret", run->r->system_namespace, sname, NULL,
                                   KUBE_PATCH_MERGE, text, NULL, err)
                      : olm_error_set(err, "out of memory");
        free(text);
        if (rc < 0)
            return olm_error_wrap(err, "patching ownerReference on Secret %s/%s", run->r->system_namespace, sname);
    }
    return 0;
}

/* ensureSecretOwnerReferences: crash recovery of the step after the revision's creation.
 * Once per revision and process (clusterextension_infos_secrets_owned): a Secret's
 * ownerReferences are not taken away by anyone but us, so the LIST on every reconcile
 * upstream makes (from its cache) would be an apiserver request each time here. */
static int ensure_secret_owners(clusterextension_run *run, const revision_info *cur, olm_error *err)
{
    const char *uid = json_string_value(json_object_get(json_object_get(cur->object, "metadata"), "uid"));
    if (!uid || clusterextension_infos_secrets_owned(run->r->infos, run->name, uid))
        return 0;
    char sel[512];
    snprintf(sel, sizeof sel, REVISION_LABEL_REVISION_NAME "=%s", cur->name);
    kube_list_options lo = {.label_selector = sel};
    json_t *list = NULL;
    if (kube_list(run->r->cfg.admin, "v1", "Secret", run->r->system_namespace, &lo, &list, err) < 0)
        return olm_error_wrap(err, "listing ref Secrets for revision \"%s\"", cur->name);
    int rc = own_secrets(run, cur->name, uid, json_object_get(list, "items"), err);
    json_decref(list);
    if (rc == 0)
        clusterextension_infos_set_secrets_owned(run->r->infos, run->name, uid);
    return rc;
}

/* garbageCollectOldRevisions: archived revisions beyond the newest REVISION_RETENTION_LIMIT. */
static int collect_old(clusterextension_run *run, olm_error *err)
{
    for (size_t i = 0; i + REVISION_RETENTION_LIMIT < run->nrevs; i++) {
        if (!run->revs[i].archived)
            continue;
        int rc = kube_delete(run->r->cfg.admin, REVISION_API_VERSION, REVISION_KIND, NULL, run->revs[i].name, NULL, err);
        if (rc < 0 && rc != KUBE_NOT_FOUND)
            return olm_error_wrap(err, "garbage collecting old revisions: deleting archived revision");
    }
    return 0;
}

/* ensureRevisionStatus: a revision made from an existing install is Succeeded at once (it
 * is installed already; resolution and the status need that before its controller runs). */
static int mark_migrated_succeeded(clusterextension_run *run, const json_t *cos, olm_error *err)
{
    json_int_t gen = json_integer_value(json_object_get(json_object_get(cos, "metadata"), "generation"));
    char now[OLM_TIME_RFC3339_SIZE];
    olm_time_rfc3339(time(NULL), now);
    json_t *patch = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:I, s:s}]}}", "status", "conditions", "type", "Succeeded",
                              "status", "True", "reason", "Succeeded", "message",
                              "Revision succeeded - migrated from Helm release", "observedGeneration", gen,
                              "lastTransitionTime", now);
    char *text = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    json_decref(patch);
    const char *name = json_string_value(json_object_get(json_object_get(cos, "metadata"), "name"));
    int rc = text ? kube_patch(run->r->cfg.admin, REVISION_API_VERSION, REVISION_KIND, NULL, name, "status",
                               KUBE_PATCH_MERGE, text, NULL, err)
                  : olm_error_set(err, "out of memory");
    free(text);
    return rc < 0 ? olm_error_wrap(err, "updating migrated revision status") : 0;
}

/* createExternalizedRevision: Secrets (an existing one is the same content), the revision,
 * then the Secrets' owner references to it. */
static int create_revision(clusterextension_run *run, revision_built *b, olm_error *err)
{
    size_t i;
    json_t *s;
    json_array_foreach(b->secrets, i, s) {
        json_t *created = NULL;
        int rc = kube_create(run->r->cfg.admin, s, &created, err);
        if (rc == 0)
            json_array_set_new(b->secrets, i, created); /* its ownerReferences are what count now */
        else if (rc != KUBE_ALREADY_EXISTS)
            return olm_error_wrap(err, "creating ref Secret \"%s\"",
                                  json_string_value(json_object_get(json_object_get(s, "metadata"), "name")));
    }
    json_t *cos = NULL;
    if (kube_apply(run->r->cfg.admin, b->cos, COS_FIELD_MANAGER, true, NULL, &cos, err) < 0)
        return olm_error_wrap(err, "creating new Revision");
    const char *uid = json_string_value(json_object_get(json_object_get(cos, "metadata"), "uid"));
    int rc = 0;
    if (!uid)
        rc = olm_error_set(err, "getting COS \"%s\" for ownerReference: no uid", b->name);
    else if (own_secrets(run, b->name, uid, b->secrets, err) != 0)
        rc = olm_error_wrap(err, "patching ownerReferences on ref Secrets");
    else
        clusterextension_infos_set_secrets_owned(run->r->infos, run->name, uid);
    if (rc == 0 && run->migrating)
        rc = mark_migrated_succeeded(run, cos, err);
    json_decref(cos);
    return rc;
}

int clusterextension_revision_put(clusterextension_run *run, const json_t *objects, const char *properties,
                                  olm_error *err)
{
    const revision_info *cur = run->nrevs ? &run->revs[run->nrevs - 1] : NULL;
    revision_built b;
    if (cur) {
        /* Upstream applies the desired revision onto the current one: unchanged immutable
         * fields (the packed phases, with the current name) mean no new revision. */
        if (build(run, cur->number, objects, properties, &b, err) != 0)
            return -1;
        bool same = strcmp(b.name, cur->name) == 0 && revision_unchanged(cur->object, b.cos);
        int rc = 0;
        if (!same && strcmp(b.name, cur->name) == 0) {
            /* Other bytes, maybe the same objects: another operator-controller's revision. */
            rc = clusterextension_revision_same(run, cur, &b, err);
            same = rc == 1;
            rc = rc < 0 ? -1 : 0;
        }
        if (same && rc == 0)
            rc = update_current(run, cur, b.cos, err) != 0 || ensure_secret_owners(run, cur, err) != 0 ? -1 : 0;
        revision_built_free(&b);
        if (same || rc != 0)
            return rc;
    }
    int64_t next = cur ? cur->number + 1 : 1;
    if (build(run, next, objects, properties, &b, err) != 0)
        return -1;
    int rc = collect_old(run, err);
    if (rc == 0)
        rc = create_revision(run, &b, err);
    if (rc == 0)
        olm_log(OLM_LOG_INFO, "clusterExtension", run->name, "created revision %s (bundle %s, %zu object Secrets)",
                b.name, run->target.name, json_array_size(b.secrets));
    revision_built_free(&b);
    return rc;
}

/* ------------------------------------------------------------ deletion */

int clusterextension_revisions_delete(clusterextension_run *run, olm_error *err)
{
    clusterextension_same_forget(run->r->same, run->name);
    json_t *list = NULL;
    if (list_revisions(run, &list, err) != 0)
        return -1;
    size_t i;
    json_t *o;
    size_t left = 0;
    json_array_foreach(json_object_get(list, "items"), i, o) {
        left++;
        if (json_object_get(json_object_get(o, "metadata"), "deletionTimestamp"))
            continue; /* its teardown runs */
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        int rc = kube_delete(run->r->cfg.admin, REVISION_API_VERSION, REVISION_KIND, NULL, name, NULL, err);
        if (rc == KUBE_NOT_FOUND) {
            left--;
        } else if (rc < 0) {
            json_decref(list);
            return olm_error_wrap(err, "deleting revision \"%s\"", name);
        }
    }
    json_decref(list);
    if (left > 0) {
        /* Deleted objects without finalizers are gone now: look again. */
        if (list_revisions(run, &list, err) != 0)
            return -1;
        left = json_array_size(json_object_get(list, "items"));
        json_decref(list);
        if (left > 0)
            return 1;
    }
    /* The revisions are gone: their object Secrets too (no garbage collector is assumed). */
    char sel[512];
    snprintf(sel, sizeof sel, REVISION_LABEL_OWNER_NAME "=%s", run->name);
    kube_list_options lo = {.label_selector = sel};
    if (kube_list(run->r->cfg.admin, "v1", "Secret", run->r->system_namespace, &lo, &list, err) < 0)
        return olm_error_wrap(err, "listing the revisions' Secrets");
    json_array_foreach(json_object_get(list, "items"), i, o) {
        const char *type = json_string_value(json_object_get(o, "type"));
        if (!type || strcmp(type, REVISION_SECRET_TYPE) != 0)
            continue; /* only ours */
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        int rc = kube_delete(run->r->cfg.admin, "v1", "Secret", run->r->system_namespace, name, NULL, err);
        if (rc < 0 && rc != KUBE_NOT_FOUND) {
            json_decref(list);
            return olm_error_wrap(err, "deleting Secret %s/%s", run->r->system_namespace, name);
        }
    }
    json_decref(list);
    return 0;
}
