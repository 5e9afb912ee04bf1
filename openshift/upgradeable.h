/* upgradeable: OpenShift upgrade blocking through olm.maxOpenShiftVersion
 * (shared/spec/openshift-upgradeable.md).
 *
 * A pure function: given the installed ClusterExtensions (name, bundle name and
 * the bundle's olm.properties text from the install record) and the cluster
 * version, it returns which extensions block the next minor upgrade, the errors
 * met on the way, and the conditions to write:
 *   - InstalledOLMOperatorsUpgradeable (the intermediate condition, §5),
 *   - OLMIncompatibleOperatorControllerDegraded (what a failed sync sets, §5),
 *   - Upgradeable on ClusterOperator "olm" (library-go's merge of the above, §5).
 * Bad input (properties, values, versions) never fails the call: it becomes
 * part of the result, as upstream reports it.  Only running out of memory does.
 *
 * Why the properties are text and not a jansson array: the spec keeps a JSON
 * number's raw text (4.10 is 4.10, not 4.1; 5.00 is an error, not 5.0), and
 * jansson stores numbers as doubles.  The install record should therefore keep
 * the olm.properties string exactly as built from the bundle (see
 * upgradeable_bundle_properties); upgradeable_properties_from_json exists for
 * callers that only have a jansson array and can live with that loss. */
#ifndef OLM_UPGRADEABLE_H
#define OLM_UPGRADEABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "olm_error.h"

/* Upstream's names and reasons, for callers that look conditions up. */
#define UPGRADEABLE_INTERMEDIATE_TYPE "InstalledOLMOperatorsUpgradeable"
#define UPGRADEABLE_DEGRADED_TYPE "OLMIncompatibleOperatorControllerDegraded"
#define UPGRADEABLE_CO_NAME "olm"
#define UPGRADEABLE_MAX_OCP_PROPERTY "olm.maxOpenShiftVersion"

typedef struct upgradeable_extension {
    const char *name;       /* ClusterExtension name */
    const char *bundle;     /* installed bundle name */
    const char *properties; /* the olm.properties JSON text; NULL when the bundle has none */
    size_t properties_len;  /* bytes of `properties`; 0 means strlen(properties) */
    bool lookup_failed;     /* the install record exists but could not be read */
} upgradeable_extension;
/* Extensions that are not installed yet are simply not passed (upstream skips them). */

typedef enum upgradeable_verdict_kind {
    UPGRADEABLE_NO_PROPERTY,  /* no annotation or no olm.maxOpenShiftVersion: compatible */
    UPGRADEABLE_COMPATIBLE,   /* max > current */
    UPGRADEABLE_INCOMPATIBLE, /* blocks the upgrade */
    UPGRADEABLE_ERROR,        /* blocks too (fail closed), listed under errors */
} upgradeable_verdict_kind;

typedef struct upgradeable_verdict {
    upgradeable_verdict_kind kind;
    char max[48]; /* the last parsed olm.maxOpenShiftVersion as "M.m", or "" */
    char *error;  /* owned; this extension's error text (one entry of result.errors), or NULL */
} upgradeable_verdict;

typedef struct upgradeable_condition {
    const char *type;   /* static */
    const char *status; /* static: "True", "False" */
    char *reason;       /* owned; "" when upstream leaves it empty */
    char *message;      /* owned; "" when empty */
} upgradeable_condition;

typedef struct upgradeable_result {
    char next[48];                   /* the version the message names, e.g. "4.19" */
    upgradeable_verdict *verdicts;   /* owned; one per input extension, same order */
    size_t nverdicts;
    char **incompatible;             /* owned; sorted `bundle "b" for ClusterExtension "ce"` */
    size_t nincompatible;
    char *errors;                    /* owned; every error joined with "\n", or NULL */
    upgradeable_condition intermediate; /* InstalledOLMOperatorsUpgradeable on the OLM CR */
    upgradeable_condition degraded;     /* OLMIncompatibleOperatorControllerDegraded */
    upgradeable_condition upgradeable;  /* Upgradeable on ClusterOperator olm */
} upgradeable_result;

/* Checks against the cluster version (ClusterVersion status.desired.version or
 * the override flag): strict semver, z-stream, pre-release and build ignored,
 * 4.23 treated as 5.0.  An unparsable or empty version fails closed: Upgradeable
 * False with reason InstalledOLMOperators_ErrorCheckingOperatorCompatibility (a
 * project choice; upstream v1 exits, v0 uses that reason).
 * Returns 0 and fills *out (free with upgradeable_result_free), -1 when out of
 * memory (err says so; *out is then empty). */
int upgradeable_check(const upgradeable_extension *exts, size_t n, const char *cluster_version,
                      upgradeable_result *out, olm_error *err);

/* Checks against an explicit target minor "M.m" (olmv1 upgradeable --to): an
 * extension blocks when its max is below the target, with 4.23 and 5.0 counted
 * as the same release.  A bad target is reported as for a bad cluster version. */
int upgradeable_check_target(const upgradeable_extension *exts, size_t n, const char *target,
                             upgradeable_result *out, olm_error *err);

void upgradeable_result_free(upgradeable_result *r);

/* The olm.properties text for a jansson array of {type, value}; caller frees.
 * Reals lose trailing zeros (4.10 becomes 4.1); see the header comment.  NULL
 * when out of memory. */
char *upgradeable_properties_from_json(const json_t *props);

/* The olm.properties text operator-controller records for a registry+v1 bundle
 * directory: the CSV's metadata.annotations["olm.properties"] array followed by
 * metadata/properties.yaml's `properties`, not de-duplicated, re-encoded as
 * json.Marshal does.  *out is NULL (and 0 returned) when neither exists.  A CSV
 * annotation that is not valid JSON is returned unchanged so the check reports
 * it as upstream would.  Returns -1 with err when the directory, CSV or
 * properties.yaml cannot be read or parsed.  Caller frees *out. */
int upgradeable_bundle_properties(const char *bundle_dir, char **out, char **bundle_name, olm_error *err);

#endif
