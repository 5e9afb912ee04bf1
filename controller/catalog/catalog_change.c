/* catalog_change: compare the parts of two ClusterCatalog versions that resolution reads. */
#include "catalog.h"

#include <string.h>

/* obj[k0][k1]...: NULL when any step is missing. */
static const json_t *at(const json_t *obj, const char *k0, const char *k1, const char *k2, const char *k3)
{
    const char *keys[] = {k0, k1, k2, k3};
    for (size_t i = 0; i < 4 && keys[i] && obj; i++)
        obj = json_object_get(obj, keys[i]);
    return obj;
}

/* Both missing counts as equal; a missing and a present value do not. */
static bool same(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    return json_equal(a, b);
}

static const json_t *serving_status(const json_t *obj)
{
    const json_t *conds = at(obj, "status", "conditions", NULL, NULL);
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c) {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && strcmp(type, "Serving") == 0)
            return json_object_get(c, "status");
    }
    return NULL;
}

bool catalog_resolution_inputs_changed(const json_t *old_obj, const json_t *new_obj)
{
    if (!old_obj || !new_obj)
        return true;
    return !same(at(old_obj, "metadata", "labels", NULL, NULL), at(new_obj, "metadata", "labels", NULL, NULL)) ||
           !same(at(old_obj, "spec", "priority", NULL, NULL), at(new_obj, "spec", "priority", NULL, NULL)) ||
           !same(at(old_obj, "spec", "availabilityMode", NULL, NULL),
                 at(new_obj, "spec", "availabilityMode", NULL, NULL)) ||
           !same(serving_status(old_obj), serving_status(new_obj)) ||
           !same(at(old_obj, "status", "urls", "base", NULL), at(new_obj, "status", "urls", "base", NULL)) ||
           !same(at(old_obj, "status", "resolvedSource", "image", "ref"),
                 at(new_obj, "status", "resolvedSource", "image", "ref"));
}
