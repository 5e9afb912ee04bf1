/* explain_upgrade: the "Upgrade" section of `olmv1 explain extension`, in words and as
 * JSON: what the resolver would move the extension to from its installed bundle (and by
 * which edge), or why it stays; and the highest version the upgrade edges reach, with
 * how to widen the version range when the range is what stops it (extension_outlook.h). */
#ifndef OLMV1_CLI_EXPLAIN_UPGRADE_H
#define OLMV1_CLI_EXPLAIN_UPGRADE_H

#include <jansson.h>

#include "cluster_resolve.h"
#include "extension_outlook.h"

/* The report's "upgrade" object for extension `name` resolved with `req` (its range,
 * channels and installed bundle), its `outlook`, and the candidates of
 * explain_candidates (for the edge and the considered channels of the pick):
 *   {"installed": V | null,
 *    "next": {"bundle","version","catalog","channels","edge"} | null (stays or blocked),
 *    "highestReachable": {"bundle","version","catalog","inRange"} | null,
 *    "summary": "would upgrade to ..." | "stays at ...: why" | ...,
 *    "reachable": "1.14.0 (outside the version range ...: widen it with ...)" | ...}
 * A new object, or NULL on out of memory. */
json_t *explain_upgrade_json(const char *name, const resolve_request *req, const extension_outlook *outlook,
                             const json_t *cands);

/* Adds "upgrade" to the explain report (whose "candidates" are filled) for extension
 * `name` resolved by `res` with `req`; nothing when the catalogs were not read.  0 or
 * CLI_EXIT_FAILED (out of memory). */
int explain_upgrade_add(json_t *report, const char *name, const resolve_request *req, const cluster_resolution *res,
                        olm_error *err);

/* Prints the section from that object ("Upgrade: ..." and "Highest reachable ..."). */
void explain_upgrade_print(const json_t *upgrade, FILE *out);

#endif
