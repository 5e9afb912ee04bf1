/* clusterextension_steps: resolve, pull, render, identity, preflight and apply for one
 * ClusterExtension reconcile (see clusterextension.h for the order). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "clusterextension_internal.h"
#include "olm_time.h"
#include "render.h"
#include "strbuf.h"
#include "olm_log.h"

int clusterextension_set_target(clusterextension_run *run, const char *name, const char *version, const char *image,
                                const char *package)
{
    clusterextension_target_free(&run->target);
    run->target.name = strdup(name ? name : "");
    run->target.version = strdup(version ? version : "");
    run->target.image = strdup(image ? image : "");
    run->target.package = strdup(package ? package : "");
    if (!run->target.name || !run->target.version || !run->target.image || !run->target.package) {
        clusterextension_target_free(&run->target);
        return clusterextension_fail(run, CE_PROGRESS_RETRYING, "out of memory");
    }
    run->have_target = true;
    return 0;
}

/* ------------------------------------------------------------ resolve (§2.2 step 4) */

static int step_resolve(clusterextension_run *run);

int clusterextension_step_resolve(clusterextension_run *run)
{
    double t0 = olm_time_mono_ms();
    int rc = step_resolve(run);
    if (rc == 0)
        clusterextension_debug_step(run, "resolve", t0, "bundle %s version %s from catalog %s", run->target.name,
                                    run->target.version,
                                    run->resolved && run->res.catalog ? run->res.catalog->name : "(installed)");
    else
        clusterextension_debug_step(run, "resolve", t0, "failed");
    return rc;
}

static int step_resolve(clusterextension_run *run)
{
    const json_t *cat = bundle_json_path(run->ce, "spec.source.catalog");
    const char *pkg = clusterextension_str(run->ce, "spec.source.catalog.packageName");
    const char *range = clusterextension_str(run->ce, "spec.source.catalog.version");
    const char *policy = clusterextension_str(run->ce, "spec.source.catalog.upgradeConstraintPolicy");
    const json_t *chans = json_object_get(cat, "channels");
    size_t nch = json_array_size(chans);
    const char **channels = calloc(nch ? nch : 1, sizeof *channels);
    if (!channels)
        return clusterextension_fail(run, CE_PROGRESS_RETRYING, "out of memory");
    for (size_t i = 0; i < nch; i++)
        channels[i] = json_string_value(json_array_get(chans, i)) ? json_string_value(json_array_get(chans, i)) : "";

    resolve_installed inst = {run->rec.bundle_name, run->rec.bundle_version};
    resolve_request req = {
        .package = pkg,
        .version_range = range,
        .channels = channels,
        .nchannels = nch,
        .policy = strcmp(policy, "SelfCertified") == 0 ? RESOLVE_POLICY_SELF_CERTIFIED : RESOLVE_POLICY_CATALOG_PROVIDED,
        .installed = clusterextension_installed(run) ? &inst : NULL,
    };
    olm_error err;
    json_t *catalogs = kube_informer_list(run->r->cfg.catalogs);
    int rc = catalogs ? 0 : olm_error_set(&err, "out of memory");
    bool selector_ok = true;
    if (rc == 0 && catalog_client_collect(run->r->cfg.catalog_client, catalogs, json_object_get(cat, "selector"), pkg,
                                          &run->cats, &err) != 0) {
        rc = -1;
        selector_ok = false;
    }
    json_decref(catalogs);
    if (rc == 0)
        rc = resolve_bundle(&req, run->cats.items, run->cats.n, &run->res, NULL, &err);
    free(channels);
    run->deprecation_known = true;
    if (rc == 0) {
        run->resolved = true;
        char *ver = bundle_version_format(&run->res.version);
        if (!ver)
            return clusterextension_fail(run, CE_PROGRESS_RETRYING, "out of memory");
        const fbc_bundle *b = run->res.bundle;
        if (!b->image || !*b->image) {
            free(ver);
            return clusterextension_fail(run, CE_PROGRESS_RETRYING, "bundle \"%s\" has no image", b->name);
        }
        rc = clusterextension_set_target(run, b->name, ver, b->image, pkg);
        free(ver);
        return rc;
    }
    /* handleResolutionError */
    if (!clusterextension_installed(run))
        return clusterextension_fail(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    if (*range && strcmp(range, run->rec.bundle_version) != 0)
        return clusterextension_fail(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    if (!selector_ok || run->cats.matched > 0)
        return clusterextension_fail(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    /* Every matching catalog is gone: keep what is installed. */
    return clusterextension_set_target(run, run->rec.bundle_name, run->rec.bundle_version, run->rec.bundle_image, run->rec.package);
}

/* ------------------------------------------------------------ identity */

/* The identity bundle content is applied with: spec.serviceAccount when named (a client
 * with a token from the cache: least privilege, as the product documentation describes),
 * else operator-controller's own, as upstream OLM v1 does.  The namespace and the
 * ServiceAccount are checked separately so the message says which one is missing. */
static int namespace_get(kube_client *admin, const char *ns, olm_error *err)
{
    json_t *obj = NULL;
    int rc = kube_get(admin, "v1", "Namespace", NULL, ns, &obj, err);
    json_decref(obj);
    return rc;
}

static int sa_client(clusterextension_run *run, olm_error *err)
{
    const char *ns = clusterextension_str(run->ce, "spec.namespace");
    const char *sa = clusterextension_service_account(run);
    kube_client *admin = run->r->cfg.admin;
    kube_client_free(run->as_sa);
    run->as_sa = NULL;
    run->actx.as_sa = NULL;
    clusterextension_token_free(&run->token);
    int rc;
    if (!*sa) {
        rc = namespace_get(admin, ns, err);
        if (rc == KUBE_NOT_FOUND)
            return olm_error_set(err, "namespace \"%s\" not found: create it", ns);
        if (rc < 0)
            return -1;
        run->actx.as_sa = admin;
        return 0;
    }
    /* The namespace is read only to say which of the two is missing: a TokenRequest of a
     * ServiceAccount in a missing namespace is a NotFound too.  Reading it on every
     * reconcile was one request per extension of each restart, for nothing (a cached token
     * of a ServiceAccount deleted since is rejected with 401, and the retry comes here). */
    rc = clusterextension_token_cache_get(run->r->cfg.tokens, ns, sa, &run->token, err);
    if (rc == KUBE_NOT_FOUND) {
        olm_error nerr;
        if (namespace_get(admin, ns, &nerr) == KUBE_NOT_FOUND)
            return olm_error_set(err, "namespace \"%s\" not found: create it and the ServiceAccount \"%s\" in it", ns,
                                 sa);
        return olm_error_set(err, "service account \"%s\" not found in namespace \"%s\": create it with the RBAC "
                                  "the bundle needs", sa, ns);
    }
    if (rc < 0)
        return olm_error_wrap(err, "requesting a token for service account \"%s\" in namespace \"%s\"", sa, ns);
    kube_client_options co = {.user_agent = "operator-controller"};
    run->as_sa = kube_client_new_for_token(admin, run->token.value, &co, err);
    if (!run->as_sa)
        return -1;
    run->actx.as_sa = run->as_sa;
    return 0;
}

int clusterextension_identity(void *data, olm_error *err)
{
    return sa_client(data, err);
}

/* Without spec.serviceAccount, a refusal is operator-controller's own: say how to give it
 * the rights, or how to name an identity that has them. */
static void explain_own_identity_refused(const clusterextension_run *run, olm_error *err)
{
    if (*clusterextension_service_account(run) || !strstr(err->msg, " is forbidden: "))
        return;
    size_t n = strlen(err->msg);
    if (run->r->cfg.ignore_service_account)
        snprintf(err->msg + n, sizeof err->msg - n,
                 "; operator-controller ignores spec.serviceAccount (--ignore-service-account) and applies the bundle "
                 "with its own identity: grant it upstream's rights (kubectl apply -f config/rbac-upstream-rights)");
    else
        snprintf(err->msg + n, sizeof err->msg - n,
                 "; spec.serviceAccount is not set, so operator-controller applies the bundle with its own identity: "
                 "grant it upstream's rights (kubectl apply -f config/rbac-upstream-rights), or name a ServiceAccount "
                 "with the RBAC the bundle needs in spec.serviceAccount");
}

/* After a failed apply: was it because the apiserver no longer accepts the cached
 * token (the ServiceAccount was re-created, the signing key rotated)?  Then the token
 * is dropped and a fresh one minted; 1 means "retry once". */
static int sa_token_rejected(clusterextension_run *run)
{
    if (!run->as_sa || kube_client_unauthorized_count(run->as_sa) == 0)
        return 0;
    const char *ns = clusterextension_str(run->ce, "spec.namespace"), *sa = clusterextension_service_account(run);
    olm_log(OLM_LOG_INFO, "clusterExtension", run->name,
            "the token of ServiceAccount %s/%s was rejected (HTTP 401); retrying with a new one", ns, sa);
    clusterextension_token_cache_invalidate(run->r->cfg.tokens, ns, sa, run->token.value);
    olm_error err;
    if (sa_client(run, &err) != 0) {
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "%s", err.msg);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ preflight */

static int crd_preflight(clusterextension_run *run, json_t *objects, olm_error *err)
{
    const char *enf = clusterextension_str(run->ce, "spec.install.preflight.crdUpgradeSafety.enforcement");
    if (strcmp(enf, "None") == 0 || !run->r->cfg.crd_check)
        return 0;
    size_t i;
    json_t *o;
    json_array_foreach(objects, i, o) {
        if (strcmp(bundle_json_str(o, "kind"), "CustomResourceDefinition") != 0)
            continue;
        const char *crd = bundle_json_str(o, "metadata.name");
        json_t *existing = NULL;
        if (!run->actx.as_sa && sa_client(run, err) != 0)
            return -1;
        int rc = applier_get(&run->actx, "apiextensions.k8s.io/v1", "CustomResourceDefinition", NULL, crd,
                             &existing, err);
        if (rc == KUBE_NOT_FOUND)
            continue;
        if (rc < 0)
            return olm_error_wrap(err, "preflight: reading CRD \"%s\"", crd);
        rc = run->r->cfg.crd_check(existing, o, err);
        json_decref(existing);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ install */

static bool same_objects(const install_record *rec, json_t *objects)
{
    if (rec->nobjects != json_array_size(objects))
        return false;
    for (size_t i = 0; i < rec->nobjects; i++) {
        const install_object_ref *r = &rec->objects[i];
        bool found = false;
        size_t j;
        json_t *o;
        json_array_foreach(objects, j, o) {
            if (strcmp(bundle_json_str(o, "kind"), r->kind) == 0 && strcmp(bundle_json_str(o, "metadata.name"), r->name) == 0 &&
                strcmp(bundle_json_str(o, "metadata.namespace"), r->namespace_ ? r->namespace_ : "") == 0) {
                found = true;
                break;
            }
        }
        if (!found)
            return false;
    }
    return true;
}

static bool target_is_installed(const clusterextension_run *run)
{
    return clusterextension_installed(run) && strcmp(run->target.name, run->rec.bundle_name) == 0 &&
           strcmp(run->target.version, run->rec.bundle_version) == 0;
}

static int render(clusterextension_run *run, const char *dir, json_t **objects, char **properties)
{
    olm_error err;
    bundle b = {0};
    if (bundle_load_dir(dir, &b, &err) != 0)
        return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    const json_t *config = NULL;
    if (strcmp(clusterextension_str(run->ce, "spec.config.configType"), "Inline") == 0)
        config = bundle_json_path(run->ce, "spec.config.inline");
    const char *ns = clusterextension_str(run->ce, "spec.namespace");
    bundle_config cfg = {0};
    bundle_config_gates gates = {.watch_namespace = !run->r->cfg.no_watch_namespace,
                                 .deployment_config = !run->r->cfg.no_deployment_config};
    if (bundle_config_validate_gated(bundle_install_modes(b.csv), ns, config, gates, &cfg, &err) != 0) {
        bundle_free(&b);
        return clusterextension_fail_bundle(run, CE_PROGRESS_INVALID_CONFIG, "%s", err.msg);
    }
    render_cert_provider provider;
    if (clusterextension_cert_provider(run, &b, &provider) != 0) {
        bundle_free(&b);
        return -1;
    }
    render_options ro = {
        .install_namespace = ns,
        .watch_namespace = cfg.watch_namespace,
        .deployment_config = cfg.deployment_config,
        .cert_provider = provider,
    };
    int rc = render_bundle(&b, &ro, objects, &err);
    const char *props =
        json_string_value(json_object_get(json_object_get(json_object_get(b.csv, "metadata"), "annotations"),
                                          "olm.properties"));
    *properties = rc == 0 ? strdup(props ? props : "[]") : NULL;
    run->no_properties = props == NULL;
    bundle_config_free(&cfg);
    bundle_free(&b);
    if (rc != 0)
        return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    if (!*properties) {
        json_decref(*objects);
        *objects = NULL;
        return clusterextension_fail(run, CE_PROGRESS_RETRYING, "out of memory");
    }
    return 0;
}

/* Maintain mode (§2.2 step 5): the image of the installed bundle cannot be pulled, so
 * nothing is applied and the installed bundle stays.  Its objects are still probed (read as
 * a repair would read them: Available stays current) and watched: the drift watcher gets a
 * current token, or its watches would end when the old one expires (best effort; a failure
 * here changes nothing about the outcome, and Available is then left as it was). */
static int maintain(clusterextension_run *run)
{
    free(run->message);
    run->message = NULL;
    run->progress = CE_PROGRESS_SUCCEEDED;
    /* BoxcutterRuntime: the installed revision's controller keeps its objects as they are. */
    if (run->r->cfg.boxcutter)
        return 0;
    olm_error err;
    if ((!run->r->cfg.no_available_condition || run->r->cfg.drift) && sa_client(run, &err) != 0)
        return 0;
    if (!run->r->cfg.no_available_condition)
        clusterextension_probe_recorded(run);
    clusterextension_drift_post(run);
    return 0;
}

/* Applies the bundle, or (same bundle, same objects) repairs drift.  0, or -1 with err
 * set; `objects` and `properties` stay the caller's. */
static int put_on_cluster(clusterextension_run *run, json_t *objects, const char *properties, olm_error *err)
{
    if (target_is_installed(run) && strcmp(run->target.image, run->rec.bundle_image) == 0 &&
        same_objects(&run->rec, objects)) {
        int n = applier_repair(&run->actx, &run->rec, objects, err);
        if (n < 0 || applier_record_set_properties(&run->actx, &run->rec, properties, err) < 0)
            return -1;
        atomic_fetch_add(&run->r->repaired, (uint64_t)n);
        if (n > 0)
            olm_log(OLM_LOG_INFO, "clusterExtension", run->name, "drift repaired (%d objects)", n);
        /* Best effort: without it the next restart reads those objects, nothing worse. */
        uint64_t *hashes = clusterextension_content_hashes(run);
        olm_error herr;
        if (applier_record_set_hashes(&run->actx, &run->rec, hashes, n > 0, &herr) < 0)
            olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "keeping the content hashes in the install record: %s",
                    herr.msg);
        free(hashes);
        return 0;
    }
    applier_bundle ab = {
        .name = run->target.name,
        .version = run->target.version,
        .image = run->target.image,
        .package = run->target.package,
        .properties = properties,
    };
    install_record next = {0};
    int rc = applier_apply(&run->actx, &ab, objects, run->have_rec ? &run->rec : NULL, &next, err);
    /* A record came back also when only the prune failed: the new bundle is installed
     * and the status must say so, not name the one before until the retry. */
    if (next.extension) {
        if (run->have_rec)
            install_record_free(&run->rec);
        run->rec = next;
        run->have_rec = true;
        run->installed_changed = true;
    }
    return rc != 0 ? -1 : 0;
}

/* BoxcutterRuntime: the objects become a ClusterObjectSet revision, which its controller rolls
 * out; nothing is applied here.  The CRD preflight reads the installed CRDs with the identity
 * the default mode applies with (spec.serviceAccount when named: least privilege), and is not
 * run for revision 1 made from an existing install.  Takes `objects` and `properties`. */
static int install_revision(clusterextension_run *run, json_t *objects, char *properties)
{
    olm_error err;
    double t0 = olm_time_mono_ms();
    int rc = 0;
    if (!run->migrating) {
        rc = sa_client(run, &err);
        if (rc == 0)
            rc = crd_preflight(run, objects, &err);
        if (rc != 0)
            explain_own_identity_refused(run, &err);
    }
    if (rc == 0)
        rc = clusterextension_revision_put(run, objects, run->no_properties ? NULL : properties, &err);
    clusterextension_debug_step(run, "revision", t0, rc != 0 ? "failed" : NULL);
    json_decref(objects);
    free(properties);
    if (rc != 0)
        return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    run->progress = CE_PROGRESS_SUCCEEDED;
    return 0;
}

int clusterextension_step_install(clusterextension_run *run)
{
    clusterextension_reconciler *r = run->r;
    olm_error err;
    oci_ref ref;
    if (oci_ref_parse(run->target.image, &ref, &err) != 0)
        return clusterextension_fail_bundle(run, CE_PROGRESS_BLOCKED, "error parsing image reference \"%s\": %s",
                              run->target.image, err.msg);
    oci_ref_free(&ref);
    oci_pull_result pr = {0};
    double t0 = olm_time_mono_ms();
    if (oci_pull_cached(r->bundle_cache, run->name, run->target.image, &r->cfg.pull, &pr, &err) != 0) {
        clusterextension_debug_step(run, "pull", t0, "%s failed", run->target.image);
        if (target_is_installed(run) && !run->migrating)
            return maintain(run);
        return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    }
    clusterextension_debug_step(run, "pull", t0, "%s", run->target.image);
    json_t *objects = NULL;
    char *properties = NULL;
    t0 = olm_time_mono_ms();
    int rc = render(run, pr.dir, &objects, &properties);
    oci_pull_result_free(&pr);
    clusterextension_debug_step(run, "render", t0, rc == 0 ? "%zu objects" : "failed", json_array_size(objects));
    if (rc != 0)
        return -1;
    if (r->cfg.boxcutter)
        return install_revision(run, objects, properties);
    t0 = olm_time_mono_ms();
    /* The ServiceAccount's client (a token) is made by the first request that needs it: the
     * CRD preflight's read, or the applier's (applier_ctx.identity).  A repair that finds
     * every object as the apply left it needs none, so a restart mints no token.  A
     * ServiceAccount deleted since is then noticed by the next request that needs it, as it
     * already was while a cached token lasted. */
    run->actx.identity = clusterextension_identity;
    run->actx.identity_data = run;
    if (crd_preflight(run, objects, &err) != 0) {
        explain_own_identity_refused(run, &err);
        clusterextension_debug_step(run, "preflight", t0, "failed");
        json_decref(objects);
        free(properties);
        return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    }
    clusterextension_debug_step(run, "preflight", t0, NULL);
    t0 = olm_time_mono_ms();
    rc = put_on_cluster(run, objects, properties, &err);
    if (rc != 0 && sa_token_rejected(run))
        rc = put_on_cluster(run, objects, properties, &err);
    clusterextension_debug_step(run, "apply", t0, rc != 0 ? "failed" : run->installed_changed ? "installed" : "in place");
    json_decref(objects);
    free(properties);
    if (rc != 0) {
        explain_own_identity_refused(run, &err);
        return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING, "%s", err.msg);
    }
    run->progress = CE_PROGRESS_SUCCEEDED;
    run->probed = !run->r->cfg.no_available_condition; /* the applier showed clusterextension_observe every object */
    clusterextension_drift_post(run);
    return 0;
}
