/* upgrade_graph_write_svg: the DOT text of graph_dot.c, laid out by Graphviz's `dot`
 * engine (libgvc, libcgraph) and rendered as SVG.  Graphviz reports problems through a
 * process-wide error channel; warnings (e.g. a font it substitutes) are kept off stderr
 * and only errors end the render. */
#include <errno.h>
#include <gvc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

/* One Graphviz context for the life of the process, never freed: Graphviz 2.42's text
 * layout caches a font name it does not own in a static, so a second context after the
 * first was freed reads freed memory (AddressSanitizer caught it in the unit test).  The
 * commands are single-threaded; so is this. */
static GVC_t *graphviz(void)
{
    static GVC_t *gvc;
    if (!gvc) {
        agseterr(AGERR);
        gvc = gvContext();
    }
    return gvc;
}

static int render(const char *dot, FILE *out, olm_error *err)
{
    GVC_t *gvc = graphviz();
    if (!gvc)
        return olm_error_set(err, "Graphviz did not start (out of memory?)");
    Agraph_t *g = agmemread(dot);
    int rc = 0;
    if (!g) {
        char *why = aglasterr();
        rc = olm_error_set(err, "Graphviz could not read the graph: %s", why ? why : "unknown error");
        free(why);
    } else if (gvLayout(gvc, g, "dot") != 0) {
        rc = olm_error_set(err, "Graphviz could not lay out the graph (is the dot layout plugin of libgvc "
                                "installed? `dot -c` registers it)");
    } else {
        char *svg = NULL;
        unsigned int len = 0;
        if (gvRenderData(gvc, g, "svg", &svg, &len) != 0 || !svg) {
            rc = olm_error_set(err, "Graphviz could not render SVG");
        } else if (fwrite(svg, 1, len, out) != len || fflush(out) != 0) {
            rc = olm_error_set(err, "writing the graph: %s", strerror(errno));
        }
        gvFreeRenderData(svg);
        gvFreeLayout(gvc, g);
    }
    if (g)
        agclose(g);
    return rc;
}

int upgrade_graph_write_svg(const upgrade_graph *g, FILE *out, olm_error *err)
{
    strbuf dot = STRBUF_INIT;
    int rc = graph_dot_text(g, &dot) < 0 ? olm_error_set(err, "out of memory") : render(strbuf_str(&dot), out, err);
    strbuf_free(&dot);
    return rc;
}
