/* crdsafety: the preflight that refuses CRD changes which would break
 * stored objects (olmv1-behaviour.md §6.3, the crdify checks).  Skipped when
 * spec.install.preflight.crdUpgradeSafety.enforcement == None. */
#ifndef OLM_CRDSAFETY_H
#define OLM_CRDSAFETY_H

#include <jansson.h>

#include "olm_error.h"

/* Compares the CRD on the cluster (`existing`) with the one about to be applied
 * (`desired`).  Returns 0 when safe; -1 with the message of §6.3 in err:
 *   validating upgrade for CRD "<crd>": <errors joined "\n">
 * where each error is "<check>: <msg>" (CRD-wide) or
 * "<version>: <property path>: <check>: <msg>", e.g.
 *   v1 -> v2: ^.spec.foobarbaz: enum: allowed enum values removed  */
int crdsafety_check(const json_t *existing, const json_t *desired, olm_error *err);

/* The same check without olm_error's length limit: on success *report is NULL
 * when the upgrade is safe, else a malloc'd message (the caller frees it) in the
 * format above.  Returns -1 only when memory runs out. */
int crdsafety_report(const json_t *existing, const json_t *desired, char **report, olm_error *err);

#endif
