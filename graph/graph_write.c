/* upgrade_graph_write: the one switch between the output formats (upgrade_graph.h). */
#include <string.h>

#include "upgrade_graph.h"

int upgrade_graph_write(const upgrade_graph *g, const char *format, bool whole, FILE *out, olm_error *err)
{
    if (strcmp(format, "dot") == 0)
        return upgrade_graph_write_dot(g, out, err);
    if (strcmp(format, "mermaid") == 0)
        return upgrade_graph_write_mermaid(g, out, err);
    if (strcmp(format, "svg") != 0)
        return olm_error_set(err, "unknown graph format \"%s\" (svg, dot or mermaid)", format);
    if (whole)
        return upgrade_graph_write_svg(g, out, err);
    upgrade_graph simple;
    if (upgrade_graph_simplify(g, UPGRADE_GRAPH_SVG_MAX_RUN, &simple, err) < 0)
        return -1;
    int rc = upgrade_graph_write_svg(&simple, out, err);
    upgrade_graph_free(&simple);
    return rc;
}
