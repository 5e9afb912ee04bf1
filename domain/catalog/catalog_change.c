/* catalog_change: compare the parts of two ClusterCatalog versions that resolution reads. */
#include "catalog.h"

#include <string.h>

#include "kube_object.h"

/* Both missing counts as equal; a missing and a present value do not. */
static bool same(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    return json_equal(a, b);
}

static const json_t *serving_status(const json_t *obj)
{
    return json_object_get(kube_object_condition(obj, "Serving"), "status");
}

bool catalog_resolution_inputs_changed(const json_t *old_obj, const json_t *new_obj)
{
    if (!old_obj || !new_obj)
        return true;
    return !same(kube_object_path(old_obj, "metadata.labels"), kube_object_path(new_obj, "metadata.labels")) ||
           !same(kube_object_path(old_obj, "spec.priority"), kube_object_path(new_obj, "spec.priority")) ||
           !same(kube_object_path(old_obj, "spec.availabilityMode"),
                 kube_object_path(new_obj, "spec.availabilityMode")) ||
           !same(serving_status(old_obj), serving_status(new_obj)) ||
           !same(kube_object_path(old_obj, "status.urls.base"), kube_object_path(new_obj, "status.urls.base")) ||
           !same(kube_object_path(old_obj, "status.resolvedSource.image.ref"),
                 kube_object_path(new_obj, "status.resolvedSource.image.ref"));
}
