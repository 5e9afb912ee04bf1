/* explain_candidates: every bundle of a package in one catalog, with each of the
 * resolver's filters applied to it and the reason it passes or fails (olmv1-behaviour.md
 * §3.2): channels, version range, upgrade edge from the installed bundle.  Pure.
 *
 * One JSON object per bundle, highest version first:
 *   {"catalog", "bundle", "version", "channels": [...],
 *    "inChannels": bool, "inRange": bool,
 *    "edge": "replaces X" | "skips X" | "skipRange R" | "same version" | "" (none) | null (not checked:
 *            nothing installed or SelfCertified),
 *    "deprecation": MSG | null,
 *    "verdict": "candidate" | "not in channels [..]" | "not in range R" | "no upgrade edge from X"} */
#ifndef OLMV1_CLI_EXPLAIN_CANDIDATES_H
#define OLMV1_CLI_EXPLAIN_CANDIDATES_H

#include <jansson.h>

#include <stdio.h>

#include "cluster_catalogs.h"
#include "fbc.h"
#include "resolve.h"

/* Appends the bundles of req->package in `c` to `out`.  Returns 0, -1 on out of memory
 * or an unparsable req->version_range (err set). */
int explain_candidates(const fbc_catalog *c, const char *catalog, const resolve_request *req, json_t *out,
                       olm_error *err);

/* explain --graph: the upgrade graph of the package in every catalog of `set` that has it
 * (every channel, so bundles out of the requested ones show why), marked with the
 * report's verdicts (explain's JSON): the installed bundle, the candidates allowed, the
 * one the resolver picks, each other's reason, and what the installed bundle reaches by
 * upgrade edges in the requested channels.  Written to `out` as `format` (svg, dot or
 * mermaid).  Returns 0, or -1 with err set. */
int explain_graph_write(const cluster_catalog_set *set, const json_t *report, const char *package,
                        const char *const *channels, size_t nchannels, const char *format, FILE *out,
                        olm_error *err);

#endif
