/* render: a registry+v1 bundle turned into the Kubernetes objects to apply, with the
 * hashes and names upstream derives. */
#ifndef OLM_RENDER_H
#define OLM_RENDER_H

#include <jansson.h>

#include "bundle.h"
#include "olm_error.h"
#include "strbuf.h"

/* render_registryv1: a registry+v1 bundle to the plain Kubernetes objects
 * operator-controller applies (spec §5.2, §5.3, §5.4 target namespaces, §5.5).
 *
 * Offline and deterministic: the same bundle and options give the same objects in
 * the same order.  The renderer adds no labels (the applier does). */

typedef enum render_cert_provider {
    RENDER_CERT_NONE,                 /* no provider: webhooks rendered without CA injection, as
                                       * upstream's Renderer does with no CertificateProvider (its
                                       * regression corpus); the controller never renders webhooks
                                       * this way (it refuses such a bundle before rendering) */
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
 * "unsupported bundle: ..." rejection (API services, install modes; webhooks without a
 * provider are the caller's to refuse, as in upstream's provider.go), "invalid option(s): ..." for target
 * namespaces the bundle does not support, the §5.3 validator errors joined with
 * "\n", or a generator error. */
int render_bundle(const bundle *b, const render_options *opts, json_t **objects_out, olm_error *err);

/* The order upstream's regression corpus writes objects in: by kind, then
 * namespace, then name (bytewise).  Sorts `objects` in place; -1 on OOM. */
int render_sort_objects(json_t *objects);

/* render_hash: the naming helpers of the registry+v1 renderer.
 *
 * Upstream names generated Roles/ClusterRoles with a hash of the CSV permission
 * entry (internal/shared/util/hash DeepHash): SHA-224 over the bytes Go's
 * json.Encoder writes for the value (fields in struct order, HTML escaping, a
 * trailing newline), printed in base 36.  Names must match upstream byte for
 * byte, or an upgrade from an upstream-rendered install would orphan objects, so
 * the bytes come from gocompat's encoder (Go's output), not jansson's. */

/* base36 of a 224-bit number is at most 44 digits. */
#define RENDER_HASH_MAX 48

/* DeepHash(v): base36(SHA-224(json.Encoder(v) + "\n")), the encoder writing
 * fields in the object's own order with HTML escaping.
 * Writes the NUL-terminated digits into `out`. */
int render_deep_hash(const json_t *v, char out[RENDER_HASH_MAX], olm_error *err);

/* ObjectNameForBaseAndSuffix: "<base>-<suffix>", with base cut to
 * 63-len(suffix)-1 bytes when len(base)+len(suffix) > 63.  Caller frees; NULL on
 * out of memory. */
char *render_object_name(const char *base, const char *suffix);

/* The Go shape of one CSV permission entry (StrategyDeploymentPermissions):
 * {"serviceAccountName": raw, "rules": [PolicyRule...]}, each PolicyRule as
 * {"verbs" (always; null when absent), "apiGroups", "resources", "resourceNames",
 * "nonResourceURLs"} with empty lists omitted and unknown fields dropped.
 * `extra_rule`, when non-NULL, is appended after the CSV rules (the promotion of
 * a permission to a ClusterRole).  New reference; NULL on bad input or OOM. */
json_t *render_permission_normalise(const json_t *perm, const json_t *extra_rule, olm_error *err);

#endif
