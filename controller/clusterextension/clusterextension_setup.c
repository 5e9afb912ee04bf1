/* The ClusterExtension controller's wiring (clusterextension_controller.h): informer events
 * into the work queue, the drift watcher's callbacks, and what the parts are started with.
 * Which updates count, what the cache keeps and the metrics text are in
 * clusterextension_controller.c. */
#include <stdarg.h>
#include <stdlib.h>

#include "clusterextension_controller.h"
#include "kube_object.h"
#include "olm_log.h"

#define CE_PATH "/apis/olm.operatorframework.io/v1/clusterextensions"
#define CC_PATH "/apis/olm.operatorframework.io/v1/clustercatalogs"
#define COS_PATH "/apis/olm.operatorframework.io/v1/clusterobjectsets"
/* The revisions an extension owns (revision.h labels them so). */
#define COS_SELECTOR "olm.operatorframework.io/owner-kind=ClusterExtension"

/* ------------------------------------------------------------ events → queue */

static void enqueue_key(clusterextension_controller *c, const char *key)
{
    olm_error err;
    if (c->wq && !c->rt->stopping && kube_workqueue_add(c->wq, key, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", key, "could not queue: %s", err.msg);
}

static void enqueue_obj(clusterextension_controller *c, const json_t *obj)
{
    char *key = kube_object_key(obj);
    if (key)
        enqueue_key(c, key);
    free(key);
}

static void enqueue_all(clusterextension_controller *c)
{
    if (!c->extensions)
        return;
    json_t *all = kube_informer_list(c->extensions);
    size_t i;
    json_t *o;
    json_array_foreach(all, i, o) enqueue_obj(c, o);
    json_decref(all);
}

static void extension_added(json_t *obj, void *data)
{
    enqueue_obj(data, obj);
}

static void extension_updated(json_t *old_obj, json_t *new_obj, void *data)
{
    if (clusterextension_update_needs_reconcile(old_obj, new_obj))
        enqueue_obj(data, new_obj);
}

static void extension_deleted(json_t *obj, void *data)
{
    enqueue_obj(data, obj);
}

static void catalog_added(json_t *obj, void *data)
{
    (void)obj;
    enqueue_all(data);
}

static void catalog_updated(json_t *old_obj, json_t *new_obj, void *data)
{
    if (catalog_resolution_inputs_changed(old_obj, new_obj))
        enqueue_all(data);
}

static void catalog_deleted(json_t *obj, void *data)
{
    clusterextension_controller *c = data;
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    if (name && c->cc)
        catalog_client_forget(c->cc, name);
    enqueue_all(c);
}

/* BoxcutterRuntime: a revision changed (created, rolled out, became available or not,
 * archived, deleted): its extension's status follows it (upstream's Owns(ClusterObjectSet)). */
static void revision_event(const json_t *obj, void *data)
{
    const char *owner = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), "olm.operatorframework.io/owner-name"));
    if (owner && *owner)
        enqueue_key(data, owner);
}

static void revision_added(json_t *obj, void *data)
{
    revision_event(obj, data);
}

static void revision_updated(json_t *old_obj, json_t *new_obj, void *data)
{
    if (clusterextension_revision_update_needs_reconcile(old_obj, new_obj))
        revision_event(new_obj, data);
}

static void revision_deleted(json_t *obj, void *data)
{
    revision_event(obj, data);
}

/* A failure the watch gets past by itself (a relist after 410 Gone, a restarting apiserver) is
 * a warning; one that needs someone to act (RBAC, a missing CRD, a lost event) an error.  The
 * controller's informers share this handler: only the one reporting says transient, and only
 * while it reports (loop thread), so asking each of them is asking that one. */
static void on_watch_error(const char *msg, void *data)
{
    const clusterextension_controller *c = data;
    bool transient = kube_informer_error_is_transient(c->catalogs) ||
                     kube_informer_error_is_transient(c->extensions) ||
                     kube_informer_error_is_transient(c->revisions) ||
                     kube_informer_error_is_transient(c->service_accounts);
    olm_log(transient ? OLM_LOG_WARN : OLM_LOG_ERROR, "clusterExtension", NULL, "watch: %s", msg);
}

static void extensions_synced(void *data)
{
    clusterextension_controller *c = data;
    olm_log(OLM_LOG_INFO, "clusterExtension", NULL, "ClusterExtension cache synced (%zu)",
            kube_informer_count(c->extensions));
}

static void catalogs_synced(void *data)
{
    enqueue_all(data); /* resolutions that ran before the catalogs were known saw none */
}

static void pull_secret_loaded(void *data)
{
    enqueue_all(data); /* an extension that failed for want of credentials retries now */
}

/* ------------------------------------------------------------ drift */

static void drift_enqueue(const char *extension, uint64_t delay_ms, void *data)
{
    clusterextension_controller *c = data;
    olm_error err;
    if (c->wq && !c->rt->stopping && kube_workqueue_add_after(c->wq, extension, delay_ms, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", extension, "could not queue: %s", err.msg);
}

static void drift_token_rejected(const char *ns, const char *sa, const char *token, void *data)
{
    clusterextension_controller *c = data;
    if (c->tokens)
        clusterextension_token_cache_invalidate(c->tokens, ns, sa, token);
}

static void drift_log(const char *extension, const char *line, void *data)
{
    (void)data;
    olm_log(OLM_LOG_WARN, "clusterExtension", extension, "%s", line);
}

static void stop_drift(void *obj, void (*stopped)(void *part), void *part)
{
    drift_watcher_stop(obj, stopped, part);
}

/* ------------------------------------------------------------ start and stop */

static int start_informers(clusterextension_controller *c, const kube_config *cfg, bool boxcutter, olm_error *err)
{
    /* Nothing reads managedFields from these caches. */
    kube_watch_options cco = {.path = CC_PATH, .drop_managed_fields = true};
    kube_informer_handlers cch = {catalog_added, catalog_updated, catalog_deleted, catalogs_synced, on_watch_error};
    if (!(c->catalogs = kube_informer_new(c->rt->uc, cfg, &cco, &cch, c, err)))
        return -1;
    daemon_runtime_own_informer(c->rt, &c->catalogs);
    kube_watch_options ceo = {.path = CE_PATH, .drop_managed_fields = true, .transform = clusterextension_cache_form};
    kube_informer_handlers ceh = {extension_added, extension_updated, extension_deleted, extensions_synced,
                                  on_watch_error};
    if (!(c->extensions = kube_informer_new(c->rt->uc, cfg, &ceo, &ceh, c, err)))
        return -1;
    daemon_runtime_own_informer(c->rt, &c->extensions);
    if (!boxcutter)
        return 0;
    /* Only what the event handlers read: the owner label (and the watch's bookkeeping). */
    kube_watch_options coso = {.path = COS_PATH, .label_selector = COS_SELECTOR, .drop_managed_fields = true,
                               .transform = clusterextension_revision_cache_form};
    kube_informer_handlers cosh = {revision_added, revision_updated, revision_deleted, NULL, on_watch_error};
    if (!(c->revisions = kube_informer_new(c->rt->uc, cfg, &coso, &cosh, c, err)))
        return -1;
    daemon_runtime_own_informer(c->rt, &c->revisions);
    return 0;
}

/* Acting as ServiceAccounts by impersonation: whether each exists, from a watch of them all
 * when operator-controller may keep one.  A GET per install otherwise, which at a thousand
 * installs in a row is a thousand apiserver requests; the watch costs an event per
 * ServiceAccount created or deleted anywhere, and a key per ServiceAccount in memory. */
static int start_service_accounts(clusterextension_controller *c, const kube_config *cfg, olm_error *err)
{
    if (!clusterextension_identity_may_watch_service_accounts(c->rt->client))
        return 0;
    kube_watch_options sao = {.path = "/api/v1/serviceaccounts", .keep_metadata_only = true,
                              .drop_managed_fields = true};
    kube_informer_handlers sah = {.on_error = on_watch_error};
    if (!(c->service_accounts = kube_informer_new(c->rt->uc, cfg, &sao, &sah, c, err)))
        return -1;
    kube_informer_set_transform(c->service_accounts, clusterextension_identity_service_account_form);
    daemon_runtime_own_informer(c->rt, &c->service_accounts);
    return kube_informer_start(c->service_accounts, err);
}

int clusterextension_controller_start(clusterextension_controller *c, daemon_runtime *rt,
                                      const clusterextension_controller_config *cfg, olm_error *err)
{
    *c = (clusterextension_controller){.rt = rt};
    const kube_config *kcfg = kube_client_config(rt->client);
    if (start_informers(c, kcfg, cfg->reconciler.boxcutter, err) != 0)
        return -1;
    if (!(c->cc = catalog_client_new(&cfg->catalog_client, err)))
        return -1;
    if (daemon_runtime_watch_pull_secret(rt, cfg->global_pull_secret, pull_secret_loaded, c, err) != 0)
        return -1;
    c->impersonating = clusterextension_identity_impersonates(rt->client, cfg->identity_mode);
    if (c->impersonating && start_service_accounts(c, kcfg, err) != 0)
        return -1;
    c->identity = (clusterextension_identity_source){.admin = rt->client, .service_accounts = c->service_accounts};
    clusterextension_token_cache_options to = {
        .mint = c->impersonating ? clusterextension_identity_mint_impersonation : clusterextension_token_mint_kube,
        .mint_data = c->impersonating ? (void *)&c->identity : (void *)rt->client};
    if (!(c->tokens = clusterextension_token_cache_new(&to, err)))
        return -1;
    drift_backend be = drift_backend_kube(rt->uc);
    drift_callbacks dcb = {drift_enqueue, drift_token_rejected, drift_log, c};
    drift_watcher_options dopts = {.ignore_probes = cfg->reconciler.no_available_condition};
    if (!(c->drift = drift_watcher_new(rt->loop, kcfg, &be, &dcb, &dopts, err)))
        return -1;
    daemon_runtime_own(rt, DAEMON_STAGE_WATCH, c->drift, &c->drift, stop_drift);
    clusterextension_reconciler_config rc = cfg->reconciler;
    rc.admin = rt->client;
    rc.pull.registry.auth_store = rt->pull_secret; /* made by the watch just started */
    rc.catalogs = c->catalogs;
    rc.extensions = c->extensions;
    rc.catalog_client = c->cc;
    rc.tokens = c->tokens;
    rc.drift = c->drift;
    if (!(c->rec = clusterextension_reconciler_new(&rc, err)))
        return -1;
    kube_workqueue_options qo = {.concurrency = cfg->concurrency};
    if (!(c->wq = kube_workqueue_new(rt->loop, &qo, clusterextension_reconcile, c->rec, err)))
        return -1;
    daemon_runtime_own_workqueue(rt, &c->wq, "clusterextension");
    if (kube_informer_start(c->catalogs, err) != 0 || kube_informer_start(c->extensions, err) != 0 ||
        (c->revisions && kube_informer_start(c->revisions, err) != 0))
        return -1;
    return 0;
}

void clusterextension_controller_after_drain(clusterextension_controller *c)
{
    clusterextension_reconciler_free(c->rec);
    c->rec = NULL;
}

void clusterextension_controller_free(clusterextension_controller *c)
{
    catalog_client_free(c->cc);
    c->cc = NULL;
    clusterextension_token_cache_free(c->tokens);
    c->tokens = NULL;
}

bool clusterextension_controller_idle(const clusterextension_controller *c)
{
    return c->wq && kube_workqueue_len(c->wq) == 0 && kube_workqueue_running(c->wq) == 0;
}

int clusterextension_controller_metrics(clusterextension_controller *c, strbuf *out)
{
    json_t *all = c->extensions ? kube_informer_list(c->extensions) : NULL;
    clusterextension_metrics_sources src = {
        .extensions = all,
        .rec = c->rec,
        .catalog_cache_entries = c->cc ? catalog_client_cached(c->cc) : 0,
        .queue_depth = c->wq ? kube_workqueue_len(c->wq) : 0,
        .drift_watches = c->drift ? drift_watcher_active(c->drift) : 0,
        .drift_extensions = c->drift ? drift_watcher_extensions(c->drift) : 0,
        .tokens_requested = c->tokens && !c->impersonating ? (unsigned long long)clusterextension_token_cache_mints(c->tokens)
                                                           : 0ULL,
    };
    clusterextension_metrics_render(&src, out);
    clusterextension_info_metrics_render(&src, out);
    json_decref(all);
    return 0;
}
