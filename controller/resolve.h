/* resolve: choose the bundle a ClusterExtension installs (olmv1-behaviour.md §3).
 *
 * Pure and offline: the caller supplies the catalogs already selected by
 * spec.source.catalog.selector, each with the package's FBC (or the reason it is
 * unavailable), and the installed bundle if any.  The same code serves the
 * controller and `olmv1 resolve`.  Error messages are the ones upstream writes
 * into the Progressing condition. */
#ifndef OLM_RESOLVE_H
#define OLM_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bundle_version.h"
#include "fbc.h"
#include "olm_error.h"
#include "strbuf.h"

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

#endif
