/* olmv1 uninstall extension: deletes a ClusterExtension (operator-controller removes
 * what it installed, as its ServiceAccount), optionally waits for that, and with
 * --delete-rbac removes what `install --create-rbac` made once the uninstall is done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cluster_apply.h"
#include "cluster_extension.h"
#include "cluster_objects.h"
#include "commands.h"
#include "rbac_derive.h"

static void uninstall_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 uninstall extension NAME [--wait] [--timeout 5m] [--delete-rbac]\n"
            "                       [--kubeconfig FILE] [--context NAME]\n"
            "\n"
            "Deletes ClusterExtension NAME.  operator-controller then deletes every object the\n"
            "extension installed, as its ServiceAccount, and removes the finalizer.\n"
            "\n"
            "  --wait                  wait until the ClusterExtension is gone (uninstall done)\n"
            "  --timeout DURATION      how long to wait (default 5m)\n"
            "  --delete-rbac           then delete what `install --create-rbac` made: the\n"
            "                          RoleBindings, Roles, ClusterRoleBinding, ClusterRole and\n"
            "                          ServiceAccount labelled " RBAC_LABEL "=NAME,\n"
            "                          and the namespace if it made that too.  Implies --wait: the\n"
            "                          uninstall needs the ServiceAccount and its RBAC until it is done.\n" CLI_KUBECONFIG_HELP
            "\n" CLI_EXIT_CODES_HELP);
}

typedef struct uninstall_args {
    const char *name;
    bool wait, delete_rbac;
    long timeout;
    cluster_opts conn;
} uninstall_args;

static int parse_uninstall_args(int argc, char **argv, uninstall_args *a)
{
    enum { OPT_WAIT = 1, OPT_TIMEOUT, OPT_DELETE_RBAC };
    static const struct option opts[] = {
        {"wait", no_argument, NULL, OPT_WAIT},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"delete-rbac", no_argument, NULL, OPT_DELETE_RBAC},
        {"help", no_argument, NULL, 'h'},
        CLUSTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    a->timeout = 300;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_WAIT: a->wait = true; break;
        case OPT_DELETE_RBAC: a->delete_rbac = a->wait = true; break;
        case OPT_TIMEOUT:
            if (cluster_take_timeout("uninstall extension", optarg, &a->timeout) != 0)
                return CLI_EXIT_USAGE;
            break;
        case 'h': uninstall_usage(stdout); return 0;
        default:
            if (!cluster_opts_take(&a->conn, opt, optarg)) {
                uninstall_usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "olmv1 uninstall extension: say which one: olmv1 uninstall extension NAME\n");
        return CLI_EXIT_USAGE;
    }
    a->name = argv[optind];
    return -1;
}

/* Deletes every object of the kind labelled RBAC_LABEL=name (in `ns`, or everywhere). */
static int delete_labelled(kube_client *c, const char *av, const char *kind, const char *ns, const char *name,
                           olm_error *err)
{
    char sel[512];
    snprintf(sel, sizeof sel, "%s=%s", RBAC_LABEL, name);
    kube_list_options lo = {.label_selector = sel};
    json_t *list = NULL;
    int rc = kube_list(c, av, kind, ns, &lo, &list, err);
    if (rc < 0)
        return cluster_wrap(err, cluster_exit_from_kube(rc), "listing %s", kind);
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(list, "items"), i, o) {
        const char *ons = cluster_str(o, "metadata.namespace"), *oname = cluster_str(o, "metadata.name");
        rc = kube_delete(c, av, kind, *ons ? ons : NULL, oname, NULL, err);
        if (rc < 0 && rc != KUBE_NOT_FOUND) {
            json_decref(list);
            return cluster_wrap(err, cluster_exit_from_kube(rc), "deleting %s %s", kind, oname);
        }
        char lower[64];
        size_t k = 0;
        for (; kind[k] && k + 1 < sizeof lower; k++)
            lower[k] = (char)(kind[k] >= 'A' && kind[k] <= 'Z' ? kind[k] + 32 : kind[k]);
        lower[k] = '\0';
        printf("%s %s%s%s deleted\n", lower, ons, *ons ? "/" : "", oname);
    }
    json_decref(list);
    return 0;
}

static int delete_rbac(kube_client *c, const char *name, const char *ns, olm_error *err)
{
    static const struct {
        const char *av, *kind;
        bool namespaced;
    } kinds[] = {
        {"rbac.authorization.k8s.io/v1", "RoleBinding", true},
        {"rbac.authorization.k8s.io/v1", "Role", true},
        {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", false},
        {"rbac.authorization.k8s.io/v1", "ClusterRole", false},
        {"v1", "ServiceAccount", true},
        {"v1", "Namespace", false},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        /* The ServiceAccount is in the extension's namespace; Roles anywhere. */
        const char *where = strcmp(kinds[i].kind, "ServiceAccount") == 0 ? ns : NULL;
        int rc = delete_labelled(c, kinds[i].av, kinds[i].kind, where, name, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int run_uninstall(const void *args, kube_client *c, olm_error *err)
{
    const uninstall_args *a = args;
    json_t *ce = NULL;
    int rc = extension_get(c, a->name, &ce, err);
    if (rc != 0)
        return rc;
    char *ns = strdup(cluster_str(ce, "spec.namespace"));
    json_decref(ce);
    if (!ns)
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    kube_delete_options opts = {.propagation_policy = "Background", .grace_period_seconds = -1};
    rc = kube_delete(c, CLUSTER_OLM_API_VERSION, "ClusterExtension", NULL, a->name, &opts, err);
    if (rc < 0 && rc != KUBE_NOT_FOUND) {
        free(ns);
        return cluster_exit_from_kube(rc);
    }
    printf("clusterextension %s deleted\n", a->name);
    fflush(stdout);
    rc = 0;
    if (a->wait) {
        rc = cluster_wait_gone(c, CLUSTER_OLM_API_VERSION, "ClusterExtension", NULL, a->name, a->timeout, err);
        if (rc == CLI_EXIT_TIMEOUT)
            cluster_wrap(err, rc, "uninstall not finished (kubectl get clusterextension %s shows why)", a->name);
    }
    if (rc == 0 && a->delete_rbac)
        rc = delete_rbac(c, a->name, ns, err);
    free(ns);
    return rc;
}

int cmd_uninstall_extension(int argc, char **argv)
{
    uninstall_args a = {0};
    int rc = parse_uninstall_args(argc, argv, &a);
    return rc >= 0 ? rc : cluster_run("uninstall extension", &a.conn, run_uninstall, &a);
}
