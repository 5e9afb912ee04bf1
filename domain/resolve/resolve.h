/* resolve: picks the bundle to install from catalog content (channels, version range,
 * upgrade edges, catalog priority), with bundle versions (semver + release) and the
 * deprecation conditions of the result. */
#ifndef OLM_RESOLVE_H
#define OLM_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fbc.h"
#include "olm_error.h"
#include "semver.h"
#include "strbuf.h"

/* bundle_version: a bundle's VersionRelease (olmv1-behaviour.md §3.4, legacy mode).
 *
 * A bundle version is parsed strictly (blang).  When its build metadata, joined with
 * ".", is a valid release (dot-separated semver pre-release identifiers, at most 20
 * characters) it becomes the release and the build is cleared: `1.0.0+2` is version
 * 1.0.0, release "2".  Otherwise the build stays and the release is empty.
 *
 * Ordering is by version precedence (build ignored), then release: an empty release
 * is lower than any other, and segments compare like pre-release identifiers. */

typedef struct bundle_version {
    semver_version version; /* owned */
    char *release;          /* owned; "" when empty */
} bundle_version;

/* Parses `text` (an olm.package version or a status.install.bundle.version). */
int bundle_version_parse(const char *text, bundle_version *out, olm_error *err);
void bundle_version_free(bundle_version *bv);

/* Precedence then release; <0, 0, >0. */
int bundle_version_compare(const bundle_version *a, const bundle_version *b);

/* Orders two version texts newest first, for lists people read: by bundle_version_compare
 * descending; a text that does not parse (or NULL) after every one that does.  <0, 0, >0. */
int bundle_version_text_order(const char *a, const char *b);

/* True if `release` is a valid release string (exported for tests and validation). */
int bundle_release_valid(const char *release);

/* The status encoding: "X.Y.Z[-pre]+<release>" or the version with its own build.
 * Caller frees. */
char *bundle_version_format(const bundle_version *bv);

/* deprecation: the four deprecation conditions of a ClusterExtension
 * (olmv1-behaviour.md §2.4): Deprecated (roll-up), PackageDeprecated,
 * ChannelDeprecated and BundleDeprecated. */

enum {
    DEPRECATION_ROLLUP = 0,
    DEPRECATION_PACKAGE,
    DEPRECATION_CHANNEL,
    DEPRECATION_BUNDLE,
    DEPRECATION_NCONDITIONS
};

typedef struct deprecation_condition {
    const char *type;   /* static: "Deprecated", "PackageDeprecated", ... */
    const char *status; /* static: "True", "False" or "Unknown" */
    const char *reason; /* static */
    char *message;      /* owned */
} deprecation_condition;

typedef struct deprecation_input {
    const char *installed_bundle;        /* NULL or "" when nothing is installed */
    const fbc_deprecation *deprecation;  /* the package's olm.deprecations, or NULL */
    bool has_catalog_data;               /* resolution succeeded, or a deprecation blob is known */
    const char *const *channels;         /* spec.source.catalog.channels */
    size_t nchannels;
} deprecation_input;

/* Fills out[DEPRECATION_NCONDITIONS].  Returns -1 on out of memory. */
int deprecation_conditions(const deprecation_input *in, deprecation_condition out[DEPRECATION_NCONDITIONS],
                           olm_error *err);
void deprecation_conditions_free(deprecation_condition out[DEPRECATION_NCONDITIONS]);

/* resolve: choose the bundle a ClusterExtension installs (olmv1-behaviour.md §3).
 *
 * Pure and offline: the caller supplies the catalogs already selected by
 * spec.source.catalog.selector, each with the package's FBC (or the reason it is
 * unavailable), and the installed bundle if any.  The same code serves the
 * controller and `olmv1 resolve`.  Error messages are the ones upstream writes
 * into the Progressing condition. */

typedef struct resolve_catalog {
    const char *name;
    int32_t priority;          /* spec.priority; higher wins */
    bool unavailable;          /* spec.availabilityMode == Unavailable: skipped */
    /* Why the package cannot be read from this catalog (e.g. `catalog "x" is not
     * being served`), or NULL.  A non-NULL reason aborts the whole resolution, as
     * upstream does. */
    const char *fetch_error;
    const fbc_catalog *fbc;    /* borrowed; may hold other packages too */
} resolve_catalog;

typedef struct resolve_installed {
    const char *bundle_name;   /* status.install.bundle.name */
    const char *version;       /* status.install.bundle.version, e.g. "1.0.0+2" */
} resolve_installed;

typedef enum resolve_policy {
    RESOLVE_POLICY_CATALOG_PROVIDED = 0,
    RESOLVE_POLICY_SELF_CERTIFIED,
} resolve_policy;

typedef struct resolve_request {
    const char *package;
    const char *version_range;           /* Masterminds constraint; NULL or "" = any */
    const char *const *channels;         /* may be NULL when nchannels == 0 */
    size_t nchannels;
    resolve_policy policy;
    const resolve_installed *installed;  /* NULL when nothing is installed */
} resolve_request;

typedef struct resolve_result {
    const fbc_bundle *bundle;            /* borrowed from the chosen catalog */
    const resolve_catalog *catalog;      /* element of the caller's array */
    bundle_version version;              /* owned: free with resolve_result_free */
    const fbc_deprecation *deprecation;  /* the chosen catalog's olm.deprecations, or NULL */
} resolve_result;

/* Resolves.  On success fills `out` (free with resolve_result_free) and returns 0.
 * On failure returns -1 with the Progressing-condition message in err.
 * `explain`, when not NULL, receives human-readable lines saying what each filter
 * kept in each catalog and why the winner won. */
int resolve_bundle(const resolve_request *req, const resolve_catalog *catalogs, size_t ncatalogs,
                   resolve_result *out, strbuf *explain, olm_error *err);

void resolve_result_free(resolve_result *r);

/* True if `dep` marks the bundle named `bundle_name` deprecated (olm.bundle entries). */
bool resolve_bundle_is_deprecated(const fbc_deprecation *dep, const char *bundle_name);

/* resolve_reach: every bundle of req->package in catalog `c` that the installed bundle
 * (req->installed, required) reaches by following upgrade edges transitively: the
 * resolver's successor edges (replaces, skips, skipRange, same VersionRelease) from
 * entries of the requested channels (all channels of the package when none are
 * requested).  The version range and the upgrade policy are ignored on purpose: the
 * answer is what a wider range would allow.  The installed bundle itself is not in the
 * set.  Pure. */
typedef struct resolve_reach {
    const fbc_bundle **bundles; /* owned array of bundles borrowed from the catalog, nearest first */
    size_t n;
    const fbc_bundle *highest;  /* the highest VersionRelease of them, NULL when none is readable */
} resolve_reach;

/* Fills *out (free with resolve_reach_free); empty when nothing is installed.  Returns
 * 0, or -1 on out of memory. */
int resolve_reachable(const fbc_catalog *c, const resolve_request *req, resolve_reach *out, olm_error *err);
bool resolve_reach_contains(const resolve_reach *r, const fbc_bundle *b);
void resolve_reach_free(resolve_reach *r);

#endif
