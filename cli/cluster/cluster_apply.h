/* cluster_apply: writing objects for the cluster commands (server-side apply as field
 * manager "olmv1", refusing to take over what something else made) and waiting for a
 * ClusterExtension to settle or go. */
#ifndef OLMV1_CLI_CLUSTER_APPLY_H
#define OLMV1_CLI_CLUSTER_APPLY_H

#include <jansson.h>
#include <stdbool.h>

#include "cluster.h"

#define CLUSTER_FIELD_MANAGER "olmv1"

/* "<kind, lower case> <namespace>/<name>" or "<kind> <name>", for messages. */
void cluster_describe(const json_t *obj, char *buf, size_t size);

/* Server-side applies `obj`, which carries the label `label`=`value`.  An object of that
 * kind and name that exists without that label is left alone: CLI_EXIT_CONFLICT.
 * *created (may be NULL) says whether it was new.  Returns 0 or an exit code. */
int cluster_apply_labelled(kube_client *c, const json_t *obj, const char *label, const char *value, bool *created,
                           olm_error *err);

/* Polls ClusterExtension `name` every second until it is installed with its current
 * generation (Installed True, Progressing True/Succeeded, observedGeneration current, and
 * the installed version `want_version` when not NULL), up to `timeout_s` seconds.
 * A terminal Progressing False (Blocked, InvalidConfiguration) ends the wait.
 * Progress lines go to stderr unless quiet.  Exit codes: CLI_EXIT_TIMEOUT with the last
 * Progressing message; InvalidConfiguration CLI_EXIT_INVALID; Blocked CLI_EXIT_FAILED. */
int cluster_wait_installed(kube_client *c, const char *name, const char *want_version, long timeout_s, bool quiet,
                           olm_error *err);

/* Polls until GET of the object answers NotFound (CLI_EXIT_TIMEOUT after timeout_s). */
int cluster_wait_gone(kube_client *c, const char *api_version, const char *kind, const char *ns, const char *name,
                      long timeout_s, olm_error *err);

#endif
