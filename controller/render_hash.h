/* render_hash: the naming helpers of the registry+v1 renderer.
 *
 * Upstream names generated Roles/ClusterRoles with a hash of the CSV permission
 * entry (internal/shared/util/hash DeepHash): SHA-224 over the bytes Go's
 * json.Encoder writes for the value (fields in struct order, HTML escaping, a
 * trailing newline), printed in base 36.  Names must match upstream byte for
 * byte, or an upgrade from an upstream-rendered install would orphan objects, so
 * the encoder here reproduces Go's output rather than jansson's. */
#ifndef OLM_RENDER_HASH_H
#define OLM_RENDER_HASH_H

#include <jansson.h>

#include "olm_error.h"
#include "strbuf.h"

/* base36 of a 224-bit number is at most 44 digits. */
#define RENDER_HASH_MAX 48

enum {
    GOJSON_SORT_KEYS = 1,   /* map[string]any order; otherwise the object's own order */
    GOJSON_ESCAPE_HTML = 2, /* json.Encoder/Marshal default: <, >, & as \u003c... */
};

/* Appends `v` compactly, the way Go's encoding/json writes it: strings escaped as
 * Go does (\b \f \n \r \t short forms, other controls as \u00XX, U+2028/2029
 * always escaped), integers in decimal, reals as float64.  No trailing newline.
 * -1 on out of memory or NaN/Inf. */
int gojson_encode(const json_t *v, unsigned flags, strbuf *out);

/* DeepHash(v): base36(SHA-224(gojson(v, object order, HTML escaping) + "\n")).
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
