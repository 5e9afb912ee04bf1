/* render_deploycfg: spec.config.inline.deploymentConfig applied to a rendered
 * Deployment with OLM v0's Subscription "config" semantics (§5.5):
 *   env, volumes, volumeMounts   override the entry of the same name, else append
 *   envFrom, tolerations         append unless an equal entry exists
 *   resources                    replace in every container
 *   nodeSelector                 replace
 *   affinity                     null: untouched; {}: erased; per sub-field: a
 *                                non-empty value replaces, an empty one erases
 *   annotations                  added to the Deployment and pod template where absent
 * Only `containers` are touched, never initContainers, as in v0. */
#include <string.h>

#include "render_internal.h"

static json_t *child(json_t *obj, const char *key, int array)
{
    json_t *v = json_object_get(obj, key);
    if (array ? json_is_array(v) : json_is_object(v))
        return v;
    v = array ? json_array() : json_object();
    if (!v || json_object_set_new(obj, key, v) < 0)
        return NULL;
    return v;
}

/* Override by "name" or append; deep copies from `add`. */
static int merge_named(json_t *list, const json_t *add)
{
    json_t *a;
    size_t i;
    json_array_foreach(add, i, a) {
        const char *name = json_string_value(json_object_get(a, "name"));
        size_t k, at = (size_t)-1;
        json_t *e;
        json_array_foreach(list, k, e) {
            const char *en = json_string_value(json_object_get(e, "name"));
            if (name && en && strcmp(name, en) == 0) {
                at = k;
                break;
            }
        }
        json_t *copy = json_deep_copy(a);
        if (!copy || (at == (size_t)-1 ? json_array_append_new(list, copy) : json_array_set_new(list, at, copy)) < 0)
            return -1;
    }
    return 0;
}

/* Append unless an equal entry is already there. */
static int merge_unique(json_t *list, const json_t *add)
{
    json_t *a, *e;
    size_t i, k;
    json_array_foreach(add, i, a) {
        int dup = 0;
        json_array_foreach(list, k, e) if (json_equal(e, a)) dup = 1;
        if (!dup && json_array_append_new(list, json_deep_copy(a)) < 0)
            return -1;
    }
    return 0;
}

static int is_empty(const json_t *v)
{
    return json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0);
}

static int apply_affinity(json_t *podspec, const json_t *aff)
{
    static const char *const subs[] = {"nodeAffinity", "podAffinity", "podAntiAffinity"};
    if (!aff || json_is_null(aff))
        return 0;
    if (is_empty(aff)) {
        json_object_del(podspec, "affinity"); /* -1 only when already absent: fine */
        return 0;
    }
    json_t *cur = child(podspec, "affinity", 0);
    if (!cur)
        return -1;
    for (size_t i = 0; i < 3; i++) {
        json_t *s = json_object_get(aff, subs[i]);
        if (!s || json_is_null(s))
            continue;
        if (is_empty(s))
            json_object_del(cur, subs[i]);
        else if (json_object_set_new(cur, subs[i], json_deep_copy(s)) < 0)
            return -1;
    }
    return 0;
}

static int add_absent(json_t *meta, const json_t *ann)
{
    json_t *dst = child(meta, "annotations", 0);
    const char *k;
    json_t *v;
    if (!dst)
        return -1;
    json_object_foreach((json_t *)ann, k, v) if (!json_object_get(dst, k) && json_object_set(dst, k, v) < 0) return -1;
    return 0;
}

int render_apply_deployment_config(json_t *dep, const json_t *dc, olm_error *err)
{
    json_t *spec = child(dep, "spec", 0);
    json_t *tpl = spec ? child(spec, "template", 0) : NULL;
    json_t *podspec = tpl ? child(tpl, "spec", 0) : NULL;
    json_t *containers = podspec ? json_object_get(podspec, "containers") : NULL;
    if (!podspec)
        goto oom;
    json_t *env = json_object_get(dc, "env"), *envfrom = json_object_get(dc, "envFrom");
    json_t *mounts = json_object_get(dc, "volumeMounts"), *res = json_object_get(dc, "resources");
    json_t *ctr;
    size_t i;
    json_array_foreach(containers, i, ctr) {
        if ((json_is_array(env) && merge_named(child(ctr, "env", 1), env) < 0) ||
            (json_is_array(envfrom) && merge_unique(child(ctr, "envFrom", 1), envfrom) < 0))
            goto oom;
    }
    json_t *vols = json_object_get(dc, "volumes");
    if (json_is_array(vols) && merge_named(child(podspec, "volumes", 1), vols) < 0)
        goto oom;
    json_array_foreach(containers, i, ctr) if (json_is_array(mounts) && merge_named(child(ctr, "volumeMounts", 1), mounts) < 0) goto oom;
    json_t *tol = json_object_get(dc, "tolerations");
    if (json_is_array(tol) && merge_unique(child(podspec, "tolerations", 1), tol) < 0)
        goto oom;
    json_array_foreach(containers, i, ctr) if (json_is_object(res) && json_object_set_new(ctr, "resources", json_deep_copy(res)) < 0) goto oom;
    json_t *ns = json_object_get(dc, "nodeSelector");
    if (json_is_object(ns) && json_object_set_new(podspec, "nodeSelector", json_deep_copy(ns)) < 0)
        goto oom;
    if (apply_affinity(podspec, json_object_get(dc, "affinity")) < 0)
        goto oom;
    json_t *ann = json_object_get(dc, "annotations");
    if (json_is_object(ann) && json_object_size(ann) &&
        (add_absent(child(dep, "metadata", 0), ann) < 0 || add_absent(child(tpl, "metadata", 0), ann) < 0))
        goto oom;
    return 0;
oom:
    return olm_error_set(err, "applying deploymentConfig: out of memory");
}
