/* render_registryv1: the renderer's entry point: rejections (§5.2), target
 * namespaces (§5.4), validators (§5.3), then the generators (§5.5) in order. */
#include "render.h"

#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

/* §5.2, with the SingleOwnNamespace behaviour on (this project's default), so the
 * AllNamespaces-only rejection never applies.  Webhooks are not refused here: with no
 * certificate provider they render without injection, like upstream's Renderer (the
 * controller refuses such a bundle itself, clusterextension_cert_provider). */
static int reject_unsupported(const bundle *b, unsigned modes, olm_error *err)
{
    if (json_array_size(bundle_json_path(b->csv, "spec.apiservicedefinitions.owned")) > 0)
        return olm_error_set(err, "unsupported bundle: apiServiceDefintions are not supported");
    if (!(modes & (INSTALL_MODE_ALL | INSTALL_MODE_SINGLE | INSTALL_MODE_OWN)))
        return olm_error_set(err, "unsupported bundle: bundle must support at least one of [AllNamespaces "
                                  "SingleNamespace OwnNamespace] install modes");
    return 0;
}

/* upstream render.go: defaults, then validateTargetNamespaces. */
static int choose_targets(render_ctx *c, unsigned modes, olm_error *err)
{
    const char *w = c->opts->watch_namespace;
    char ms[128];
    bundle_install_modes_format(modes, ms, sizeof ms);
    if (w && *w) {
        c->targets[0] = w;
        c->ntargets = 1;
    } else if (modes & INSTALL_MODE_ALL) {
        c->targets[0] = "";
        c->ntargets = 1;
    } else if (modes & INSTALL_MODE_OWN) {
        c->targets[0] = c->install_ns;
        c->ntargets = 1;
    } else {
        return olm_error_set(err, "invalid option(s): invalid target namespaces []: %s",
                             modes == INSTALL_MODE_SINGLE ? "exactly one target namespace must be specified"
                                                          : "at least one target namespace must be specified");
    }
    const char *t = c->targets[0];
    if (!*t)
        return 0;
    if (strcmp(t, c->install_ns) == 0) {
        if (!(modes & INSTALL_MODE_OWN))
            return olm_error_set(err, "invalid option(s): invalid target namespaces [%s]: supported install modes %s do not support targeting own namespace",
                                 t, ms);
        return 0;
    }
    if (modes & INSTALL_MODE_SINGLE)
        return 0;
    return olm_error_set(err, "invalid option(s): invalid target namespaces [%s]: supported install modes %s do not support target namespaces [%s]",
                         t, ms, t);
}

int render_bundle(const bundle *b, const render_options *o, json_t **objects_out, olm_error *err)
{
    *objects_out = NULL;
    if (!o->install_namespace || !*o->install_namespace)
        return olm_error_set(err, "invalid option(s): the install namespace is required");
    unsigned modes = bundle_install_modes(b->csv);
    if (reject_unsupported(b, modes, err) < 0)
        return -1;
    render_ctx c = {.b = b, .opts = o, .install_ns = o->install_namespace};
    if (choose_targets(&c, modes, err) < 0 || render_validate(b, err) < 0)
        return -1;
    if (!(c.out = json_array()))
        return olm_error_set(err, "rendering bundle: out of memory");
    if (render_service_accounts(&c, err) < 0 || render_roles(&c, err) < 0 || render_cluster_roles(&c, err) < 0 ||
        render_crds(&c, err) < 0 || render_others(&c, err) < 0 || render_deployments(&c, err) < 0 ||
        render_webhook_configs(&c, "ValidatingAdmissionWebhook", err) < 0 ||
        render_webhook_configs(&c, "MutatingAdmissionWebhook", err) < 0 || render_webhook_services(&c, err) < 0 ||
        render_cert_objects(&c, err) < 0) {
        json_decref(c.out);
        return -1;
    }
    *objects_out = c.out;
    return 0;
}

static int cmp_objects(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    static const char *const keys[] = {"kind", "metadata.namespace", "metadata.name"};
    for (size_t i = 0; i < 3; i++) {
        int r = strcmp(bundle_json_str(a, keys[i]), bundle_json_str(b, keys[i]));
        if (r)
            return r;
    }
    return 0;
}

int render_sort_objects(json_t *objects)
{
    size_t n = json_array_size(objects);
    json_t **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(objects, i));
    /* qsort is not stable; equal keys keep generator order through the index tie-break
     * being unnecessary: (kind, namespace, name) is unique among rendered objects. */
    qsort(v, n, sizeof *v, cmp_objects);
    json_array_clear(objects);
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(objects, v[i]) < 0)
            rc = -1;
    free(v);
    return rc;
}
