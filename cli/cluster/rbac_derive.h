/* rbac_derive: the least RBAC a ClusterExtension's ServiceAccount needs to install a
 * rendered bundle, derived from the objects operator-controller will apply.  Pure: no
 * I/O; kinds are mapped to resources by the bundle's own CRDs and a caller's resolver.
 *
 * What the installer does with each object, as the ServiceAccount (controller/applier,
 * controller/drift): server-side apply (patch, and create when absent), get, delete on
 * prune and uninstall, and list+watch of the kind (with the owner label selector) for
 * drift repair.  So every object yields
 *
 *   create, delete, get, patch    on that resource, resourceNames [its name], in its
 *                                 namespace (a Role) or cluster-wide (the ClusterRole);
 *   list, watch                   on that resource, in the one namespace all its objects
 *                                 sit in (a Role), else cluster-wide;
 *
 * and, because the bundle's Roles and ClusterRoles carry permissions the installer does
 * not hold itself (RBAC's escalation check), for each of them
 *
 *   escalate                      on roles/clusterroles, resourceNames [that role],
 *   bind                          on the role every RoleBinding/ClusterRoleBinding refers to,
 *                                 in the binding's namespace or cluster-wide;
 *
 * never a wildcard, never cluster-admin.  Rules with the same verbs are merged: one rule
 * per (apiGroup, resource, verbs) with its resourceNames, and one list/watch rule per
 * apiGroup with its resources.  Output is sorted, so the same bundle gives the same text. */
#ifndef OLMV1_CLI_RBAC_DERIVE_H
#define OLMV1_CLI_RBAC_DERIVE_H

#include <jansson.h>

#include "kube_path.h"
#include "olm_error.h"

/* Maps apiVersion + kind to the resource (kube_resolve_kind on a live cluster); returns
 * 0, or -1 with err set when the cluster does not serve the kind. */
typedef int (*rbac_resolve_fn)(void *ud, const char *api_version, const char *kind, kube_resource_info *out,
                               olm_error *err);

typedef struct rbac_plan {
    json_t *cluster_rules; /* array of PolicyRules for the ClusterRole (may be empty) */
    json_t *ns_rules;      /* object: namespace -> array of PolicyRules for a Role there */
} rbac_plan;

/* Derives the plan for `objects` (render_bundle's output).  Namespaced objects without
 * metadata.namespace go to `install_ns`.  Kinds defined by a CRD among the objects are
 * mapped by that CRD (it does not exist before the install); others by `resolve`.
 * Fills *out (free with rbac_plan_free) and returns 0; -1 with err set. */
int rbac_derive(const json_t *objects, const char *install_ns, rbac_resolve_fn resolve, void *ud, rbac_plan *out,
                olm_error *err);
void rbac_plan_free(rbac_plan *p);

/* Label on every object --create-rbac makes; its value is the extension's name, which
 * is how uninstall --delete-rbac finds them. */
#define RBAC_LABEL "olmv1.operatorframework.io/installer-rbac-for"

typedef struct rbac_names {
    const char *extension;       /* the ClusterExtension */
    const char *namespace_;      /* its spec.namespace, where the ServiceAccount lives */
    const char *service_account; /* its spec.serviceAccount.name */
    const char *bundle;          /* the bundle the rules were derived from (an annotation) */
} rbac_names;

/* The objects that grant `plan` to the ServiceAccount: the ServiceAccount, then a
 * ClusterRole + ClusterRoleBinding "<extension>-installer" (when there are cluster
 * rules), then per namespace a Role + RoleBinding "<extension>-installer".  Each carries
 * RBAC_LABEL.  A new array (caller decrefs), or NULL on out of memory. */
json_t *rbac_objects(const rbac_plan *plan, const rbac_names *names);

/* The name of the ClusterRole, ClusterRoleBinding, Roles and RoleBindings:
 * "<extension>-installer".  Caller frees. */
char *rbac_object_name(const char *extension);

#endif
