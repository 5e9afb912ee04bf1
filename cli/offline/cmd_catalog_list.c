/* olmv1 catalog list packages|channels|bundles DIR|IMAGE: what a catalog holds, as the
 * tables `olmv1 search` prints, from a directory or a catalog image (offline). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_input.h"
#include "catalog_summary.h"
#include "cluster.h"
#include "cluster_objects.h"
#include "commands.h"
#include "strbuf.h"

static void list_usage(FILE *out)
{
    fprintf(out, "Usage: olmv1 catalog list packages|channels|bundles DIR|IMAGE [--package P] [-o table|json]\n\n"
                 "Lists what a File-Based Catalog holds, from a directory or a catalog image (a\n"
                 "reference naming its registry, pulled like `olmv1 catalog render` does):\n"
                 "  packages   name, default channel, channels with their head versions, deprecations\n"
                 "  channels   package, channel, head bundle and version, number of entries, deprecation\n"
                 "  bundles    package, version, bundle, channels, image, deprecation (highest first)\n\n"
                 "  --package P           only package P\n"
                 "  -o, --output FORMAT   table (default) or json (the `olmv1 search -o json` objects)\n\n"
                 "Exit status: 0 listed; 1 the catalog does not load; 2 bad usage; 3 no such package;\n"
                 "5 the image cannot be pulled.\n");
}

enum what { LIST_PACKAGES, LIST_CHANNELS, LIST_BUNDLES };

static int add_rows(enum what what, const json_t *s, cluster_table *t)
{
    size_t i;
    const json_t *x;
    strbuf sb = STRBUF_INIT;
    int rc = 0;
    if (what == LIST_PACKAGES) {
        json_array_foreach(json_object_get(s, "channels"), i, x) {
            const char *hv = cluster_str(x, "headVersion");
            if ((i && strbuf_puts(&sb, ", ") < 0) || strbuf_printf(&sb, "%s (%s)", cluster_str(x, "name"), *hv ? hv : "-") < 0)
                rc = -1;
        }
        const char *row[] = {cluster_str(s, "package"), cluster_str(s, "defaultChannel"), strbuf_str(&sb),
                             cluster_str(s, "deprecation")};
        if (rc == 0)
            rc = cluster_table_add(t, row);
    } else if (what == LIST_CHANNELS) {
        json_array_foreach(json_object_get(s, "channels"), i, x) {
            size_t n = 0, k;
            const json_t *b;
            json_array_foreach(json_object_get(s, "bundles"), k, b) {
                size_t j;
                const json_t *ch;
                json_array_foreach(json_object_get(b, "channels"), j, ch) n += strcmp(json_string_value(ch),
                                                                                     cluster_str(x, "name")) == 0;
            }
            char count[24];
            snprintf(count, sizeof count, "%zu", n);
            const char *row[] = {cluster_str(s, "package"), cluster_str(x, "name"), cluster_str(x, "head"),
                                 cluster_str(x, "headVersion"), count, cluster_str(x, "deprecation")};
            if (rc == 0)
                rc = cluster_table_add(t, row);
        }
    } else {
        json_array_foreach(json_object_get(s, "bundles"), i, x) {
            char *chans = cluster_join_strings(json_object_get(x, "channels"), ",");
            const char *row[] = {cluster_str(s, "package"), cluster_str(x, "version"), cluster_str(x, "name"),
                                 chans ? chans : "", cluster_str(x, "image"), cluster_str(x, "deprecation")};
            if (!chans || (rc == 0 && cluster_table_add(t, row) < 0))
                rc = -1;
            free(chans);
        }
    }
    strbuf_free(&sb);
    return rc;
}

int cmd_catalog_list(int argc, char **argv)
{
    static const struct option opts[] = {
        {"package", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *package = NULL, *format = "table";
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': package = optarg; break;
        case 'o': format = optarg; break;
        case 'h': list_usage(stdout); return 0;
        default: list_usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    enum what what = LIST_PACKAGES;
    if (optind + 2 != argc || (strcmp(argv[optind], "packages") != 0 && strcmp(argv[optind], "channels") != 0 &&
                               strcmp(argv[optind], "bundles") != 0)) {
        fprintf(stderr, "olmv1 catalog list: expected packages, channels or bundles, then DIR or IMAGE\n");
        return CLI_EXIT_USAGE;
    }
    what = strcmp(argv[optind], "packages") == 0 ? LIST_PACKAGES
           : strcmp(argv[optind], "channels") == 0 ? LIST_CHANNELS
                                                   : LIST_BUNDLES;
    if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0) {
        fprintf(stderr, "olmv1 catalog list: -o must be table or json, got \"%s\"\n", format);
        return CLI_EXIT_USAGE;
    }
    olm_error err;
    fbc_catalog *c = NULL;
    int rc = catalog_input_load(argv[optind + 1], &c, &err);
    if (rc != 0) {
        fprintf(stderr, "olmv1 catalog list: %s\n", err.msg);
        return rc;
    }
    json_t *all = json_array();
    rc = all ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < c->npackages; i++) {
        if (package && strcmp(c->packages[i].name, package) != 0)
            continue;
        json_t *s = catalog_package_summary(c, "", c->packages[i].name, NULL);
        rc = s ? json_array_append_new(all, s) : -1;
        json_object_del(s, "catalog");
    }
    int exit_code = 0;
    if (rc == 0 && package && json_array_size(all) == 0) {
        fprintf(stderr, "olmv1 catalog list: no package \"%s\" in the catalog\n", package);
        exit_code = CLI_EXIT_NOT_FOUND;
    } else if (rc == 0 && strcmp(format, "json") == 0) {
        rc = cluster_print_object(all, "json");
    } else if (rc == 0) {
        static const char *const h_pkg[] = {"PACKAGE", "DEFAULT CHANNEL", "CHANNELS (HEAD VERSION)", "DEPRECATED"};
        static const char *const h_ch[] = {"PACKAGE", "CHANNEL", "HEAD", "HEAD VERSION", "ENTRIES", "DEPRECATED"};
        static const char *const h_b[] = {"PACKAGE", "VERSION", "BUNDLE", "CHANNELS", "IMAGE", "DEPRECATED"};
        cluster_table t;
        rc = what == LIST_PACKAGES ? cluster_table_init(&t, 4, h_pkg)
             : what == LIST_CHANNELS ? cluster_table_init(&t, 6, h_ch)
                                     : cluster_table_init(&t, 6, h_b);
        size_t i;
        const json_t *s;
        json_array_foreach(all, i, s) {
            if (rc == 0)
                rc = add_rows(what, s, &t);
        }
        if (rc == 0)
            rc = cluster_table_print(&t, stdout);
        cluster_table_free(&t);
    }
    json_decref(all);
    fbc_catalog_free(c);
    if (rc != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "olmv1 catalog list: out of memory or write error\n");
        return CLI_EXIT_FAILED;
    }
    return exit_code;
}
