/* upgrade_graph_write_dot: the graph in Graphviz's DOT language.  Upgrades point from the
 * older bundle to the newer (rankdir BT: the newest on top).  replaces edges are solid,
 * skips dashed and blue, skipRange dotted and orange; each edge carries `kinds` and
 * `channels` attributes (Graphviz keeps unknown attributes) so a reader of the DOT text
 * can filter on them.  Nodes carry explain's marks as fill and border colours and as lines
 * of text, so the picture still reads in black and white. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

/* Text inside a Graphviz HTML-like label. */
static int put_html(strbuf *out, const char *s)
{
    for (; *s; s++) {
        const char *rep = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '"' ? "&quot;" : NULL;
        if (rep ? strbuf_puts(out, rep) < 0 : strbuf_putc(out, *s) < 0)
            return -1;
    }
    return 0;
}

/* Text inside a DOT double-quoted string. */
static int put_quoted(strbuf *out, const char *s)
{
    if (strbuf_putc(out, '"') < 0)
        return -1;
    for (; *s; s++)
        if (((*s == '"' || *s == '\\') && strbuf_putc(out, '\\') < 0) || strbuf_putc(out, *s == '\n' ? ' ' : *s) < 0)
            return -1;
    return strbuf_putc(out, '"');
}

static const char *const html_open[] = {"<B>", "<FONT POINT-SIZE=\"9\">", "<FONT COLOR=\"#b91c1c\">", "<I>"};
static const char *const html_close[] = {"</B>", "</FONT>", "</FONT>", "</I>"};
static const graph_markup html_label = {html_open, html_close, "<BR/>", put_html};

/* Fill and border of a node, from the strongest mark down. */
static const char *node_style(const ug_node *n)
{
    if (n->run_len)
        return "style=\"rounded,filled,dashed\", fillcolor=\"#f8fafc\"";
    if (n->marks & UG_MARK_PICKED)
        return "fillcolor=\"#86efac\", penwidth=3";
    if (n->marks & UG_MARK_ALLOWED)
        return "fillcolor=\"#dcfce7\"";
    if (n->marks & UG_MARK_OUT)
        return "fillcolor=\"#f1f5f9\", fontcolor=\"#475569\"";
    if (n->marks & UG_MARK_REACHABLE)
        return "fillcolor=\"#fef9c3\"";
    return "fillcolor=white";
}

static int write_node(const upgrade_graph *g, size_t i, strbuf *out)
{
    const ug_node *n = &g->nodes[i];
    if (strbuf_printf(out, "  b%zu [label=<", i) < 0 || graph_node_markup(n, &html_label, out) < 0 ||
        strbuf_printf(out, ">, %s", node_style(n)) < 0)
        return -1;
    if ((n->marks & UG_MARK_INSTALLED) && strbuf_puts(out, ", color=\"#1d4ed8\", penwidth=3, peripheries=2") < 0)
        return -1;
    if (n->deprecation && strbuf_puts(out, ", color=\"#b91c1c\", style=\"rounded,filled,dashed\"") < 0)
        return -1;
    if (strbuf_puts(out, ", tooltip=") < 0 || put_quoted(out, n->run_len ? "a run of bundles" : n->bundle) < 0)
        return -1;
    return strbuf_puts(out, "];\n");
}

static int write_channel(const upgrade_graph *g, size_t i, strbuf *out)
{
    const ug_channel *ch = &g->channels[i];
    if (strbuf_printf(out, "  c%zu [shape=note, style=filled, fillcolor=\"%s\", label=<channel <B>", i,
                      ch->deprecation ? "#fee2e2" : "#dbeafe") < 0 ||
        put_html(out, ch->name) < 0 ||
        strbuf_printf(out, "</B>%s<BR/><FONT POINT-SIZE=\"9\">%zu bundle%s</FONT>", ch->is_default ? " (default)" : "",
                      ch->nentries, ch->nentries == 1 ? "" : "s") < 0)
        return -1;
    if (ch->deprecation &&
        (strbuf_puts(out, "<BR/><FONT COLOR=\"#b91c1c\">deprecated") < 0 ||
         (*ch->deprecation && (strbuf_puts(out, ": ") < 0 || put_html(out, ch->deprecation) < 0)) ||
         strbuf_puts(out, "</FONT>") < 0))
        return -1;
    return strbuf_puts(out, ">];\n");
}

static int write_edge(const ug_edge *e, strbuf *out)
{
    const char *look = (e->kinds & UG_EDGE_REPLACES) ? "style=solid, color=\"#111827\""
                       : (e->kinds & UG_EDGE_SKIPS) ? "style=dashed, color=\"#1d4ed8\", fontcolor=\"#1d4ed8\""
                                                    : "style=dotted, color=\"#c2410c\", fontcolor=\"#c2410c\"";
    strbuf words = STRBUF_INIT;
    int rc = graph_kind_words(e->kinds, ",", &words);
    if (rc == 0)
        rc = strbuf_printf(out, "  b%zu -> b%zu [%s, kinds=\"%s\", channels=", e->from, e->to, look,
                           strbuf_str(&words));
    if (rc == 0)
        rc = put_quoted(out, e->channels ? e->channels : "");
    /* A solid line already says replaces, and the target's label its skipRange. */
    if (rc == 0 && !(e->kinds & UG_EDGE_REPLACES)) {
        strbuf_reset(&words);
        rc = graph_kind_words(e->kinds, "+", &words);
        if (rc == 0)
            rc = strbuf_printf(out, ", label=\"%s\"", strbuf_str(&words));
    }
    strbuf_free(&words);
    return rc < 0 ? -1 : strbuf_puts(out, "];\n");
}

static int write_title(const upgrade_graph *g, strbuf *out)
{
    if (strbuf_puts(out, "  graph [label=<package <B>") < 0 || put_html(out, g->package ? g->package : "") < 0 ||
        strbuf_puts(out, "</B>") < 0)
        return -1;
    if (g->package_deprecation &&
        (strbuf_puts(out, "<BR/><FONT COLOR=\"#b91c1c\">deprecated: ") < 0 ||
         put_html(out, g->package_deprecation) < 0 || strbuf_puts(out, "</FONT>") < 0))
        return -1;
    if (strbuf_puts(out, "<BR/><FONT POINT-SIZE=\"9\">an arrow points to the bundle that may replace; solid: "
                         "replaces, dashed: skips, dotted: skipRange") < 0)
        return -1;
    if (g->folded_edges && strbuf_printf(out, "<BR/>%zu skipRange edge%s implied by the others not drawn (DOT and "
                                              "Mermaid output has every edge)",
                                         g->folded_edges, g->folded_edges == 1 ? "" : "s") < 0)
        return -1;
    return strbuf_puts(out, "</FONT>>];\n");
}

/* Nodes and channels of one catalog (all when catalog is NULL). */
static int write_members(const upgrade_graph *g, const char *catalog, strbuf *out)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if ((!catalog || strcmp(g->nodes[i].catalog, catalog) == 0) && write_node(g, i, out) < 0)
            return -1;
    for (size_t i = 0; i < g->nchannels; i++)
        if ((!catalog || strcmp(g->channels[i].catalog, catalog) == 0) && write_channel(g, i, out) < 0)
            return -1;
    return 0;
}

/* One box per catalog when the package comes from several. */
static int write_catalog(const char *catalog, size_t k, void *ctx)
{
    graph_writing *w = ctx;
    if (!catalog)
        return write_members(w->g, NULL, w->out);
    return strbuf_printf(w->out, "  subgraph cluster_%zu {\n  label=<catalog <B>", k) < 0 ||
                   put_html(w->out, catalog) < 0 || strbuf_puts(w->out, "</B>>;\n") < 0 ||
                   write_members(w->g, catalog, w->out) < 0 || strbuf_puts(w->out, "  }\n") < 0
               ? -1
               : 0;
}

int graph_dot_text(const upgrade_graph *g, strbuf *out)
{
    if (strbuf_puts(out, "digraph upgrade_graph {\n"
                         "  graph [rankdir=BT, labelloc=t, fontname=\"Helvetica\", nodesep=0.3, ranksep=0.45];\n"
                         "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n"
                         "  edge [fontname=\"Helvetica\", fontsize=9];\n") < 0 ||
        write_title(g, out) < 0 || graph_each_catalog(g, write_catalog, &(graph_writing){g, out}) < 0)
        return -1;
    for (size_t i = 0; i < g->nchannels; i++)
        if (g->channels[i].head != SIZE_MAX &&
            strbuf_printf(out, "  b%zu -> c%zu [dir=back, style=dashed, color=\"#64748b\", tooltip=\"head\"];\n",
                          g->channels[i].head, i) < 0)
            return -1;
    for (size_t i = 0; i < g->nedges; i++)
        if (write_edge(&g->edges[i], out) < 0)
            return -1;
    return strbuf_puts(out, "}\n");
}

int upgrade_graph_write_dot(const upgrade_graph *g, FILE *out, olm_error *err)
{
    strbuf text = STRBUF_INIT;
    if (graph_dot_text(g, &text) < 0) {
        strbuf_free(&text);
        return olm_error_set(err, "out of memory");
    }
    size_t len = text.len, n = fwrite(strbuf_str(&text), 1, len, out);
    strbuf_free(&text);
    if (n != len || fflush(out) != 0)
        return olm_error_set(err, "writing the graph: %s", strerror(errno));
    return 0;
}
