/* bundle_config: validation of a ClusterExtension's inline config for a
 * registry+v1 bundle (spec §5.4).
 *
 * Upstream validates the config with a JSON schema tailored from the CSV's install
 * modes (santhosh-tekuri/jsonschema) and rewrites each schema error into a short
 * sentence.  We check the same rules directly and produce the same sentences, in
 * the order the schema library reports them. */
#ifndef OLM_BUNDLE_CONFIG_H
#define OLM_BUNDLE_CONFIG_H

#include <jansson.h>

#include "bundle_load.h"
#include "olm_error.h"

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
void bundle_config_free(bundle_config *c);

#endif
