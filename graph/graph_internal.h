/* What the graph writers share. */
#ifndef OLM_GRAPH_INTERNAL_H
#define OLM_GRAPH_INTERNAL_H

#include "strbuf.h"
#include "upgrade_graph.h"

/* The graph in DOT, appended to out.  -1 when out of memory. */
int graph_dot_text(const upgrade_graph *g, strbuf *out);

/* The edge's kinds as words joined by `sep` ("replaces", "skips", "skipRange"). */
int graph_kind_words(unsigned kinds, const char *sep, strbuf *out);

/* A node's lines of text, newest facts last: version (or the run's span), bundle name,
 * the explain marks, deprecation, skipRange.  Each line is passed to emit(line, style,
 * ctx); style is 0 for the title line, 1 for small print, 2 for a warning, 3 for
 * explain's verdict. */
typedef int (*graph_line_fn)(const char *line, int style, void *ctx);
int graph_node_lines(const ug_node *n, graph_line_fn emit, void *ctx);

/* A label's markup: the node's lines joined by `br`, each between open[style] and
 * close[style], its text through `escape` (the format's own quoting).  -1 when out of memory. */
typedef struct graph_markup {
    const char *const *open, *const *close; /* four each, by style */
    const char *br;
    int (*escape)(strbuf *out, const char *text);
} graph_markup;
int graph_node_markup(const ug_node *n, const graph_markup *m, strbuf *out);

/* What a writer's per-catalog callback writes with. */
typedef struct graph_writing {
    const upgrade_graph *g;
    strbuf *out;
} graph_writing;

/* each(catalog, k, ctx) for the k-th catalog of the graph in order of first appearance, or
 * once with catalog NULL when the package comes from one catalog (no box to draw).  Stops
 * at the first -1. */
int graph_each_catalog(const upgrade_graph *g, int (*each)(const char *catalog, size_t k, void *ctx), void *ctx);

#endif
