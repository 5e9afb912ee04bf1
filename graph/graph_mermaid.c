/* upgrade_graph_write_mermaid: the graph as a Mermaid flowchart (what GitHub, GitLab and
 * most wikis draw from a ```mermaid block).  Same reading as the DOT: bottom to top,
 * oldest to newest; replaces `-->`, skips and skipRange `-.->` with their name on the
 * arrow; explain's marks and deprecations as classes, and as words in the node. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

/* Mermaid reads < > " # and the brackets of its own syntax inside a label: its entity
 * codes keep them text. */
static int put_text(strbuf *out, const char *s)
{
    for (; *s; s++) {
        int rc = (*s == '<' || *s == '>' || *s == '"' || *s == '#' || *s == '&')
                     ? strbuf_printf(out, "#%d;", (unsigned char)*s)
                     : strbuf_putc(out, *s == '\n' ? ' ' : *s);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static const char *const tag_open[] = {"<b>", "<small>", "<i>", "<i>"};
static const char *const tag_close[] = {"</b>", "</small>", "</i>", "</i>"};
static const graph_markup mermaid_label = {tag_open, tag_close, "<br/>", put_text};

static int write_members(const upgrade_graph *g, const char *catalog, strbuf *out)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        if (catalog && strcmp(g->nodes[i].catalog, catalog) != 0)
            continue;
        if (strbuf_printf(out, "  b%zu[\"", i) < 0 || graph_node_markup(&g->nodes[i], &mermaid_label, out) < 0 ||
            strbuf_puts(out, "\"]\n") < 0)
            return -1;
    }
    for (size_t i = 0; i < g->nchannels; i++) {
        const ug_channel *ch = &g->channels[i];
        if (catalog && strcmp(ch->catalog, catalog) != 0)
            continue;
        if (strbuf_printf(out, "  c%zu[/\"channel <b>", i) < 0 || put_text(out, ch->name) < 0 ||
            strbuf_printf(out, "</b>%s%s\"/]\n", ch->is_default ? " (default)" : "",
                          ch->deprecation ? "<br/><i>deprecated</i>" : "") < 0)
            return -1;
    }
    return 0;
}

/* One subgraph per catalog when the package comes from several. */
static int write_catalog(const char *catalog, size_t k, void *ctx)
{
    graph_writing *w = ctx;
    if (!catalog)
        return write_members(w->g, NULL, w->out);
    return strbuf_printf(w->out, "  subgraph k%zu[\"catalog ", k) < 0 || put_text(w->out, catalog) < 0 ||
                   strbuf_puts(w->out, "\"]\n") < 0 || write_members(w->g, catalog, w->out) < 0 ||
                   strbuf_puts(w->out, "  end\n") < 0
               ? -1
               : 0;
}

static int write_edges(const upgrade_graph *g, strbuf *out)
{
    strbuf words = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < g->nedges; i++) {
        const ug_edge *e = &g->edges[i];
        strbuf_reset(&words);
        rc = graph_kind_words(e->kinds, ", ", &words);
        if (rc == 0 && e->kinds == UG_EDGE_REPLACES)
            rc = strbuf_printf(out, "  b%zu --> b%zu\n", e->from, e->to);
        else if (rc == 0)
            rc = strbuf_printf(out, "  b%zu %s|%s| b%zu\n", e->from, (e->kinds & UG_EDGE_REPLACES) ? "-->" : "-.->",
                               strbuf_str(&words), e->to);
    }
    for (size_t i = 0; rc == 0 && i < g->nchannels; i++)
        if (g->channels[i].head != SIZE_MAX)
            rc = strbuf_printf(out, "  b%zu -.-|head| c%zu\n", g->channels[i].head, i);
    strbuf_free(&words);
    return rc;
}

/* `class b1,b4 name` for every node that has the mark. */
static int write_class(const upgrade_graph *g, const char *name, unsigned mark, bool deprecated, strbuf *out)
{
    bool any = false;
    for (size_t i = 0; i < g->nnodes; i++) {
        const ug_node *n = &g->nodes[i];
        if (!(deprecated ? n->deprecation != NULL : (n->marks & mark) != 0))
            continue;
        if (strbuf_printf(out, "%sb%zu", any ? "," : "  class ", i) < 0)
            return -1;
        any = true;
    }
    return any ? strbuf_printf(out, " %s\n", name) : 0;
}

static int write_classes(const upgrade_graph *g, strbuf *out)
{
    if (strbuf_puts(out, "  classDef out fill:#f1f5f9,color:#475569\n"
                         "  classDef reachable fill:#fef9c3\n"
                         "  classDef allowed fill:#dcfce7\n"
                         "  classDef picked fill:#86efac,stroke-width:3px\n"
                         "  classDef installed stroke:#1d4ed8,stroke-width:4px\n"
                         "  classDef deprecated stroke:#b91c1c,color:#b91c1c,stroke-dasharray:4 3\n") < 0)
        return -1;
    /* Later classes win where a node has several: the strongest last. */
    return write_class(g, "out", UG_MARK_OUT, false, out) < 0 ||
                   write_class(g, "reachable", UG_MARK_REACHABLE, false, out) < 0 ||
                   write_class(g, "allowed", UG_MARK_ALLOWED, false, out) < 0 ||
                   write_class(g, "picked", UG_MARK_PICKED, false, out) < 0 ||
                   write_class(g, "installed", UG_MARK_INSTALLED, false, out) < 0 ||
                   write_class(g, "deprecated", 0, true, out) < 0
               ? -1
               : 0;
}

int upgrade_graph_write_mermaid(const upgrade_graph *g, FILE *out, olm_error *err)
{
    strbuf text = STRBUF_INIT;
    int rc = strbuf_puts(&text, "flowchart BT\n");
    if (rc == 0 && g->package) {
        rc = strbuf_puts(&text, "  %% upgrade graph of package ");
        if (rc == 0)
            rc = strbuf_printf(&text, "%s%s\n", g->package, g->package_deprecation ? " (deprecated)" : "");
    }
    if (rc < 0 || graph_each_catalog(g, write_catalog, &(graph_writing){g, &text}) < 0 || write_edges(g, &text) < 0 || write_classes(g, &text) < 0) {
        strbuf_free(&text);
        return olm_error_set(err, "out of memory");
    }
    size_t len = text.len, n = fwrite(strbuf_str(&text), 1, len, out);
    strbuf_free(&text);
    if (n != len || fflush(out) != 0)
        return olm_error_set(err, "writing the graph: %s", strerror(errno));
    return 0;
}
