/* kube_verbs: typed calls on objects (see kube_verbs.h): resolve the kind, build the
 * path, send the request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_discovery.h"
#include "kube_verbs.h"

struct target {
    kube_resource_info ri;
    const char *ns, *name;
};

/* apiVersion, kind, metadata.namespace and metadata.name of an object. */
static int object_target(kube_client *c, const json_t *obj, bool need_name, struct target *t, olm_error *err)
{
    if (!json_is_object(obj))
        return olm_error_set(err, "the object is not a JSON object");
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const json_t *md = json_object_get(obj, "metadata");
    t->name = json_string_value(json_object_get(md, "name"));
    t->ns = json_string_value(json_object_get(md, "namespace"));
    if (!av || !kind)
        return olm_error_set(err, "the object has no apiVersion or kind");
    if (need_name && (!t->name || !*t->name))
        return olm_error_set(err, "%s object has no metadata.name", kind);
    if (kube_resolve_kind(c, av, kind, &t->ri, err) < 0)
        return -1;
    if (t->ri.namespaced && (!t->ns || !*t->ns))
        return olm_error_set(err, "%s \"%s\" is namespaced but has no metadata.namespace", kind,
                             t->name ? t->name : "");
    return 0;
}

static int object_call(kube_client *c, const char *method, const json_t *obj, bool with_name,
                       const char *sub, const char *query, const char *ctype, json_t **out, olm_error *err)
{
    if (out)
        *out = NULL;
    struct target t;
    if (object_target(c, obj, true, &t, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&t.ri, t.ns, with_name ? t.name : NULL, sub, err);
    if (!path)
        return KUBE_ERROR;
    char *body = json_dumps(obj, JSON_COMPACT);
    if (!body) {
        free(path);
        return olm_error_set(err, "out of memory");
    }
    int rc = kube_request_json(c, method, path, query, ctype, body, out, err);
    free(body);
    free(path);
    return rc;
}

static int get_resource(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name,
                        const char *query, json_t **out, olm_error *err)
{
    *out = NULL;
    char *path = kube_resource_path(ri, ns, name, NULL, err);
    if (!path)
        return KUBE_ERROR;
    int rc = kube_request_json(c, "GET", path, query, NULL, NULL, out, err);
    free(path);
    return rc;
}

int kube_get_resource(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name, json_t **out,
                      olm_error *err)
{
    return get_resource(c, ri, ns, name, NULL, out, err);
}

int kube_get_resource_cached(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name,
                             json_t **out, olm_error *err)
{
    return get_resource(c, ri, ns, name, "resourceVersion=0", out, err);
}

int kube_get(kube_client *c, const char *api_version, const char *kind, const char *ns,
             const char *name, json_t **out, olm_error *err)
{
    *out = NULL;
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    return kube_get_resource(c, &ri, ns, name, out, err);
}

int kube_list(kube_client *c, const char *api_version, const char *kind, const char *ns,
              const kube_list_options *opts, json_t **out, olm_error *err)
{
    *out = NULL;
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&ri, ns, NULL, NULL, err);
    if (!path)
        return KUBE_ERROR;
    char *q = NULL;
    int oom = 0;
    if (opts) {
        char lim[32];
        snprintf(lim, sizeof lim, "%ld", opts->limit);
        if (opts->label_selector && *opts->label_selector)
            oom |= kube_query_add(&q, "labelSelector", opts->label_selector);
        if (opts->field_selector && *opts->field_selector)
            oom |= kube_query_add(&q, "fieldSelector", opts->field_selector);
        if (opts->limit > 0)
            oom |= kube_query_add(&q, "limit", lim);
        if (opts->continue_token && *opts->continue_token)
            oom |= kube_query_add(&q, "continue", opts->continue_token);
        if (opts->resource_version)
            oom |= kube_query_add(&q, "resourceVersion", opts->resource_version);
    }
    int rc = oom ? olm_error_set(err, "out of memory") : kube_request_json(c, "GET", path, q, NULL, NULL, out, err);
    free(q);
    free(path);
    return rc;
}

int kube_create(kube_client *c, const json_t *obj, json_t **out, olm_error *err)
{
    return object_call(c, "POST", obj, false, NULL, NULL, "application/json", out, err);
}

int kube_update(kube_client *c, const json_t *obj, json_t **out, olm_error *err)
{
    return object_call(c, "PUT", obj, true, NULL, NULL, "application/json", out, err);
}

int kube_update_status(kube_client *c, const json_t *obj, json_t **out, olm_error *err)
{
    return object_call(c, "PUT", obj, true, "status", NULL, "application/json", out, err);
}

static const char *patch_content_type(kube_patch_type t)
{
    switch (t) {
    case KUBE_PATCH_JSON: return "application/json-patch+json";
    case KUBE_PATCH_STRATEGIC: return "application/strategic-merge-patch+json";
    case KUBE_PATCH_MERGE: break;
    }
    return "application/merge-patch+json";
}

int kube_patch(kube_client *c, const char *api_version, const char *kind, const char *ns,
               const char *name, const char *subresource, kube_patch_type type, const char *patch,
               json_t **out, olm_error *err)
{
    if (out)
        *out = NULL;
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&ri, ns, name, subresource, err);
    if (!path)
        return KUBE_ERROR;
    int rc = kube_request_json(c, "PATCH", path, NULL, patch_content_type(type), patch, out, err);
    free(path);
    return rc;
}

char *kube_apply_query(const char *field_manager, bool force)
{
    char *q = NULL;
    if (kube_query_add(&q, "fieldManager", field_manager) < 0 || (force && kube_query_add(&q, "force", "true") < 0)) {
        free(q);
        return NULL;
    }
    return q;
}

int kube_apply(kube_client *c, const json_t *obj, const char *field_manager, bool force,
               const char *subresource, json_t **out, olm_error *err)
{
    if (out)
        *out = NULL;
    if (!field_manager || !*field_manager)
        return olm_error_set(err, "server-side apply needs a field manager");
    char *q = kube_apply_query(field_manager, force);
    if (!q)
        return olm_error_set(err, "out of memory");
    int rc = object_call(c, "PATCH", obj, true, subresource, q, "application/apply-patch+yaml", out, err);
    free(q);
    return rc;
}

int kube_delete(kube_client *c, const char *api_version, const char *kind, const char *ns,
                const char *name, const kube_delete_options *opts, olm_error *err)
{
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&ri, ns, name, NULL, err);
    if (!path)
        return KUBE_ERROR;
    char *body = NULL;
    int rc = KUBE_OK;
    if (opts) {
        json_t *d = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "DeleteOptions");
        json_t *pre = json_object();
        int bad = !d || !pre;
        if (!bad && opts->propagation_policy)
            bad |= json_object_set_new(d, "propagationPolicy", json_string(opts->propagation_policy));
        if (!bad && opts->grace_period_seconds >= 0)
            bad |= json_object_set_new(d, "gracePeriodSeconds", json_integer(opts->grace_period_seconds));
        if (!bad && opts->precondition_uid)
            bad |= json_object_set_new(pre, "uid", json_string(opts->precondition_uid));
        if (!bad && opts->precondition_resource_version)
            bad |= json_object_set_new(pre, "resourceVersion", json_string(opts->precondition_resource_version));
        if (!bad && json_object_size(pre) > 0)
            bad |= json_object_set(d, "preconditions", pre);
        if (!bad)
            body = json_dumps(d, JSON_COMPACT);
        json_decref(pre);
        json_decref(d);
        if (!body)
            rc = olm_error_set(err, "out of memory");
    }
    if (rc == KUBE_OK)
        rc = kube_request_json(c, "DELETE", path, NULL, body ? "application/json" : NULL, body, NULL, err);
    free(body);
    free(path);
    return rc;
}

