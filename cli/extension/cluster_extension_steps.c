/* cluster_extension_steps: the steps install, upgrade, uninstall and explain share
 * (cluster_extension.h): reading the extension, resolving what it moves to, applying the
 * installer RBAC, and the options of the commands that change it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_apply.h"
#include "cluster_extension.h"
#include "cluster_objects.h"
#include "rbac_derive.h"

int extension_get(kube_client *c, const char *name, json_t **ce, olm_error *err)
{
    *ce = NULL;
    int rc = kube_get(c, CLUSTER_OLM_API_VERSION, "ClusterExtension", NULL, name, ce, err);
    return rc < 0 ? cluster_exit_from_kube(rc) : 0;
}

const resolve_installed *extension_installed(const json_t *ce, resolve_installed *buf)
{
    buf->bundle_name = cluster_str(ce, "status.install.bundle.name");
    buf->version = cluster_str(ce, "status.install.bundle.version");
    return *buf->bundle_name ? buf : NULL;
}

int extension_target_resolve(kube_client *c, const char *catalogd_url, const extension_spec *s,
                             const resolve_installed *installed, extension_target *t, olm_error *err)
{
    memset(t, 0, sizeof *t);
    int rc = catalog_source_open(c, catalogd_url, &t->src, err);
    if (rc != 0)
        return rc;
    if ((rc = extension_resolve(c, &t->src, s, installed, &t->res, NULL, err)) != 0)
        return rc;
    if (!(t->version = bundle_version_format(&t->res.res.version)))
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    t->image = t->res.res.bundle->image ? t->res.res.bundle->image : "";
    return 0;
}

void extension_target_free(extension_target *t)
{
    free(t->version);
    cluster_resolution_free(&t->res);
    catalog_source_close(&t->src);
    memset(t, 0, sizeof *t);
}

int extension_apply_rbac(kube_client *c, const char *name, const json_t *rbac, bool quiet, olm_error *err)
{
    size_t i;
    const json_t *o;
    json_array_foreach(rbac, i, o) {
        bool created = false;
        int rc = cluster_apply_labelled(c, o, RBAC_LABEL, name, &created, err);
        if (rc != 0)
            return rc;
        char what[512];
        cluster_describe(o, what, sizeof what);
        if (!quiet)
            printf("%s %s\n", what, created ? "created" : "configured");
    }
    return 0;
}

void extension_write_opts_init(extension_write_opts *w)
{
    memset(w, 0, sizeof *w);
    w->wait = true;
    w->timeout = EXTENSION_DEFAULT_TIMEOUT;
}

int extension_write_opts_take(extension_write_opts *w, cluster_opts *conn, const char *cmd, int opt, const char *arg)
{
    switch (opt) {
    case EXTENSION_OPT_DRY_RUN: w->dry_run = true; return 1;
    case 'o': w->output = arg; return 1;
    case EXTENSION_OPT_WAIT:
    case EXTENSION_OPT_NO_WAIT:
        if (w->wait_flag && w->wait_flag != opt) {
            fprintf(stderr, "olmv1 %s: --wait and --no-wait do not go together\n", cmd);
            return CLI_EXIT_USAGE;
        }
        w->wait_flag = opt;
        w->wait = opt == EXTENSION_OPT_WAIT;
        return 1;
    case EXTENSION_OPT_TIMEOUT: return cluster_take_timeout(cmd, arg, &w->timeout) == 0 ? 1 : CLI_EXIT_USAGE;
    default: return cluster_opts_take(conn, opt, arg);
    }
}

int extension_write_opts_check(extension_write_opts *w, const char *cmd)
{
    static const char *const formats[] = {"yaml", "json", NULL};
    if (w->output && cluster_check_output(cmd, w->output, formats) != 0)
        return CLI_EXIT_USAGE;
    if (w->dry_run && w->wait_flag == EXTENSION_OPT_WAIT) {
        fprintf(stderr, "olmv1 %s: --dry-run and --wait do not go together\n", cmd);
        return CLI_EXIT_USAGE;
    }
    if (w->dry_run) {
        w->wait = false;
        if (!w->output)
            w->output = "yaml";
    }
    return 0;
}

int extension_settle(kube_client *c, const char *name, const char *want_version, const extension_write_opts *w,
                     olm_error *err)
{
    if (w->wait)
        return cluster_wait_installed(c, name, want_version, w->timeout, false, err);
    fprintf(stderr, "clusterextension %s: requested%s%s, not waited for (--no-wait); watch with olmv1 get extension %s\n",
            name, want_version ? " version " : "", want_version ? want_version : "", name);
    return 0;
}
