/* cluster_resolve: what operator-controller would install, computed by the CLI from
 * the cluster (ClusterCatalogs, their served content) with the controller's resolver,
 * and the bundle it names pulled and rendered as the controller renders it. */
#ifndef OLMV1_CLI_CLUSTER_RESOLVE_H
#define OLMV1_CLI_CLUSTER_RESOLVE_H

#include <jansson.h>

#include "cluster.h"
#include "cluster_catalogs.h"
#include "resolve.h"
#include "strbuf.h"

/* kubectl's label selector text ("a=b,c!=d,e in (f,g),h notin (i),j,!k") as a
 * metav1.LabelSelector object (matchLabels for = and ==, matchExpressions for the
 * rest).  `catalogs` (nnames > 0) adds olm.operatorframework.io/metadata.name In
 * names, the label catalogd puts on every ClusterCatalog.  text may be NULL.
 * *out is a new object, or NULL when neither selects anything.  Returns 0 or
 * CLI_EXIT_USAGE / CLI_EXIT_FAILED with err set. */
int cluster_selector_parse(const char *text, const char *const *catalogs, size_t ncatalogs, json_t **out,
                           olm_error *err);

/* Everything a resolution used; free with cluster_resolution_free. */
typedef struct cluster_resolution {
    cluster_catalog_set set;
    resolve_catalog *view; /* set.n entries */
    resolve_result res;
    bool resolved;
} cluster_resolution;

/* Selects the catalogs `selector` picks, reads `req->package` from them and resolves.
 * `explain` (may be NULL) receives the resolver's reasoning.  Exit codes: no catalog
 * selected or none available CLI_EXIT_NO_CATALOGS; a catalog that cannot be read its
 * class (not serving: NO_CATALOGS, unreachable, forbidden); the package in none of
 * them CLI_EXIT_NOT_FOUND; nothing satisfies the request CLI_EXIT_NO_MATCH (err holds
 * the message operator-controller would write in Progressing). */
int cluster_resolve(kube_client *api, const catalog_source *src, const json_t *selector, const resolve_request *req,
                    cluster_resolution *out, strbuf *explain, olm_error *err);
void cluster_resolution_free(cluster_resolution *r);

/* Pulls the bundle `image` (from where olmv1 runs: $REGISTRY_AUTH_FILE for credentials,
 * $OLMV1_INSECURE_REGISTRIES and loopback registries over http) into a temporary
 * directory, validates `config` (spec.config.inline, may be NULL) for it and renders it
 * for `install_ns` exactly as operator-controller does.  *objects is a new array.
 * Exit codes: pull failures CLI_EXIT_UNREACHABLE, a bad bundle or config CLI_EXIT_INVALID. */
int cluster_render_bundle(const char *image, const char *install_ns, const json_t *config, json_t **objects,
                          olm_error *err);

#endif
