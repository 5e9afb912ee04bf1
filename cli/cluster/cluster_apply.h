/* cluster_apply: writing objects for the cluster commands (server-side apply as field
 * manager "olmv1", refusing to take over what something else made).  Waiting for a
 * ClusterExtension is in cluster_wait.h. */
#ifndef OLMV1_CLI_CLUSTER_APPLY_H
#define OLMV1_CLI_CLUSTER_APPLY_H

#include <jansson.h>
#include <stdbool.h>

#include "cluster.h"
#include "cluster_wait.h"

#define CLUSTER_FIELD_MANAGER "olmv1"

/* "<kind, lower case> <namespace>/<name>" or "<kind> <name>", for messages. */
void cluster_describe(const json_t *obj, char *buf, size_t size);

/* Server-side applies `obj`, which carries the label `label`=`value`.  An object of that
 * kind and name that exists without that label is left alone: CLI_EXIT_CONFLICT.
 * *created (may be NULL) says whether it was new.  Returns 0 or an exit code. */
int cluster_apply_labelled(kube_client *c, const json_t *obj, const char *label, const char *value, bool *created,
                           olm_error *err);

#endif
