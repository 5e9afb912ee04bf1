/* semver: versions, precedence and the two range languages OLM v1 uses.
 *
 *  - strict versions  (blang/semver v4 `Parse`): every bundle version in a catalog;
 *  - lenient versions (Masterminds/semver v3 `NewVersion`): what `olmv1 semver match
 *    --syntax masterminds` accepts as a version;
 *  - Masterminds v3 constraints: ClusterExtension `spec.source.catalog.version`;
 *  - blang v4 ranges: channel-entry `skipRange`, with blang's quirks reproduced.
 *
 * The exact rules are in shared/spec/semver.md; every function here follows it.
 * Depends on libc (and util/olm_error) only. */
#ifndef OLM_SEMVER_H
#define OLM_SEMVER_H

#include <stdbool.h>
#include <stdint.h>

#include "olm_error.h"

typedef struct semver_version {
    uint64_t major, minor, patch;
    char *prerelease; /* owned; "" when absent; dot-separated identifiers */
    char *build;      /* owned; "" when absent; ignored by every comparison */
} semver_version;

/* blang Parse: "N.N.N[-pre][+build]" exactly.  On failure `out` is untouched and
 * err says what is wrong and where (e.g. `invalid version "1.2": ...`). */
int semver_parse_strict(const char *s, semver_version *out, olm_error *err);

/* Masterminds NewVersion (CoerceNewVersion=true): optional `v`, 1-3 parts, leading
 * zeros dropped, missing parts 0. */
int semver_parse_lenient(const char *s, semver_version *out, olm_error *err);

void semver_version_free(semver_version *v);
int semver_version_copy(semver_version *dst, const semver_version *src);

/* Precedence (semver.md §1): <0, 0, >0.  Build metadata ignored.  A prerelease
 * identifier is numeric only if all digits and it fits uint64. */
int semver_compare(const semver_version *a, const semver_version *b);

/* Canonical text "M.m.p[-pre][+build]"; caller frees.  NULL on out of memory. */
char *semver_version_format(const semver_version *v);

/* ---- Masterminds v3 constraints (spec.source.catalog.version) ---- */
typedef struct semver_constraint semver_constraint;

/* NULL on error; err holds the reason.  The empty string is an error (callers that
 * treat "" as "no filter" must check before calling). */
semver_constraint *semver_constraint_parse(const char *s, olm_error *err);
bool semver_constraint_check(const semver_constraint *c, const semver_version *v);
void semver_constraint_free(semver_constraint *c);

/* ---- blang v4 ranges (skipRange) ---- */
typedef struct semver_range semver_range;

/* NULL on error.  `a || || b` parses (as in blang); matching that empty
 * alternative is false instead of blang's panic. */
semver_range *semver_range_parse(const char *s, olm_error *err);
bool semver_range_match(const semver_range *r, const semver_version *v);
void semver_range_free(semver_range *r);

#endif
