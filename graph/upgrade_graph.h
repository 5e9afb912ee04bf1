/* upgrade_graph: the upgrade graph of one package, as a picture would show it.
 *
 * Nodes are the package's bundles in one or more catalogs; an edge runs from a bundle to
 * a bundle that may replace it (the direction of an upgrade), and says which channel
 * entries make it: `replaces`, `skips`, `skipRange` (a bitmask: one pair of bundles may be
 * joined several ways) and in which channels.  Channels name their heads; deprecated
 * packages, channels and bundles carry their messages.  Explain's verdicts (installed,
 * allowed, picked, why out) are marks a caller sets on nodes.
 *
 * Writers: DOT and Mermaid always carry every bundle and every edge; the SVG (laid out by
 * Graphviz) is drawn from a simplified copy (upgrade_graph_simplify) so a big package stays
 * readable.
 *
 * Strings named `const char *` are borrowed from the fbc_catalog the node came from (it
 * must outlive the graph); `char *` are owned. */
#ifndef OLM_UPGRADE_GRAPH_H
#define OLM_UPGRADE_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fbc.h"
#include "olm_error.h"

enum {
    UG_EDGE_REPLACES = 1u,
    UG_EDGE_SKIPS = 2u,
    UG_EDGE_SKIP_RANGE = 4u,
};

/* What explain knows of a bundle. */
enum {
    UG_MARK_INSTALLED = 1u, /* status.install.bundle */
    UG_MARK_ALLOWED = 2u,   /* in the channels and range, and a successor of the installed one */
    UG_MARK_PICKED = 4u,    /* what the resolver installs (or keeps) */
    UG_MARK_OUT = 8u,       /* filtered out: ug_node.note says why */
    UG_MARK_REACHABLE = 16u /* reachable from the installed bundle by upgrade edges */
};

typedef struct ug_node {
    const char *catalog;
    const char *bundle;
    const char *version;     /* NULL when the bundle has no olm.package version */
    const char *deprecation; /* the olm.bundle deprecation message ("" if none given); NULL: not deprecated */
    const char *skip_range;  /* the first skipRange of its channel entries, NULL if none */
    unsigned marks;
    char *note;              /* why it is out, or NULL */
    /* A collapsed run (upgrade_graph_simplify): run_len > 0 bundles hidden behind this
     * node, between `version` (the lowest) and run_last (the highest). */
    size_t run_len;
    const char *run_last;
} ug_node;

typedef struct ug_edge {
    size_t from, to;   /* node indices: from is the older bundle, to the one that may replace it */
    unsigned kinds;    /* UG_EDGE_* */
    char *channels;    /* the channels whose entries make this edge, comma-separated */
} ug_edge;

typedef struct ug_channel {
    const char *catalog;
    const char *name;
    const char *deprecation; /* message ("" if none given), or NULL */
    bool is_default;
    size_t head;             /* node index of the channel's head (SIZE_MAX: none) */
    size_t nentries;
} ug_channel;

typedef struct upgrade_graph {
    char *package;
    const char *package_deprecation; /* NULL unless the package is deprecated */
    ug_node *nodes;
    size_t nnodes, nodes_cap;
    ug_edge *edges;
    size_t nedges, edges_cap;
    ug_channel *channels;
    size_t nchannels, channels_cap;
    size_t ncatalogs;        /* catalogs that added bundles: more than one draws a box per catalog */
    size_t folded_edges;     /* skipRange edges left out of a simplified graph */
} upgrade_graph;

void upgrade_graph_init(upgrade_graph *g);

/* Adds package `package` of catalog `c` (named `catalog` in the picture), restricted to the
 * channels listed (all when nchannels is 0): every bundle in those channels, the edges their
 * entries make, heads, deprecations.  Returns the number of bundles added, or -1 with err
 * set (out of memory; a channel asked for that the package does not have). */
int upgrade_graph_add_catalog(upgrade_graph *g, const fbc_catalog *c, const char *catalog, const char *package,
                              const char *const *channels, size_t nchannels, olm_error *err);

/* The node of `bundle` in `catalog` (NULL: any catalog), or SIZE_MAX. */
size_t upgrade_graph_find(const upgrade_graph *g, const char *catalog, const char *bundle);

/* Sets marks (ORed in) and, when note is not NULL, the node's note.  -1 when out of memory. */
int upgrade_graph_mark(upgrade_graph *g, size_t node, unsigned marks, const char *note);

/* Marks every node reachable from `from` by upgrade edges UG_MARK_REACHABLE (not `from`
 * itself), following only edges of the channels listed (every edge when nchannels is 0):
 * the resolver only follows the channels a ClusterExtension names. */
void upgrade_graph_mark_reachable(upgrade_graph *g, size_t from, const char *const *channels, size_t nchannels);

void upgrade_graph_free(upgrade_graph *g);

/* A copy of `in` for the SVG: skipRange-only edges that a path of other edges already
 * implies are left out (counted in folded_edges; edges out of the installed bundle stay),
 * and runs of more than `max_run` bundles joined one to the next by nothing else are drawn
 * as one node (channel heads, marked and deprecated bundles are never in a run, and a
 * run's neighbours stay visible).  max_run 0: no runs collapsed.  Returns 0 or -1 (out of
 * memory). */
int upgrade_graph_simplify(const upgrade_graph *in, size_t max_run, upgrade_graph *out, olm_error *err);

/* Writers.  Return 0, or -1 with err set (a write failed: errno is kept). */
int upgrade_graph_write_dot(const upgrade_graph *g, FILE *out, olm_error *err);
int upgrade_graph_write_mermaid(const upgrade_graph *g, FILE *out, olm_error *err);
/* Lays the graph out with Graphviz's dot and writes SVG. */
int upgrade_graph_write_svg(const upgrade_graph *g, FILE *out, olm_error *err);

/* The SVG's longest run of plain bundles drawn one by one. */
#define UPGRADE_GRAPH_SVG_MAX_RUN 5

/* Writes g as `format`: "svg" (simplified first unless `whole`), "dot" or "mermaid" (always
 * whole).  An unknown format is an error. */
int upgrade_graph_write(const upgrade_graph *g, const char *format, bool whole, FILE *out, olm_error *err);

#endif
