/* objectset_objects: a ClusterObjectSet's objects in one array, for a caller outside the
 * controller (the ClusterExtension controller taking an install over from its revisions when
 * the BoxcutterRuntime gate is switched off). */
#include "objectset_internal.h"

json_t *objectset_objects(kube_client *admin, const json_t *cos, olm_error *err)
{
    objectset_phases ph;
    if (objectset_resolve(admin, NULL, cos, &ph, err) != 0)
        return NULL;
    json_t *all = json_array();
    for (size_t i = 0; all && i < ph.n; i++)
        if (json_array_extend(all, ph.items[i].objects) != 0) {
            json_decref(all);
            all = NULL;
        }
    objectset_phases_free(&ph);
    if (!all)
        olm_error_set(err, "out of memory");
    return all;
}
