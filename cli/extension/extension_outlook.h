/* extension_outlook: where an extension can go from what it has installed, for `get -o
 * wide` (NEXT, REACHABLE) and `explain` (the Upgrade section): the bundle the resolver
 * picks for the current spec, and the highest bundle the upgrade edges reach from the
 * installed one when the version range is left aside (resolve_reachable).  Pure. */
#ifndef OLMV1_CLI_EXTENSION_OUTLOOK_H
#define OLMV1_CLI_EXTENSION_OUTLOOK_H

#include <stdbool.h>

#include "resolve.h"

typedef struct extension_outlook {
    bool resolved;        /* the resolver found a bundle for the spec */
    bool moves;           /* ... and it is not the installed one */
    char *next_bundle;    /* the resolver's pick, NULL when not resolved */
    char *next_version;   /* its version as status.install.bundle.version writes it */
    char *next_catalog;
    char *error;          /* the resolver's message when not resolved */
    char *reach_bundle;   /* the highest bundle reachable by upgrade edges, NULL when none */
    char *reach_version;
    char *reach_catalog;
    bool reach_in_range;  /* its version satisfies req->version_range (true without one) */
} extension_outlook;

/* Fills *out for `req` (req->installed may be NULL: then nothing is reachable) over the
 * catalogs the extension selects.  Catalogs that are unavailable or were not read add
 * nothing to the reachable set.  Returns 0, or -1 on out of memory. */
int extension_outlook_compute(const resolve_request *req, const resolve_catalog *cats, size_t ncats,
                              extension_outlook *out, olm_error *err);
void extension_outlook_free(extension_outlook *o);

/* The NEXT and REACHABLE cells: the version, or "-" when it stays or nothing is reachable. */
const char *extension_outlook_next_cell(const extension_outlook *o);
const char *extension_outlook_reach_cell(const extension_outlook *o);

#endif
