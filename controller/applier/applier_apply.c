/* applier_apply: one install or upgrade (applier.h).
 *
 *   1. build the labelled, ordered working set (applier_objects.c);
 *   2. conflict check for every object (reads from the apiserver's watch cache), before
 *      anything is written;
 *   3. server-side apply of each object as the ServiceAccount, in phase order, waiting
 *      for the CRDs to be Established before anything after them;
 *   4. prune what the previous record had and the new set has not (applier_prune.c);
 *   5. write the record with admin (applier_record.c).
 * A failure in 2 leaves the record as it was.  A failure in 3 keeps the previous bundle
 * as the installed one, but the record then also lists the objects this attempt may have
 * created (record_touched), so that the uninstaller and the next prune see them; on a
 * first install that is a pending record, which installs nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "applier_internal.h"
#include "kube_object.h"
#include "olm_time.h"

/* The CRD of `set` that defines group(av)/kind, if any. */
static bool bundle_defines(const applier_set *set, const char *av, const char *kind)
{
    size_t gl = 0;
    const char *g = applier_group(av, &gl);
    for (size_t i = 0; i < set->n; i++) {
        if (set->v[i].phase != PHASE_CRD)
            continue;
        const json_t *spec = json_object_get(set->v[i].obj, "spec");
        const char *cg = json_string_value(json_object_get(spec, "group"));
        const char *ck = json_string_value(json_object_get(json_object_get(spec, "names"), "kind"));
        if (cg && ck && strlen(cg) == gl && strncmp(cg, g, gl) == 0 && strcmp(ck, kind) == 0)
            return true;
    }
    return false;
}

/* Whether `prev` lists o (namespace compared only for namespaced entries: the record
 * keeps "" for cluster-scoped objects). */
static bool prev_has(const install_record *prev, const applier_obj *o)
{
    for (size_t i = 0; prev && i < prev->nobjects; i++) {
        const install_object_ref *r = &prev->objects[i];
        if (applier_same_object(r->api_version, r->kind, "", r->name, o->api_version, o->kind, "", o->name) &&
            (!*r->namespace_ || strcmp(r->namespace_, o->ns) == 0))
            return true;
    }
    return false;
}

/* An object that exists is ours when its owner labels say so, or when our previous
 * record lists it and nobody else has claimed it (labels stripped by hand: the apply
 * puts them back).  Anything else is the §2.3 conflict. */
static int check_conflicts(const applier_ctx *ctx, const applier_set *set, const install_record *prev, olm_error *err)
{
    for (size_t i = 0; i < set->n; i++) {
        const applier_obj *o = &set->v[i];
        json_t *cur = NULL;
        olm_error gerr = {""};
        int rc = applier_get_cached(ctx, o->api_version, o->kind, o->ns, o->name, &cur, &gerr);
        if (rc == KUBE_NOT_FOUND)
            continue;
        if (rc < 0 && bundle_defines(set, o->api_version, o->kind))
            continue; /* a custom resource of a CRD this bundle brings: cannot exist yet */
        if (rc < 0) {
            char what[600];
            if (err)
                *err = gerr;
            return olm_error_wrap(err, "checking %s", applier_describe(what, sizeof what, o->kind, o->ns, o->name));
        }
        applier_owner own = applier_owner_of(cur, ctx->extension);
        json_decref(cur);
        if (own == OWNER_OURS || (own == OWNER_UNLABELLED && prev_has(prev, o)))
            continue;
        kube_resource_info ri;
        bool namespaced = kube_resolve_kind(ctx->admin, o->api_version, o->kind, &ri, NULL) < 0 || ri.namespaced;
        return applier_conflict(err, o->kind, namespaced ? o->ns : "", o->name);
    }
    return 0;
}

/* ------------------------------------------------------------ CRD wait */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 1 Established, 0 not yet (*why gets the condition message), -1 error. */
static int crd_established(const applier_ctx *ctx, const char *name, char *why, size_t whylen, olm_error *err)
{
    json_t *crd = NULL;
    int rc = applier_get(ctx, "apiextensions.k8s.io/v1", "CustomResourceDefinition", NULL, name, &crd, err);
    if (rc == KUBE_NOT_FOUND) {
        snprintf(why, whylen, "not found");
        return 0;
    }
    if (rc < 0)
        return -1;
    if (ctx->observe)
        ctx->observe(ctx->observe_data, crd);
    int est = kube_object_condition_is(crd, "Established", "True");
    /* Not yet: the apiserver's reason, from whichever of the two conditions has one. */
    static const char *const said[] = {"NamesAccepted", "Established"};
    for (size_t k = 0; !est && k < 2; k++) {
        const json_t *c = kube_object_condition(crd, said[k]);
        const char *status = json_string_value(json_object_get(c, "status"));
        const char *msg = json_string_value(json_object_get(c, "message"));
        if (status && msg && *msg)
            snprintf(why, whylen, "%s=%s: %s", said[k], status, msg);
    }
    json_decref(crd);
    return est;
}

int applier_wait_crds(const applier_ctx *ctx, const applier_set *set, olm_error *err)
{
    int limit = ctx->crd_wait_seconds > 0 ? ctx->crd_wait_seconds : APPLIER_CRD_WAIT_DEFAULT;
    double deadline = now_s() + limit;
    for (size_t i = 0; i < set->n; i++) {
        if (set->v[i].phase != PHASE_CRD)
            continue;
        char why[512] = "no Established condition yet";
        for (;;) {
            int est = crd_established(ctx, set->v[i].name, why, sizeof why, err);
            if (est < 0)
                return olm_error_wrap(err, "waiting for CustomResourceDefinition '%s'", set->v[i].name);
            if (est)
                break;
            if (now_s() >= deadline)
                return olm_error_set(err, "CustomResourceDefinition '%s' is not Established after %d s (%s)",
                                     set->v[i].name, limit, why);
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

/* ------------------------------------------------------------ apply */

/* *touched: how many objects of `set`, in order, may be on the cluster now.  The one that
 * failed counts only without a definite refusal from the apiserver (a transport error, a
 * timeout, a 5xx): then its apply may have landed. */
static int apply_all(const applier_ctx *ctx, const applier_set *set, uint64_t *hashes, size_t *touched, olm_error *err)
{
    bool crds = false, waited = false;
    *touched = 0;
    for (size_t i = 0; i < set->n; i++) {
        const applier_obj *o = &set->v[i];
        if (crds && !waited && o->phase > PHASE_CRD) {
            if (applier_wait_crds(ctx, set, err) < 0)
                return -1;
            waited = true;
        }
        json_t *live = NULL;
        int rc = applier_apply_one(ctx, o, &live, err);
        if (live && ctx->observe)
            ctx->observe(ctx->observe_data, live);
        /* The record keeps it: a restart finds the object unchanged in the drift watches'
         * caches without reading it (applier_repair, applier_ctx.unchanged). */
        hashes[i] = live ? kube_object_content_hash(live) : 0;
        json_decref(live);
        *touched = i + (rc == KUBE_OK || rc == KUBE_ERROR || rc == KUBE_UNAVAILABLE);
        if (rc < 0)
            return -1;
        crds |= o->phase == PHASE_CRD;
    }
    /* A bundle of only CRDs: still report "installed" only once they serve. */
    if (crds && !waited && applier_wait_crds(ctx, set, err) < 0)
        return -1;
    return 0;
}

/* A failed apply may have created objects that no record lists (all of them, on a first
 * install).  Unlisted, they would be left behind by the uninstall (an administrator
 * deleting the extension that failed) and never pruned by the apply of another bundle.
 * So the record is rewritten to list them too: the previous bundle stays the installed
 * one, or, with none, the record is a pending one (nothing installed; install_record.h).
 * Best effort, and silent: err keeps the apply's own failure, which the caller reports. */
static void record_touched(const applier_ctx *ctx, const applier_bundle *b, const applier_set *set, size_t touched,
                           const install_record *prev)
{
    size_t nprev = prev ? prev->nobjects : 0;
    install_record rec = {0};
    olm_error e;
    bool grew = false;
    rec.objects = calloc(nprev + touched + 1, sizeof *rec.objects);
    if (!rec.objects)
        return;
    for (size_t i = 0; i < nprev; i++, rec.nobjects++)
        if (applier_ref_copy(&prev->objects[i], &rec.objects[i]) < 0)
            goto done;
    for (size_t i = 0; i < touched; i++) {
        install_object_ref *ref = &rec.objects[rec.nobjects];
        if (applier_ref_of(ctx->admin, &set->v[i], ref, &e) < 0)
            continue; /* a kind not served (its CRD did not come up): nothing of it exists */
        if (applier_record_has(rec.objects, rec.nobjects, ref)) {
            applier_ref_free(ref);
            continue;
        }
        rec.nobjects++;
        grew = true;
    }
    if (!grew)
        goto done;
    rec.extension = strdup(ctx->extension);
    rec.bundle_name = strdup(prev ? prev->bundle_name : b->name);
    rec.bundle_version = strdup(prev ? prev->bundle_version : b->version ? b->version : "");
    rec.bundle_image = strdup(prev ? prev->bundle_image : b->image ? b->image : "");
    rec.package = strdup(prev ? prev->package : b->package ? b->package : "");
    rec.properties = strdup(prev ? prev->properties : "[]");
    rec.installed_at = strdup(prev ? prev->installed_at : "");
    rec.pending = !prev || prev->pending;
    if (!rec.extension || !rec.bundle_name || !rec.bundle_version || !rec.bundle_image || !rec.package ||
        !rec.properties || !rec.installed_at)
        goto done;
    if (prev) {
        applier_write_record(ctx, &rec, false, &e);
    } else {
        /* Create only: a pending record never replaces one that exists (a caller whose
         * view of the record was stale would otherwise turn an installed bundle into none). */
        json_t *secret = install_record_to_secret(&rec, ctx->system_namespace);
        if (secret)
            kube_create(ctx->admin, secret, NULL, &e);
        json_decref(secret);
    }
done:
    install_record_free(&rec);
}

static char *now_rfc3339(void)
{
    char buf[OLM_TIME_RFC3339_SIZE];
    return olm_time_rfc3339(time(NULL), buf) < 0 ? NULL : strdup(buf);
}

static bool same_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Fills rec's bundle fields (copies).  installedAt stays the previous one while the
 * bundle is unchanged, so re-applying the same bundle rewrites nothing. */
static int fill_bundle(install_record *rec, const applier_ctx *ctx, const applier_bundle *b, const install_record *prev)
{
    bool same = prev && !prev->pending && prev->installed_at && *prev->installed_at && same_str(prev->bundle_name, b->name) &&
                same_str(prev->bundle_version, b->version) && same_str(prev->bundle_image, b->image);
    rec->extension = strdup(ctx->extension);
    rec->bundle_name = strdup(b->name ? b->name : "");
    rec->bundle_version = strdup(b->version ? b->version : "");
    rec->bundle_image = strdup(b->image ? b->image : "");
    rec->package = strdup(b->package ? b->package : "");
    rec->properties = strdup(b->properties && *b->properties ? b->properties : "[]");
    rec->installed_at = same ? strdup(prev->installed_at) : now_rfc3339();
    if (!rec->extension || !rec->bundle_name || !rec->bundle_version || !rec->bundle_image || !rec->package ||
        !rec->properties || !rec->installed_at)
        return -1;
    return 0;
}

static int check_ctx(const applier_ctx *ctx, olm_error *err)
{
    if (!ctx || !ctx->admin || !ctx->system_namespace || !*ctx->system_namespace || !ctx->extension ||
        !*ctx->extension)
        return olm_error_set(err, "applier: admin client, system namespace and extension name are required");
    return 0;
}

int applier_apply(const applier_ctx *ctx, const applier_bundle *bundle, json_t *objects, const install_record *prev,
                  install_record *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_ctx(ctx, err) < 0)
        return -1;
    if (!bundle || !bundle->name || !*bundle->name)
        return olm_error_set(err, "applier: the bundle has no name");
    if (bundle->properties && *bundle->properties) {
        json_t *p = json_loads(bundle->properties, JSON_DECODE_ANY, NULL);
        bool ok = json_is_array(p);
        json_decref(p);
        if (!ok)
            return olm_error_set(err, "applier: bundle %s: olm.properties is not a JSON array", bundle->name);
    }
    if (applier_identity(ctx, err) < 0)
        return -1;

    /* Checked first, so that a missing system namespace is reported before anything is
     * applied rather than after (the record could not be written anyway).  Once seen, it is
     * not read again before each install: it holds operator-controller's own Pod in a
     * cluster, and should it go all the same, the record write's NotFound reads it, says
     * so, and makes the next attempt check first again. */
    bool seen = ctx->system_namespace_seen && atomic_load(ctx->system_namespace_seen);
    if (!seen && applier_check_system_namespace(ctx, err) < 0)
        return -1;
    applier_set set;
    if (applier_set_build(ctx->extension, objects, &set, err) < 0)
        return -1;
    install_record rec = {0};
    install_object_ref *left = NULL;
    size_t nleft = 0;
    int rc = -1, prune_rc = 0;
    olm_error prune_err = {""};
    size_t touched = 0;
    uint64_t *hashes = calloc(set.n ? set.n : 1, sizeof *hashes);
    if (!hashes) {
        olm_error_set(err, "out of memory");
        goto done;
    }

    if (check_conflicts(ctx, &set, prev, err) < 0)
        goto done;
    if (apply_all(ctx, &set, hashes, &touched, err) < 0) {
        record_touched(ctx, bundle, &set, touched, prev);
        goto done;
    }

    /* The record references, with namespaces cleared for cluster-scoped kinds. */
    rec.objects = calloc(set.n ? set.n : 1, sizeof *rec.objects);
    if (!rec.objects) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < set.n; i++) {
        if (applier_ref_of(ctx->admin, &set.v[i], &rec.objects[rec.nobjects], err) < 0)
            goto done;
        rec.objects[rec.nobjects++].content_hash = hashes[i];
    }
    if (prev)
        prune_rc = applier_prune(ctx, prev, rec.objects, rec.nobjects, &left, &nleft, &prune_err);
    if (nleft) {
        /* Objects that could not be pruned stay in the record, so that the next apply
         * (or the uninstall) tries them again instead of forgetting them. */
        install_object_ref *grown = realloc(rec.objects, (rec.nobjects + nleft) * sizeof *grown);
        if (!grown) {
            olm_error_set(err, "out of memory");
            goto done;
        }
        rec.objects = grown;
        memcpy(rec.objects + rec.nobjects, left, nleft * sizeof *left);
        rec.nobjects += nleft;
        free(left);
        left = NULL;
        nleft = 0;
    }
    if (fill_bundle(&rec, ctx, bundle, prev) < 0) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    if (applier_write_record_mirrored(ctx, &rec, objects, true, prev == NULL, err) < 0)
        goto done;
    /* Written: the new bundle is the installed one even when pruning failed, so the
     * caller gets the record either way (a failed prune is retried by the next apply). */
    *out = rec;
    memset(&rec, 0, sizeof rec);
    if (prune_rc < 0) {
        if (err)
            *err = prune_err;
        goto done;
    }
    rc = 0;
done:
    free(hashes);
    applier_refs_free(left, nleft);
    install_record_free(&rec);
    applier_set_free(&set);
    return rc;
}
