/* applier_repair: drift repair for an installed bundle.
 *
 * A recorded object that is missing, or whose live state lacks a field we apply or holds
 * another value there, is re-applied with server-side apply: with force it takes back
 * exactly the fields we manage (labels included) and nothing else.  One that already holds
 * all of them is left alone (live_holds).  An object counts as repaired when it was
 * missing, or when the apply changed one of the fields we apply: they differ between the
 * object before (our GET) and the one the apply returned.  Not when its resourceVersion
 * merely moved: a controller writing between our GET and our no-op apply (a Deployment's
 * status, or its deployment.kubernetes.io/revision annotation, just after an install)
 * moves it too, and then a repair nobody asked for was logged ("drift repaired (1
 * objects)" during 100 parallel installs; the apply itself wrote nothing). */
#include <string.h>

#include "applier_internal.h"

static bool same(const json_t *a, const json_t *b) { return a == b || (a && b && json_equal(a, b)); }

/* Whether a field of `applied` has another value in `after` than in `before`: objects are
 * compared by the keys we apply (someone else's labels, annotations and fields are not
 * ours), anything else (scalars, lists) as a whole. */
static bool applied_changed(const json_t *applied, const json_t *before, const json_t *after)
{
    if (!json_is_object(applied) || !json_is_object(before) || !json_is_object(after))
        return !same(before, after);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)applied, k, v)
        if (applied_changed(v, json_object_get(before, k), json_object_get(after, k)))
            return true;
    return false;
}

/* Whether the live object already holds every field we apply, with our values: objects by
 * their keys (the apiserver's defaults and other managers' fields are not ours), lists
 * element by element (a container gains defaulted fields), numbers by value, and a null we
 * apply (a pod template's creationTimestamp) by the field being absent or null. */
static bool live_holds(const json_t *applied, const json_t *live)
{
    if (json_is_null(applied))
        return !live || json_is_null(live);
    if (!live)
        return false;
    if (json_is_object(applied)) {
        if (!json_is_object(live))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)applied, k, v)
            if (!live_holds(v, json_object_get(live, k)))
                return false;
        return true;
    }
    if (json_is_array(applied)) {
        if (!json_is_array(live) || json_array_size(applied) != json_array_size(live))
            return false;
        for (size_t i = 0; i < json_array_size(applied); i++)
            if (!live_holds(json_array_get(applied, i), json_array_get(live, i)))
                return false;
        return true;
    }
    if (json_is_number(applied))
        return json_is_number(live) && json_number_value(applied) == json_number_value(live);
    return json_equal(applied, live);
}

/* 1 repaired, 0 unchanged, -1 error. */
static int repair_one(const applier_ctx *ctx, const applier_obj *o, olm_error *err)
{
    json_t *cur = NULL, *after = NULL;
    char what[600];
    if (applier_identity(ctx, err) < 0)
        return -1;
    int rc = applier_get(ctx, o->api_version, o->kind, o->ns, o->name, &cur, err);
    if (rc < 0 && rc != KUBE_NOT_FOUND)
        return olm_error_wrap(err, "checking %s", applier_describe(what, sizeof what, o->kind, o->ns, o->name));
    if (cur && applier_owner_of(cur, ctx->extension) == OWNER_OTHER) {
        json_decref(cur);
        kube_resource_info ri;
        bool namespaced = kube_resolve_kind(ctx->admin, o->api_version, o->kind, &ri, NULL) < 0 || ri.namespaced;
        return applier_conflict(err, o->kind, namespaced ? o->ns : "", o->name);
    }
    /* Nothing to repair: no request at all.  Besides saving one, this is what lets an install
     * adopted from upstream (its objects written by Helm, not by us) stay untouched until
     * something really drifts: a no-op apply would still write our managedFields into it. */
    if (cur && live_holds(o->obj, cur)) {
        if (ctx->observe)
            ctx->observe(ctx->observe_data, cur);
        json_decref(cur);
        return 0;
    }
    if (applier_apply_one(ctx, o, &after, err) < 0) {
        json_decref(cur);
        return -1;
    }
    if (ctx->observe && after)
        ctx->observe(ctx->observe_data, after);
    int changed = !cur || applied_changed(o->obj, cur, after);
    json_decref(cur);
    json_decref(after);
    return changed;
}

/* The entry of `rec` for `ref`, or NULL. */
static const install_object_ref *recorded_ref(const install_record *rec, const install_object_ref *ref)
{
    for (size_t i = 0; i < rec->nobjects; i++) {
        const install_object_ref *r = &rec->objects[i];
        if (applier_same_object(r->api_version, r->kind, r->namespace_, r->name, ref->api_version, ref->kind,
                                ref->namespace_, ref->name))
            return r;
    }
    return NULL;
}

int applier_repair(const applier_ctx *ctx, const install_record *rec, json_t *objects, olm_error *err)
{
    if (!ctx || !ctx->admin || !ctx->extension || !rec)
        return olm_error_set(err, "applier: admin client, extension name and record are required");
    if (!ctx->as_sa && !ctx->identity)
        return olm_error_set(err, "applier: no client for the ClusterExtension's ServiceAccount");
    applier_set set;
    if (applier_set_build(ctx->extension, objects, &set, err) < 0)
        return -1;
    int repaired = 0;
    bool crd_repaired = false, waited = false;
    for (size_t i = 0; i < set.n; i++) {
        const applier_obj *o = &set.v[i];
        /* Custom resources resolve only once a re-created CRD serves again. */
        if (crd_repaired && !waited && o->phase > PHASE_CRD) {
            if (applier_wait_crds(ctx, &set, err) < 0)
                goto fail;
            waited = true;
        }
        install_object_ref ref;
        if (applier_ref_of(ctx->admin, o, &ref, err) < 0)
            goto fail;
        const install_object_ref *recorded = recorded_ref(rec, &ref);
        bool skip = recorded && recorded->content_hash && ctx->unchanged &&
                    ctx->unchanged(ctx->unchanged_data, &ref, recorded->content_hash);
        applier_ref_free(&ref);
        if (!recorded)
            continue; /* not installed yet: that is applier_apply's job, not drift */
        if (skip)
            continue; /* as the apply left it (applier_ctx.unchanged) */
        int r = repair_one(ctx, o, err);
        if (r < 0)
            goto fail;
        repaired += r;
        crd_repaired |= r && o->phase == PHASE_CRD;
    }
    if (crd_repaired && !waited && applier_wait_crds(ctx, &set, err) < 0)
        goto fail;
    applier_set_free(&set);
    return repaired;
fail:
    applier_set_free(&set);
    return -1;
}
