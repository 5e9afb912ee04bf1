/* applier_uninstall: explicit uninstall (the ClusterExtension finalizer), no reliance
 * on a garbage collector.
 *
 * Objects go in reverse record order (the record is in apply order: webhooks and
 * workloads first, CRDs last).  Each is deleted as the ServiceAccount; when the
 * ServiceAccount may not (403), or cannot authenticate any more (401: it was deleted
 * before the extension), or the caller has no ServiceAccount client at all
 * (ctx->as_sa NULL), the controller's own identity deletes it: the administrator asked
 * for the extension to go, and leaving its objects behind helps nobody.  Objects
 * already gone are fine; objects whose owner labels now name someone else are left
 * alone.  An object in a namespace that is gone or being deleted counts as handled:
 * the namespace's deletion takes it along (and usually the ServiceAccount with it).
 * When neither identity may delete an object, the error says how to get unstuck.
 * The record is deleted only when every object is handled, so a failed uninstall is
 * retried with the full list. */
#include <stdlib.h>
#include <string.h>

#include "applier_internal.h"

/* Namespaced objects have a non-empty namespace_ in the record (applier_ref_of). */
static bool namespace_going(const applier_ctx *ctx, const char *ns)
{
    if (!ns || !*ns)
        return false;
    json_t *obj = NULL;
    int rc = kube_get(ctx->admin, "v1", "Namespace", NULL, ns, &obj, NULL);
    const char *phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
    bool going = rc == KUBE_NOT_FOUND || (rc == KUBE_OK && phase && strcmp(phase, "Terminating") == 0);
    json_decref(obj);
    return going;
}

/* The apiserver's refusal (of `verb`: "read" or "delete"), and what the administrator can do. */
static int stuck(olm_error *err, const char *verb)
{
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return olm_error_set(err, "%s; neither the ClusterExtension's ServiceAccount nor operator-controller may %s "
                              "it: recreate the ServiceAccount with the RBAC it had so that the uninstall can finish, "
                              "or remove the finalizer olm.operatorframework.io/cleanup to leave it behind", why, verb);
}

static int delete_one(const applier_ctx *ctx, const install_object_ref *r, olm_error *err)
{
    if (namespace_going(ctx, r->namespace_))
        return 0;
    json_t *cur = NULL;
    int rc = applier_get(ctx, r->api_version, r->kind, r->namespace_, r->name, &cur, err);
    if (rc == KUBE_NOT_FOUND)
        return 0;
    if (rc < 0)
        return applier_denied(rc) && err ? stuck(err, "read") : -1;
    applier_owner own = applier_owner_of(cur, ctx->extension);
    json_decref(cur);
    if (own == OWNER_OTHER)
        return 0;
    const char *ns = *r->namespace_ ? r->namespace_ : NULL;
    kube_delete_options opts = {.propagation_policy = "Background", .grace_period_seconds = -1};
    rc = KUBE_FORBIDDEN;
    if (ctx->as_sa)
        rc = kube_delete(ctx->as_sa, r->api_version, r->kind, ns, r->name, &opts, err);
    if (applier_denied(rc) && ctx->as_sa != ctx->admin)
        rc = kube_delete(ctx->admin, r->api_version, r->kind, ns, r->name, &opts, err);
    if (applier_denied(rc) && err)
        return stuck(err, "delete");
    return rc == KUBE_OK || rc == KUBE_NOT_FOUND ? 0 : -1;
}

int applier_uninstall(const applier_ctx *ctx, const install_record *rec, olm_error *err)
{
    if (!ctx || !ctx->admin || !ctx->system_namespace || !ctx->extension)
        return olm_error_set(err, "applier: admin client, system namespace and extension name are required");
    int rc = 0;
    for (size_t k = rec ? rec->nobjects : 0; k > 0; k--) {
        const install_object_ref *r = &rec->objects[k - 1];
        olm_error derr = {""};
        if (delete_one(ctx, r, &derr) == 0)
            continue;
        /* Keep going: delete as much as possible now, report the first failure. */
        if (rc == 0) {
            char what[600];
            if (err)
                *err = derr;
            olm_error_wrap(err, "uninstalling %s", applier_describe(what, sizeof what, r->kind, r->namespace_, r->name));
        }
        rc = -1;
    }
    if (rc < 0)
        return -1;
    char *name = install_record_secret_name(ctx->extension);
    if (!name)
        return olm_error_set(err, "out of memory");
    int drc = kube_delete(ctx->admin, "v1", "Secret", ctx->system_namespace, name, NULL, err);
    applier_record_seen(ctx, NULL);
    if (drc < 0 && drc != KUBE_NOT_FOUND) {
        olm_error_wrap(err, "deleting the install record Secret '%s' in namespace '%s'", name, ctx->system_namespace);
        free(name);
        return -1;
    }
    free(name);
    /* Upstream's record goes too (its ownerReference would let GC take it, but not before the
     * ClusterExtension is gone, and not on a cluster without a garbage collector). */
    return applier_delete_helm_releases(ctx, err);
}
