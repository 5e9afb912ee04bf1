/* What a node and an edge say, the same in every output format (graph_internal.h). */
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

int graph_kind_words(unsigned kinds, const char *sep, strbuf *out)
{
    static const struct {
        unsigned kind;
        const char *word;
    } words[] = {{UG_EDGE_REPLACES, "replaces"}, {UG_EDGE_SKIPS, "skips"}, {UG_EDGE_SKIP_RANGE, "skipRange"}};
    bool first = true;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        if (!(kinds & words[i].kind))
            continue;
        if ((!first && strbuf_puts(out, sep) < 0) || strbuf_puts(out, words[i].word) < 0)
            return -1;
        first = false;
    }
    return 0;
}

/* Long deprecation messages would make one node as wide as the page. */
static int emit_clipped(graph_line_fn emit, void *ctx, const char *prefix, const char *text, int style)
{
    char line[96];
    int n = snprintf(line, sizeof line, "%s%s", prefix, text);
    if (n >= (int)sizeof line)
        memcpy(line + sizeof line - 4, "...", 4);
    return emit(line, style, ctx);
}

int graph_node_lines(const ug_node *n, graph_line_fn emit, void *ctx)
{
    char line[256];
    const char *version = n->version ? n->version : "(no version)";
    if (n->run_len) {
        snprintf(line, sizeof line, "%s \xe2\x80\xa6 %s", version, n->run_last);
        if (emit(line, 0, ctx) < 0)
            return -1;
        snprintf(line, sizeof line, "%zu bundles", n->run_len);
        return emit(line, 1, ctx);
    }
    if (emit(version, 0, ctx) < 0 || emit(n->bundle, 1, ctx) < 0)
        return -1;
    if ((n->marks & UG_MARK_INSTALLED) && emit("installed", 3, ctx) < 0)
        return -1;
    if ((n->marks & UG_MARK_PICKED) && emit("the resolver picks this", 3, ctx) < 0)
        return -1;
    else if (!(n->marks & UG_MARK_PICKED) && (n->marks & UG_MARK_ALLOWED) && emit("allowed", 3, ctx) < 0)
        return -1;
    if (n->note && emit_clipped(emit, ctx, "out: ", n->note, 3) < 0)
        return -1;
    if ((n->marks & UG_MARK_REACHABLE) && !(n->marks & UG_MARK_ALLOWED) &&
        emit("reachable by upgrade edges", 3, ctx) < 0)
        return -1;
    if (n->deprecation && emit("deprecated", 2, ctx) < 0)
        return -1;
    if (n->deprecation && *n->deprecation && emit_clipped(emit, ctx, "", n->deprecation, 2) < 0)
        return -1;
    if (n->skip_range && emit_clipped(emit, ctx, "skipRange ", n->skip_range, 1) < 0)
        return -1;
    return 0;
}

typedef struct markup_ctx {
    const graph_markup *m;
    strbuf *out;
    bool first;
} markup_ctx;

static int markup_line(const char *line, int style, void *p)
{
    markup_ctx *c = p;
    if (!c->first && strbuf_puts(c->out, c->m->br) < 0)
        return -1;
    c->first = false;
    return strbuf_puts(c->out, c->m->open[style]) < 0 || c->m->escape(c->out, line) < 0 ||
                   strbuf_puts(c->out, c->m->close[style]) < 0
               ? -1
               : 0;
}

int graph_node_markup(const ug_node *n, const graph_markup *m, strbuf *out)
{
    markup_ctx c = {m, out, true};
    return graph_node_lines(n, markup_line, &c);
}

int graph_each_catalog(const upgrade_graph *g, int (*each)(const char *catalog, size_t k, void *ctx), void *ctx)
{
    if (g->ncatalogs <= 1)
        return each(NULL, 0, ctx);
    for (size_t i = 0, k = 0; i < g->nnodes; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(g->nodes[j].catalog, g->nodes[i].catalog) == 0;
        if (!seen && each(g->nodes[i].catalog, k++, ctx) < 0)
            return -1;
    }
    return 0;
}
