/* olmv1 upgradeable: which installed extensions block an OpenShift minor upgrade,
 * computed offline from bundle directories or olm.properties files, or from a
 * cluster's install records and ClusterVersion (--kubeconfig), with the same check
 * operator-controller runs (openshift/upgradeable.h, upgradeable_reconciler.h). */
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "olm_read_file.h"
#include "semver.h"
#include "upgradeable.h"

/* Cluster mode needs olm_operator (and through it olm_kube).  Its headers are on the
 * include path exactly when olmv1 links it, so this keeps the command building
 * either way; without it --kubeconfig reports that it is unavailable. */
#if __has_include("kube_client.h")
#define OLMV1_UPGRADEABLE_CLUSTER 1
#include "upgradeable_reconciler.h"
#endif

#define MAX_EXTENSIONS 256

static void upgradeable_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 upgradeable (--cluster-version VERSION | --to M.m)\n"
            "                         (--bundle NAME=DIR | --properties NAME[:BUNDLE]=FILE) ...\n"
            "                         [-o text|json]\n"
            "       olmv1 upgradeable --kubeconfig FILE [--to M.m | --cluster-version VERSION]\n"
            "                         [--system-namespace NS] [-o text|json]\n"
            "\n"
            "Lists the ClusterExtensions whose installed bundle blocks an OpenShift minor\n"
            "upgrade through olm.maxOpenShiftVersion, and prints the Upgradeable condition\n"
            "operator-controller would write on ClusterOperator \"olm\".\n"
            "\n"
            "  --cluster-version V     the running version (ClusterVersion status.desired.version),\n"
            "                          e.g. 4.18.3; the target is the next minor (4.23 counts as 5.0)\n"
            "  --to M.m                check an upgrade to this minor instead, e.g. 4.19\n"
            "  --bundle NAME=DIR       ClusterExtension NAME has the registry+v1 bundle in DIR\n"
            "                          installed (CSV olm.properties + metadata/properties.yaml)\n"
            "  --properties NAME[:BUNDLE]=FILE\n"
            "                          ClusterExtension NAME's olm.properties annotation text\n"
            "                          (a JSON array of {type, value}); BUNDLE defaults to the\n"
            "                          file name without its extension\n"
            "  --kubeconfig FILE       read the installed extensions from a cluster instead: the\n"
            "                          install record Secrets, the ClusterObjectSet revisions\n"
            "                          (BoxcutterRuntime) and ClusterExtensions, and (without\n"
            "                          --to or --cluster-version) ClusterVersion \"version\"\n"
            "                          status.desired.version\n"
            "  --system-namespace NS   where the install records live (default olmv1-system)\n"
            "  -o text|json            output format (default text)\n"
            "\n"
            "Exit 0 when nothing blocks, 1 when an extension blocks or its properties are\n"
            "invalid (errors fail closed), 2 on bad usage, unreadable input or a cluster that\n"
            "cannot be read.\n");
}

typedef struct ext_arg {
    char *name;   /* points into argv */
    char *bundle; /* owned */
    char *props;  /* owned; NULL when the bundle declares no properties */
    size_t props_len;
} ext_arg;

/* NAME=VALUE split in place; NULL when malformed. */
static char *split_pair(char *arg)
{
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return NULL;
    *eq = '\0';
    return eq + 1;
}

static int load_bundle(ext_arg *e, char *arg)
{
    char *dir = split_pair(arg);
    if (!dir) {
        fprintf(stderr, "upgradeable: --bundle wants NAME=DIR, got \"%s\"\n", arg);
        return -1;
    }
    e->name = arg;
    olm_error err;
    if (upgradeable_bundle_properties(dir, &e->props, &e->bundle, &err) < 0) {
        fprintf(stderr, "upgradeable: bundle %s: %s\n", dir, err.msg);
        return -1;
    }
    if (!e->bundle && !(e->bundle = strdup(""))) {
        fprintf(stderr, "upgradeable: out of memory\n");
        return -1;
    }
    e->props_len = e->props ? strlen(e->props) : 0;
    return 0;
}

static int load_properties(ext_arg *e, char *arg)
{
    char *file = split_pair(arg);
    if (!file) {
        fprintf(stderr, "upgradeable: --properties wants NAME[:BUNDLE]=FILE, got \"%s\"\n", arg);
        return -1;
    }
    char *colon = strchr(arg, ':');
    if (colon)
        *colon = '\0';
    e->name = arg;
    if (colon && colon[1]) {
        e->bundle = strdup(colon + 1);
    } else {
        const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        const char *dot = strrchr(base, '.');
        e->bundle = strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
    }
    if (!e->bundle) {
        fprintf(stderr, "upgradeable: out of memory\n");
        return -1;
    }
    /* A properties file is a few KiB; anything near this is not one. */
    olm_error err;
    e->props = olm_read_file(file, (size_t)64 << 20, &e->props_len, &err);
    if (!e->props) {
        fprintf(stderr, "upgradeable: cannot read %s\n", file);
        return -1;
    }
    return 0;
}

static const char *verdict_word(upgradeable_verdict_kind k)
{
    switch (k) {
    case UPGRADEABLE_INCOMPATIBLE: return "blocks";
    case UPGRADEABLE_ERROR: return "error";
    case UPGRADEABLE_COMPATIBLE: return "ok";
    default: return "ok";
    }
}

static void print_text(const upgradeable_result *r, const ext_arg *exts, int n, const char *cluster)
{
    if (cluster)
        printf("Upgrade from OpenShift %s to %s:\n", cluster, r->next);
    else
        printf("Upgrade to OpenShift %s:\n", r->next);
    for (int i = 0; i < n && (size_t)i < r->nverdicts; i++) {
        const upgradeable_verdict *v = &r->verdicts[i];
        printf("  %-7s %s (bundle %s): ", verdict_word(v->kind), exts[i].name, exts[i].bundle);
        if (v->kind == UPGRADEABLE_ERROR)
            printf("%s\n", v->error);
        else if (v->kind == UPGRADEABLE_NO_PROPERTY)
            printf("no olm.maxOpenShiftVersion\n");
        else
            printf("olm.maxOpenShiftVersion %s\n", v->max);
    }
    const upgradeable_condition *c = &r->upgradeable;
    printf("\nClusterOperator olm Upgradeable=%s reason=%s\n%s\n", c->status, c->reason, c->message);
}

static json_t *cond_json(const upgradeable_condition *c)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "type", c->type, "status", c->status, "reason", c->reason, "message",
                     c->message);
}

static int print_json(const upgradeable_result *r, const ext_arg *exts, int n)
{
    json_t *list = json_array();
    for (int i = 0; list && i < n && (size_t)i < r->nverdicts; i++) {
        const upgradeable_verdict *v = &r->verdicts[i];
        if (json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s?, s:s?}", "name", exts[i].name, "bundle",
                                                  exts[i].bundle, "verdict", verdict_word(v->kind),
                                                  "maxOpenShiftVersion", v->max[0] ? v->max : NULL, "error",
                                                  v->error)) < 0) {
            json_decref(list);
            list = NULL;
        }
    }
    json_t *obj = list ? json_pack("{s:s, s:o, s:[o, o], s:o}", "next", r->next, "extensions", list, "conditions",
                                   cond_json(&r->intermediate), cond_json(&r->degraded), "clusterOperatorUpgradeable",
                                   cond_json(&r->upgradeable))
                       : NULL;
    char *text = obj ? json_dumps(obj, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(obj);
    if (!text) {
        fprintf(stderr, "upgradeable: out of memory\n");
        return -1;
    }
    puts(text);
    free(text);
    return 0;
}

/* --kubeconfig: the same check over what the cluster has installed.  Returns the exit code. */
static int cluster_mode(const char *kubeconfig, const char *sysns, const char *cluster, const char *to,
                        const char *output)
{
#ifdef OLMV1_UPGRADEABLE_CLUSTER
    kube_config cfg;
    olm_error err;
    if (kube_config_load(kubeconfig, &cfg, &err) < 0) {
        fprintf(stderr, "upgradeable: %s\n", err.msg);
        return 2;
    }
    kube_client *c = kube_client_new(&cfg, NULL, &err);
    if (!c) {
        kube_config_free(&cfg);
        fprintf(stderr, "upgradeable: %s\n", err.msg);
        return 2;
    }
    /* With --to the cluster version is not needed: do not ask for it.  The revisions are read
     * too: the CLI cannot know whether operator-controller runs with BoxcutterRuntime (installs
     * are then ClusterObjectSet revisions, with no record); a cluster without the
     * ClusterObjectSet API has none. */
    upgradeable_reconcile_opts o = {.system_namespace = sysns, .cluster_version_override = cluster,
                                    .skip_cluster_version = to != NULL, .revisions = true};
    upgradeable_inputs in;
    int rc = 2;
    if (upgradeable_inputs_read(c, &o, &in, &err) < 0) {
        fprintf(stderr, "upgradeable: %s\n", err.msg);
        kube_client_free(c);
        return 2;
    }
    kube_client_free(c);
    ext_arg *view = in.n ? calloc(in.n, sizeof *view) : NULL;
    upgradeable_result r;
    if (in.list_error) {
        fprintf(stderr, "upgradeable: %s\n", in.list_error);
    } else if (!to && !in.cluster_version) {
        fprintf(stderr, "upgradeable: %s; pass --to M.m or --cluster-version VERSION\n",
                in.version_error ? in.version_error : "no cluster version");
    } else if (in.n && !view) {
        fprintf(stderr, "upgradeable: out of memory\n");
    } else if (upgradeable_inputs_check(&in, to, &r, &err) < 0) {
        fprintf(stderr, "upgradeable: %s\n", err.msg);
    } else {
        if (strcmp(r.intermediate.reason, "ErrorCheckingOperatorCompatibility") == 0) {
            fprintf(stderr, "upgradeable: %s\n", r.intermediate.message);
        } else {
            /* Borrowed names for the printers; nothing in view is owned. */
            for (size_t i = 0; i < in.n; i++)
                view[i] = (ext_arg){.name = (char *)in.exts[i].name, .bundle = (char *)in.exts[i].bundle};
            int n = (int)in.n;
            if (strcmp(output, "json") == 0 ? print_json(&r, view, n) < 0
                                            : (print_text(&r, view, n, to ? NULL : in.cluster_version), 0))
                rc = 2;
            else
                rc = strcmp(r.upgradeable.status, "True") == 0 ? 0 : 1;
        }
        upgradeable_result_free(&r);
    }
    free(view);
    upgradeable_inputs_free(&in);
    return rc;
#else
    fprintf(stderr, "upgradeable: --kubeconfig (%s): this olmv1 was built without cluster access "
                    "(olmv1 does not link olm_operator)\n", kubeconfig);
    (void)sysns, (void)cluster, (void)to, (void)output;
    return 2;
#endif
}

int cmd_upgradeable(int argc, char **argv)
{
    static const struct option opts[] = {
        {"cluster-version", required_argument, NULL, 'c'}, {"to", required_argument, NULL, 't'},
        {"bundle", required_argument, NULL, 'b'},          {"properties", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},          {"help", no_argument, NULL, 'h'},
        {"kubeconfig", required_argument, NULL, 'k'},      {"system-namespace", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    static ext_arg exts[MAX_EXTENSIONS];
    const char *cluster = NULL, *to = NULL, *output = "text", *kubeconfig = NULL, *sysns = NULL;
    int n = 0, rc = 2, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'c': cluster = optarg; break;
        case 't': to = optarg; break;
        case 'o': output = optarg; break;
        case 'k': kubeconfig = optarg; break;
        case 'n': sysns = optarg; break;
        case 'h': upgradeable_usage(stdout); return 0;
        case 'b':
        case 'p':
            if (n == MAX_EXTENSIONS) {
                fprintf(stderr, "upgradeable: at most %d extensions\n", MAX_EXTENSIONS);
                goto out;
            }
            memset(&exts[n], 0, sizeof exts[n]);
            if ((opt == 'b' ? load_bundle(&exts[n], optarg) : load_properties(&exts[n], optarg)) < 0) {
                n++;
                goto out;
            }
            n++;
            break;
        default: upgradeable_usage(stderr); goto out;
        }
    }
    bool bad_output = strcmp(output, "text") != 0 && strcmp(output, "json") != 0;
    if (kubeconfig && !bad_output && optind == argc && n == 0 && !(cluster && to)) {
        rc = cluster_mode(kubeconfig, sysns, cluster, to, output);
        goto out;
    }
    if (optind < argc || (!cluster && !to) || bad_output || kubeconfig || sysns) {
        upgradeable_usage(stderr);
        goto out;
    }
    if (cluster) {
        semver_version v;
        olm_error perr;
        if (semver_parse_strict(cluster, &v, &perr) < 0) {
            fprintf(stderr, "upgradeable: --cluster-version: %s\n", perr.msg);
            goto out;
        }
        semver_version_free(&v);
    }

    upgradeable_extension in[MAX_EXTENSIONS];
    for (int i = 0; i < n; i++)
        in[i] = (upgradeable_extension){.name = exts[i].name, .bundle = exts[i].bundle,
                                        .properties = exts[i].props, .properties_len = exts[i].props_len};
    upgradeable_result r;
    olm_error err;
    int crc = to ? upgradeable_check_target(in, (size_t)n, to, &r, &err)
                 : upgradeable_check(in, (size_t)n, cluster, &r, &err);
    if (crc < 0) {
        fprintf(stderr, "upgradeable: %s\n", err.msg);
        goto out;
    }
    if (strcmp(r.intermediate.reason, "ErrorCheckingOperatorCompatibility") == 0) {
        fprintf(stderr, "upgradeable: --to: \"%s\" is not <major>.<minor>\n", to ? to : "");
        upgradeable_result_free(&r);
        goto out;
    }
    if (strcmp(output, "json") == 0 ? print_json(&r, exts, n) < 0 : (print_text(&r, exts, n, to ? NULL : cluster), 0))
        rc = 2;
    else
        rc = strcmp(r.upgradeable.status, "True") == 0 ? 0 : 1;
    upgradeable_result_free(&r);
out:
    for (int i = 0; i < n; i++) {
        free(exts[i].bundle);
        free(exts[i].props);
    }
    return rc;
}
