/* olmv1 explain extension: a ClusterExtension as it is (installed bundle, conditions)
 * and as the resolver sees it now (every bundle of the package in every selected
 * catalog, each filter's verdict on it, the edge from the installed bundle), what
 * blocks an upgrade, and on OpenShift the olm.maxOpenShiftVersion verdict: `olmv1
 * resolve` fed from the cluster and the served catalogs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cluster_extension.h"
#include "cluster_objects.h"
#include "commands.h"
#include "explain_candidates.h"
#include "explain_upgrade.h"
#include "upgradeable_reconciler.h"

static void explain_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 explain extension NAME [-o text|json] [--system-namespace NS]\n"
            "       olmv1 explain extension NAME --graph [-o svg|dot|mermaid]\n"
            "                       [--catalogd-url URL] [--kubeconfig FILE] [--context NAME]\n"
            "\n"
            "Explains ClusterExtension NAME from the live cluster: what is installed and its\n"
            "conditions; then, from the ClusterCatalogs its selector picks and the content\n"
            "catalogd serves, what the resolver sees now: for every bundle of the package in every\n"
            "catalog whether it is in the channels, in the version range and a successor of the\n"
            "installed bundle (replaces, skips, skipRange, same version) and why not; the\n"
            "resolver's reasoning; what it would install, or what blocks (range, channel, upgrade\n"
            "edges, deprecation, ambiguity between catalogs).  On OpenShift (config.openshift.io\n"
            "served) also the olm.maxOpenShiftVersion verdict for the next minor.\n"
            "\n"
            "  -o, --output FORMAT     text (default) or json; with --graph svg (default), dot or mermaid\n"
            "  --graph                 draw it instead: the package's upgrade graph in every selected\n"
            "                          catalog (olmv1 catalog graph --help tells how to read it) with the\n"
            "                          installed bundle (double border), the bundles the channels and\n"
            "                          range allow (green), the one the resolver picks (bold green), why\n"
            "                          each other one is out (grey, in words), and what the installed\n"
            "                          bundle reaches by upgrade edges in its channels (yellow)\n"
            "  --system-namespace NS   where install records live (OpenShift check; default olmv1-system)\n"
            "  --catalogd-url URL      read catalogd at URL instead of through the API server\n" CLI_KUBECONFIG_HELP
            "\n"
            "Exit status as below; 7 when the resolver finds nothing to install (the explanation is\n"
            "printed all the same).\n" CLI_EXIT_CODES_HELP);
}

typedef struct explain_args {
    const char *name;
    const char *output;
    const char *system_namespace;
    bool graph;
    cluster_opts conn;
} explain_args;

static int parse_explain_args(int argc, char **argv, explain_args *a)
{
    enum { OPT_SYSNS = 1, OPT_GRAPH };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"graph", no_argument, NULL, OPT_GRAPH},
        {"system-namespace", required_argument, NULL, OPT_SYSNS},
        {"help", no_argument, NULL, 'h'},
        CLUSTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    a->output = NULL;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'o': a->output = optarg; break;
        case OPT_SYSNS: a->system_namespace = optarg; break;
        case OPT_GRAPH: a->graph = true; break;
        case 'h': explain_usage(stdout); return 0;
        default:
            if (!cluster_opts_take(&a->conn, opt, optarg)) {
                explain_usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "olmv1 explain extension: say which one: olmv1 explain extension NAME\n");
        return CLI_EXIT_USAGE;
    }
    a->name = argv[optind];
    static const char *const formats[] = {"text", "json", NULL}, *const graph_formats[] = {"svg", "dot", "mermaid", NULL};
    if (!a->output)
        a->output = a->graph ? "svg" : "text";
    return cluster_check_output("explain extension", a->output, a->graph ? graph_formats : formats) != 0 ? CLI_EXIT_USAGE
                                                                                                         : -1;
}

/* ------------------------------------------------------------ what blocks */

/* A sentence on what stops the resolver, from its message and the candidates. */
static void blocker(const char *message, const json_t *cands, const resolve_installed *inst, strbuf *out)
{
    if (strstr(message, "in multiple catalogs with the same priority")) {
        strbuf_puts(out, "ambiguity: more than one catalog offers a bundle, at the same priority: give one "
                         "catalog a higher spec.priority, or select one catalog");
        return;
    }
    size_t in_ch = 0, in_range = 0, total = json_array_size(cands);
    size_t i;
    const json_t *c;
    json_array_foreach(cands, i, c) {
        if (json_is_true(json_object_get(c, "inChannels"))) {
            in_ch++;
            if (json_is_true(json_object_get(c, "inRange")))
                in_range++;
        }
    }
    if (total == 0)
        strbuf_puts(out, "the selected catalogs have no bundle of the package");
    else if (in_ch == 0)
        strbuf_puts(out, "channel: no bundle is in the requested channels");
    else if (in_range == 0)
        strbuf_puts(out, "version range: no bundle in the channels matches it");
    else if (inst)
        strbuf_printf(out, "upgrade edges: no bundle in the channels and range is a successor of %s (replaces, "
                           "skips or skipRange); upgradeConstraintPolicy SelfCertified (olmv1 upgrade extension "
                           "--self-certified) allows it anyway",
                      inst->bundle_name);
    else
        strbuf_puts(out, "see the resolver's message");
}

/* ------------------------------------------------------------ OpenShift */

/* The olm.maxOpenShiftVersion verdict on this extension ("blocks", "ok", "error",
 * "unknown" when the cluster version cannot be read), the versions and the
 * Upgradeable condition, as a new object in *out; NULL when the cluster is not
 * OpenShift. */
static int openshift_verdict(kube_client *c, const explain_args *a, json_t **out, olm_error *err)
{
    *out = NULL;
    bool served = false;
    if (kube_group_version_served(c, UPGRADEABLE_OPENSHIFT_API, &served, err) < 0)
        return CLI_EXIT_UNREACHABLE;
    if (!served)
        return 0;
    /* Records and revisions alike (whichever runtime installed it; see olmv1 upgradeable). */
    upgradeable_reconcile_opts o = {.system_namespace = a->system_namespace, .revisions = true};
    upgradeable_inputs in;
    if (upgradeable_inputs_read(c, &o, &in, err) < 0)
        return CLI_EXIT_FAILED;
    if (!in.cluster_version) {
        *out = json_pack("{s:s, s:s}", "verdict", "unknown", "detail",
                         in.version_error ? in.version_error : "the cluster version cannot be read");
        upgradeable_inputs_free(&in);
        return *out ? 0 : cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    upgradeable_result r;
    int rc = 0;
    if (upgradeable_inputs_check(&in, NULL, &r, err) < 0) {
        upgradeable_inputs_free(&in);
        return CLI_EXIT_FAILED;
    }
    const char *verdict = "not installed (no install record)", *detail = "";
    for (size_t i = 0; i < in.n && i < r.nverdicts; i++) {
        if (strcmp(in.exts[i].name, a->name) != 0)
            continue;
        const upgradeable_verdict *v = &r.verdicts[i];
        switch (v->kind) {
        case UPGRADEABLE_INCOMPATIBLE: verdict = "blocks"; detail = v->max; break;
        case UPGRADEABLE_ERROR: verdict = "error"; detail = v->error ? v->error : ""; break;
        case UPGRADEABLE_NO_PROPERTY: verdict = "ok"; detail = "no olm.maxOpenShiftVersion"; break;
        default: verdict = "ok"; detail = v->max; break;
        }
    }
    *out = json_pack("{s:s?, s:s?, s:s, s:s, s:s, s:s}", "clusterVersion", in.cluster_version, "next",
                     r.next[0] ? r.next : NULL, "verdict", verdict, "detail", detail ? detail : "", "upgradeable",
                     r.upgradeable.status, "message", r.upgradeable.message);
    if (!*out)
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    upgradeable_result_free(&r);
    upgradeable_inputs_free(&in);
    return rc;
}

/* ------------------------------------------------------------ printing */

static void print_text(const json_t *ce, const json_t *report)
{
    const json_t *spec = json_object_get(report, "spec");
    printf("ClusterExtension %s: package %s into namespace %s as ServiceAccount %s\n", cluster_str(ce, "metadata.name"),
           cluster_str(spec, "package"), cluster_str(spec, "namespace"), cluster_str(spec, "serviceAccount"));
    printf("  version range: %s\n", *cluster_str(spec, "version") ? cluster_str(spec, "version") : "any");
    printf("  channels:      %s\n", *cluster_str(spec, "channels") ? cluster_str(spec, "channels") : "any");
    printf("  policy:        %s\n", cluster_str(spec, "upgradeConstraintPolicy"));
    printf("  catalogs:      %s\n", cluster_str(spec, "catalogs"));
    const char *inst = cluster_str(report, "installed.bundle");
    if (*inst)
        printf("Installed: %s (%s)\n", inst, cluster_str(report, "installed.version"));
    else
        printf("Installed: nothing yet\n");
    const char *problems = cluster_str(report, "problems");
    printf("Conditions: %s\n", *problems ? problems : "healthy");

    printf("\nCandidates (every bundle of the package in the selected catalogs):\n");
    static const char *const header[] = {"CATALOG", "BUNDLE", "VERSION", "CHANNELS", "EDGE FROM INSTALLED", "DEPRECATED",
                                         "VERDICT"};
    cluster_table t;
    if (cluster_table_init(&t, 7, header) == 0) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(report, "candidates"), i, c) {
            char *chans = cluster_join_strings(json_object_get(c, "channels"), ",");
            const json_t *edge = json_object_get(c, "edge");
            const char *row[] = {cluster_str(c, "catalog"),
                                 cluster_str(c, "bundle"),
                                 cluster_str(c, "version"),
                                 chans,
                                 json_is_null(edge) || !edge ? "-" : *json_string_value(edge) ? json_string_value(edge)
                                                                                               : "none",
                                 cluster_str(c, "deprecation"),
                                 cluster_str(c, "verdict")};
            if (chans)
                cluster_table_add(&t, row);
            free(chans);
        }
        fputs("  ", stdout);
        /* Indent every row by two spaces: print into a buffer first. */
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (mem) {
            cluster_table_print(&t, mem);
            fclose(mem);
            for (char *p = text; p && *p;) {
                char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
                if (p != text)
                    fputs("  ", stdout);
                fwrite(p, 1, n, stdout);
                p += n;
            }
            free(text);
        }
        cluster_table_free(&t);
    }
    printf("\nResolver:\n");
    const char *reasoning = cluster_str(report, "reasoning");
    for (const char *p = reasoning; *p;) {
        size_t n = strcspn(p, "\n");
        printf("  %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
    const json_t *res = json_object_get(report, "resolution");
    if (json_is_true(json_object_get(res, "resolved"))) {
        const char *b = cluster_str(res, "bundle");
        printf("\nVerdict: %s %s (%s) from catalog %s%s%s\n", strcmp(b, inst) == 0 ? "stays at" : "would install", b,
               cluster_str(res, "version"), cluster_str(res, "catalog"),
               *cluster_str(res, "deprecation") ? "; deprecated: " : "", cluster_str(res, "deprecation"));
    } else {
        printf("\nVerdict: blocked: %s\n  what blocks: %s\n", cluster_str(res, "message"), cluster_str(res, "blocker"));
    }
    explain_upgrade_print(json_object_get(report, "upgrade"), stdout);
    const json_t *os = json_object_get(report, "openshift");
    if (os && strcmp(cluster_str(os, "verdict"), "unknown") == 0)
        printf("\nOpenShift: cannot tell whether it blocks the next minor: %s\n", cluster_str(os, "detail"));
    else if (os)
        printf("\nOpenShift %s -> %s: %s%s%s (ClusterOperator olm Upgradeable=%s)\n",
               *cluster_str(os, "clusterVersion") ? cluster_str(os, "clusterVersion") : "?", cluster_str(os, "next"),
               cluster_str(os, "verdict"), *cluster_str(os, "detail") ? ": " : "", cluster_str(os, "detail"),
               cluster_str(os, "upgradeable"));
}

/* ------------------------------------------------------------ run */

static json_t *spec_json(const extension_spec *s, const json_t *selector)
{
    strbuf chans = STRBUF_INIT;
    for (size_t i = 0; i < s->nchannels; i++)
        strbuf_printf(&chans, "%s%s", i ? "," : "", s->channels[i]);
    char *sel = selector ? json_dumps(selector, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "package", s->package, "namespace", s->namespace_,
                          "serviceAccount", s->service_account, "version", s->version ? s->version : "", "channels",
                          strbuf_str(&chans), "upgradeConstraintPolicy",
                          s->self_certified ? "SelfCertified" : "CatalogProvided", "catalogs",
                          sel ? sel : "all (no selector)");
    free(sel);
    strbuf_free(&chans);
    return o;
}

static int build_report(kube_client *c, const explain_args *a, const json_t *ce, json_t *report, olm_error *err)
{
    extension_spec s;
    extension_spec_from_object(ce, &s);
    resolve_installed installed;
    const resolve_installed *inst = extension_installed(ce, &installed);
    const char *inst_name = installed.bundle_name, *inst_version = installed.version;
    json_t *sel = NULL;
    int rc = extension_selector(&s, &sel, err);
    if (rc != 0)
        return rc;
    char *problems = cluster_problems(ce, CLUSTER_KIND_EXTENSION);
    json_t *cands = json_array();
    if (!problems || !cands ||
        json_object_set_new(report, "spec", spec_json(&s, sel)) < 0 ||
        json_object_set_new(report, "installed", json_pack("{s:s, s:s}", "bundle", inst_name, "version",
                                                           inst_version)) < 0 ||
        json_object_set_new(report, "problems", json_string(problems)) < 0) {
        free(problems);
        json_decref(cands);
        json_decref(sel);
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    free(problems);
    json_decref(sel);
    json_object_set_new(report, "candidates", cands);

    catalog_source src;
    if ((rc = catalog_source_open(c, a->conn.catalogd_url, &src, err)) != 0)
        return rc;
    cluster_resolution res;
    strbuf reasoning = STRBUF_INIT;
    rc = extension_resolve(c, &src, &s, inst, &res, &reasoning, err);
    /* The candidates come from whatever was read, whether or not resolution succeeded. */
    resolve_request req = {s.package, s.version, s.channels, s.nchannels,
                           s.self_certified ? RESOLVE_POLICY_SELF_CERTIFIED : RESOLVE_POLICY_CATALOG_PROVIDED,
                           inst};
    olm_error cerr;
    for (size_t i = 0; i < res.set.n; i++)
        if (res.set.items[i].fbc && explain_candidates(res.set.items[i].fbc, res.set.items[i].name, &req, cands,
                                                       &cerr) < 0)
            break;
    json_t *resolution = NULL;
    if (rc == 0) {
        char *v = bundle_version_format(&res.res.version);
        const fbc_deprecation *d = res.res.deprecation;
        const char *dep = NULL;
        for (size_t i = 0; d && i < d->nentries; i++)
            if (strcmp(d->entries[i].schema, "olm.bundle") == 0 && strcmp(d->entries[i].name, res.res.bundle->name) == 0)
                dep = d->entries[i].message;
        resolution = json_pack("{s:b, s:s, s:s, s:s, s:s?, s:s}", "resolved", 1, "bundle", res.res.bundle->name,
                               "version", v ? v : "", "catalog", res.res.catalog->name, "image", res.res.bundle->image,
                               "deprecation", dep ? dep : "");
        free(v);
    } else if (rc == CLI_EXIT_NO_MATCH || rc == CLI_EXIT_NOT_FOUND) {
        strbuf why = STRBUF_INIT;
        blocker(err->msg, cands, inst, &why);
        resolution = json_pack("{s:b, s:s, s:s}", "resolved", 0, "message", err->msg, "blocker", strbuf_str(&why));
        strbuf_free(&why);
    }
    int out_rc = rc;
    if (explain_upgrade_add(report, a->name, &req, &res, err) != 0)
        out_rc = CLI_EXIT_FAILED;
    if ((rc == 0 || resolution) &&
        (!resolution || json_object_set_new(report, "resolution", resolution) < 0 ||
         json_object_set_new(report, "reasoning", json_string(strbuf_str(&reasoning))) < 0))
        out_rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    strbuf_free(&reasoning);
    olm_error gerr;
    if (a->graph && (out_rc == 0 || out_rc == CLI_EXIT_NO_MATCH || out_rc == CLI_EXIT_NOT_FOUND) &&
        explain_graph_write(&res.set, report, s.package, s.channels, s.nchannels, a->output, stdout, &gerr) < 0)
        out_rc = errno == EPIPE ? CLI_EXIT_BROKEN_PIPE : cluster_error(err, CLI_EXIT_FAILED, "%s", gerr.msg);
    cluster_resolution_free(&res);
    catalog_source_close(&src);
    if (out_rc != 0 && out_rc != CLI_EXIT_NO_MATCH && out_rc != CLI_EXIT_NOT_FOUND)
        return out_rc;
    json_t *os = NULL;
    olm_error oerr;
    int orc = openshift_verdict(c, a, &os, &oerr);
    if (orc != 0)
        return cluster_error(err, orc, "%s", oerr.msg);
    if (os)
        json_object_set_new(report, "openshift", os);
    return out_rc;
}

static int run_explain(const void *args, kube_client *c, olm_error *err)
{
    const explain_args *a = args;
    json_t *ce = NULL;
    int rc = extension_get(c, a->name, &ce, err);
    if (rc != 0)
        return rc;
    json_t *report = json_object();
    if (!report) {
        json_decref(ce);
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    rc = build_report(c, a, ce, report, err);
    if (a->graph) {
        /* drawn by build_report, while the catalogs were still in hand */
    } else if (rc == 0 || rc == CLI_EXIT_NO_MATCH || rc == CLI_EXIT_NOT_FOUND) {
        if (strcmp(a->output, "json") == 0) {
            int prc = cluster_print_object(report, "json");
            if (prc != 0)
                rc = cluster_error(err, prc, "writing to stdout failed");
        } else {
            print_text(ce, report);
            if (fflush(stdout) != 0)
                rc = cluster_error(err, CLI_EXIT_FAILED, "writing to stdout failed");
        }
    }
    json_decref(report);
    json_decref(ce);
    return rc;
}

int cmd_explain_extension(int argc, char **argv)
{
    explain_args a = {0};
    int rc = parse_explain_args(argc, argv, &a);
    return rc >= 0 ? rc : cluster_run("explain extension", &a.conn, run_explain, &a);
}
