/* clusterextension_revision_retire: --feature-gates=BoxcutterRuntime switched OFF on a live
 * cluster.  An extension installed or upgraded with the gate on has no install record, only
 * ClusterObjectSet revisions; without this, the default mode would not know it is installed.
 * Its installed revision becomes the install record and the revisions go, leaving every object
 * where it is (same uid): the way back of clusterextension_reconcile.c's migrate_record.
 *
 * Upstream (df2c201) has no such way back: its BoxcutterStorageMigrator only goes from Helm to
 * revisions, and with the gate off its Helm applier reads the Helm release (none, or the one
 * from before the gate was switched on).
 *
 * Safety: each object carries the controller ownerReference of its revision, so deleting a
 * revision would have the garbage collector delete the object.  Those references are removed
 * first, and the revisions are then deleted with propagationPolicy Orphan (the collector strips
 * any reference still left instead of deleting).  The ClusterObjectSet controller does not run
 * with the gate off, so its teardown finalizer is taken off here; it is taken off before the
 * delete, so that even a controller still running could not tear the objects down.
 *
 * Which extensions have revisions: one LIST of all ClusterObjectSets on the first need of the
 * process (the gate is a process flag, and nothing makes revisions while it is off), not one
 * per reconcile.
 *
 * Order, for a crash at any point: the record is written first (the objects are then tracked,
 * so an uninstall still finds them), then the references, then the revisions; a restart lists
 * the revisions left and does it again (each step is idempotent).  A revision already being
 * deleted (the collector's orphan finalizer pending) is not read again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clusterextension_internal.h"
#include "kube_object.h"
#include "objectset.h"
#include "olm_log.h"
#include "olm_time.h"

#define OWNER_REF_ATTEMPTS 3

void clusterextension_retire_free(clusterextension_reconciler *r)
{
    json_decref(r->retire_names);
    r->retire_names = NULL;
    pthread_mutex_destroy(&r->retire_mu);
}

static const char *meta_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(o, "metadata"), key));
    return s ? s : "";
}

/* Adds to `names` the owners of revision object Secrets in the system namespace.  A process
 * stopped between deleting an extension's retired revisions and their Secrets left those; with
 * no revision left to list, only this finds them (the retire then deletes just the Secrets).
 * The type is selected by the server (record and Helm release Secrets carry the owner label
 * too: 2 per extension) and checked here again. */
static int add_secret_owners(clusterextension_reconciler *r, json_t *names, olm_error *err)
{
    kube_list_options lo = {.label_selector = REVISION_LABEL_OWNER_NAME, .field_selector = "type=" REVISION_SECRET_TYPE};
    json_t *list = NULL;
    int rc = kube_list(r->cfg.admin, "v1", "Secret", r->system_namespace, &lo, &list, err);
    if (rc == KUBE_FORBIDDEN)
        return 0;
    if (rc < 0)
        return olm_error_wrap(err, "listing ClusterObjectSet revisions' Secrets left by BoxcutterRuntime");
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(list, "items"), i, o) {
        const char *type = json_string_value(json_object_get(o, "type"));
        const char *owner = json_string_value(
            json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), REVISION_LABEL_OWNER_NAME));
        if (type && strcmp(type, REVISION_SECRET_TYPE) == 0 && owner && *owner)
            json_object_set_new(names, owner, json_true());
    }
    json_decref(list);
    return 0;
}

/* Whether `name` has revisions to retire, or their Secrets (the first call lists them all).
 * 0, or -1 with err (the next reconcile lists again). */
static int retire_pending(clusterextension_reconciler *r, const char *name, bool *pending, olm_error *err)
{
    int rc = 0;
    pthread_mutex_lock(&r->retire_mu);
    if (!r->retire_scanned) {
        json_t *list = NULL;
        kube_list_options lo = {.label_selector = REVISION_LABEL_OWNER_NAME};
        int lrc = kube_list(r->cfg.admin, REVISION_API_VERSION, REVISION_KIND, NULL, &lo, &list, err);
        json_t *names = json_object();
        if (!names) {
            rc = olm_error_set(err, "out of memory");
        } else if (lrc < 0 && lrc != KUBE_NOT_FOUND && lrc != KUBE_FORBIDDEN) {
            rc = olm_error_wrap(err, "listing ClusterObjectSets left by BoxcutterRuntime");
        } else if (lrc == KUBE_FORBIDDEN) {
            /* No right to list them: nothing we could take over.  (KUBE_NOT_FOUND: no
             * ClusterObjectSet CRD, never installed with the gate on.) */
            olm_log(OLM_LOG_WARN, "clusterExtension", NULL,
                    "not allowed to list ClusterObjectSets (%s): installs made with BoxcutterRuntime on are not "
                    "taken over; grant list/delete on clusterobjectsets to do so",
                    err->msg);
        }
        size_t i;
        const json_t *o;
        json_array_foreach(lrc == KUBE_OK ? json_object_get(list, "items") : NULL, i, o) {
            const char *owner = json_string_value(
                json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), REVISION_LABEL_OWNER_NAME));
            if (names && owner && *owner)
                json_object_set_new(names, owner, json_true());
        }
        if (rc == 0 && add_secret_owners(r, names, err) != 0)
            rc = -1;
        if (rc == 0) {
            r->retire_names = names;
            r->retire_scanned = true;
        } else {
            json_decref(names);
        }
        json_decref(list);
    }
    *pending = rc == 0 && json_object_get(r->retire_names, name) != NULL;
    pthread_mutex_unlock(&r->retire_mu);
    return rc;
}

static void retire_done(clusterextension_reconciler *r, const char *name)
{
    pthread_mutex_lock(&r->retire_mu);
    json_object_del(r->retire_names, name);
    pthread_mutex_unlock(&r->retire_mu);
}

/* "<group>/<Kind>/<ns>/<name>": one entry per object across revisions. */
static void object_key(const json_t *o, char *buf, size_t size)
{
    const char *av = json_string_value(json_object_get(o, "apiVersion"));
    const char *slash = av ? strchr(av, '/') : NULL;
    const char *kind = json_string_value(json_object_get(o, "kind"));
    snprintf(buf, size, "%.*s/%s/%s/%s", slash ? (int)(slash - av) : 0, slash ? av : "", kind ? kind : "",
             meta_str(o, "namespace"), meta_str(o, "name"));
}

/* Adds the objects of `cos` to `objects` (a newer revision's copy replaces an older one's). */
static int add_objects(clusterextension_run *run, const json_t *cos, json_t *objects, json_t *index, olm_error *err)
{
    json_t *objs = objectset_objects(run->r->cfg.admin, cos, err);
    if (!objs)
        return olm_error_wrap(err, "reading the objects of revision \"%s\"", meta_str(cos, "name"));
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o) {
        char key[1024];
        object_key(o, key, sizeof key);
        json_t *at = json_object_get(index, key);
        if (at) {
            json_array_set(objects, (size_t)json_integer_value(at), o);
        } else {
            json_object_set_new(index, key, json_integer((json_int_t)json_array_size(objects)));
            json_array_append(objects, o);
        }
    }
    json_decref(objs);
    return 0;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* The install record of `in` (the installed revision, or the newest one when none succeeded:
 * then pending) listing `objects`. */
static int record_of(clusterextension_run *run, const revision_info *in, bool pending, const json_t *objects,
                     install_record *rec, olm_error *err)
{
    memset(rec, 0, sizeof *rec);
    char now[OLM_TIME_RFC3339_SIZE];
    olm_time_rfc3339(time(NULL), now);
    const char *props = json_string_value(
        json_object_get(json_object_get(json_object_get(in->object, "metadata"), "annotations"), REVISION_ANN_PROPERTIES));
    rec->extension = strdup(run->name);
    rec->bundle_name = dup_or_empty(in->bundle_name);
    rec->bundle_version = dup_or_empty(in->bundle_version);
    rec->bundle_image = dup_or_empty(in->image);
    rec->package = dup_or_empty(in->package);
    rec->properties = strdup(props && !pending ? props : "[]");
    rec->installed_at = strdup(pending ? "" : now);
    rec->pending = pending;
    rec->nobjects = json_array_size(objects);
    rec->objects = calloc(rec->nobjects ? rec->nobjects : 1, sizeof *rec->objects);
    bool oom = !rec->extension || !rec->bundle_name || !rec->bundle_version || !rec->bundle_image || !rec->package ||
               !rec->properties || !rec->installed_at || !rec->objects;
    for (size_t i = 0; !oom && i < rec->nobjects; i++) {
        const json_t *o = json_array_get(objects, i);
        install_object_ref *ref = &rec->objects[i];
        ref->api_version = dup_or_empty(json_string_value(json_object_get(o, "apiVersion")));
        ref->kind = dup_or_empty(json_string_value(json_object_get(o, "kind")));
        ref->namespace_ = dup_or_empty(meta_str(o, "namespace"));
        ref->name = dup_or_empty(meta_str(o, "name"));
        oom = !ref->api_version || !ref->kind || !ref->namespace_ || !ref->name;
    }
    if (oom) {
        install_record_free(rec);
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

static bool is_revision_ref(const json_t *ref)
{
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    return av && kind && strcmp(kind, REVISION_KIND) == 0 && strncmp(av, "olm.operatorframework.io/", 25) == 0;
}

/* Removes the ownerReferences to ClusterObjectSets from the live object `o` refers to, by a
 * merge PATCH carrying the resourceVersion read (a concurrent change answers 409: read again).
 * As the extension's ServiceAccount, which the revisions applied with; as the controller when
 * it may not.  0 (also when the object is gone or has none), or -1 with err. */
static int drop_revision_owners(clusterextension_run *run, kube_client *as, const json_t *o, olm_error *err)
{
    const char *av = json_string_value(json_object_get(o, "apiVersion"));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const char *ns = *meta_str(o, "namespace") ? meta_str(o, "namespace") : NULL, *name = meta_str(o, "name");
    if (!av || !kind || !*name)
        return 0;
    kube_client *c = as;
    for (int attempt = 0; attempt < OWNER_REF_ATTEMPTS; attempt++) {
        json_t *live = NULL;
        int rc = kube_get(c, av, kind, ns, name, &live, err);
        if ((rc == KUBE_FORBIDDEN || rc == KUBE_UNAUTHORIZED) && c != run->r->cfg.admin) {
            c = run->r->cfg.admin;
            rc = kube_get(c, av, kind, ns, name, &live, err);
        }
        if (rc == KUBE_NOT_FOUND)
            return 0;
        if (rc < 0)
            return olm_error_wrap(err, "reading %s %s%s%s", kind, ns ? ns : "", ns ? "/" : "", name);
        const json_t *refs = json_object_get(json_object_get(live, "metadata"), "ownerReferences");
        json_t *keep = json_array();
        size_t i;
        const json_t *ref;
        bool changed = false;
        json_array_foreach(refs, i, ref) {
            if (is_revision_ref(ref))
                changed = true;
            else
                json_array_append(keep, (json_t *)ref);
        }
        if (!changed) {
            json_decref(keep);
            json_decref(live);
            return 0;
        }
        if (json_array_size(keep) == 0) {
            json_decref(keep);
            keep = json_null(); /* merge patch: the field goes */
        }
        json_t *patch = json_pack("{s:{s:o, s:s}}", "metadata", "ownerReferences", keep, "resourceVersion",
                                  meta_str(live, "resourceVersion"));
        json_decref(live);
        char *text = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
        json_decref(patch);
        if (!text)
            return olm_error_set(err, "out of memory");
        rc = kube_patch(c, av, kind, ns, name, NULL, KUBE_PATCH_MERGE, text, NULL, err);
        if ((rc == KUBE_FORBIDDEN || rc == KUBE_UNAUTHORIZED) && c != run->r->cfg.admin) {
            c = run->r->cfg.admin;
            rc = kube_patch(c, av, kind, ns, name, NULL, KUBE_PATCH_MERGE, text, NULL, err);
        }
        free(text);
        if (rc == 0 || rc == KUBE_NOT_FOUND)
            return 0;
        if (rc != KUBE_CONFLICT)
            return olm_error_wrap(err, "removing the ClusterObjectSet ownerReference from %s %s%s%s", kind,
                                  ns ? ns : "", ns ? "/" : "", name);
    }
    return olm_error_wrap(err, "removing the ClusterObjectSet ownerReference from %s %s%s%s", kind, ns ? ns : "",
                          ns ? "/" : "", name);
}

/* The teardown finalizer off, then DELETE with propagationPolicy Orphan. */
static int delete_revision(clusterextension_run *run, const json_t *cos, olm_error *err)
{
    kube_client *admin = run->r->cfg.admin;
    const char *name = meta_str(cos, "name");
    json_t *updated = NULL;
    int rc = kube_object_set_finalizer(admin, REVISION_API_VERSION, REVISION_KIND, cos, OBJECTSET_FINALIZER, false, NULL,
                                       &updated, err);
    json_decref(updated);
    if (rc == KUBE_NOT_FOUND)
        return 0;
    if (rc < 0)
        return olm_error_wrap(err, "removing the teardown finalizer of revision \"%s\"", name);
    if (*meta_str(cos, "deletionTimestamp"))
        return 0; /* deleted already: the collector's orphan finalizer is its own */
    kube_delete_options opts = {.propagation_policy = "Orphan", .grace_period_seconds = -1};
    rc = kube_delete(admin, REVISION_API_VERSION, REVISION_KIND, NULL, name, &opts, err);
    if (rc < 0 && rc != KUBE_NOT_FOUND)
        return olm_error_wrap(err, "deleting revision \"%s\"", name);
    return 0;
}

/* The revisions' object Secrets (type object-data, owner-name label) in the system namespace. */
static int delete_object_secrets(clusterextension_run *run, olm_error *err)
{
    char sel[512];
    snprintf(sel, sizeof sel, REVISION_LABEL_OWNER_NAME "=%s", run->name);
    kube_list_options lo = {.label_selector = sel};
    json_t *list = NULL;
    if (kube_list(run->r->cfg.admin, "v1", "Secret", run->r->system_namespace, &lo, &list, err) < 0)
        return olm_error_wrap(err, "listing the revisions' Secrets");
    size_t i;
    const json_t *o;
    int rc = 0;
    json_array_foreach(json_object_get(list, "items"), i, o) {
        const char *type = json_string_value(json_object_get(o, "type"));
        if (!type || strcmp(type, REVISION_SECRET_TYPE) != 0)
            continue; /* the install record and Helm release carry the label too */
        int drc = kube_delete(run->r->cfg.admin, "v1", "Secret", run->r->system_namespace, meta_str(o, "name"), NULL, err);
        if (drc < 0 && drc != KUBE_NOT_FOUND) {
            rc = olm_error_wrap(err, "deleting Secret %s/%s", run->r->system_namespace, meta_str(o, "name"));
            break;
        }
    }
    json_decref(list);
    return rc;
}

/* The client the objects are patched with: the extension's ServiceAccount's (*own, to free)
 * when it has one that can get a token, else the controller's. */
static int patch_client(clusterextension_run *run, kube_client **as, kube_client **own, clusterextension_token *tok,
                        olm_error *err)
{
    kube_client *admin = run->r->cfg.admin;
    const char *ns = clusterextension_str(run->ce, "spec.namespace"), *sa = clusterextension_service_account(run);
    *as = admin;
    *own = NULL;
    if (!*sa)
        return 0;
    int rc = clusterextension_token_cache_get(run->r->cfg.tokens, ns, sa, tok, err);
    if (rc == KUBE_NOT_FOUND || rc == KUBE_FORBIDDEN || rc == KUBE_UNAUTHORIZED)
        return 0; /* gone or refused: the controller's identity, with a fallback already */
    if (rc != 0)
        return olm_error_wrap(err, "requesting a token for service account \"%s\" in namespace \"%s\"", sa, ns);
    *own = kube_client_new_for_token(admin, tok->value, NULL, err);
    if (!*own)
        return -1;
    *as = *own;
    return 0;
}

int clusterextension_revisions_retire(clusterextension_run *run, olm_error *err)
{
    bool pending = false;
    if (retire_pending(run->r, run->name, &pending, err) != 0)
        return -1;
    if (!pending)
        return 0;
    char sel[512];
    snprintf(sel, sizeof sel, REVISION_LABEL_OWNER_NAME "=%s", run->name);
    kube_list_options lo = {.label_selector = sel};
    json_t *list = NULL;
    if (kube_list(run->r->cfg.admin, REVISION_API_VERSION, REVISION_KIND, NULL, &lo, &list, err) < 0)
        return olm_error_wrap(err, "listing revisions");
    revision_info *revs = NULL;
    size_t n = 0, nrolling = 0;
    ssize_t installed = -1;
    size_t *rolling = NULL;
    json_t *objects = json_array(), *index = json_object();
    install_record rec = {0};
    bool have_rec = false;
    kube_client *as = NULL, *own = NULL;
    clusterextension_token tok = {0};
    int rc = -1;
    if (!objects || !index || revision_infos(json_object_get(list, "items"), &revs, &n) != 0 ||
        !(rolling = calloc(n ? n : 1, sizeof *rolling))) {
        olm_error_set(err, "out of memory");
        goto out;
    }
    /* A revision being deleted was retired before (its Secrets may be gone): not read again. */
    const revision_info *newest = NULL;
    size_t nactive = 0;
    for (size_t i = 0; i < n; i++) {
        if (revs[i].archived || *meta_str(revs[i].object, "deletionTimestamp"))
            continue;
        nactive++;
        newest = &revs[i];
        if (add_objects(run, revs[i].object, objects, index, err) != 0)
            goto out;
    }
    revision_states(revs, n, &installed, rolling, &nrolling);
    if (installed >= 0 && *meta_str(revs[installed].object, "deletionTimestamp"))
        installed = -1;
    const revision_info *in = installed >= 0 ? &revs[installed] : newest;
    if (in) {
        if (record_of(run, in, installed < 0, objects, &rec, err) != 0)
            goto out;
        have_rec = true;
        if (applier_record_write(&run->actx, &rec, objects, err) != 0)
            goto out;
    }
    if (patch_client(run, &as, &own, &tok, err) != 0)
        goto out;
    size_t i;
    const json_t *o;
    json_array_foreach(objects, i, o) {
        if (drop_revision_owners(run, as, o, err) != 0)
            goto out;
    }
    for (size_t k = 0; k < n; k++)
        if (delete_revision(run, revs[k].object, err) != 0)
            goto out;
    if (delete_object_secrets(run, err) != 0)
        goto out;
    if (in)
        olm_log(OLM_LOG_INFO, "clusterExtension", run->name,
                "BoxcutterRuntime is off: %s bundle %s from revision %s into the install record (%zu objects, none "
                "re-created); %zu ClusterObjectSet revisions retired, their objects orphaned, not deleted",
                installed >= 0 ? "took over the install of" : "recorded the unfinished install of", in->bundle_name,
                in->name, json_array_size(objects), n);
    else if (n)
        olm_log(OLM_LOG_INFO, "clusterExtension", run->name,
                "BoxcutterRuntime is off: %zu archived ClusterObjectSet revisions retired (%zu active)", n, nactive);
    retire_done(run->r, run->name);
    rc = 0;
out:
    if (rc != 0)
        olm_error_wrap(err, "taking the install over from its ClusterObjectSet revisions (BoxcutterRuntime is off)");
    if (have_rec)
        install_record_free(&rec);
    kube_client_free(own);
    clusterextension_token_free(&tok);
    free(rolling);
    free(revs);
    json_decref(objects);
    json_decref(index);
    json_decref(list);
    return rc;
}

bool clusterextension_retire_may_write(clusterextension_reconciler *r, const char *name)
{
    pthread_mutex_lock(&r->retire_mu);
    bool may = !r->retire_scanned || json_object_get(r->retire_names, name) != NULL;
    pthread_mutex_unlock(&r->retire_mu);
    return may;
}
