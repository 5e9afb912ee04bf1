/* kube_object: see kube_object.h. */
#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "kube_verbs.h"
#include "olm_hash.h"

json_t *kube_object_path(const json_t *obj, const char *dotted)
{
    json_t *cur = (json_t *)obj;
    for (const char *p = dotted; cur && *p;) {
        size_t n = strcspn(p, ".");
        cur = json_is_object(cur) ? json_object_getn(cur, p, n) : NULL;
        p += n + (p[n] == '.');
    }
    return cur;
}

const char *kube_object_string(const json_t *obj, const char *dotted)
{
    return json_string_value(kube_object_path(obj, dotted));
}

json_t *kube_conditions_find(const json_t *conditions, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

json_t *kube_object_condition(const json_t *obj, const char *type)
{
    return kube_conditions_find(kube_object_path(obj, "status.conditions"), type);
}

bool kube_object_condition_is(const json_t *obj, const char *type, const char *status)
{
    const char *s = json_string_value(json_object_get(kube_object_condition(obj, type), "status"));
    return s && strcmp(s, status) == 0;
}

int kube_conditions_set(json_t *conditions, const kube_condition *c, const char *now)
{
    const char *message = c->message ? c->message : "";
    json_t *old = kube_conditions_find(conditions, c->type);
    if (!old) {
        json_t *n = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s}", "type", c->type, "status", c->status,
                              "observedGeneration", (json_int_t)c->observed_generation, "lastTransitionTime", now,
                              "reason", c->reason, "message", message);
        return n && json_array_append_new(conditions, n) == 0 ? 0 : -1;
    }
    const char *was = json_string_value(json_object_get(old, "status"));
    int rc = 0;
    if (!was || strcmp(was, c->status) != 0 || !json_is_string(json_object_get(old, "lastTransitionTime")))
        rc |= json_object_set_new(old, "lastTransitionTime", json_string(now));
    rc |= json_object_set_new(old, "status", json_string(c->status));
    rc |= json_object_set_new(old, "reason", json_string(c->reason));
    rc |= json_object_set_new(old, "message", json_string(message));
    rc |= json_object_set_new(old, "observedGeneration", json_integer((json_int_t)c->observed_generation));
    return rc ? -1 : 0;
}

int kube_object_set_condition(json_t *status, const kube_condition *c, const char *now)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        if (!conds || json_object_set_new(status, "conditions", conds) != 0)
            return -1;
    }
    return kube_conditions_set(conds, c, now);
}

bool kube_object_has_finalizer(const json_t *obj, const char *name)
{
    size_t i;
    json_t *f;
    json_array_foreach(kube_object_path(obj, "metadata.finalizers"), i, f)
        if (json_is_string(f) && strcmp(json_string_value(f), name) == 0)
            return true;
    return false;
}

json_t *kube_object_finalizers_with(const json_t *obj, const char *name, bool present)
{
    json_t *out = json_array();
    bool kept = false;
    size_t i;
    json_t *f;
    json_array_foreach(kube_object_path(obj, "metadata.finalizers"), i, f) {
        bool ours = json_is_string(f) && strcmp(json_string_value(f), name) == 0;
        if (ours && (!present || kept))
            continue;
        kept |= ours;
        if (!out || json_array_append(out, f) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    if (out && present && !kept && json_array_append_new(out, json_string(name)) != 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Whether `f` is one of the NULL-terminated names. */
static bool listed(const json_t *f, const char *const *names)
{
    for (size_t i = 0; names && names[i]; i++)
        if (json_is_string(f) && strcmp(json_string_value(f), names[i]) == 0)
            return true;
    return false;
}

int kube_object_set_finalizer(kube_client *c, const char *api_version, const char *kind, const json_t *obj,
                              const char *name, bool present, const char *const *also_remove, json_t **out,
                              olm_error *err)
{
    *out = NULL;
    json_t *fins = kube_object_finalizers_with(obj, name, present), *kept = json_array();
    bool bad = !fins || !kept;
    size_t i;
    json_t *f;
    json_array_foreach(fins, i, f)
        if (!bad && !(!present && listed(f, also_remove)))
            bad = json_array_append(kept, f) != 0;
    json_decref(fins);
    if (bad) {
        json_decref(kept);
        return olm_error_set(err, "out of memory");
    }
    const json_t *old = kube_object_path(obj, "metadata.finalizers");
    if (json_array_size(kept) == json_array_size(old) && (json_array_size(kept) == 0 || json_equal(kept, old))) {
        json_decref(kept);
        return 0; /* nothing to change */
    }
    json_t *patch = json_pack("{s:{s:o, s:s?}}", "metadata", "finalizers", kept, "resourceVersion",
                              kube_object_string(obj, "metadata.resourceVersion"));
    char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    json_decref(patch);
    if (!body)
        return olm_error_set(err, "out of memory");
    int rc = kube_patch(c, api_version, kind, kube_object_string(obj, "metadata.namespace"),
                        kube_object_string(obj, "metadata.name"), NULL, KUBE_PATCH_MERGE, body, out, err);
    free(body);
    return rc;
}

void kube_object_reduce(json_t *obj, json_t *metadata, json_t *spec)
{
    json_t *av = json_incref(json_object_get(obj, "apiVersion")), *kind = json_incref(json_object_get(obj, "kind"));
    json_object_clear(obj);
    if (av)
        json_object_set_new(obj, "apiVersion", av);
    if (kind)
        json_object_set_new(obj, "kind", kind);
    if (metadata)
        json_object_set_new(obj, "metadata", metadata);
    if (spec)
        json_object_set_new(obj, "spec", spec);
}

/* ------------------------------------------------------------ content hash */

#define DEPLOYMENT_REVISION_ANNOTATION "deployment.kubernetes.io/revision"

uint64_t kube_object_content_hash(const json_t *obj)
{
    /* Shallow copies: only the two top levels are edited, the rest is shared. */
    json_t *top = json_copy((json_t *)obj);
    json_t *md = top ? json_copy(json_object_get(top, "metadata")) : NULL;
    uint64_t h = OLM_FNV1A_OFFSET;
    if (!top)
        return h;
    json_object_del(top, "status");
    /* The items of a LIST carry no kind and apiVersion (a GET, a watch event and an apply's
     * answer do): the same object must hash the same whichever way it was read. */
    json_object_del(top, "kind");
    json_object_del(top, "apiVersion");
    if (md) {
        json_object_del(md, "resourceVersion");
        json_object_del(md, "managedFields");
        json_object_del(md, "generation");
        /* The Deployment controller's revision counter: written once to every new Deployment
         * (and on each rollout), never by our apply; as change it would cost every install
         * a second, no-op reconcile. */
        json_t *ann = json_object_get(md, "annotations");
        if (json_object_get(ann, DEPLOYMENT_REVISION_ANNOTATION)) {
            ann = json_copy(ann);
            json_object_del(ann, DEPLOYMENT_REVISION_ANNOTATION);
            if (json_object_size(ann) == 0)
                json_object_del(md, "annotations");
            else
                json_object_set(md, "annotations", ann);
            json_decref(ann);
        }
        json_object_set_new(top, "metadata", md);
    }
    char *text = json_dumps(top, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(top);
    if (!text)
        return h;
    h = olm_fnv1a_str(h, text);
    free(text);
    return h;
}
