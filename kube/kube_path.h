/* kube_path: REST paths and query strings of the Kubernetes API, without I/O.
 *
 * A kube_resource_info names one resource (group, version, plural, scope); it comes
 * from kube_builtin_kind (a table of the kinds this project uses) or from
 * kube_discovery.  Path segments and query values are percent-escaped with libcurl. */
#ifndef OLM_KUBE_PATH_H
#define OLM_KUBE_PATH_H

#include <stdbool.h>

#include "olm_error.h"

typedef struct kube_resource_info {
    char group[128];    /* "" for the core group */
    char version[64];
    char resource[128]; /* plural, e.g. "deployments" */
    bool namespaced;
} kube_resource_info;

/* Splits "group/version" (or "v1" for core) into out->group and out->version; the
 * rest of *out is zeroed. */
int kube_split_api_version(const char *api_version, kube_resource_info *out, olm_error *err);

/* Lookup in the built-in table only; false when the kind is not there. */
bool kube_builtin_kind(const char *api_version, const char *kind, kube_resource_info *out);

/* Builds "/apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>[/<sub>]]"
 * into a malloc'd string (caller frees).  ns is ignored for cluster-scoped
 * resources; a namespaced resource with a name needs ns.  name/sub may be NULL. */
char *kube_resource_path(const kube_resource_info *ri, const char *ns, const char *name,
                         const char *subresource, olm_error *err);

/* Appends "key=value" (value percent-escaped, '&' between pairs) to a malloc'd
 * query string; *query may be NULL initially.  Returns -1 on out of memory. */
int kube_query_add(char **query, const char *key, const char *value);

#endif
