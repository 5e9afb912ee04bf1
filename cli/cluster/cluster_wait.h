/* cluster_wait: waiting for a ClusterExtension to get where a command asked it to go
 * (install, upgrade) or to be gone (uninstall), so that exit 0 means done. */
#ifndef OLMV1_CLI_CLUSTER_WAIT_H
#define OLMV1_CLI_CLUSTER_WAIT_H

#include <stdbool.h>

#include "cluster.h"

/* Polls ClusterExtension `name` every second, up to `timeout_s` seconds, until the
 * controller has finished with its current generation (Installed True, Progressing
 * True/Succeeded observed at metadata.generation) at the version the CLI resolved,
 * `want_version` (NULL: any) -- see cluster_wait_arrived.  While Progressing changes, its
 * reason and message go to stderr (unless quiet): Retrying is not the end (the controller
 * retries, e.g. once RBAC is granted), so only the timeout ends it.  Exit codes:
 * Progressing False Blocked CLI_EXIT_BLOCKED, InvalidConfiguration CLI_EXIT_INVALID, time
 * out CLI_EXIT_TIMEOUT; err then holds what is installed and the last Progressing message. */
int cluster_wait_installed(kube_client *c, const char *name, const char *want_version, long timeout_s, bool quiet,
                           olm_error *err);

/* True when the installed `version` is where the request went: `want_version` itself (or
 * none was given), or -- a catalog changed after the CLI resolved -- a higher version the
 * spec's range `range` (NULL or "": any) admits.  Pure. */
bool cluster_wait_arrived(const char *version, const char *want_version, const char *range);

/* Polls until GET of the object answers NotFound (CLI_EXIT_TIMEOUT after timeout_s). */
int cluster_wait_gone(kube_client *c, const char *api_version, const char *kind, const char *ns, const char *name,
                      long timeout_s, olm_error *err);

#endif
