/* catalog_summary: what `olmv1 search` shows of a package in a catalog, as JSON.
 * Pure: works on a loaded fbc_catalog, no I/O.
 *
 *   {"catalog": C, "package": P, "defaultChannel": D, "deprecation": MSG|null,
 *    "channels": [{"name", "head", "headVersion", "deprecation"}],      by name
 *    "bundles":  [{"name", "version", "image", "channels": [...], "deprecation"}]}
 *                                                                       highest version first
 *
 * A channel's head is the entry no other entry replaces or skips (the highest version
 * when a broken catalog has several).  With a channel filter only that channel and
 * its bundles are listed. */
#ifndef OLMV1_CLI_CATALOG_SUMMARY_H
#define OLMV1_CLI_CATALOG_SUMMARY_H

#include <jansson.h>

#include "fbc.h"

/* A new object (caller decrefs), or NULL on out of memory.  `channel` may be NULL. */
json_t *catalog_package_summary(const fbc_catalog *c, const char *catalog, const char *package, const char *channel);

/* The head entry's bundle name of `ch`, or NULL when the channel is empty. */
const char *catalog_channel_head(const fbc_catalog *c, const fbc_channel *ch);

#endif
