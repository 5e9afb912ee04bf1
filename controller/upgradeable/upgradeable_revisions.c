/* upgradeable_revisions: with --feature-gates=BoxcutterRuntime=true an extension's install is a
 * ClusterObjectSet revision, not an install record; the bundle's properties (and so
 * olm.maxOpenShiftVersion) are its olm.properties annotation, which upstream puts there for
 * this very reader ("used by other operators that care about the bundle properties (e.g.
 * maxOpenShiftVersion)", applier/boxcutter.go).  The installed revision is upstream's
 * RevisionStates one: the newest Active revision whose Succeeded condition is True. */
#include <string.h>

#include "upgradeable_internal.h"
#include "upgradeable_reconciler.h"

#define OWNER_NAME "olm.operatorframework.io/owner-name"
#define ANN_BUNDLE_NAME "olm.operatorframework.io/bundle-name"
#define ANN_PROPERTIES "olm.properties"

static bool succeeded(const json_t *cos)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(cos, "status"), "conditions"), i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t && strcmp(t, "Succeeded") == 0)
            return s && strcmp(s, "True") == 0;
    }
    return false;
}

json_t *upgradeable_slim_revision(const json_t *cos)
{
    const json_t *md = json_object_get(cos, "metadata"), *spec = json_object_get(cos, "spec");
    const json_t *anns = json_object_get(md, "annotations");
    const char *state = json_string_value(json_object_get(spec, "lifecycleState"));
    const char *owner = json_string_value(json_object_get(json_object_get(md, "labels"), OWNER_NAME));
    const char *bundle = json_string_value(json_object_get(anns, ANN_BUNDLE_NAME));
    const json_t *props = json_object_get(anns, ANN_PROPERTIES);
    bool installed = (!state || strcmp(state, "Archived") != 0) && succeeded(cos);
    json_t *k = json_pack("{s:s, s:s, s:I, s:b}", "e", owner ? owner : "", "b", bundle ? bundle : "", "n",
                          (json_int_t)json_integer_value(json_object_get(spec, "revision")), "i", installed);
    if (k && json_is_string(props) && json_object_set(k, "p", (json_t *)props) != 0) {
        json_decref(k);
        return NULL;
    }
    return k;
}

json_t *upgradeable_installed_revisions(const json_t *revisions)
{
    json_t *by = json_object();
    size_t i;
    const json_t *r;
    json_array_foreach(revisions, i, r) {
        const char *e = json_string_value(json_object_get(r, "e"));
        if (!by || !e || !*e || !json_is_true(json_object_get(r, "i")))
            continue;
        const json_t *have = json_object_get(by, e);
        if (have && json_integer_value(json_object_get(have, "n")) >= json_integer_value(json_object_get(r, "n")))
            continue;
        if (json_object_set(by, e, (json_t *)r) != 0) {
            json_decref(by);
            by = NULL;
        }
    }
    return by;
}
