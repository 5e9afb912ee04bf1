/* upgradeable_reconcile_merge: the pure half of writing conditions on ClusterOperator
 * "olm": merge by type with apimeta.SetStatusCondition semantics (lastTransitionTime
 * moves only when the status does). */
#include <string.h>

#include "upgradeable_reconciler.h"

static const char *str_field(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* The index of the condition of `type` in `arr`, or -1. */
static long find_type(const json_t *arr, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach (arr, i, c) {
        if (strcmp(str_field(c, "type"), type) == 0)
            return (long)i;
    }
    return -1;
}

static json_t *build_one(const upgradeable_condition *w, const char *ltt)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", w->type, "status", w->status, "lastTransitionTime", ltt,
                     "reason", w->reason ? w->reason : "", "message", w->message ? w->message : "");
}

json_t *upgradeable_conditions_merge(const json_t *existing, const upgradeable_condition *want, size_t n,
                                     const char *now, bool *changed)
{
    /* Deep copy: the input may be shared with an informer cache and must not change. */
    json_t *out = json_is_array(existing) ? json_deep_copy(existing) : json_array();
    bool diff = false;
    for (size_t i = 0; out && i < n; i++) {
        const upgradeable_condition *w = &want[i];
        long at = find_type(out, w->type);
        json_t *old = at >= 0 ? json_array_get(out, (size_t)at) : NULL;
        const char *ltt = now;
        if (old && strcmp(str_field(old, "status"), w->status) == 0 && *str_field(old, "lastTransitionTime"))
            ltt = str_field(old, "lastTransitionTime");
        json_t *c = build_one(w, ltt);
        if (!c) {
            json_decref(out);
            return NULL;
        }
        if (old && json_equal(old, c)) {
            json_decref(c);
            continue;
        }
        diff = true;
        if ((old ? json_array_set_new(out, (size_t)at, c) : json_array_append_new(out, c)) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    if (out && changed)
        *changed = diff;
    return out;
}
