/* olmv1 install extension: writes a ClusterExtension after checking that it resolves,
 * and with --create-rbac the namespace, ServiceAccount and least RBAC the resolved
 * bundle needs (rbac_derive.h), derived from the bundle rendered exactly as
 * operator-controller will render it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cluster_apply.h"
#include "cluster_extension.h"
#include "cluster_objects.h"
#include "cluster_resolve.h"
#include "commands.h"
#include "rbac_derive.h"
#include "semver.h"

static void install_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 install extension NAME --package PACKAGE --namespace NS\n"
            "                     [--channel CHANNEL ...] [--version RANGE] [--catalog NAME ...]\n"
            "                     [--catalog-selector SELECTOR] [--service-account SA]\n"
            "                     [--watch-namespace NS] [--create-rbac] [--dry-run] [-o yaml|json]\n"
            "                     [--wait [--timeout 5m]] [--catalogd-url URL]\n"
            "                     [--kubeconfig FILE] [--context NAME]\n"
            "\n"
            "Creates ClusterExtension NAME installing PACKAGE into namespace NS as ServiceAccount SA.\n"
            "It is resolved first, as operator-controller will (catalogs, channels, version range),\n"
            "so a package or range that matches nothing fails here instead of in the status.\n"
            "\n"
            "--create-rbac also creates the namespace (when missing), the ServiceAccount and the\n"
            "least RBAC that installing the resolved bundle needs, derived from its rendered\n"
            "manifests (the bundle image is pulled from here: $REGISTRY_AUTH_FILE for credentials):\n"
            "  - create, delete, get, patch on each object it installs, by name (CRDs, RBAC,\n"
            "    Deployments, Services, ...), in its namespace or cluster-wide;\n"
            "  - list, watch on each kind (drift repair), in the one namespace its objects are in,\n"
            "    else cluster-wide;\n"
            "  - escalate on the bundle's own Roles/ClusterRoles and bind on the roles its bindings\n"
            "    name (so the installer can grant its operator's permissions without holding them),\n"
            "    by name;\n"
            "never a wildcard, never cluster-admin.  It goes into a ClusterRole and Roles named\n"
            "NAME-installer, bound to SA, each labelled " RBAC_LABEL "=NAME\n"
            "(uninstall --delete-rbac removes them).  The rules fit the resolved version: run\n"
            "`olmv1 upgrade extension NAME --create-rbac` for another one.  Review them with\n"
            "--dry-run -o yaml.\n"
            "\n"
            "  --package PACKAGE       spec.source.catalog.packageName (required)\n"
            "  -n, --namespace NS      spec.namespace: where the extension is installed (required)\n"
            "  --channel CHANNEL       spec.source.catalog.channels entry (repeatable)\n"
            "  --version RANGE         spec.source.catalog.version, e.g. \">=1.2, <2\"\n"
            "  --catalog NAME          only this ClusterCatalog (repeatable; a selector on the\n"
            "                          olm.operatorframework.io/metadata.name label)\n"
            "  --catalog-selector SEL  spec.source.catalog.selector as a label selector, e.g.\n"
            "                          \"tier=prod,team in (a,b)\"\n"
            "  --service-account SA    spec.serviceAccount.name (default NAME-installer)\n"
            "  --watch-namespace NS    spec.config.inline.watchNamespace (Single/OwnNamespace)\n"
            "  --create-rbac           create the namespace, ServiceAccount and least RBAC\n"
            "  --dry-run               change nothing; print what would be created\n"
            "  -o, --output FORMAT     print the objects as yaml (default with --dry-run) or json\n"
            "  --wait                  wait until the extension is installed\n"
            "  --timeout DURATION      how long --wait waits (default 5m)\n"
            "  --catalogd-url URL      read catalogd at URL instead of through the API server\n" CLI_KUBECONFIG_HELP
            "\n" CLI_EXIT_CODES_HELP);
}

typedef struct install_args {
    extension_spec spec;
    bool create_rbac, dry_run, wait;
    const char *output; /* NULL: messages; "yaml" or "json" */
    long timeout;
    cluster_opts conn;
} install_args;

/* -1 to go on, else the exit code. */
static int parse_install_args(int argc, char **argv, install_args *a)
{
    enum { OPT_PACKAGE = 1, OPT_CHANNEL, OPT_VERSION, OPT_CATALOG, OPT_SELECTOR, OPT_SA, OPT_WATCH, OPT_RBAC,
           OPT_DRY_RUN, OPT_WAIT, OPT_TIMEOUT };
    static const struct option opts[] = {
        {"package", required_argument, NULL, OPT_PACKAGE},
        {"namespace", required_argument, NULL, 'n'},
        {"channel", required_argument, NULL, OPT_CHANNEL},
        {"version", required_argument, NULL, OPT_VERSION},
        {"catalog", required_argument, NULL, OPT_CATALOG},
        {"catalog-selector", required_argument, NULL, OPT_SELECTOR},
        {"service-account", required_argument, NULL, OPT_SA},
        {"watch-namespace", required_argument, NULL, OPT_WATCH},
        {"create-rbac", no_argument, NULL, OPT_RBAC},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"output", required_argument, NULL, 'o'},
        {"wait", no_argument, NULL, OPT_WAIT},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        CLUSTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    extension_spec *s = &a->spec;
    a->timeout = 300;
    int opt, rc;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "n:o:h", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_PACKAGE: s->package = optarg; break;
        case 'n': s->namespace_ = optarg; break;
        case OPT_CHANNEL:
            if ((rc = extension_spec_add(s->channels, &s->nchannels, EXTENSION_MAX_LIST, optarg, "--channel")) >= 0)
                return rc;
            break;
        case OPT_VERSION: s->version = optarg; break;
        case OPT_CATALOG:
            if ((rc = extension_spec_add(s->catalogs, &s->ncatalogs, EXTENSION_MAX_LIST, optarg, "--catalog")) >= 0)
                return rc;
            break;
        case OPT_SELECTOR: s->selector = optarg; break;
        case OPT_SA: s->service_account = optarg; break;
        case OPT_WATCH: s->watch_namespace = optarg; break;
        case OPT_RBAC: a->create_rbac = true; break;
        case OPT_DRY_RUN: a->dry_run = true; break;
        case 'o': a->output = optarg; break;
        case OPT_WAIT: a->wait = true; break;
        case OPT_TIMEOUT:
            if ((a->timeout = cluster_parse_timeout(optarg)) < 0) {
                fprintf(stderr, "olmv1 install extension: --timeout wants a duration like 90s, 5m or 1h, got \"%s\"\n",
                        optarg);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'h': install_usage(stdout); return 0;
        default:
            if (!cluster_opts_take(&a->conn, opt, optarg)) {
                install_usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "olmv1 install extension: say which: olmv1 install extension NAME --package P --namespace NS\n");
        return CLI_EXIT_USAGE;
    }
    s->name = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "olmv1 install extension: unexpected argument \"%s\"\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (!s->package || !s->namespace_) {
        fprintf(stderr, "olmv1 install extension: --package and --namespace are required\n");
        return CLI_EXIT_USAGE;
    }
    if (a->output && strcmp(a->output, "yaml") != 0 && strcmp(a->output, "json") != 0) {
        fprintf(stderr, "olmv1 install extension: -o must be yaml or json, got \"%s\"\n", a->output);
        return CLI_EXIT_USAGE;
    }
    if (a->dry_run && a->wait) {
        fprintf(stderr, "olmv1 install extension: --dry-run and --wait do not go together\n");
        return CLI_EXIT_USAGE;
    }
    olm_error err;
    if ((rc = extension_spec_check(s, &err)) != 0) {
        fprintf(stderr, "olmv1 install extension: %s\n", err.msg);
        return rc;
    }
    if (a->dry_run && !a->output)
        a->output = "yaml";
    return -1;
}

/* ------------------------------------------------------------ RBAC */

/* The install namespace as --create-rbac makes it when missing (labelled, so that
 * uninstall --delete-rbac may remove it), or NULL when it exists. */
static int namespace_object(kube_client *c, const extension_spec *s, json_t **out, olm_error *err)
{
    *out = NULL;
    json_t *obj = NULL;
    int rc = kube_get(c, "v1", "Namespace", NULL, s->namespace_, &obj, err);
    json_decref(obj);
    if (rc == 0)
        return 0;
    if (rc != KUBE_NOT_FOUND)
        return cluster_exit_from_kube(rc);
    *out = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace", "metadata", "name",
                     s->namespace_, "labels", RBAC_LABEL, s->name);
    return *out ? 0 : cluster_error(err, CLI_EXIT_FAILED, "out of memory");
}

/* ------------------------------------------------------------ run */

/* Without --create-rbac the namespace and ServiceAccount are the user's to make: say so
 * when they are missing (the extension would wait with Progressing Retrying). */
static void warn_missing_identity(kube_client *c, const extension_spec *s)
{
    json_t *obj = NULL;
    olm_error err;
    int rc = kube_get(c, "v1", "Namespace", NULL, s->namespace_, &obj, &err);
    json_decref(obj);
    obj = NULL;
    if (rc == KUBE_NOT_FOUND) {
        fprintf(stderr, "warning: namespace %s does not exist: the extension waits for it and for ServiceAccount %s "
                        "with RBAC (or use --create-rbac)\n",
                s->namespace_, s->service_account);
        return;
    }
    if (rc == 0 && kube_get(c, "v1", "ServiceAccount", s->namespace_, s->service_account, &obj, &err) == KUBE_NOT_FOUND)
        fprintf(stderr, "warning: serviceaccount %s/%s does not exist: the extension waits for it and its RBAC (or use "
                        "--create-rbac)\n",
                s->namespace_, s->service_account);
    json_decref(obj);
}

/* Creates what `objects` holds in order: the namespace with create, the RBAC with
 * apply (refusing to take over other objects), the ClusterExtension with create. */
static int create_all(kube_client *c, const install_args *a, const json_t *objects, olm_error *err)
{
    size_t i;
    const json_t *o;
    json_array_foreach(objects, i, o) {
        char what[512];
        cluster_describe(o, what, sizeof what);
        const char *kind = cluster_str(o, "kind");
        int rc;
        if (strcmp(kind, "Namespace") == 0 || strcmp(kind, "ClusterExtension") == 0) {
            rc = kube_create(c, o, NULL, err);
            if (rc == KUBE_ALREADY_EXISTS)
                return cluster_wrap(err, CLI_EXIT_CONFLICT, "creating %s", what);
            if (rc < 0)
                return cluster_wrap(err, cluster_exit_from_kube(rc), "creating %s", what);
            if (!a->output)
                printf("%s created\n", what);
        } else {
            bool created = false;
            if ((rc = cluster_apply_labelled(c, o, RBAC_LABEL, a->spec.name, &created, err)) != 0)
                return rc;
            if (!a->output)
                printf("%s %s\n", what, created ? "created" : "configured");
        }
    }
    return 0;
}

static int run_install(const install_args *a, kube_client *c, olm_error *err)
{
    const extension_spec *s = &a->spec;
    json_t *existing = NULL, *objects = NULL, *rbac = NULL, *ns = NULL, *ce = NULL;
    catalog_source src = {0};
    cluster_resolution res = {0};
    int rc = kube_get(c, CLUSTER_OLM_API_VERSION, "ClusterExtension", NULL, s->name, &existing, err);
    json_decref(existing);
    if (rc == 0)
        return cluster_error(err, CLI_EXIT_CONFLICT, "clusterextension %s already exists (olmv1 upgrade extension "
                                                     "changes it)",
                             s->name);
    if (rc != KUBE_NOT_FOUND)
        return cluster_exit_from_kube(rc);

    if ((rc = catalog_source_open(c, a->conn.catalogd_url, &src, err)) != 0)
        return rc;
    rc = extension_resolve(c, &src, s, NULL, &res, NULL, err);
    char *version = rc == 0 ? bundle_version_format(&res.res.version) : NULL;
    if (rc == 0 && !version)
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    if (rc == 0)
        fprintf(stderr, "%s resolves to %s (%s) from catalog %s\n", s->name, res.res.bundle->name, version,
                res.res.catalog->name);
    if (rc == 0 && !a->create_rbac)
        warn_missing_identity(c, s);
    if (rc == 0 && a->create_rbac) {
        const char *image = res.res.bundle->image ? res.res.bundle->image : "";
        rc = extension_rbac_objects(c, s, &image, 1, res.res.bundle->name, &rbac, err);
        if (rc == 0)
            rc = namespace_object(c, s, &ns, err);
    }
    if (rc == 0 && (!(objects = json_array()) || !(ce = extension_object(s))))
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    if (rc == 0 && ((ns && json_array_append(objects, ns) < 0) || (rbac && json_array_extend(objects, rbac) < 0) ||
                    json_array_append(objects, ce) < 0))
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    if (rc == 0 && a->dry_run)
        rc = cluster_print_objects(objects, a->output);
    else if (rc == 0)
        rc = create_all(c, a, objects, err);
    if (rc == 0 && !a->dry_run && a->output)
        rc = cluster_print_objects(objects, a->output);
    if (rc == CLI_EXIT_FAILED && !*err->msg)
        olm_error_set(err, "writing to stdout failed");
    if (rc == 0 && a->wait)
        rc = cluster_wait_installed(c, s->name, NULL, a->timeout, false, err);
    free(version);
    json_decref(objects);
    json_decref(rbac);
    json_decref(ns);
    json_decref(ce);
    cluster_resolution_free(&res);
    catalog_source_close(&src);
    return rc;
}

int cmd_install_extension(int argc, char **argv)
{
    install_args a = {0};
    int rc = parse_install_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    char sa[300];
    if (!a.spec.service_account) {
        snprintf(sa, sizeof sa, "%s-installer", a.spec.name);
        a.spec.service_account = sa;
    }
    olm_error err = {""};
    kube_client *c = NULL;
    rc = cluster_connect(&a.conn, &c, &err);
    if (rc == 0)
        rc = run_install(&a, c, &err);
    kube_client_free(c);
    return rc ? cluster_report("install extension", rc, &err) : 0;
}
