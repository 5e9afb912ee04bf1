/* olmv1 catalog graph: the upgrade graph of one package of a catalog (directory or image)
 * as SVG, DOT or Mermaid (graph/upgrade_graph.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_input.h"
#include "commands.h"
#include "fbc.h"
#include "olm_array.h"
#include "upgrade_graph.h"

static void graph_usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage: olmv1 %s DIR|IMAGE PACKAGE [-c CHANNEL]... [-o svg|dot|mermaid] [--whole]\n\n"
            "Draws the upgrade graph of PACKAGE in the File-Based Catalog under DIR, or in the\n"
            "catalog image IMAGE: one node per bundle (version and name), an arrow from a bundle to\n"
            "each bundle that may replace it, solid for replaces, dashed for skips, dotted for\n"
            "skipRange, each channel pointing at its head, deprecated bundles and channels in red.\n"
            "The newest bundles are on top.\n\n"
            "  -c, --channel NAME   only the bundles and edges of this channel (repeat for more;\n"
            "                       default: every channel)\n"
            "  -o, --output FORMAT  svg (default; laid out by Graphviz), dot, or mermaid\n"
            "  --whole              in the SVG too, every bundle and every edge\n\n"
            "DOT and Mermaid always carry every bundle and every edge.  The SVG stays readable on\n"
            "big packages: a skipRange edge that other edges already imply is left out (the\n"
            "target's label keeps its range, the title says how many), and a run of more than %d\n"
            "bundles that only replace one another is drawn as one node.\n\n"
            "Example: olmv1 %s ./catalog my-operator > graph.svg\n\n"
            "Exit status: 0 drawn, 1 load error or drawing failed, 2 usage error, 3 no such package\n"
            "or channel, 5 the image cannot be pulled.\n",
            argv0, UPGRADE_GRAPH_SVG_MAX_RUN, argv0);
}

typedef struct graph_args {
    const char *source, *package, *format;
    const char **channels;
    size_t nchannels, channels_cap;
    bool whole;
} graph_args;

/* 0 to go on, else the exit code (-1: --help, exit 0). */
static int parse_graph_args(int argc, char **argv, graph_args *a)
{
    enum { OPT_WHOLE = 1 };
    static const struct option opts[] = {
        {"channel", required_argument, NULL, 'c'}, {"output", required_argument, NULL, 'o'},
        {"whole", no_argument, NULL, OPT_WHOLE},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    a->format = "svg";
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (OLM_ARRAY_RESERVE(a->channels, a->channels_cap, a->nchannels + 1) < 0)
                return 1;
            a->channels[a->nchannels++] = optarg;
            break;
        case 'o': a->format = optarg; break;
        case OPT_WHOLE: a->whole = true; break;
        case 'h': graph_usage(stdout, argv[0]); return -1;
        default: graph_usage(stderr, argv[0]); return 2;
        }
    }
    if (optind != argc - 2) {
        fprintf(stderr, "olmv1 %s: expected a catalog (DIR or IMAGE) and a PACKAGE\n", argv[0]);
        graph_usage(stderr, argv[0]);
        return 2;
    }
    if (strcmp(a->format, "svg") != 0 && strcmp(a->format, "dot") != 0 && strcmp(a->format, "mermaid") != 0) {
        fprintf(stderr, "olmv1 %s: -o must be svg, dot or mermaid, got \"%s\"\n", argv[0], a->format);
        return 2;
    }
    a->source = argv[optind];
    a->package = argv[optind + 1];
    return 0;
}

/* The package and every channel asked for exist; else a message naming what does. */
static int check_names(const fbc_catalog *c, const graph_args *a, const char *argv0)
{
    if (!fbc_find_package(c, a->package)) {
        fprintf(stderr, "olmv1 %s: the catalog has no package \"%s\" (olmv1 catalog list %s lists them)\n", argv0,
                a->package, a->source);
        return 3;
    }
    for (size_t i = 0; i < a->nchannels; i++)
        if (!fbc_find_channel(c, a->package, a->channels[i])) {
            fprintf(stderr, "olmv1 %s: package \"%s\" has no channel \"%s\"; it has:", argv0, a->package,
                    a->channels[i]);
            for (size_t k = 0; k < c->nchannels; k++)
                if (strcmp(c->channels[k].package, a->package) == 0)
                    fprintf(stderr, " %s", c->channels[k].name);
            fputc('\n', stderr);
            return 3;
        }
    return 0;
}

static int draw(const fbc_catalog *c, const graph_args *a, const char *argv0)
{
    upgrade_graph g;
    upgrade_graph_init(&g);
    olm_error err;
    olm_error_clear(&err);
    int rc = 0;
    if (upgrade_graph_add_catalog(&g, c, a->source, a->package, a->channels, a->nchannels, &err) < 0 ||
        upgrade_graph_write(&g, a->format, a->whole, stdout, &err) < 0) {
        /* A reader that went away (`| head`) ends the command as SIGPIPE would. */
        rc = errno == EPIPE ? CLI_EXIT_BROKEN_PIPE : 1;
        if (rc != CLI_EXIT_BROKEN_PIPE)
            fprintf(stderr, "olmv1 %s: %s\n", argv0, err.msg);
    }
    upgrade_graph_free(&g);
    return rc;
}

int cmd_catalog_graph(int argc, char **argv)
{
    graph_args a = {0};
    int rc = parse_graph_args(argc, argv, &a);
    if (rc != 0) {
        free(a.channels);
        return rc < 0 ? 0 : rc;
    }
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = NULL;
    rc = catalog_input_load(a.source, &c, &err);
    if (rc != 0)
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
    else if ((rc = check_names(c, &a, argv[0])) == 0)
        rc = draw(c, &a, argv[0]);
    fbc_catalog_free(c);
    free(a.channels);
    return rc;
}
