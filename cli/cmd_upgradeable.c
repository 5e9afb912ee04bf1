/* olmv1 upgradeable: which installed extensions block an OpenShift minor upgrade,
 * computed offline from bundle directories or olm.properties files with the
 * same check operator-controller runs (controller/upgradeable.h). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "semver.h"
#include "upgradeable.h"

#define MAX_EXTENSIONS 256

static void upgradeable_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 upgradeable (--cluster-version VERSION | --to M.m)\n"
            "                         (--bundle NAME=DIR | --properties NAME[:BUNDLE]=FILE) ...\n"
            "                         [-o text|json]\n"
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
            "  -o text|json            output format (default text)\n"
            "\n"
            "Exit 0 when nothing blocks, 1 when an extension blocks or its properties are\n"
            "invalid (errors fail closed), 2 on bad usage or unreadable input.\n");
}

typedef struct ext_arg {
    char *name;   /* points into argv */
    char *bundle; /* owned */
    char *props;  /* owned; NULL when the bundle declares no properties */
    size_t props_len;
} ext_arg;

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *grown = cap < (64u << 20) ? realloc(buf, cap * 2 + 1) : NULL;
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

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
    e->props = read_all(file, &e->props_len);
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

int cmd_upgradeable(int argc, char **argv)
{
    static const struct option opts[] = {
        {"cluster-version", required_argument, NULL, 'c'}, {"to", required_argument, NULL, 't'},
        {"bundle", required_argument, NULL, 'b'},          {"properties", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},          {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static ext_arg exts[MAX_EXTENSIONS];
    const char *cluster = NULL, *to = NULL, *output = "text";
    int n = 0, rc = 2, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'c': cluster = optarg; break;
        case 't': to = optarg; break;
        case 'o': output = optarg; break;
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
    if (optind < argc || (!cluster && !to) || (strcmp(output, "text") != 0 && strcmp(output, "json") != 0)) {
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
