/* clusterextension_drift_post: the reconcile's side of the drift watcher -- after a
 * successful reconcile, tell it which kinds the extension installed and which token
 * to watch them with; on deletion, tell it to stop.  Runs on the threadpool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterextension_internal.h"
#include "olm_log.h"

static int resolve_kind(void *data, const char *api_version, const char *kind, kube_resource_info *out,
                        olm_error *err)
{
    return kube_resolve_kind(data, api_version, kind, out, err);
}

void clusterextension_drift_post(clusterextension_run *run)
{
    clusterextension_reconciler *r = run->r;
    if (!r->cfg.drift || !run->have_rec)
        return;
    olm_error err;
    const char *ns = clusterextension_str(run->ce, "spec.namespace"), *sa = clusterextension_service_account(run);
    if (!run->token.value) {
        /* Nothing in this reconcile needed the ServiceAccount (applier_ctx.identity). */
        if (!*sa)
            return; /* the controller's own identity: never watched with (drift.h) */
        /* A token handed out before may run watches: it is kept current (the cache mints
         * only when it is due).  Without one, the post is tokenless (drift.h). */
        if (clusterextension_token_cache_has(r->cfg.tokens, ns, sa) &&
            clusterextension_token_cache_get(r->cfg.tokens, ns, sa, &run->token, &err) != 0)
            olm_log(OLM_LOG_DEBUG, "clusterExtension", run->name, "drift watch: no fresh token: %s", err.msg);
    }
    drift_spec spec = {
        .extension = strdup(run->name),
        .ns = strdup(ns),
        .sa = strdup(sa),
        .token = run->token.value ? strdup(run->token.value) : NULL,
        .tokenless = !run->token.value,
        .refresh_at = run->token.value ? run->token.refresh_at : 0,
    };
    int rc = spec.extension && spec.ns && spec.sa && (spec.token || spec.tokenless) ? 0 : olm_error_set(&err, "out of memory");
    /* Discovery through the controller's own client: it only maps kinds to resources. */
    /* What the status says of each object's probes: a watch event that says otherwise asks
     * for a reconcile (drift.h).  NULL (nothing probed, or out of memory): unknown. */
    uint64_t *probes = clusterextension_probe_digests(run);
    /* What the reconcile relied on of each object's content: the watcher checks it against
     * what its watch holds when the post arrives (drift.h). */
    uint64_t *contents = clusterextension_content_hashes(run);
    if (rc == 0)
        rc = drift_spec_paths(&spec, &run->rec, probes, contents, resolve_kind, r->cfg.admin, &err);
    free(probes);
    free(contents);
    if (rc == 0)
        rc = drift_watcher_post(r->cfg.drift, &spec, &err);
    else
        drift_spec_free(&spec);
    if (rc != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", run->name, "drift watch not updated: %s", err.msg);
}

void clusterextension_drift_forget(clusterextension_reconciler *r, const char *extension)
{
    olm_error err;
    if (r->cfg.drift && drift_watcher_forget(r->cfg.drift, extension, &err) != 0)
        olm_log(OLM_LOG_ERROR, "clusterExtension", extension, "stopping the drift watch: %s", err.msg);
}
