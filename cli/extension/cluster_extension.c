/* cluster_extension: a ClusterExtension's spec, object, resolution and installer RBAC
 * (cluster_extension.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_extension.h"
#include "cluster_objects.h"
#include "rbac_derive.h"
#include "semver.h"

int extension_spec_add(const char **list, size_t *n, size_t max, const char *value, const char *flag)
{
    if (*n == max) {
        fprintf(stderr, "olmv1: at most %zu %s\n", max, flag);
        return CLI_EXIT_USAGE;
    }
    list[(*n)++] = value;
    return -1;
}

int extension_spec_check(const extension_spec *s, olm_error *err)
{
    /* The CRD refuses names over 63 characters: they become label values. */
    if (!cluster_dns1123_label(s->name))
        return cluster_error(err, CLI_EXIT_USAGE, "extension name \"%s\" must be a DNS-1123 label (lower case "
                                                  "alphanumerics and '-', at most 63 characters)",
                             s->name);
    if (!cluster_dns1123_label(s->namespace_))
        return cluster_error(err, CLI_EXIT_USAGE, "namespace \"%s\" must be a DNS-1123 label", s->namespace_);
    if (!cluster_dns1123_subdomain(s->package))
        return cluster_error(err, CLI_EXIT_USAGE, "package \"%s\" must be a DNS-1123 subdomain", s->package);
    for (size_t i = 0; i < s->nchannels; i++)
        if (!cluster_dns1123_subdomain(s->channels[i]))
            return cluster_error(err, CLI_EXIT_USAGE, "channel \"%s\" must be a DNS-1123 subdomain", s->channels[i]);
    if (s->service_account && !cluster_dns1123_subdomain(s->service_account))
        return cluster_error(err, CLI_EXIT_USAGE, "service account \"%s\" must be a DNS-1123 subdomain",
                             s->service_account);
    if (s->watch_namespace && !cluster_dns1123_label(s->watch_namespace))
        return cluster_error(err, CLI_EXIT_USAGE, "watch namespace \"%s\" must be a DNS-1123 label",
                             s->watch_namespace);
    if (s->version && *s->version) {
        if (strlen(s->version) > 64)
            return cluster_error(err, CLI_EXIT_USAGE, "--version is at most 64 characters");
        olm_error perr;
        semver_constraint *c = semver_constraint_parse(s->version, &perr);
        if (!c)
            return cluster_error(err, CLI_EXIT_USAGE, "--version \"%s\": %s", s->version, perr.msg);
        semver_constraint_free(c);
    }
    json_t *sel = NULL;
    int rc = extension_selector(s, &sel, err);
    json_decref(sel);
    return rc;
}

void extension_spec_from_object(const json_t *ce, extension_spec *s)
{
    memset(s, 0, sizeof *s);
    s->name = cluster_str(ce, "metadata.name");
    s->package = cluster_str(ce, "spec.source.catalog.packageName");
    s->namespace_ = cluster_str(ce, "spec.namespace");
    s->service_account = cluster_str(ce, "spec.serviceAccount.name");
    s->version = cluster_str(ce, "spec.source.catalog.version");
    const json_t *cat = json_object_get(json_object_get(json_object_get(ce, "spec"), "source"), "catalog");
    size_t i;
    const json_t *ch;
    json_array_foreach(json_object_get(cat, "channels"), i, ch) {
        if (s->nchannels < EXTENSION_MAX_LIST && json_string_value(ch))
            s->channels[s->nchannels++] = json_string_value(ch);
    }
    s->selector_json = json_object_get(cat, "selector");
    s->config_json = json_object_get(json_object_get(json_object_get(ce, "spec"), "config"), "inline");
    s->self_certified = strcmp(cluster_str(ce, "spec.source.catalog.upgradeConstraintPolicy"), "SelfCertified") == 0;
}

json_t *extension_inline_config(const extension_spec *s)
{
    if (s->config_json)
        return json_incref((json_t *)s->config_json);
    if (s->watch_namespace)
        return json_pack("{s:s}", "watchNamespace", s->watch_namespace);
    return NULL;
}

int extension_selector(const extension_spec *s, json_t **out, olm_error *err)
{
    *out = NULL;
    if (s->selector_json) {
        *out = json_incref((json_t *)s->selector_json);
        return 0;
    }
    return cluster_selector_parse(s->selector, s->catalogs, s->ncatalogs, out, err);
}

json_t *extension_object(const extension_spec *s)
{
    json_t *catalog = json_pack("{s:s}", "packageName", s->package);
    json_t *sel = NULL;
    olm_error err;
    int rc = catalog ? extension_selector(s, &sel, &err) : -1;
    if (rc == 0 && s->version && *s->version)
        rc = json_object_set_new(catalog, "version", json_string(s->version));
    if (rc == 0 && s->nchannels) {
        json_t *chs = json_array();
        for (size_t i = 0; chs && i < s->nchannels; i++)
            if (json_array_append_new(chs, json_string(s->channels[i])) < 0) {
                json_decref(chs);
                chs = NULL;
            }
        rc = chs ? json_object_set_new(catalog, "channels", chs) : -1;
    }
    if (rc == 0 && sel)
        rc = json_object_set(catalog, "selector", sel);
    if (rc == 0 && s->self_certified)
        rc = json_object_set_new(catalog, "upgradeConstraintPolicy", json_string("SelfCertified"));
    json_decref(sel);
    json_t *ce = rc == 0 ? json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s}, s:{s:s, s:o}}}", "apiVersion",
                                     CLUSTER_OLM_API_VERSION, "kind", "ClusterExtension", "metadata", "name", s->name,
                                     "spec", "namespace", s->namespace_, "serviceAccount", "name", s->service_account,
                                     "source", "sourceType", "Catalog", "catalog", catalog)
                         : (json_decref(catalog), NULL);
    json_t *config = ce ? extension_inline_config(s) : NULL;
    if (config) {
        json_t *c = json_pack("{s:s, s:o}", "configType", "Inline", "inline", config);
        if (!c || json_object_set_new(json_object_get(ce, "spec"), "config", c) < 0) {
            json_decref(ce);
            return NULL;
        }
    }
    return ce;
}

int extension_resolve(kube_client *c, const catalog_source *src, const extension_spec *s,
                      const resolve_installed *installed, cluster_resolution *out, strbuf *explain, olm_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *sel = NULL;
    int rc = extension_selector(s, &sel, err);
    if (rc != 0)
        return rc;
    resolve_request req = {
        .package = s->package,
        .version_range = s->version,
        .channels = s->channels,
        .nchannels = s->nchannels,
        .policy = s->self_certified ? RESOLVE_POLICY_SELF_CERTIFIED : RESOLVE_POLICY_CATALOG_PROVIDED,
        .installed = installed,
    };
    rc = cluster_resolve(c, src, sel, &req, out, explain, err);
    json_decref(sel);
    return rc;
}

/* rbac_derive's kinds: the cluster's discovery. */
static int resolve_kind(void *ud, const char *api_version, const char *kind, kube_resource_info *out, olm_error *err)
{
    if (kube_resolve_kind(ud, api_version, kind, out, err) < 0)
        return olm_error_set(err, "the bundle has a %s (%s), which this cluster does not serve", kind, api_version);
    return 0;
}

/* Every namespace the plan puts a Role in must exist, except the install namespace
 * (created here when missing). */
static int check_namespaces(kube_client *c, const rbac_plan *plan, const char *install_ns, olm_error *err)
{
    const char *ns;
    json_t *rules;
    json_object_foreach(plan->ns_rules, ns, rules) {
        (void)rules;
        if (strcmp(ns, install_ns) == 0)
            continue;
        json_t *obj = NULL;
        int rc = kube_get(c, "v1", "Namespace", NULL, ns, &obj, err);
        json_decref(obj);
        if (rc == KUBE_NOT_FOUND)
            return cluster_error(err, CLI_EXIT_NOT_FOUND, "namespace \"%s\" does not exist: the bundle installs objects "
                                                          "there (--watch-namespace); create it first",
                                 ns);
        if (rc < 0)
            return cluster_exit_from_kube(rc);
    }
    return 0;
}

int extension_rbac_objects(kube_client *c, const extension_spec *s, const char *const *images, size_t nimages,
                           const char *bundle, json_t **out, olm_error *err)
{
    *out = NULL;
    json_t *config = extension_inline_config(s);
    json_t *all = json_array();
    int rc = all ? 0 : cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    /* The union over the bundles (an upgrade needs the old one's objects to prune them). */
    for (size_t i = 0; rc == 0 && i < nimages; i++) {
        json_t *objects = NULL;
        rc = cluster_render_bundle(images[i], s->namespace_, config, &objects, err);
        if (rc == 0 && json_array_extend(all, objects) < 0)
            rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        json_decref(objects);
    }
    json_decref(config);
    rbac_plan plan = {0};
    if (rc == 0 && rbac_derive(all, s->namespace_, resolve_kind, c, &plan, err) < 0)
        rc = strcmp(err->msg, "out of memory") == 0 ? CLI_EXIT_FAILED : CLI_EXIT_INVALID;
    json_decref(all);
    if (rc == 0)
        rc = check_namespaces(c, &plan, s->namespace_, err);
    if (rc == 0) {
        rbac_names names = {s->name, s->namespace_, s->service_account, bundle};
        if (!(*out = rbac_objects(&plan, &names)))
            rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    rbac_plan_free(&plan);
    return rc;
}

