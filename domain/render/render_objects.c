/* render_objects: the object builders and CSV lookups every generator shares.  They live
 * apart from the entry point (render_registryv1.c) so that calls run one way: entry point
 * -> generators -> these helpers. */
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

int render_emit(render_ctx *c, json_t *obj, olm_error *err)
{
    if (!obj || json_array_append_new(c->out, obj) < 0)
        return olm_error_set(err, "rendering bundle: out of memory");
    return 0;
}

json_t *render_new_object(const char *api_version, const char *kind, const char *name, const char *ns)
{
    json_t *meta = ns ? json_pack("{s:s,s:s}", "name", name, "namespace", ns) : json_pack("{s:s}", "name", name);
    if (!meta)
        return NULL;
    return json_pack("{s:s,s:s,s:o}", "apiVersion", api_version, "kind", kind, "metadata", meta);
}

json_t *render_strategy_list(const bundle *b, const char *key)
{
    json_t *spec = bundle_json_path(b->csv, "spec.install.spec");
    json_t *l = json_object_get(spec, key);
    return json_is_array(l) ? l : NULL;
}

json_t *render_webhook_definitions(const bundle *b)
{
    json_t *l = bundle_json_path(b->csv, "spec.webhookdefinitions");
    return json_is_array(l) ? l : NULL;
}

const char *render_sa_name(const json_t *perm)
{
    const char *s = json_string_value(json_object_get(perm, "serviceAccountName"));
    return s && *s ? s : "default";
}

int render_set_annotation(json_t *obj, const char *key, const char *value)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        if (!(meta = json_object()) || json_object_set_new(obj, "metadata", meta) < 0)
            return -1;
    }
    json_t *ann = json_object_get(meta, "annotations");
    if (!json_is_object(ann)) {
        if (!(ann = json_object()) || json_object_set_new(meta, "annotations", ann) < 0)
            return -1;
    }
    return json_object_set_new(ann, key, json_string(value));
}
