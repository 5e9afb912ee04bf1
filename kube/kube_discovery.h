/* kube_discovery: apiVersion + kind -> resource, for kinds the built-in table of
 * kube_path does not know (bundle content, CRD-defined kinds): GET /api/v1 or
 * /apis/<group>/<version>, cached per client under its own mutex. */
#ifndef OLM_KUBE_DISCOVERY_H
#define OLM_KUBE_DISCOVERY_H

#include <stdbool.h>

#include "kube_path.h"
#include "kube_transport.h"

/* kind -> resource: the built-in table first, then discovery (a miss in the cache
 * refreshes that group/version once so freshly created CRDs are found). */
int kube_resolve_kind(kube_client *c, const char *api_version, const char *kind,
                      kube_resource_info *out, olm_error *err);
/* Drops the discovery cache (e.g. after installing CRDs). */
void kube_discovery_reset(kube_client *c);
/* Whether the server serves `group/version` ("v1" for core): *served set, 0 returned;
 * -1 with err only for transport or server errors. */
int kube_group_version_served(kube_client *c, const char *api_version, bool *served, olm_error *err);

#endif
