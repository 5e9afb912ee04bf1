/* applier_prune: after an upgrade, delete what the previous record had and the new
 * bundle no longer renders.
 *
 * Decision: pruning runs as the ServiceAccount, with no fall-back to the controller's
 * own identity.  The ServiceAccount created these objects, so it can normally delete
 * them; if its RBAC was narrowed since, the administrator chose that, and the
 * controller must not use its wider rights to delete on the extension's behalf
 * (that would make it the confused deputy ARCHITECTURE.md decision 1 avoids).  A
 * failed prune keeps the object in the record, so it is retried on the next apply and
 * still deleted by the uninstall (which does fall back to admin: by then the
 * administrator asked for everything to go).  An object whose owner labels now name
 * someone else is never deleted: it was handed over. */
#include <stdlib.h>
#include <string.h>

#include "applier_internal.h"
#include "olm_array.h"

int applier_ref_copy(const install_object_ref *src, install_object_ref *dst)
{
    dst->api_version = strdup(src->api_version);
    dst->kind = strdup(src->kind);
    dst->namespace_ = strdup(src->namespace_ ? src->namespace_ : "");
    dst->name = strdup(src->name);
    dst->content_hash = 0; /* what an apply left: not known of a copy kept for another reason */
    if (!dst->api_version || !dst->kind || !dst->namespace_ || !dst->name) {
        applier_ref_free(dst);
        return -1;
    }
    return 0;
}

/* 0 deleted or already gone or not ours, -1 failed (err set). */
static int prune_one(const applier_ctx *ctx, const install_object_ref *r, olm_error *err)
{
    json_t *cur = NULL;
    int rc = applier_get(ctx, r->api_version, r->kind, r->namespace_, r->name, &cur, err);
    if (rc == KUBE_NOT_FOUND)
        return 0;
    if (rc < 0)
        return -1;
    applier_owner own = applier_owner_of(cur, ctx->extension);
    json_decref(cur);
    if (own == OWNER_OTHER)
        return 0;
    kube_delete_options opts = {.propagation_policy = "Background", .grace_period_seconds = -1};
    rc = kube_delete(ctx->as_sa, r->api_version, r->kind, *r->namespace_ ? r->namespace_ : NULL, r->name, &opts, err);
    return rc == KUBE_OK || rc == KUBE_NOT_FOUND ? 0 : -1;
}

int applier_prune(const applier_ctx *ctx, const install_record *prev, const install_object_ref *keep, size_t nkeep,
                  install_object_ref **left, size_t *nleft, olm_error *err)
{
    *left = NULL;
    *nleft = 0;
    if (!prev || prev->nobjects == 0)
        return 0;
    int rc = 0;
    size_t cap = 0; /* of *left */
    /* Reverse record order: the record is in apply order, so dependents go first and
     * CRDs (whose deletion takes their custom resources along) last. */
    for (size_t k = prev->nobjects; k > 0; k--) {
        const install_object_ref *r = &prev->objects[k - 1];
        if (applier_record_has(keep, nkeep, r))
            continue;
        olm_error perr = {""};
        if (prune_one(ctx, r, &perr) == 0)
            continue;
        char what[600];
        if (rc == 0) {
            if (err)
                *err = perr;
            olm_error_wrap(err, "pruning %s", applier_describe(what, sizeof what, r->kind, r->namespace_, r->name));
        }
        rc = -1;
        if (OLM_ARRAY_RESERVE(*left, cap, *nleft + 1) < 0 || applier_ref_copy(r, &(*left)[*nleft]) < 0)
            return olm_error_set(err, "out of memory");
        (*nleft)++;
    }
    return rc;
}
