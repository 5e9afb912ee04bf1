/* olmv1 get extensions|catalogs: ClusterExtensions and ClusterCatalogs as kubectl
 * shows them (the CRDs' printer columns), plus what is wrong: the reason and message
 * of every condition that is not in its healthy state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "cluster_objects.h"
#include "commands.h"
#include "outlook_catalogs.h"
#include "strbuf.h"

static void get_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 get extensions|catalogs [NAME] [-o table|wide|json|yaml|name] [-l SELECTOR]\n"
            "                 [--catalogd-url URL] [--kubeconfig FILE] [--context NAME]\n"
            "\n"
            "Lists ClusterExtensions (extension, extensions, ext, clusterextension[s]) or\n"
            "ClusterCatalogs (catalog, catalogs, clustercatalog[s]) with their printer columns,\n"
            "and in MESSAGE the reason and message of every condition that is not healthy\n"
            "(Installed not True, Progressing not True/Succeeded, a deprecation True; Serving\n"
            "not True).  -o wide adds the spec: package, namespace, ServiceAccount, channels and\n"
            "version range; a catalog's priority, availability, image and resolved digest.  For an\n"
            "extension it also reads its catalogs (each once) and adds NEXT, the version the\n"
            "resolver picks for the current spec when that is not the installed one, and\n"
            "REACHABLE, the highest version the upgrade edges (replaces, skips, skipRange) lead\n"
            "to from the installed bundle within its channels, whatever the version range says\n"
            "(\"-\" for none, \"?\" when the catalogs cannot be read; olmv1 explain extension\n"
            "NAME says why).\n"
            "\n"
            "  -o, --output FORMAT     table (default), wide, json, yaml or name\n"
            "  -l, --selector SEL      label selector, e.g. team=payments,tier!=test\n"
            "  --catalogd-url URL      -o wide: read catalogd at URL instead of through the API server\n" CLI_KUBECONFIG_HELP
            "\n" CLI_EXIT_CODES_HELP);
}

typedef struct get_args {
    const cluster_kind *kind;
    const char *name;     /* NULL: list */
    const char *output;   /* table, wide, json, yaml, name */
    const char *selector; /* NULL: all */
    cluster_opts conn;
} get_args;

/* -1 to go on, else the exit code. */
static int parse_get_args(int argc, char **argv, get_args *a)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"selector", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        CLUSTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    a->output = "table";
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:l:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'o': a->output = optarg; break;
        case 'l': a->selector = optarg; break;
        case 'h': get_usage(stdout); return 0;
        default:
            if (!cluster_opts_take(&a->conn, opt, optarg)) {
                get_usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "olmv1 get: say what to get: extensions or catalogs\n");
        return CLI_EXIT_USAGE;
    }
    a->kind = cluster_kind_lookup(argv[optind]);
    if (!a->kind) {
        fprintf(stderr, "olmv1 get: unknown resource type \"%s\" (extensions or catalogs)\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (optind + 1 < argc)
        a->name = argv[optind + 1];
    if (optind + 2 < argc) {
        fprintf(stderr, "olmv1 get: unexpected argument \"%s\" (one NAME at most)\n", argv[optind + 2]);
        return CLI_EXIT_USAGE;
    }
    static const char *const formats[] = {"table", "wide", "json", "yaml", "name", NULL};
    if (cluster_check_output("get", a->output, formats) != 0)
        return CLI_EXIT_USAGE;
    if (a->name && a->selector) {
        fprintf(stderr, "olmv1 get: NAME and -l do not go together\n");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* ------------------------------------------------------------ table rows */

/* The NEXT and REACHABLE cells of `ce` ("?" when its catalogs cannot be read). */
static int outlook_cells(const outlook_catalogs *oc, const json_t *ce, char *next, char *reach, size_t size)
{
    extension_outlook o;
    bool known = false;
    olm_error err;
    if (outlook_for_extension(oc, ce, &o, &known, &err) != 0)
        return -1;
    snprintf(next, size, "%s", known ? extension_outlook_next_cell(&o) : "?");
    snprintf(reach, size, "%s", known ? extension_outlook_reach_cell(&o) : "?");
    extension_outlook_free(&o);
    return 0;
}

/* One row; `oc` (the catalogs for NEXT and REACHABLE) is given for -o wide only. */
static int extension_row(const json_t *ce, const outlook_catalogs *oc, time_t now, cluster_table *t)
{
    bool wide = oc != NULL;
    char next[128] = "", reach[128] = "";
    if (wide && outlook_cells(oc, ce, next, reach, sizeof next) < 0)
        return -1;
    char age[32];
    cluster_age(cluster_str(ce, "metadata.creationTimestamp"), now, age, sizeof age);
    const json_t *inst = cluster_condition(ce, "Installed"), *prog = cluster_condition(ce, "Progressing");
    char *msg = cluster_problems(ce, CLUSTER_KIND_EXTENSION);
    char *channels = cluster_join_strings(json_object_get(
                                              json_object_get(json_object_get(json_object_get(ce, "spec"), "source"),
                                                              "catalog"),
                                              "channels"),
                                          ",");
    if (!msg || !channels) {
        free(msg);
        free(channels);
        return -1;
    }
    const char *row[] = {
        cluster_str(ce, "metadata.name"),
        cluster_str(ce, "status.install.bundle.name"),
        cluster_str(ce, "status.install.bundle.version"),
        cluster_str(inst, "status"),
        cluster_str(prog, "status"),
        age,
        cluster_str(ce, "spec.source.catalog.packageName"),
        cluster_str(ce, "spec.namespace"),
        cluster_str(ce, "spec.serviceAccount.name"),
        channels,
        cluster_str(ce, "spec.source.catalog.version"),
        next,
        reach,
        msg,
    };
    const char *narrow[] = {row[0], row[1], row[2], row[3], row[4], row[5], msg};
    int rc = cluster_table_add(t, wide ? row : narrow);
    free(msg);
    free(channels);
    return rc;
}

static int catalog_row(const json_t *cat, bool wide, time_t now, cluster_table *t)
{
    char age[32], unpacked[32] = "";
    cluster_age(cluster_str(cat, "metadata.creationTimestamp"), now, age, sizeof age);
    if (*cluster_str(cat, "status.lastUnpacked"))
        cluster_age(cluster_str(cat, "status.lastUnpacked"), now, unpacked, sizeof unpacked);
    char prio[24];
    snprintf(prio, sizeof prio, "%lld",
             (long long)json_integer_value(json_object_get(json_object_get(cat, "spec"), "priority")));
    const char *mode = cluster_str(cat, "spec.availabilityMode");
    char *msg = cluster_problems(cat, CLUSTER_KIND_CATALOG);
    if (!msg)
        return -1;
    const char *row[] = {
        cluster_str(cat, "metadata.name"),
        unpacked,
        cluster_str(cluster_condition(cat, "Serving"), "status"),
        age,
        prio,
        *mode ? mode : "Available",
        cluster_str(cat, "spec.source.image.ref"),
        cluster_str(cat, "status.resolvedSource.image.ref"),
        msg,
    };
    const char *narrow[] = {row[0], row[1], row[2], row[3], msg};
    int rc = cluster_table_add(t, wide ? row : narrow);
    free(msg);
    return rc;
}

static int print_table(const get_args *a, const json_t *items, const outlook_catalogs *oc)
{
    static const char *const ext_wide[] = {"NAME",    "INSTALLED BUNDLE", "VERSION",   "INSTALLED",
                                           "PROGRESSING", "AGE",          "PACKAGE",   "NAMESPACE",
                                           "SERVICE ACCOUNT", "CHANNELS", "VERSION RANGE", "NEXT",
                                           "REACHABLE",   "MESSAGE"};
    static const char *const ext_narrow[] = {"NAME",        "INSTALLED BUNDLE", "VERSION", "INSTALLED",
                                             "PROGRESSING", "AGE",              "MESSAGE"};
    static const char *const cat_wide[] = {"NAME",         "LASTUNPACKED", "SERVING",  "AGE",    "PRIORITY",
                                           "AVAILABILITY", "IMAGE",        "RESOLVED", "MESSAGE"};
    static const char *const cat_narrow[] = {"NAME", "LASTUNPACKED", "SERVING", "AGE", "MESSAGE"};
    bool wide = strcmp(a->output, "wide") == 0, ext = a->kind->id == CLUSTER_KIND_EXTENSION;
    const char *const *header = ext ? (wide ? ext_wide : ext_narrow) : (wide ? cat_wide : cat_narrow);
    size_t ncols = ext ? (wide ? 14 : 7) : (wide ? 9 : 5);
    cluster_table t;
    if (cluster_table_init(&t, ncols, header) < 0)
        return CLI_EXIT_FAILED;
    time_t now = time(NULL);
    size_t i;
    const json_t *item;
    int rc = 0;
    json_array_foreach(items, i, item) {
        if ((ext ? extension_row(item, wide ? oc : NULL, now, &t) : catalog_row(item, wide, now, &t)) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0)
        rc = cluster_table_print(&t, stdout);
    cluster_table_free(&t);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* ------------------------------------------------------------ run */

static int print_items(const get_args *a, json_t *items, bool one, const outlook_catalogs *oc)
{
    if (strcmp(a->output, "name") == 0) {
        size_t i;
        const json_t *item;
        json_array_foreach(items, i, item) printf("%s/%s\n", a->kind->qualified, cluster_str(item, "metadata.name"));
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
    }
    if (strcmp(a->output, "json") == 0 || strcmp(a->output, "yaml") == 0) {
        if (one)
            return cluster_print_object(json_array_get(items, 0), a->output);
        json_t *list = json_pack("{s:s, s:s, s:O, s:{}}", "apiVersion", "v1", "kind", "List", "items", items,
                                 "metadata");
        if (!list)
            return CLI_EXIT_FAILED;
        int rc = cluster_print_object(list, a->output);
        json_decref(list);
        return rc;
    }
    int rc = print_table(a, items, oc);
    return rc == 0 && fflush(stdout) != 0 ? CLI_EXIT_FAILED : rc;
}

static int run_get(const void *args, kube_client *c, olm_error *err)
{
    const get_args *a = args;
    json_t *items = NULL;
    int rc;
    if (a->name) {
        json_t *obj = NULL;
        rc = kube_get(c, CLUSTER_OLM_API_VERSION, a->kind->kind, NULL, a->name, &obj, err);
        if (rc < 0)
            return cluster_exit_from_kube(rc);
        items = json_array();
        if (!items || json_array_append_new(items, obj) < 0) {
            json_decref(items);
            return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        }
    } else {
        rc = cluster_list(c, a->kind, a->selector, &items, err);
        if (rc != 0)
            return rc;
    }
    cluster_items_tidy(items, a->kind);
    if (json_array_size(items) == 0 && strcmp(a->output, "json") != 0 && strcmp(a->output, "yaml") != 0) {
        fprintf(stderr, "No %s found.\n", a->kind->plural);
        json_decref(items);
        return CLI_EXIT_OK;
    }
    /* -o wide of extensions reads their catalogs, each once for all of them. */
    outlook_catalogs oc = {0};
    bool outlook = a->kind->id == CLUSTER_KIND_EXTENSION && strcmp(a->output, "wide") == 0;
    if (outlook && (rc = outlook_catalogs_read(c, a->conn.catalogd_url, items, &oc, err)) != 0) {
        outlook_catalogs_free(&oc);
        json_decref(items);
        return rc;
    }
    if (oc.error)
        fprintf(stderr, "olmv1 get: NEXT and REACHABLE unknown: %s\n", oc.error);
    rc = print_items(a, items, a->name != NULL, outlook ? &oc : NULL);
    outlook_catalogs_free(&oc);
    json_decref(items);
    if (rc != 0)
        olm_error_set(err, "writing to stdout failed");
    return rc;
}

int cmd_get(int argc, char **argv)
{
    get_args a = {0};
    int rc = parse_get_args(argc, argv, &a);
    return rc >= 0 ? rc : cluster_run("get", &a.conn, run_get, &a);
}
