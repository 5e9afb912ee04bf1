/* cluster_objects: the two OLM kinds as the CLI reads them: names and aliases,
 * listing, tidying for output, and the conditions that are not healthy. */
#ifndef OLMV1_CLI_CLUSTER_OBJECTS_H
#define OLMV1_CLI_CLUSTER_OBJECTS_H

#include <jansson.h>

#include "cluster.h"

#define CLUSTER_OLM_API_VERSION "olm.operatorframework.io/v1"

typedef enum cluster_kind_id { CLUSTER_KIND_EXTENSION, CLUSTER_KIND_CATALOG } cluster_kind_id;

typedef struct cluster_kind {
    cluster_kind_id id;
    const char *kind;      /* "ClusterExtension" */
    const char *plural;    /* "clusterextensions" */
    const char *qualified; /* "clusterextension.olm.operatorframework.io" (-o name) */
} cluster_kind;

/* "extensions", "ext", "clusterextension", ... -> the kind; NULL when unknown. */
const cluster_kind *cluster_kind_lookup(const char *word);
const cluster_kind *cluster_kind_get(cluster_kind_id id);

/* Every object of the kind (all pages), optionally filtered by a label selector
 * string; *items is a new array.  Returns 0 or an exit code. */
int cluster_list(kube_client *c, const cluster_kind *kind, const char *selector, json_t **items, olm_error *err);

/* For output: apiVersion and kind on every item (lists leave them out), and
 * metadata.managedFields dropped (as kubectl does). */
void cluster_items_tidy(json_t *items, const cluster_kind *kind);

/* "Type Reason: message; ..." for every condition not in its healthy state: an
 * extension's Installed not True, Progressing not True/Succeeded, a deprecation
 * condition True; a catalog's Serving not True, Progressing not True/Succeeded.
 * "" when all is well.  Caller frees; NULL on out of memory. */
char *cluster_problems(const json_t *obj, cluster_kind_id kind);

/* The strings of a JSON array joined with `sep` ("" for none).  Caller frees. */
char *cluster_join_strings(const json_t *array, const char *sep);

#endif
