/* render_deployments: the CSV's install strategy deployments and the bundle's
 * other manifests (§5.5 "Others" and "Deployments"). */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_internal.h"

int render_others(render_ctx *c, olm_error *err)
{
    json_t *o;
    size_t i;
    json_array_foreach(c->b->others, i, o) {
        const char *kind = bundle_json_str(o, "kind");
        int support = render_kind_support(kind);
        if (!support)
            return olm_error_set(err, "bundle contains unsupported resource: Name: %s, Kind: %s",
                                 bundle_json_str(o, "metadata.name"), kind);
        json_t *copy = json_deep_copy(o);
        if (copy && support == 1) {
            json_t *meta = json_object_get(copy, "metadata");
            if (!json_is_object(meta) && (!(meta = json_object()) || json_object_set_new(copy, "metadata", meta) < 0)) {
                json_decref(copy);
                copy = NULL;
            } else if (json_object_set_new(meta, "namespace", json_string(c->install_ns)) < 0) {
                json_decref(copy);
                copy = NULL;
            }
        }
        if (render_emit(c, copy, err) < 0)
            return -1;
    }
    return 0;
}

/* Returns obj[key] as an object, creating it (and replacing a non-object). */
static json_t *child_object(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_object(v))
        return v;
    v = json_object();
    if (!v || json_object_set_new(obj, key, v) < 0)
        return NULL;
    return v;
}

static json_t *child_array(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_array(v))
        return v;
    v = json_array();
    if (!v || json_object_set_new(obj, key, v) < 0)
        return NULL;
    return v;
}

/* The webhook serving certificate: drop the volumes (and their mounts) the
 * operator brought for it, then mount the provider's Secret at both well-known
 * paths in every container. */
static const char *const cert_paths[] = {"/apiserver.local.config/certificates", "/tmp/k8s-webhook-server/serving-certs"};
static const char *const cert_volumes[] = {"apiservice-cert", "webhook-cert"};

static int replaced_volume(json_t *replace, const char *name)
{
    json_t *v;
    size_t i;
    json_array_foreach(replace, i, v) if (strcmp(json_string_value(v), name) == 0) return 1;
    return 0;
}

static int remove_named(json_t *list, json_t *replace)
{
    for (size_t i = json_array_size(list); i-- > 0;) {
        const char *n = json_string_value(json_object_get(json_array_get(list, i), "name"));
        if (n && replaced_volume(replace, n) && json_array_remove(list, i) < 0)
            return -1;
    }
    return 0;
}

static int add_cert_volumes(json_t *podspec, const char *secret)
{
    json_t *replace = json_pack("[ss]", cert_volumes[0], cert_volumes[1]);
    json_t *containers = json_object_get(podspec, "containers"), *ctr, *m;
    size_t i, j;
    int rc = replace ? 0 : -1;
    json_array_foreach(containers, i, ctr) json_array_foreach(json_object_get(ctr, "volumeMounts"), j, m) {
        const char *path = json_string_value(json_object_get(m, "mountPath"));
        const char *name = json_string_value(json_object_get(m, "name"));
        if (rc == 0 && path && name && (strcmp(path, cert_paths[0]) == 0 || strcmp(path, cert_paths[1]) == 0) &&
            !replaced_volume(replace, name))
            rc = json_array_append_new(replace, json_string(name));
    }
    json_t *vols = rc == 0 ? child_array(podspec, "volumes") : NULL;
    if (!vols || remove_named(vols, replace) < 0 ||
        json_array_append_new(vols, json_pack("{s:s,s:{s:s,s:[{s:s,s:s},{s:s,s:s}]}}", "name", "apiservice-cert",
                                              "secret", "secretName", secret, "items", "key", "tls.crt", "path",
                                              "apiserver.crt", "key", "tls.key", "path", "apiserver.key")) < 0 ||
        json_array_append_new(vols, json_pack("{s:s,s:{s:s,s:[{s:s,s:s},{s:s,s:s}]}}", "name", "webhook-cert",
                                              "secret", "secretName", secret, "items", "key", "tls.crt", "path",
                                              "tls.crt", "key", "tls.key", "path", "tls.key")) < 0)
        rc = -1;
    json_array_foreach(containers, i, ctr) {
        json_t *mounts = rc == 0 ? child_array(ctr, "volumeMounts") : NULL;
        if (!mounts || remove_named(mounts, replace) < 0 ||
            json_array_append_new(mounts, json_pack("{s:s,s:s}", "name", cert_volumes[0], "mountPath", cert_paths[0])) < 0 ||
            json_array_append_new(mounts, json_pack("{s:s,s:s}", "name", cert_volumes[1], "mountPath", cert_paths[1])) < 0)
            rc = -1;
    }
    json_decref(replace);
    return rc;
}

/* Pod template annotations = CSV annotations, then the template's (which win),
 * then olm.targetNamespaces and olm.operatorNamespace. */
static int template_annotations(render_ctx *c, json_t *spec)
{
    json_t *tmeta = child_object(child_object(spec, "template"), "metadata");
    json_t *merged = json_object();
    if (!tmeta || !merged)
        goto oom;
    json_t *csv_ann = bundle_json_path(c->b->csv, "metadata.annotations");
    json_t *tpl_ann = json_object_get(tmeta, "annotations");
    if ((json_is_object(csv_ann) && json_object_update(merged, csv_ann) < 0) ||
        (json_is_object(tpl_ann) && json_object_update(merged, tpl_ann) < 0))
        goto oom;
    strbuf targets = STRBUF_INIT;
    for (size_t i = 0; i < c->ntargets; i++)
        if ((i && strbuf_putc(&targets, ',') < 0) || strbuf_puts(&targets, c->targets[i]) < 0) {
            strbuf_free(&targets);
            goto oom;
        }
    int rc = json_object_set_new(merged, "olm.targetNamespaces", json_string(strbuf_str(&targets)));
    strbuf_free(&targets);
    if (rc < 0 || json_object_set_new(merged, "olm.operatorNamespace", json_string(c->install_ns)) < 0 ||
        json_object_set(tmeta, "annotations", merged) < 0)
        goto oom;
    json_decref(merged);
    return 0;
oom:
    json_decref(merged);
    return -1;
}

static json_t *render_one_deployment(render_ctx *c, const json_t *ds, olm_error *err)
{
    const char *name = json_string_value(json_object_get(ds, "name"));
    json_t *spec = json_is_object(json_object_get(ds, "spec")) ? json_deep_copy(json_object_get(ds, "spec")) : json_object();
    json_t *dep = render_new_object("apps/v1", "Deployment", name ? name : "", c->install_ns);
    json_t *label = json_object_get(ds, "label");
    if (!spec || !dep || template_annotations(c, spec) < 0 ||
        json_object_set_new(spec, "revisionHistoryLimit", json_integer(1)) < 0 ||
        (json_is_object(label) && json_object_size(label) &&
         json_object_set_new(json_object_get(dep, "metadata"), "labels", json_deep_copy(label)) < 0) ||
        json_object_set(dep, "spec", spec) < 0)
        goto oom;
    json_decref(spec);
    spec = NULL;
    if (name && c->opts->cert_provider != RENDER_CERT_NONE && render_deployment_serves_webhooks(c->b, name)) {
        char *cert = render_cert_name(name);
        json_t *podspec = cert ? child_object(child_object(json_object_get(dep, "spec"), "template"), "spec") : NULL;
        int rc = podspec ? add_cert_volumes(podspec, cert) : -1;
        free(cert);
        if (rc < 0)
            goto oom;
    }
    if (c->opts->deployment_config && render_apply_deployment_config(dep, c->opts->deployment_config, err) < 0) {
        json_decref(dep);
        return NULL;
    }
    return dep;
oom:
    json_decref(spec);
    json_decref(dep);
    olm_error_set(err, "rendering deployments: out of memory");
    return NULL;
}

int render_deployments(render_ctx *c, olm_error *err)
{
    json_t *ds;
    size_t i;
    json_array_foreach(render_strategy_list(c->b, "deployments"), i, ds) {
        json_t *dep = render_one_deployment(c, ds, err);
        if (!dep || render_emit(c, dep, err) < 0)
            return -1;
    }
    return 0;
}
