/* render_registryv1: a registry+v1 bundle to the plain Kubernetes objects
 * operator-controller applies (spec §5.2, §5.3, §5.4 target namespaces, §5.5).
 *
 * Offline and deterministic: the same bundle and options give the same objects in
 * the same order.  The renderer adds no labels (the applier does). */
#ifndef OLM_RENDER_REGISTRYV1_H
#define OLM_RENDER_REGISTRYV1_H

#include <jansson.h>

#include "bundle_load.h"
#include "olm_error.h"

typedef enum render_cert_provider {
    RENDER_CERT_NONE,                 /* no provider: bundles with webhooks are rejected */
    RENDER_CERT_OPENSHIFT_SERVICE_CA, /* this project's provider when webhooks are present */
    RENDER_CERT_MANAGER,              /* cert-manager Issuer + Certificate */
} render_cert_provider;

typedef struct render_options {
    const char *install_namespace;   /* required */
    const char *watch_namespace;     /* NULL or "" = the bundle's default targets */
    const json_t *deployment_config; /* borrowed; NULL = none (validated by bundle_config) */
    render_cert_provider cert_provider;
} render_options;

/* Renders `b`.  On success *objects_out is a new array (caller decrefs) of objects
 * in generator order: ServiceAccounts, Roles+RoleBindings, ClusterRoles+
 * ClusterRoleBindings, CRDs, others, Deployments, ValidatingWebhookConfigurations,
 * MutatingWebhookConfigurations, webhook Services, cert-provider objects.
 * On failure *objects_out is NULL and err holds upstream's message: a §5.2
 * "unsupported bundle: ..." rejection, "invalid option(s): ..." for target
 * namespaces the bundle does not support, the §5.3 validator errors joined with
 * "\n", or a generator error. */
int render_bundle(const bundle *b, const render_options *opts, json_t **objects_out, olm_error *err);

/* The order upstream's regression corpus writes objects in: by kind, then
 * namespace, then name (bytewise).  Sorts `objects` in place; -1 on OOM. */
int render_sort_objects(json_t *objects);

#endif
