/* olmv1 upgrade extension: moves a ClusterExtension to another version range, channel
 * or upgrade policy, after checking that operator-controller will find a bundle to go
 * to from the installed one; --create-rbac refreshes the installer RBAC for the old and
 * the new bundle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cluster_apply.h"
#include "cluster_extension.h"
#include "cluster_objects.h"
#include "commands.h"
#include "rbac_derive.h"

static void upgrade_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 upgrade extension NAME [--version RANGE] [--channel CHANNEL ...]\n"
            "                     [--self-certified | --catalog-provided] [--create-rbac]\n"
            "                     [--dry-run] [-o yaml|json] [--no-wait | --timeout 5m]\n"
            "                     [--catalogd-url URL] [--kubeconfig FILE] [--context NAME]\n"
            "\n"
            "Changes spec.source.catalog of ClusterExtension NAME and says what it will move to.\n"
            "It is resolved first from the installed bundle, as operator-controller will: a\n"
            "version that is no successor of the installed one (replaces/skips/skipRange) is\n"
            "refused with the controller's message unless --self-certified.  Without options it\n"
            "checks what the current spec resolves to (a newer version in range is picked up by\n"
            "the controller by itself).\n"
            "\n"
            "  --version RANGE         new spec.source.catalog.version (\"\" for any)\n"
            "  --channel CHANNEL       new channels (repeatable; replaces the list; \"\" for any)\n"
            "  --self-certified        upgradeConstraintPolicy SelfCertified: any version, even a\n"
            "                          downgrade\n"
            "  --catalog-provided      upgradeConstraintPolicy CatalogProvided (the default)\n"
            "  --create-rbac           update the installer RBAC of `install --create-rbac` for\n"
            "                          the installed and the new bundle (the old one's objects are\n"
            "                          pruned, the new one's applied).  Done without asking when\n"
            "                          the bundle changes and the ServiceAccount was made by\n"
            "                          `install --create-rbac` (labelled " RBAC_LABEL "=NAME);\n"
            "                          a ServiceAccount made otherwise is never touched\n"
            "  --dry-run               change nothing; print the extension (and RBAC) as it would be\n"
            "  -o, --output FORMAT     print the objects as yaml (default with --dry-run) or json\n"
            EXTENSION_WAIT_HELP
            "  --catalogd-url URL      read catalogd at URL instead of through the API server\n" CLI_KUBECONFIG_HELP
            "\n" CLI_EXIT_CODES_HELP);
}

typedef struct upgrade_args {
    const char *name;
    const char *version;     /* NULL: unchanged */
    const char *channels[EXTENSION_MAX_LIST];
    size_t nchannels;        /* with set_channels: the new list ("" entries dropped) */
    bool set_channels;
    int policy;              /* 0 unchanged, 1 SelfCertified, 2 CatalogProvided */
    bool create_rbac;
    extension_write_opts w;  /* --dry-run, -o, --wait, --no-wait, --timeout */
    cluster_opts conn;
} upgrade_args;

#define CMD "upgrade extension"

static int parse_upgrade_args(int argc, char **argv, upgrade_args *a)
{
    enum { OPT_VERSION = 1, OPT_CHANNEL, OPT_SELF, OPT_CATALOG_PROVIDED, OPT_RBAC };
    static const struct option opts[] = {
        {"version", required_argument, NULL, OPT_VERSION},
        {"channel", required_argument, NULL, OPT_CHANNEL},
        {"self-certified", no_argument, NULL, OPT_SELF},
        {"catalog-provided", no_argument, NULL, OPT_CATALOG_PROVIDED},
        {"create-rbac", no_argument, NULL, OPT_RBAC},
        EXTENSION_WRITE_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        CLUSTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    extension_write_opts_init(&a->w);
    int opt, rc;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_VERSION: a->version = optarg; break;
        case OPT_CHANNEL:
            a->set_channels = true;
            if (*optarg && (rc = extension_spec_add(a->channels, &a->nchannels, EXTENSION_MAX_LIST, optarg,
                                                    "--channel")) >= 0)
                return rc;
            break;
        case OPT_SELF:
        case OPT_CATALOG_PROVIDED:
            if (a->policy && a->policy != (opt == OPT_SELF ? 1 : 2)) {
                fprintf(stderr, "olmv1 " CMD ": --self-certified and --catalog-provided do not go together\n");
                return CLI_EXIT_USAGE;
            }
            a->policy = opt == OPT_SELF ? 1 : 2;
            break;
        case OPT_RBAC: a->create_rbac = true; break;
        case 'h': upgrade_usage(stdout); return 0;
        default:
            if ((rc = extension_write_opts_take(&a->w, &a->conn, CMD, opt, optarg)) != 1) {
                if (rc == 0)
                    upgrade_usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if ((rc = cluster_take_name(argc, argv, CMD, " [--version RANGE]", &a->name)) != 0)
        return rc;
    if ((rc = extension_write_opts_check(&a->w, CMD)) != 0)
        return rc;
    return -1;
}

/* The spec as the flags change it (strings borrowed from `ce` and argv). */
static void changed_spec(const upgrade_args *a, const json_t *ce, extension_spec *s)
{
    extension_spec_from_object(ce, s);
    if (a->version)
        s->version = a->version;
    if (a->set_channels) {
        memcpy(s->channels, a->channels, a->nchannels * sizeof a->channels[0]);
        s->nchannels = a->nchannels;
    }
    if (a->policy)
        s->self_certified = a->policy == 1;
}

/* The merge patch of spec.source.catalog that makes the object match `s`. */
static json_t *catalog_patch(const upgrade_args *a, const extension_spec *s)
{
    json_t *cat = json_object();
    if (!cat)
        return NULL;
    int rc = 0;
    if (a->version)
        rc = json_object_set_new(cat, "version", *a->version ? json_string(a->version) : json_null());
    if (rc == 0 && a->set_channels) {
        json_t *chs = s->nchannels ? json_array() : json_null();
        for (size_t i = 0; chs && s->nchannels && i < s->nchannels; i++)
            if (json_array_append_new(chs, json_string(s->channels[i])) < 0) {
                json_decref(chs);
                chs = NULL;
            }
        rc = chs ? json_object_set_new(cat, "channels", chs) : -1;
    }
    if (rc == 0 && a->policy)
        rc = json_object_set_new(cat, "upgradeConstraintPolicy",
                                 json_string(a->policy == 1 ? "SelfCertified" : "CatalogProvided"));
    json_t *patch = rc == 0 ? json_pack("{s:{s:{s:o}}}", "spec", "source", "catalog", cat) : (json_decref(cat), NULL);
    return patch;
}

/* True when the extension's ServiceAccount was made by `install --create-rbac` for it
 * (RBAC_LABEL=NAME): its RBAC is the CLI's to keep fitting the bundle. */
static bool installer_made_by_cli(kube_client *c, const extension_spec *s)
{
    json_t *sa = NULL;
    olm_error err;
    if (kube_get(c, "v1", "ServiceAccount", s->namespace_, s->service_account, &sa, &err) < 0)
        return false;
    const char *v = json_string_value(json_object_get(json_object_get(json_object_get(sa, "metadata"), "labels"),
                                                      RBAC_LABEL));
    bool ours = v && strcmp(v, s->name) == 0;
    json_decref(sa);
    return ours;
}

/* The image of the installed bundle: from the catalogs, else from the Installed message
 * ("Installed bundle <image> successfully").  Caller frees; NULL when unknown. */
static char *installed_image(const cluster_resolution *res, const json_t *ce, const char *bundle)
{
    for (size_t i = 0; i < res->set.n; i++) {
        const fbc_catalog *c = res->set.items[i].fbc;
        const fbc_bundle *b = c ? fbc_find_bundle(c, cluster_str(ce, "spec.source.catalog.packageName"), bundle) : NULL;
        if (b && b->image)
            return strdup(b->image);
    }
    const char *msg = cluster_str(cluster_condition(ce, "Installed"), "message");
    static const char pre[] = "Installed bundle ", post[] = " successfully";
    size_t n = strlen(msg);
    if (strncmp(msg, pre, sizeof pre - 1) == 0 && n > sizeof pre + sizeof post - 2 &&
        strcmp(msg + n - (sizeof post - 1), post) == 0)
        return strndup(msg + sizeof pre - 1, n - (sizeof pre - 1) - (sizeof post - 1));
    return NULL;
}

/* The installer RBAC for the installed and the target bundle (*rbac, a new array) when
 * --create-rbac asks for it or, the bundle changing, the ServiceAccount is the CLI's;
 * else *rbac stays NULL.  0 or an exit code. */
static int upgrade_rbac(kube_client *c, const upgrade_args *a, const json_t *ce, const extension_spec *s,
                        const resolve_installed *installed, const extension_target *t, json_t **rbac, olm_error *err)
{
    const fbc_bundle *target = t->res.res.bundle;
    bool moves = !installed || strcmp(installed->bundle_name, target->name) != 0;
    if (!a->create_rbac && !(moves && installer_made_by_cli(c, s)))
        return 0;
    if (!a->create_rbac)
        fprintf(stderr, "serviceaccount %s/%s was made by olmv1 install --create-rbac: extending its RBAC for %s (%s)\n",
                s->namespace_, s->service_account, target->name, t->version);
    const char *images[2] = {t->image, NULL};
    size_t nimages = 1;
    char *old_image = NULL;
    if (installed && moves) {
        if (!(old_image = installed_image(&t->res, ce, installed->bundle_name)))
            return cluster_error(err, CLI_EXIT_NOT_FOUND, "cannot tell the image of the installed bundle %s: "
                                                          "no selected catalog has it any more",
                                 installed->bundle_name);
        images[nimages++] = old_image;
    }
    int rc = extension_rbac_objects(c, s, images, nimages, target->name, rbac, err);
    free(old_image);
    return rc;
}

static int run_upgrade(const void *args, kube_client *c, olm_error *err)
{
    const upgrade_args *a = args;
    json_t *ce = NULL, *rbac = NULL, *patch = NULL, *objects = NULL, *preview = NULL;
    extension_target t = {0};
    int rc = extension_get(c, a->name, &ce, err);
    if (rc != 0)
        return rc;
    extension_spec s;
    changed_spec(a, ce, &s);
    if ((rc = extension_spec_check(&s, err)) != 0)
        goto out;
    resolve_installed buf;
    const resolve_installed *installed = extension_installed(ce, &buf);
    const char *inst_name = buf.bundle_name, *inst_version = buf.version;
    if ((rc = extension_target_resolve(c, a->conn.catalogd_url, &s, installed, &t, err)) != 0)
        goto out;
    const fbc_bundle *target = t.res.res.bundle;
    if (installed && strcmp(inst_name, target->name) == 0)
        fprintf(stderr, "%s stays at %s (%s): nothing newer matches\n", a->name, inst_name, inst_version);
    else
        fprintf(stderr, "%s: %s%s%s -> %s (%s) from catalog %s\n", a->name, installed ? inst_name : "(nothing installed)",
                installed ? " " : "", installed ? inst_version : "", target->name, t.version, t.res.res.catalog->name);
    if ((rc = upgrade_rbac(c, a, ce, &s, installed, &t, &rbac, err)) != 0)
        goto out;
    if (!(patch = catalog_patch(a, &s)) || !(objects = json_array())) {
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        goto out;
    }
    if (a->w.dry_run) {
        preview = extension_object(&s);
        if (!preview || (rbac && json_array_extend(objects, rbac) < 0) || json_array_append(objects, preview) < 0)
            rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        else if ((rc = cluster_print_objects(objects, a->w.output)) != 0)
            cluster_error(err, rc, "writing to stdout failed");
        goto out;
    }
    if (rbac && (rc = extension_apply_rbac(c, a->name, rbac, a->w.output != NULL, err)) != 0)
        goto out;
    char *text = json_dumps(patch, JSON_COMPACT);
    json_t *updated = NULL;
    rc = text ? kube_patch(c, CLUSTER_OLM_API_VERSION, "ClusterExtension", NULL, a->name, NULL, KUBE_PATCH_MERGE, text,
                           &updated, err)
              : (olm_error_set(err, "out of memory"), KUBE_ERROR);
    free(text);
    if (rc < 0) {
        rc = cluster_wrap(err, cluster_exit_from_kube(rc), "updating clusterextension %s", a->name);
        goto out;
    }
    rc = 0;
    if (a->w.output) {
        json_t *one = json_array();
        json_object_del(json_object_get(updated, "metadata"), "managedFields");
        if (!one || (rbac && json_array_extend(one, rbac) < 0) || json_array_append(one, updated) < 0)
            rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        else if ((rc = cluster_print_objects(one, a->w.output)) != 0)
            cluster_error(err, rc, "writing to stdout failed");
        json_decref(one);
    } else {
        printf("clusterextension %s configured\n", a->name);
    }
    json_decref(updated);
    if (rc == 0)
        rc = extension_settle(c, a->name, t.version, &a->w, err);
out:
    json_decref(ce);
    json_decref(rbac);
    json_decref(patch);
    json_decref(objects);
    json_decref(preview);
    extension_target_free(&t);
    return rc;
}

int cmd_upgrade_extension(int argc, char **argv)
{
    upgrade_args a = {0};
    int rc = parse_upgrade_args(argc, argv, &a);
    return rc >= 0 ? rc : cluster_run(CMD, &a.conn, run_upgrade, &a);
}
