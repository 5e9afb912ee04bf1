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
            "                     [--no-wait | --timeout 5m] [--catalogd-url URL]\n"
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
            "(uninstall --delete-rbac removes them).  The rules fit the resolved version; `olmv1\n"
            "upgrade extension NAME` extends them for another one by itself.  Review them with\n"
            "--dry-run -o yaml.  Then it waits until the extension is installed (exit 0 means\n"
            "installed), unless --no-wait.\n"
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
            EXTENSION_WAIT_HELP
            "  --catalogd-url URL      read catalogd at URL instead of through the API server\n" CLI_KUBECONFIG_HELP
            "\n" CLI_EXIT_CODES_HELP);
}

typedef struct install_args {
    extension_spec spec;
    bool create_rbac;
    extension_write_opts w; /* --dry-run, -o, --wait, --no-wait, --timeout */
    cluster_opts conn;
} install_args;

#define CMD "install extension"

/* -1 to go on, else the exit code. */
static int parse_install_args(int argc, char **argv, install_args *a)
{
    enum { OPT_PACKAGE = 1, OPT_CHANNEL, OPT_VERSION, OPT_CATALOG, OPT_SELECTOR, OPT_SA, OPT_WATCH, OPT_RBAC };
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
        EXTENSION_WRITE_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        CLUSTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    extension_spec *s = &a->spec;
    extension_write_opts_init(&a->w);
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
        case 'h': install_usage(stdout); return 0;
        default:
            if ((rc = extension_write_opts_take(&a->w, &a->conn, CMD, opt, optarg)) != 1) {
                if (rc == 0)
                    install_usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if ((rc = cluster_take_name(argc, argv, CMD, " --package P --namespace NS", &s->name)) != 0)
        return rc;
    if (!s->package || !s->namespace_) {
        fprintf(stderr, "olmv1 " CMD ": --package and --namespace are required\n");
        return CLI_EXIT_USAGE;
    }
    if ((rc = extension_write_opts_check(&a->w, CMD)) != 0)
        return rc;
    olm_error err;
    if ((rc = extension_spec_check(s, &err)) != 0) {
        fprintf(stderr, "olmv1 " CMD ": %s\n", err.msg);
        return rc;
    }
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

/* Creates `obj` (the namespace or the ClusterExtension), saying so unless quiet. */
static int create_one(kube_client *c, const json_t *obj, bool quiet, olm_error *err)
{
    char what[512];
    cluster_describe(obj, what, sizeof what);
    int rc = kube_create(c, obj, NULL, err);
    if (rc == KUBE_ALREADY_EXISTS)
        return cluster_wrap(err, CLI_EXIT_CONFLICT, "creating %s", what);
    if (rc < 0)
        return cluster_wrap(err, cluster_exit_from_kube(rc), "creating %s", what);
    if (!quiet)
        printf("%s created\n", what);
    return 0;
}

/* Creates, in order: the namespace `ns` (when not NULL), the RBAC with apply (refusing to
 * take over other objects), the ClusterExtension `ce`. */
static int create_all(kube_client *c, const install_args *a, const json_t *ns, const json_t *rbac, const json_t *ce,
                      olm_error *err)
{
    bool quiet = a->w.output != NULL;
    int rc = ns ? create_one(c, ns, quiet, err) : 0;
    if (rc == 0 && rbac)
        rc = extension_apply_rbac(c, a->spec.name, rbac, quiet, err);
    return rc == 0 ? create_one(c, ce, quiet, err) : rc;
}

static int run_install(const void *args, kube_client *c, olm_error *err)
{
    const install_args *a = args;
    const extension_spec *s = &a->spec;
    json_t *existing = NULL, *objects = NULL, *rbac = NULL, *ns = NULL, *ce = NULL;
    extension_target t = {0};
    int rc = extension_get(c, s->name, &existing, err);
    json_decref(existing);
    if (rc == 0)
        return cluster_error(err, CLI_EXIT_CONFLICT, "clusterextension %s already exists (olmv1 upgrade extension "
                                                     "changes it)",
                             s->name);
    if (rc != CLI_EXIT_NOT_FOUND)
        return rc;

    rc = extension_target_resolve(c, a->conn.catalogd_url, s, NULL, &t, err);
    if (rc == 0)
        fprintf(stderr, "%s resolves to %s (%s) from catalog %s\n", s->name, t.res.res.bundle->name, t.version,
                t.res.res.catalog->name);
    if (rc == 0 && !a->create_rbac)
        warn_missing_identity(c, s);
    if (rc == 0 && a->create_rbac) {
        rc = extension_rbac_objects(c, s, &t.image, 1, t.res.res.bundle->name, &rbac, err);
        if (rc == 0)
            rc = namespace_object(c, s, &ns, err);
    }
    if (rc == 0 && (!(objects = json_array()) || !(ce = extension_object(s))))
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    if (rc == 0 && ((ns && json_array_append(objects, ns) < 0) || (rbac && json_array_extend(objects, rbac) < 0) ||
                    json_array_append(objects, ce) < 0))
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    if (rc == 0 && a->w.dry_run)
        rc = cluster_print_objects(objects, a->w.output);
    else if (rc == 0)
        rc = create_all(c, a, ns, rbac, ce, err);
    if (rc == 0 && !a->w.dry_run && a->w.output)
        rc = cluster_print_objects(objects, a->w.output);
    if (rc == CLI_EXIT_FAILED && !*err->msg)
        olm_error_set(err, "writing to stdout failed");
    if (rc == 0 && !a->w.dry_run)
        rc = extension_settle(c, s->name, t.version, &a->w, err);
    json_decref(objects);
    json_decref(rbac);
    json_decref(ns);
    json_decref(ce);
    extension_target_free(&t);
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
    return cluster_run(CMD, &a.conn, run_install, &a);
}
