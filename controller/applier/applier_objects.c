/* applier_objects: the working set of labelled objects, their apply order, and the
 * identity and ownership rules every applier step uses (applier_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applier_internal.h"

int applier_phase_of(const char *api_version, const char *kind)
{
    size_t gl = 0;
    const char *g = applier_group(api_version, &gl);
    bool core = gl == 0;
    bool rbac = gl == strlen("rbac.authorization.k8s.io") && strncmp(g, "rbac.authorization.k8s.io", gl) == 0;
    if (core && strcmp(kind, "Namespace") == 0)
        return PHASE_NAMESPACE;
    if (strcmp(kind, "CustomResourceDefinition") == 0 && gl == strlen("apiextensions.k8s.io") &&
        strncmp(g, "apiextensions.k8s.io", gl) == 0)
        return PHASE_CRD;
    if (core && strcmp(kind, "ServiceAccount") == 0)
        return PHASE_SERVICEACCOUNT;
    if (rbac && (strcmp(kind, "ClusterRole") == 0 || strcmp(kind, "Role") == 0))
        return PHASE_ROLE;
    if (rbac && (strcmp(kind, "ClusterRoleBinding") == 0 || strcmp(kind, "RoleBinding") == 0))
        return PHASE_BINDING;
    if (core && (strcmp(kind, "ConfigMap") == 0 || strcmp(kind, "Secret") == 0))
        return PHASE_CONFIG;
    if (core && strcmp(kind, "Service") == 0)
        return PHASE_SERVICE;
    if (gl == strlen("admissionregistration.k8s.io") && strncmp(g, "admissionregistration.k8s.io", gl) == 0 &&
        (strcmp(kind, "ValidatingWebhookConfiguration") == 0 || strcmp(kind, "MutatingWebhookConfiguration") == 0))
        return PHASE_WEBHOOK;
    return PHASE_OTHER;
}

const char *applier_group(const char *api_version, size_t *len)
{
    const char *slash = api_version ? strchr(api_version, '/') : NULL;
    *len = slash ? (size_t)(slash - api_version) : 0;
    return api_version ? api_version : "";
}

bool applier_same_object(const char *av1, const char *kind1, const char *ns1, const char *name1, const char *av2,
                         const char *kind2, const char *ns2, const char *name2)
{
    size_t l1, l2;
    const char *g1 = applier_group(av1, &l1), *g2 = applier_group(av2, &l2);
    return l1 == l2 && strncmp(g1, g2, l1) == 0 && strcmp(kind1, kind2) == 0 && strcmp(ns1 ? ns1 : "", ns2 ? ns2 : "") == 0 &&
           strcmp(name1, name2) == 0;
}

const char *applier_describe(char *buf, size_t len, const char *kind, const char *ns, const char *name)
{
    if (ns && *ns)
        snprintf(buf, len, "%s '%s' in namespace '%s'", kind, name, ns);
    else
        snprintf(buf, len, "%s '%s'", kind, name);
    return buf;
}

int applier_conflict(olm_error *err, const char *kind, const char *ns, const char *name)
{
    if (ns && *ns)
        return olm_error_set(err, "%s '%s' already exists in namespace '%s' and cannot be managed by operator-controller",
                             kind, name, ns);
    return olm_error_set(err, "%s '%s' already exists and cannot be managed by operator-controller", kind, name);
}

applier_owner applier_owner_of(const json_t *existing, const char *extension)
{
    const json_t *labels = json_object_get(json_object_get(existing, "metadata"), "labels");
    const char *name = json_string_value(json_object_get(labels, OWNER_NAME_LABEL));
    const char *kind = json_string_value(json_object_get(labels, OWNER_KIND_LABEL));
    if (!name)
        return OWNER_UNLABELLED;
    if (strcmp(name, extension) == 0 && (!kind || strcmp(kind, APPLIER_OWNER_KIND) == 0))
        return OWNER_OURS;
    return OWNER_OTHER;
}

/* ------------------------------------------------------------ the working set */

/* Fields the server owns: sending them in an apply would be rejected (resourceVersion
 * becomes a precondition, managedFields is refused) or is meaningless. */
static void strip_server_fields(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    static const char *const fields[] = {"resourceVersion", "uid", "creationTimestamp", "managedFields",
                                         "generation", "selfLink", "deletionTimestamp"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        json_object_del(md, fields[i]);
    json_object_del(obj, "status");
}

static int set_labels(json_t *obj, const char *extension)
{
    json_t *md = json_object_get(obj, "metadata");
    json_t *labels = json_object_get(md, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        if (!labels || json_object_set_new(md, "labels", labels) < 0)
            return -1;
    }
    if (json_object_set_new(labels, OWNER_KIND_LABEL, json_string(APPLIER_OWNER_KIND)) < 0 ||
        json_object_set_new(labels, OWNER_NAME_LABEL, json_string(extension)) < 0)
        return -1;
    return 0;
}

static int cmp_obj(const void *a, const void *b)
{
    const applier_obj *x = a, *y = b;
    if (x->phase != y->phase)
        return x->phase < y->phase ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int applier_set_build(const char *extension, const json_t *objects, applier_set *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!json_is_array(objects))
        return olm_error_set(err, "the rendered objects are not a JSON array");
    size_t n = json_array_size(objects);
    if (n == 0)
        return 0;
    out->v = calloc(n, sizeof *out->v);
    if (!out->v)
        return olm_error_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *src = json_array_get(objects, i);
        const json_t *md = json_object_get(src, "metadata");
        const char *av = json_string_value(json_object_get(src, "apiVersion"));
        const char *kind = json_string_value(json_object_get(src, "kind"));
        const char *name = json_string_value(json_object_get(md, "name"));
        if (!json_is_object(src) || !av || !*av || !kind || !*kind || !json_is_object(md) || !name || !*name) {
            applier_set_free(out);
            return olm_error_set(err, "rendered object #%zu has no apiVersion, kind or metadata.name", i);
        }
        applier_obj *o = &out->v[out->n];
        o->obj = json_deep_copy(src);
        out->n++;
        if (!o->obj || set_labels(o->obj, extension) < 0) {
            applier_set_free(out);
            return olm_error_set(err, "out of memory");
        }
        strip_server_fields(o->obj);
        const json_t *cmd = json_object_get(o->obj, "metadata");
        o->api_version = json_string_value(json_object_get(o->obj, "apiVersion"));
        o->kind = json_string_value(json_object_get(o->obj, "kind"));
        o->name = json_string_value(json_object_get(cmd, "name"));
        o->ns = json_string_value(json_object_get(cmd, "namespace"));
        if (!o->ns)
            o->ns = "";
        o->phase = applier_phase_of(o->api_version, o->kind);
        o->index = i;
    }
    qsort(out->v, out->n, sizeof *out->v, cmp_obj);
    return 0;
}

void applier_set_free(applier_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        json_decref(s->v[i].obj);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------ cluster helpers */

typedef int (*get_fn)(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name, json_t **out,
                      olm_error *err);

static int get_with(get_fn get, const applier_ctx *ctx, const char *av, const char *kind, const char *ns,
                    const char *name, json_t **out, olm_error *err)
{
    *out = NULL;
    kube_resource_info ri;
    olm_error rerr = {""};
    /* Discovery is open to every authenticated identity, and the admin client caches it. */
    if (kube_resolve_kind(ctx->admin, av, kind, &ri, &rerr) < 0) {
        /* Unknown kind: gone when its group/version is not served at all. */
        bool served = true;
        if (kube_group_version_served(ctx->admin, av, &served, err) == 0 && !served)
            return KUBE_NOT_FOUND;
        if (err)
            *err = rerr;
        return KUBE_ERROR;
    }
    if (!ri.namespaced)
        ns = NULL;
    /* By the resolved path on either client: the ServiceAccount's client is new on every
     * reconcile, and its own discovery could disagree with the controller's cache (a CRD
     * removed since), which would make a gone object an error instead of NotFound. */
    if (!ctx->as_sa || ctx->as_sa == ctx->admin)
        return get(ctx->admin, &ri, ns, name, out, err);
    olm_error serr = {""};
    int rc = get(ctx->as_sa, &ri, ns, name, out, &serr);
    if (!applier_denied(rc)) {
        if (rc < 0 && err)
            *err = serr;
        return rc;
    }
    /* The ServiceAccount may patch without get: the controller's identity may still read. */
    olm_error aerr = {""};
    int arc = get(ctx->admin, &ri, ns, name, out, &aerr);
    if (applier_denied(arc)) {
        if (err)
            *err = serr; /* neither may: the ServiceAccount's refusal is the one to fix */
        return rc;
    }
    if (arc < 0 && err)
        *err = aerr;
    return arc;
}

int applier_get(const applier_ctx *ctx, const char *av, const char *kind, const char *ns, const char *name,
                json_t **out, olm_error *err)
{
    return get_with(kube_get_resource, ctx, av, kind, ns, name, out, err);
}

int applier_get_cached(const applier_ctx *ctx, const char *av, const char *kind, const char *ns, const char *name,
                       json_t **out, olm_error *err)
{
    return get_with(kube_get_resource_cached, ctx, av, kind, ns, name, out, err);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

int applier_ref_of(kube_client *admin, const applier_obj *o, install_object_ref *ref, olm_error *err)
{
    memset(ref, 0, sizeof *ref);
    kube_resource_info ri;
    if (kube_resolve_kind(admin, o->api_version, o->kind, &ri, err) < 0)
        return -1;
    ref->api_version = dup_or_empty(o->api_version);
    ref->kind = dup_or_empty(o->kind);
    ref->namespace_ = dup_or_empty(ri.namespaced ? o->ns : "");
    ref->name = dup_or_empty(o->name);
    if (!ref->api_version || !ref->kind || !ref->namespace_ || !ref->name) {
        applier_ref_free(ref);
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

void applier_ref_free(install_object_ref *ref)
{
    if (!ref)
        return;
    free(ref->api_version);
    free(ref->kind);
    free(ref->namespace_);
    free(ref->name);
    memset(ref, 0, sizeof *ref);
}

void applier_refs_free(install_object_ref *refs, size_t n)
{
    for (size_t i = 0; refs && i < n; i++)
        applier_ref_free(&refs[i]);
    free(refs);
}

bool applier_record_has(const install_object_ref *refs, size_t n, const install_object_ref *ref)
{
    for (size_t i = 0; i < n; i++)
        if (applier_same_object(refs[i].api_version, refs[i].kind, refs[i].namespace_, refs[i].name, ref->api_version,
                                ref->kind, ref->namespace_, ref->name))
            return true;
    return false;
}

int applier_identity(const applier_ctx *ctx, olm_error *err)
{
    if (ctx->as_sa)
        return 0;
    if (!ctx->identity)
        return olm_error_set(err, "applier: no client for the ClusterExtension's ServiceAccount");
    if (ctx->identity(ctx->identity_data, err) < 0)
        return -1;
    /* The callback fills the caller's ctx, which `ctx` points to. */
    return ctx->as_sa ? 0 : olm_error_set(err, "applier: no client for the ClusterExtension's ServiceAccount");
}

int applier_apply_one(const applier_ctx *ctx, const applier_obj *o, json_t **out, olm_error *err)
{
    int rc = kube_apply(ctx->as_sa, o->obj, APPLIER_FIELD_MANAGER, true, NULL, out, err);
    if (rc < 0) {
        char what[600];
        olm_error_wrap(err, "applying %s", applier_describe(what, sizeof what, o->kind, o->ns, o->name));
    }
    return rc;
}
