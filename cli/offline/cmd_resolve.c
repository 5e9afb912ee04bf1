/* olmv1 resolve: what would a ClusterExtension install, and why. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "resolve.h"
#include "fbc.h"

#define MAX_CATALOGS 64
#define MAX_CHANNELS 256

static void resolve_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 resolve --catalog NAME=DIR [--catalog NAME=DIR ...] --package PACKAGE\n"
            "                     [--priority NAME=N] [--unavailable NAME] [--version RANGE]\n"
            "                     [--channel CHANNEL ...] [--policy CatalogProvided|SelfCertified]\n"
            "                     [--installed-bundle NAME --installed-version VERSION] [-o text|json]\n"
            "\n"
            "Resolves the bundle a ClusterExtension would install from File-Based Catalog\n"
            "directories, exactly as operator-controller does: channel filter, Masterminds\n"
            "version range, upgrade edges (replaces/skips/skipRange) from the installed bundle\n"
            "unless --policy SelfCertified, non-deprecated first, highest version, then catalog\n"
            "priority.\n"
            "\n"
            "  --catalog NAME=DIR      a catalog and its FBC directory (repeatable)\n"
            "  --priority NAME=N       spec.priority of catalog NAME (default 0)\n"
            "  --unavailable NAME      treat catalog NAME as availabilityMode: Unavailable\n"
            "  --package P             spec.source.catalog.packageName (required)\n"
            "  --version RANGE         spec.source.catalog.version, e.g. \">=1.11, <1.13\"\n"
            "  --channel C             spec.source.catalog.channels entry (repeatable)\n"
            "  --policy POLICY         upgradeConstraintPolicy (default CatalogProvided)\n"
            "  --installed-bundle N    name of the installed bundle\n"
            "  --installed-version V   version of the installed bundle\n"
            "  -o text|json            output format (default text)\n"
            "\n"
            "Exit 0 when a bundle resolves; 1 when resolution fails (the last line on stderr is\n"
            "the message the controller writes into the Progressing condition); 2 on bad usage.\n");
}

typedef struct catalog_arg {
    char *name;  /* points into argv */
    char *dir;
    int priority;
    int unavailable;
    fbc_catalog *fbc;
} catalog_arg;

static catalog_arg *find_catalog(catalog_arg *cats, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cats[i].name, name) == 0)
            return &cats[i];
    return NULL;
}

/* Splits "NAME=VALUE" in place; NULL when there is no '=' or a side is empty. */
static char *split_pair(char *arg)
{
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return NULL;
    *eq = '\0';
    return eq + 1;
}

static json_t *conditions_json(const resolve_result *res, const resolve_request *req)
{
    deprecation_input in = {
        .installed_bundle = res->bundle->name,
        .deprecation = res->deprecation,
        .has_catalog_data = true,
        .channels = req->channels,
        .nchannels = req->nchannels,
    };
    deprecation_condition conds[DEPRECATION_NCONDITIONS];
    if (deprecation_conditions(&in, conds, NULL) < 0)
        return NULL;
    json_t *arr = json_array();
    for (int i = 0; arr && i < DEPRECATION_NCONDITIONS; i++)
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s}", "type", conds[i].type, "status",
                                             conds[i].status, "reason", conds[i].reason, "message",
                                             conds[i].message));
    deprecation_conditions_free(conds);
    return arr;
}

static int print_json(const resolve_result *res, const resolve_request *req)
{
    char *version = bundle_version_format(&res->version);
    json_t *obj = json_pack("{s:s, s:s, s:s?, s:s, s:s, s:i, s:b, s:o?}", "bundle", res->bundle->name,
                            "version", version ? version : "", "image", res->bundle->image, "catalog",
                            res->catalog->name, "package", res->bundle->package, "priority",
                            (int)res->catalog->priority, "deprecated",
                            resolve_bundle_is_deprecated(res->deprecation, res->bundle->name),
                            "conditions", conditions_json(res, req));
    free(version);
    if (!obj) {
        fprintf(stderr, "resolve: out of memory\n");
        return 1;
    }
    char *text = json_dumps(obj, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(obj);
    if (!text)
        return 1;
    puts(text);
    free(text);
    return 0;
}

/* Everything the command line says; strings point into argv. */
typedef struct resolve_args {
    catalog_arg cats[MAX_CATALOGS];
    int ncats;
    const char *channels[MAX_CHANNELS];
    size_t nchannels;
    resolve_request req;
    resolve_installed installed;
    const char *output;
} resolve_args;

/* Reads the options one by one; -1 to go on, else the exit code (0 after --help). */
static int parse_options(int argc, char **argv, resolve_args *a, char **priorities, int *npriorities,
                         char **unavailables, int *nunavailables)
{
    static const struct option opts[] = {
        {"catalog", required_argument, NULL, 'c'},   {"priority", required_argument, NULL, 'p'},
        {"unavailable", required_argument, NULL, 'u'}, {"package", required_argument, NULL, 'P'},
        {"version", required_argument, NULL, 'v'},   {"channel", required_argument, NULL, 'C'},
        {"policy", required_argument, NULL, 'y'},    {"installed-bundle", required_argument, NULL, 'b'},
        {"installed-version", required_argument, NULL, 'V'}, {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0},
    };
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'c': {
            if (a->ncats == MAX_CATALOGS) {
                fprintf(stderr, "resolve: at most %d catalogs\n", MAX_CATALOGS);
                return 2;
            }
            catalog_arg *cat = &a->cats[a->ncats];
            *cat = (catalog_arg){.name = optarg, .dir = split_pair(optarg)};
            if (!cat->dir) {
                fprintf(stderr, "resolve: --catalog wants NAME=DIR, got \"%s\"\n", optarg);
                return 2;
            }
            a->ncats++;
            break;
        }
        case 'p':
            if (*npriorities < MAX_CATALOGS)
                priorities[(*npriorities)++] = optarg;
            break;
        case 'u':
            if (*nunavailables < MAX_CATALOGS)
                unavailables[(*nunavailables)++] = optarg;
            break;
        case 'P': a->req.package = optarg; break;
        case 'v': a->req.version_range = optarg; break;
        case 'C':
            if (a->nchannels == MAX_CHANNELS) {
                fprintf(stderr, "resolve: at most %d channels\n", MAX_CHANNELS);
                return 2;
            }
            a->channels[a->nchannels++] = optarg;
            break;
        case 'y':
            if (strcmp(optarg, "CatalogProvided") == 0) {
                a->req.policy = RESOLVE_POLICY_CATALOG_PROVIDED;
            } else if (strcmp(optarg, "SelfCertified") == 0) {
                a->req.policy = RESOLVE_POLICY_SELF_CERTIFIED;
            } else {
                fprintf(stderr, "resolve: --policy must be CatalogProvided or SelfCertified, got \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'b': a->installed.bundle_name = optarg; break;
        case 'V': a->installed.version = optarg; break;
        case 'o': a->output = optarg; break;
        case 'h': resolve_usage(stdout); return 0;
        default: resolve_usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "resolve: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    return -1;
}

/* Parses and checks the whole command line; -1 to go on, else the exit code.  The
 * --priority and --unavailable options name catalogs, so they are applied once every
 * --catalog is known. */
static int parse_args(int argc, char **argv, resolve_args *a)
{
    char *priorities[MAX_CATALOGS], *unavailables[MAX_CATALOGS];
    int npriorities = 0, nunavailables = 0;
    a->output = "text";
    int rc = parse_options(argc, argv, a, priorities, &npriorities, unavailables, &nunavailables);
    if (rc >= 0)
        return rc;
    if (!a->req.package || a->ncats == 0) {
        fprintf(stderr, "resolve: --package and at least one --catalog are required\n");
        resolve_usage(stderr);
        return 2;
    }
    if (strcmp(a->output, "text") != 0 && strcmp(a->output, "json") != 0) {
        fprintf(stderr, "resolve: -o must be text or json, got \"%s\"\n", a->output);
        return 2;
    }
    if (!a->installed.bundle_name != !a->installed.version) {
        fprintf(stderr, "resolve: --installed-bundle and --installed-version go together\n");
        return 2;
    }
    for (int i = 0; i < npriorities; i++) {
        char *value = split_pair(priorities[i]);
        char *end = NULL;
        long n = value ? strtol(value, &end, 10) : 0;
        catalog_arg *cat = value ? find_catalog(a->cats, a->ncats, priorities[i]) : NULL;
        if (!value || *end || n < -2147483647L - 1 || n > 2147483647L || !cat) {
            fprintf(stderr, "resolve: --priority wants NAME=N for a catalog given with --catalog\n");
            return 2;
        }
        cat->priority = (int)n;
    }
    for (int i = 0; i < nunavailables; i++) {
        catalog_arg *cat = find_catalog(a->cats, a->ncats, unavailables[i]);
        if (!cat) {
            fprintf(stderr, "resolve: --unavailable names unknown catalog \"%s\"\n", unavailables[i]);
            return 2;
        }
        cat->unavailable = 1;
    }
    a->req.channels = a->channels;
    a->req.nchannels = a->nchannels;
    if (a->installed.bundle_name)
        a->req.installed = &a->installed;
    return -1;
}

/* Loads every available catalog's FBC directory; 0, or 1 after saying which failed. */
static int load_catalogs(resolve_args *a, resolve_catalog *rcats)
{
    for (int i = 0; i < a->ncats; i++) {
        catalog_arg *cat = &a->cats[i];
        olm_error err;
        if (!cat->unavailable) {
            cat->fbc = fbc_load_dir(cat->dir, &err);
            if (!cat->fbc) {
                fprintf(stderr, "resolve: catalog \"%s\": %s\n", cat->name, err.msg);
                return 1;
            }
        }
        rcats[i] = (resolve_catalog){.name = cat->name, .priority = cat->priority,
                                     .unavailable = cat->unavailable, .fbc = cat->fbc};
    }
    return 0;
}

/* Resolves and prints the result (text: the explanation, then the bundle). */
static int run_resolve(const resolve_args *a, const resolve_catalog *rcats)
{
    strbuf explain = STRBUF_INIT;
    resolve_result res;
    olm_error err;
    int text = strcmp(a->output, "text") == 0;
    if (resolve_bundle(&a->req, rcats, (size_t)a->ncats, &res, text ? &explain : NULL, &err) < 0) {
        if (text)
            fputs(strbuf_str(&explain), stdout);
        fflush(stdout);
        fprintf(stderr, "%s\n", err.msg);
        strbuf_free(&explain);
        return 1;
    }
    int rc = 0;
    if (text) {
        fputs(strbuf_str(&explain), stdout);
        char *version = bundle_version_format(&res.version);
        printf("bundle: %s\nversion: %s\nimage: %s\ncatalog: %s\n", res.bundle->name, version ? version : "",
               res.bundle->image ? res.bundle->image : "", res.catalog->name);
        free(version);
    } else {
        rc = print_json(&res, &a->req);
    }
    strbuf_free(&explain);
    resolve_result_free(&res);
    return rc;
}

int cmd_resolve(int argc, char **argv)
{
    resolve_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    resolve_catalog rcats[MAX_CATALOGS];
    rc = load_catalogs(&a, rcats);
    if (rc == 0)
        rc = run_resolve(&a, rcats);
    for (int i = 0; i < a.ncats; i++)
        fbc_catalog_free(a.cats[i].fbc);
    return rc;
}
