/* revision_read: a ClusterExtension's revisions as listed, read the way upstream's
 * BoxcutterRevisionStatesGetter and Boxcutter.Apply read them. */
#include <stdlib.h>
#include <string.h>

#include "revision.h"

static const char *ann(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
    return s ? s : "";
}

const json_t *revision_condition(const json_t *cos, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(cos, "status"), "conditions"), i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static int cmp_info(const void *pa, const void *pb)
{
    const revision_info *a = pa, *b = pb;
    return a->number < b->number ? -1 : a->number > b->number ? 1 : 0;
}

int revision_infos(const json_t *items, revision_info **out, size_t *n)
{
    *out = NULL;
    *n = json_array_size(items);
    if (*n == 0)
        return 0;
    revision_info *infos = calloc(*n, sizeof *infos);
    if (!infos)
        return -1;
    for (size_t i = 0; i < *n; i++) {
        const json_t *o = json_array_get(items, i);
        const json_t *spec = json_object_get(o, "spec");
        const char *state = json_string_value(json_object_get(spec, "lifecycleState"));
        const json_t *succ = revision_condition(o, "Succeeded");
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        infos[i] = (revision_info){
            .name = name ? name : "",
            .number = json_integer_value(json_object_get(spec, "revision")),
            .archived = state && strcmp(state, "Archived") == 0,
            .succeeded = succ && json_string_value(json_object_get(succ, "status")) &&
                         strcmp(json_string_value(json_object_get(succ, "status")), "True") == 0,
            .bundle_name = ann(o, REVISION_ANN_BUNDLE_NAME),
            .bundle_version = ann(o, REVISION_ANN_BUNDLE_VERSION),
            .image = ann(o, REVISION_ANN_BUNDLE_REFERENCE),
            .package = ann(o, REVISION_ANN_PACKAGE),
            .object = o,
        };
    }
    qsort(infos, *n, sizeof *infos, cmp_info);
    *out = infos;
    return 0;
}

void revision_states(const revision_info *infos, size_t n, ssize_t *installed, size_t *rolling, size_t *nrolling)
{
    *installed = -1;
    *nrolling = 0;
    for (size_t i = 0; i < n; i++) {
        if (infos[i].archived)
            continue;
        if (infos[i].succeeded)
            *installed = (ssize_t)i;
        else
            rolling[(*nrolling)++] = i;
    }
}

bool revision_unchanged(const json_t *current, const json_t *desired)
{
    const json_t *cs = json_object_get(current, "spec"), *ds = json_object_get(desired, "spec");
    const char *state = json_string_value(json_object_get(cs, "lifecycleState"));
    if (state && strcmp(state, "Archived") == 0)
        return false; /* "cannot un-archive": upstream's apply is Invalid */
    const json_t *cp = json_object_get(cs, "collisionProtection"), *dp = json_object_get(ds, "collisionProtection");
    if (!json_equal((json_t *)(cp ? cp : json_null()), (json_t *)(dp ? dp : json_null())))
        return false;
    const json_t *cph = json_object_get(cs, "phases"), *dph = json_object_get(ds, "phases");
    return json_equal((json_t *)(cph ? cph : json_null()), (json_t *)(dph ? dph : json_null()));
}
