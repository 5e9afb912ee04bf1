/* olmv1 search: the packages the cluster's catalogs serve, their channels with
 * heads, their versions and deprecations, read from catalogd (through the API
 * server's service proxy, or directly with a catalogd URL). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_summary.h"
#include "cluster.h"
#include "cluster_catalogs.h"
#include "cluster_objects.h"
#include "commands.h"
#include "strbuf.h"

#define MAX_CATALOG_ARGS 64

static void search_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 search [KEYWORD] [--catalog NAME ...] [--package PACKAGE] [--channel CHANNEL]\n"
            "                    [--list-versions] [-o table|json|yaml] [--catalogd-url URL]\n"
            "                    [--kubeconfig FILE] [--context NAME]\n"
            "\n"
            "Lists the packages of the cluster's ClusterCatalogs (those with availabilityMode\n"
            "Available): catalog, default channel, every channel with its head version, and\n"
            "deprecations.  --list-versions lists every bundle instead: version, name, channels\n"
            "and deprecation, highest first.\n"
            "\n"
            "Content is read from catalogd through the API server's service proxy (the Service\n"
            "named by each catalog's status.urls.base; needs `get services/proxy` on it), so no\n"
            "port-forward is needed; with --catalogd-url or $OLMV1_CATALOGD_URL (e.g.\n"
            "http://127.0.0.1:8443) it is read from there directly ($OLMV1_CATALOGD_CA_FILE: a CA\n"
            "for https).\n"
            "\n"
            "  KEYWORD                 only packages whose name contains it\n"
            "  --catalog NAME          only this ClusterCatalog (repeatable)\n"
            "  --package PACKAGE       only this package (reads just its blobs)\n"
            "  --channel CHANNEL       only packages with this channel, and only that channel\n"
            "  --list-versions         list the bundles (versions) instead of the packages\n"
            "  -o, --output FORMAT     table (default), json or yaml\n"
            "  --catalogd-url URL      read catalogd at URL instead of through the API server\n" CLI_KUBECONFIG_HELP
            "\n"
            "A catalog that cannot be read is reported on stderr and skipped when others can.\n" CLI_EXIT_CODES_HELP);
}

typedef struct search_args {
    const char *keyword;
    const char *catalogs[MAX_CATALOG_ARGS];
    size_t ncatalogs;
    const char *package;
    const char *channel;
    bool list_versions;
    const char *output;
    cluster_opts conn;
} search_args;

/* -1 to go on, else the exit code. */
static int parse_search_args(int argc, char **argv, search_args *a)
{
    enum { OPT_CATALOG = 1, OPT_PACKAGE, OPT_CHANNEL, OPT_LIST_VERSIONS };
    static const struct option opts[] = {
        {"catalog", required_argument, NULL, OPT_CATALOG},
        {"package", required_argument, NULL, OPT_PACKAGE},
        {"channel", required_argument, NULL, OPT_CHANNEL},
        {"list-versions", no_argument, NULL, OPT_LIST_VERSIONS},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        CLUSTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    a->output = "table";
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_CATALOG:
            if (a->ncatalogs == MAX_CATALOG_ARGS) {
                fprintf(stderr, "olmv1 search: at most %d --catalog\n", MAX_CATALOG_ARGS);
                return CLI_EXIT_USAGE;
            }
            a->catalogs[a->ncatalogs++] = optarg;
            break;
        case OPT_PACKAGE: a->package = optarg; break;
        case OPT_CHANNEL: a->channel = optarg; break;
        case OPT_LIST_VERSIONS: a->list_versions = true; break;
        case 'o': a->output = optarg; break;
        case 'h': search_usage(stdout); return 0;
        default:
            if (!cluster_opts_take(&a->conn, opt, optarg)) {
                search_usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if (optind < argc)
        a->keyword = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "olmv1 search: unexpected argument \"%s\" (one KEYWORD at most)\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    static const char *const formats[] = {"table", "json", "yaml", NULL};
    if (cluster_check_output("search", a->output, formats) != 0)
        return CLI_EXIT_USAGE;
    if (a->keyword && a->package) {
        fprintf(stderr, "olmv1 search: KEYWORD and --package do not go together\n");
        return CLI_EXIT_USAGE;
    }
    if ((a->package && !*a->package) || (a->channel && !*a->channel)) {
        fprintf(stderr, "olmv1 search: --package and --channel need a value\n");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* ------------------------------------------------------------ collecting */

static bool wanted_package(const search_args *a, const char *name)
{
    if (a->package)
        return strcmp(name, a->package) == 0;
    return !a->keyword || strstr(name, a->keyword);
}

/* Appends the summaries of the catalog's wanted packages to `out`. */
static int collect(const search_args *a, const cluster_catalog *cat, json_t *out)
{
    const fbc_catalog *c = cat->fbc;
    for (size_t i = 0; i < c->npackages; i++) {
        const char *pkg = c->packages[i].name;
        if (!wanted_package(a, pkg))
            continue;
        if (a->channel && !fbc_find_channel(c, pkg, a->channel))
            continue;
        json_t *s = catalog_package_summary(c, cat->name, pkg, a->channel);
        if (!s || json_array_append_new(out, s) < 0)
            return -1;
    }
    return 0;
}

static int by_package_then_catalog(const void *pa, const void *pb)
{
    const json_t *a = *(const json_t *const *)pa, *b = *(const json_t *const *)pb;
    int r = strcmp(cluster_str(a, "package"), cluster_str(b, "package"));
    return r ? r : strcmp(cluster_str(a, "catalog"), cluster_str(b, "catalog"));
}

/* jansson has no sort: through a C array. */
static int sort_results(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, by_package_then_catalog);
    json_array_clear(arr);
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(arr, v[i]) < 0)
            rc = -1;
    free(v);
    return rc;
}

/* ------------------------------------------------------------ printing */

/* "package: M; channel fast: M" for a package row. */
static int package_deprecations(const json_t *s, strbuf *sb)
{
    if (!json_is_null(json_object_get(s, "deprecation")) &&
        strbuf_printf(sb, "package: %s", cluster_str(s, "deprecation")) < 0)
        return -1;
    size_t i;
    const json_t *ch;
    json_array_foreach(json_object_get(s, "channels"), i, ch) {
        if (json_is_null(json_object_get(ch, "deprecation")))
            continue;
        if ((sb->len && strbuf_puts(sb, "; ") < 0) ||
            strbuf_printf(sb, "channel %s: %s", cluster_str(ch, "name"), cluster_str(ch, "deprecation")) < 0)
            return -1;
    }
    return 0;
}

static int package_row(const json_t *s, cluster_table *t)
{
    strbuf chans = STRBUF_INIT, dep = STRBUF_INIT;
    size_t i;
    const json_t *ch;
    int rc = 0;
    json_array_foreach(json_object_get(s, "channels"), i, ch) {
        const char *hv = cluster_str(ch, "headVersion");
        if ((i && strbuf_puts(&chans, ", ") < 0) ||
            strbuf_printf(&chans, "%s (%s)", cluster_str(ch, "name"), *hv ? hv : "-") < 0)
            rc = -1;
    }
    if (rc == 0)
        rc = package_deprecations(s, &dep);
    if (rc == 0) {
        const char *row[] = {cluster_str(s, "package"), cluster_str(s, "catalog"), cluster_str(s, "defaultChannel"),
                             strbuf_str(&chans), strbuf_str(&dep)};
        rc = cluster_table_add(t, row);
    }
    strbuf_free(&chans);
    strbuf_free(&dep);
    return rc;
}

static int version_rows(const json_t *s, cluster_table *t)
{
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(s, "bundles"), i, b) {
        char *chans = cluster_join_strings(json_object_get(b, "channels"), ",");
        if (!chans)
            return -1;
        const char *row[] = {cluster_str(s, "package"), cluster_str(s, "catalog"), cluster_str(b, "version"),
                             cluster_str(b, "name"), chans, cluster_str(b, "deprecation")};
        int rc = cluster_table_add(t, row);
        free(chans);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int print_results(const search_args *a, json_t *results)
{
    if (strcmp(a->output, "table") != 0)
        return cluster_print_object(results, a->output);
    static const char *const pkg_header[] = {"PACKAGE", "CATALOG", "DEFAULT CHANNEL", "CHANNELS (HEAD VERSION)",
                                             "DEPRECATED"};
    static const char *const ver_header[] = {"PACKAGE", "CATALOG", "VERSION", "BUNDLE", "CHANNELS", "DEPRECATED"};
    cluster_table t;
    if (cluster_table_init(&t, a->list_versions ? 6 : 5, a->list_versions ? ver_header : pkg_header) < 0)
        return CLI_EXIT_FAILED;
    size_t i;
    const json_t *s;
    int rc = 0;
    json_array_foreach(results, i, s) {
        if ((a->list_versions ? version_rows(s, &t) : package_row(s, &t)) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0)
        rc = cluster_table_print(&t, stdout);
    cluster_table_free(&t);
    return rc == 0 && fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* ------------------------------------------------------------ run */

/* Reports the catalogs that could not be read; when none could, returns the exit code of
 * the first failure with its message in err. */
static int check_fetched(const cluster_catalog_set *set, olm_error *err)
{
    size_t readable = 0, available = 0;
    const cluster_catalog *first_bad = NULL;
    for (size_t i = 0; i < set->n; i++) {
        const cluster_catalog *c = &set->items[i];
        if (c->unavailable)
            continue;
        available++;
        if (c->fbc)
            readable++;
        else if (!first_bad)
            first_bad = c;
    }
    if (available == 0)
        return cluster_error(err, CLI_EXIT_NO_CATALOGS, set->n ? "every selected ClusterCatalog has availabilityMode Unavailable"
                                         : "no ClusterCatalogs found");
    if (readable == 0)
        return cluster_error(err, first_bad->fetch_code, "%s", first_bad->fetch_error);
    for (size_t i = 0; i < set->n; i++)
        if (set->items[i].fetch_error)
            fprintf(stderr, "olmv1 search: warning: skipped %s\n", set->items[i].fetch_error);
    return 0;
}

static int run_search(const void *args, kube_client *api, olm_error *err)
{
    const search_args *a = args;
    catalog_source src;
    cluster_catalog_set set = {0};
    json_t *results = NULL;
    int rc = catalog_source_open(api, a->conn.catalogd_url, &src, err);
    if (rc != 0)
        return rc;
    rc = catalog_set_select(api, NULL, a->catalogs, a->ncatalogs, &set, err);
    if (rc == 0)
        rc = catalog_set_fetch(&src, &set, a->package, err);
    if (rc == 0)
        rc = check_fetched(&set, err);
    if (rc == 0 && !(results = json_array()))
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < set.n; i++)
        if (set.items[i].fbc && collect(a, &set.items[i], results) < 0)
            rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    if (rc == 0 && sort_results(results) < 0)
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    if (rc == 0 && json_array_size(results) == 0) {
        if (a->package && a->channel)
            olm_error_set(err, "no package \"%s\" with channel \"%s\" in the catalogs", a->package, a->channel);
        else if (a->package)
            olm_error_set(err, "no package \"%s\" in the catalogs", a->package);
        else if (a->keyword)
            olm_error_set(err, "no package matches \"%s\"%s%s%s", a->keyword, a->channel ? " with channel \"" : "",
                          a->channel ? a->channel : "", a->channel ? "\"" : "");
        else if (a->channel)
            olm_error_set(err, "no package has a channel \"%s\"", a->channel);
        else
            olm_error_set(err, "the catalogs hold no packages");
        rc = CLI_EXIT_NOT_FOUND;
    }
    if (rc == 0 && (rc = print_results(a, results)) != 0)
        olm_error_set(err, "writing to stdout failed");
    json_decref(results);
    cluster_catalog_set_free(&set);
    catalog_source_close(&src);
    return rc;
}

int cmd_search(int argc, char **argv)
{
    search_args a = {0};
    int rc = parse_search_args(argc, argv, &a);
    return rc >= 0 ? rc : cluster_run("search", &a.conn, run_search, &a);
}
