/* cluster_extension: a ClusterExtension as the install, upgrade and explain commands
 * see it: its spec from flags or from the cluster, the object, its resolution from the
 * cluster's catalogs, and the installer RBAC --create-rbac derives for it. */
#ifndef OLMV1_CLI_CLUSTER_EXTENSION_H
#define OLMV1_CLI_CLUSTER_EXTENSION_H

#include <jansson.h>
#include <stdbool.h>

#include "cluster.h"
#include "cluster_catalogs.h"
#include "cluster_resolve.h"

#define EXTENSION_MAX_LIST 64

/* Every string is borrowed (from argv or from a ClusterExtension object). */
typedef struct extension_spec {
    const char *name;
    const char *package;
    const char *namespace_;
    const char *service_account;
    const char *version;          /* NULL or "": any */
    const char *channels[EXTENSION_MAX_LIST];
    size_t nchannels;
    const char *selector;         /* label selector text (flags), or NULL */
    const char *catalogs[EXTENSION_MAX_LIST]; /* --catalog names */
    size_t ncatalogs;
    const json_t *selector_json;  /* the object's spec.source.catalog.selector; wins over the two above */
    const char *watch_namespace;  /* NULL: none */
    const json_t *config_json;    /* the object's spec.config.inline; wins over watch_namespace */
    bool self_certified;          /* upgradeConstraintPolicy SelfCertified */
} extension_spec;

/* Adds a repeatable flag's value; -1 to go on, else an exit code (after a message). */
int extension_spec_add(const char **list, size_t *n, size_t max, const char *value, const char *flag);

/* Checks names (DNS-1123), the version range and the selector; 0 or CLI_EXIT_USAGE. */
int extension_spec_check(const extension_spec *s, olm_error *err);

/* The spec of an existing ClusterExtension (strings borrowed from `ce`). */
void extension_spec_from_object(const json_t *ce, extension_spec *s);

/* spec.config.inline: config_json, or {"watchNamespace": W}, or NULL.  New reference. */
json_t *extension_inline_config(const extension_spec *s);

/* The spec.source.catalog.selector object, or NULL for none; 0 or an exit code. */
int extension_selector(const extension_spec *s, json_t **out, olm_error *err);

/* The ClusterExtension object; NULL on out of memory (the spec is checked already). */
json_t *extension_object(const extension_spec *s);

/* Resolves as operator-controller would, from the installed bundle `installed` (may be
 * NULL); see cluster_resolve() for the exit codes. */
int extension_resolve(kube_client *c, const catalog_source *src, const extension_spec *s,
                      const resolve_installed *installed, cluster_resolution *out, strbuf *explain, olm_error *err);

/* The ServiceAccount and least RBAC (rbac_derive.h) for installing every bundle of
 * `images` (the union: an upgrade must still prune the old bundle's objects), rendered
 * for the spec's namespace and config.  Namespaces other than the install namespace that
 * get a Role must exist (CLI_EXIT_NOT_FOUND).  *out is a new array. */
int extension_rbac_objects(kube_client *c, const extension_spec *s, const char *const *images, size_t nimages,
                           const char *bundle, json_t **out, olm_error *err);

#endif
