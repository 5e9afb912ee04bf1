/* bundle_version: a bundle's VersionRelease (olmv1-behaviour.md §3.4, legacy mode).
 *
 * A bundle version is parsed strictly (blang).  When its build metadata, joined with
 * ".", is a valid release (dot-separated semver pre-release identifiers, at most 20
 * characters) it becomes the release and the build is cleared: `1.0.0+2` is version
 * 1.0.0, release "2".  Otherwise the build stays and the release is empty.
 *
 * Ordering is by version precedence (build ignored), then release: an empty release
 * is lower than any other, and segments compare like pre-release identifiers. */
#ifndef OLM_BUNDLE_VERSION_H
#define OLM_BUNDLE_VERSION_H

#include "olm_error.h"
#include "semver.h"

typedef struct bundle_version {
    semver_version version; /* owned */
    char *release;          /* owned; "" when empty */
} bundle_version;

/* Parses `text` (an olm.package version or a status.install.bundle.version). */
int bundle_version_parse(const char *text, bundle_version *out, olm_error *err);
void bundle_version_free(bundle_version *bv);

/* Precedence then release; <0, 0, >0. */
int bundle_version_compare(const bundle_version *a, const bundle_version *b);

/* True if `release` is a valid release string (exported for tests and validation). */
int bundle_release_valid(const char *release);

/* The status encoding: "X.Y.Z[-pre]+<release>" or the version with its own build.
 * Caller frees. */
char *bundle_version_format(const bundle_version *bv);

#endif
