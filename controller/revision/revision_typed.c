/* revision_typed: the fields upstream's objects carry because its renderer builds them as Go
 * types.  GenerateRevision turns each rendered object into unstructured with
 * runtime.DefaultUnstructuredConverter, which writes a struct-typed field that is not a
 * pointer even when it is empty: "omitempty" leaves out empty strings, numbers, slices, maps and
 * nil pointers, never a struct.  For the Deployments the renderer makes from the CSV
 * (appsv1.Deployment) that is spec.strategy (DeploymentStrategy) and each container's
 * resources (ResourceRequirements): an upstream revision of a CSV without them holds
 * "strategy":{} and "resources":{}.
 *
 * Why it matters: upstream keeps the current revision only when the bytes it would store are
 * the bytes stored (its Secret names and keys are hashes of them); a revision of ours without
 * these two empty objects is "changed" for upstream, which then writes a new revision of the
 * same bundle when it takes the install over.  Observed with upstream's operator-controller at
 * df2c201 (e2e/tests/test_upstream_door.py). */
#include <string.h>

#include "revision.h"

static int ensure_object(json_t *parent, const char *key)
{
    if (!json_is_object(parent) || json_object_get(parent, key))
        return 0;
    return json_object_set_new(parent, key, json_object());
}

static int containers_resources(json_t *pod_spec, const char *list)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(pod_spec, list), i, c) {
        if (ensure_object(c, "resources") != 0)
            return -1;
    }
    return 0;
}

int revision_typed_fields(json_t *obj)
{
    const char *api = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!api || !kind || strcmp(api, "apps/v1") != 0 || strcmp(kind, "Deployment") != 0)
        return 0;
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec))
        return 0;
    if (ensure_object(spec, "strategy") != 0)
        return -1;
    json_t *pod = json_object_get(json_object_get(spec, "template"), "spec");
    if (!json_is_object(pod))
        return 0;
    /* Container, also as an init container; EphemeralContainerCommon has the same field. */
    if (containers_resources(pod, "containers") != 0 || containers_resources(pod, "initContainers") != 0 ||
        containers_resources(pod, "ephemeralContainers") != 0)
        return -1;
    return 0;
}
