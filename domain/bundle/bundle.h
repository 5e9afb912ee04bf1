/* bundle: a registry+v1 bundle directory loaded into memory, and the validation of a
 * ClusterExtension's inline config against it. */
#ifndef OLM_BUNDLE_H
#define OLM_BUNDLE_H

#include <stdbool.h>

#include <jansson.h>

#include "olm_error.h"

/* bundle_load: reads a registry+v1 bundle directory (spec §5.1).
 *
 *   metadata/annotations.yaml   required; only the package annotation is read
 *   metadata/properties.yaml    optional; appended to the CSV's olm.properties
 *   manifests/                  flat; every file is a YAML or JSON stream of objects
 *
 * The result is plain JSON (jansson), the shape every later step reads. */

typedef struct bundle {
    char *package_name; /* owned; "" when annotations.yaml does not name one */
    json_t *csv;        /* owned reference: the ClusterServiceVersion (the last one wins) */
    json_t *crds;       /* owned array of CustomResourceDefinition objects, file order */
    json_t *others;     /* owned array of every other object, file order */
} bundle;

/* Loads `dir` into `out` (which the caller zero-initialises).  On failure `out` is
 * left empty and `err` says which file and why.  Free with bundle_free. */
int bundle_load_dir(const char *dir, bundle *out, olm_error *err);
void bundle_free(bundle *b);

/* Supported install modes of a CSV (spec.installModes[] with supported: true). */
enum {
    INSTALL_MODE_ALL = 1,    /* AllNamespaces */
    INSTALL_MODE_MULTI = 2,  /* MultiNamespace */
    INSTALL_MODE_OWN = 4,    /* OwnNamespace */
    INSTALL_MODE_SINGLE = 8, /* SingleNamespace */
};
unsigned bundle_install_modes(const json_t *csv);
/* Writes Go's %v of the sorted mode names, e.g. "[AllNamespaces OwnNamespace]". */
void bundle_install_modes_format(unsigned modes, char *buf, size_t size);

/* Member lookup by a dotted path ("spec.install.spec"); NULL when any step is
 * missing or not an object.  Borrowed. */
json_t *bundle_json_path(const json_t *root, const char *path);
/* The string at `path`, or "" (never NULL). */
const char *bundle_json_str(const json_t *root, const char *path);

/* bundle_config: validation of a ClusterExtension's inline config for a
 * registry+v1 bundle (spec §5.4).
 *
 * Upstream validates the config with a JSON schema tailored from the CSV's install
 * modes (santhosh-tekuri/jsonschema) and rewrites each schema error into a short
 * sentence.  We check the same rules directly and produce the same sentences, in
 * the order the schema library reports them. */

/* Every message starts with this; the controller maps it to the terminal
 * Progressing reason InvalidConfiguration. */
#define BUNDLE_CONFIG_ERROR_PREFIX "invalid ClusterExtension configuration: invalid configuration: "

typedef struct bundle_config {
    char *watch_namespace;     /* owned; NULL when absent or null */
    json_t *deployment_config; /* owned reference; NULL when absent or null */
} bundle_config;

/* Validates `config` (the spec.config.inline object; NULL means {}) for a bundle
 * whose CSV supports `install_modes`, installed into `install_ns`.  Fills `out`
 * on success; on failure `out` is empty and err holds the prefixed message. */
int bundle_config_validate(unsigned install_modes, const char *install_ns, const json_t *config,
                           bundle_config *out, olm_error *err);

/* Upstream's feature gates over the config (operator-controller --feature-gates): a key whose
 * gate is off is not in the schema, so it is an `unknown field`, as upstream reports it. */
typedef struct bundle_config_gates {
    bool watch_namespace;   /* SingleOwnNamespaceInstallSupport */
    bool deployment_config; /* DeploymentConfig */
} bundle_config_gates;
#define BUNDLE_CONFIG_ALL_GATES ((bundle_config_gates){.watch_namespace = true, .deployment_config = true})

/* bundle_config_validate with those gates (it passes BUNDLE_CONFIG_ALL_GATES). */
int bundle_config_validate_gated(unsigned install_modes, const char *install_ns, const json_t *config,
                                 bundle_config_gates gates, bundle_config *out, olm_error *err);
void bundle_config_free(bundle_config *c);

#endif
