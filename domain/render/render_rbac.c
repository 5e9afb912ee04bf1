/* render_rbac: ServiceAccounts, Roles/RoleBindings and ClusterRoles/
 * ClusterRoleBindings from the CSV's permissions and clusterPermissions (§5.5). */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_internal.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int render_service_accounts(render_ctx *c, olm_error *err)
{
    json_t *lists[2] = {render_strategy_list(c->b, "permissions"), render_strategy_list(c->b, "clusterPermissions")};
    size_t n = json_array_size(lists[0]) + json_array_size(lists[1]), k = 0;
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names)
        return olm_error_set(err, "rendering bundle: out of memory");
    for (int l = 0; l < 2; l++) {
        json_t *p;
        size_t i;
        json_array_foreach(lists[l], i, p) names[k++] = render_sa_name(p);
    }
    /* Upstream walks a set (random order); sorted is the deterministic choice. */
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if ((i > 0 && strcmp(names[i], names[i - 1]) == 0) || strcmp(names[i], "default") == 0)
            continue;
        rc = render_emit(c, render_new_object("v1", "ServiceAccount", names[i], c->install_ns), err);
    }
    free(names);
    return rc;
}

/* Emits the role (kind Role/ClusterRole) and its binding for one normalised
 * permission entry `norm` whose base service account name is `sa`. */
static int emit_pair(render_ctx *c, const json_t *norm, const char *sa, const char *ns, int cluster, olm_error *err)
{
    char hash[RENDER_HASH_MAX];
    if (render_deep_hash(norm, hash, err) < 0)
        return -1;
    char *base = NULL, *name = NULL;
    const char *csv_name = bundle_json_str(c->b->csv, "metadata.name");
    if (asprintf(&base, "%s-%s", csv_name, sa) < 0 || !(name = render_object_name(base, hash))) {
        free(base);
        return olm_error_set(err, "rendering bundle: out of memory");
    }
    free(base);
    const char *role_kind = cluster ? "ClusterRole" : "Role";
    json_t *role = render_new_object("rbac.authorization.k8s.io/v1", role_kind, name, ns);
    json_t *rules = json_object_get(norm, "rules");
    if (role && json_object_set(role, "rules", json_is_null(rules) ? json_array() : rules) < 0) {
        json_decref(role);
        role = NULL;
    }
    int rc = render_emit(c, role, err);
    if (rc == 0) {
        json_t *binding = render_new_object("rbac.authorization.k8s.io/v1", cluster ? "ClusterRoleBinding" : "RoleBinding", name, ns);
        json_t *extra = json_pack("{s:[{s:s,s:s,s:s}],s:{s:s,s:s,s:s}}", "subjects", "kind", "ServiceAccount", "name", sa,
                                  "namespace", c->install_ns, "roleRef", "apiGroup", "rbac.authorization.k8s.io",
                                  "kind", role_kind, "name", name);
        if (!binding || !extra || json_object_update(binding, extra) < 0) {
            json_decref(binding);
            binding = NULL;
        }
        json_decref(extra);
        rc = render_emit(c, binding, err);
    }
    free(name);
    return rc;
}

int render_roles(render_ctx *c, olm_error *err)
{
    /* AllNamespaces: permissions become ClusterRoles (render_cluster_roles). */
    if (c->ntargets == 1 && !*c->targets[0])
        return 0;
    json_t *perms = render_strategy_list(c->b, "permissions"), *p;
    for (size_t t = 0; t < c->ntargets; t++) {
        size_t i;
        json_array_foreach(perms, i, p) {
            json_t *norm = render_permission_normalise(p, NULL, err);
            if (!norm)
                return olm_error_wrap(err, "rendering permissions of %s", bundle_json_str(c->b->csv, "metadata.name"));
            int rc = emit_pair(c, norm, render_sa_name(p), c->targets[t], 0, err);
            json_decref(norm);
            if (rc < 0)
                return -1;
        }
    }
    return 0;
}

int render_cluster_roles(render_ctx *c, olm_error *err)
{
    json_t *p;
    size_t i;
    json_array_foreach(render_strategy_list(c->b, "clusterPermissions"), i, p) {
        json_t *norm = render_permission_normalise(p, NULL, err);
        if (!norm)
            return olm_error_wrap(err, "rendering clusterPermissions of %s", bundle_json_str(c->b->csv, "metadata.name"));
        int rc = emit_pair(c, norm, render_sa_name(p), NULL, 1, err);
        json_decref(norm);
        if (rc < 0)
            return -1;
    }
    if (!(c->ntargets == 1 && !*c->targets[0]))
        return 0;
    /* Promotion: the operator watches every namespace, so it may also list them.
     * The rule is appended before hashing, which changes the name. */
    json_t *ns_rule = json_pack("{s:[sss],s:[s],s:[s]}", "verbs", "get", "list", "watch", "apiGroups", "",
                                "resources", "namespaces");
    if (!ns_rule)
        return olm_error_set(err, "rendering bundle: out of memory");
    int rc = 0;
    json_array_foreach(render_strategy_list(c->b, "permissions"), i, p) {
        json_t *norm = render_permission_normalise(p, ns_rule, err);
        if (!norm) {
            rc = olm_error_wrap(err, "rendering permissions of %s", bundle_json_str(c->b->csv, "metadata.name"));
            break;
        }
        rc = emit_pair(c, norm, render_sa_name(p), NULL, 1, err);
        json_decref(norm);
        if (rc < 0)
            break;
    }
    json_decref(ns_rule);
    return rc;
}
