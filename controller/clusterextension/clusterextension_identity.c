/* clusterextension_identity: how requests act as a ClusterExtension's ServiceAccount when
 * not with a TokenRequest token (clusterextension_token_cache.c mints those): impersonation,
 * chosen at start when operator-controller may impersonate and get serviceaccounts, and the
 * cache's mint function for it, which reads whether the ServiceAccount exists from a watch of
 * them when operator-controller may keep one (a GET per ServiceAccount otherwise).  See
 * clusterextension.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "clusterextension.h"
#include "olm_log.h"

/* Asks the apiserver (SelfSubjectAccessReviews) whether `admin` may do each of the `n` verbs on
 * serviceaccounts: `n` when all are allowed, the index of the first refused, or -1 with err
 * when one could not be asked. */
static int first_refused(kube_client *admin, const char *const *verbs, int n, olm_error *err)
{
    for (int i = 0; i < n; i++) {
        kube_access a = {.verb = verbs[i], .resource = "serviceaccounts"};
        bool allowed = false;
        if (kube_self_allowed(admin, &a, &allowed, err) != 0)
            return -1;
        if (!allowed)
            return i;
    }
    return n;
}

/* Whether operator-controller may do both verbs of `need` on serviceaccounts; one line says
 * which way it goes: `without` (what it does otherwise) when it could not ask whether `asking`
 * is allowed or was refused one (config/rbac grants it `rbac_reason`), `with` when allowed. */
static bool all_allowed(kube_client *admin, const char *const need[2], const char *without, const char *asking,
                        const char *rbac_reason, const char *with)
{
    olm_error err;
    int refused = first_refused(admin, need, 2, &err);
    if (refused < 0) {
        olm_log(OLM_LOG_WARN, "clusterExtension", NULL, "%s: could not ask whether %s is allowed: %s", without, asking,
                err.msg);
        return false;
    }
    if (refused < 2) {
        olm_log(OLM_LOG_INFO, "clusterExtension", NULL,
                "%s: not allowed to %s serviceaccounts (config/rbac allows it, %s)", without, need[refused], rbac_reason);
        return false;
    }
    olm_log(OLM_LOG_INFO, "clusterExtension", NULL, "%s", with);
    return true;
}

/* Whether to act as ServiceAccounts by impersonation (clusterextension_identity_mode).  Auto
 * asks the apiserver once: impersonation spares a TokenRequest per ServiceAccount (the
 * apiserver's dearest request of an install after the ClusterExtension's own writes), and
 * needs rights that are no more than minting tokens for any ServiceAccount already is;
 * upstream's RBAC grants only the latter, so operator-controller keeps working under it. */
bool clusterextension_identity_impersonates(kube_client *admin, clusterextension_identity_mode mode)
{
    if (mode != CE_IDENTITY_AUTO) {
        olm_log(OLM_LOG_INFO, "clusterExtension", NULL, "acting as ServiceAccounts %s (--service-account-identity)",
                mode == CE_IDENTITY_IMPERSONATION ? "by impersonation" : "with TokenRequest tokens");
        return mode == CE_IDENTITY_IMPERSONATION;
    }
    static const char *const need[] = {"impersonate", "get"};
    return all_allowed(admin, need, "acting as ServiceAccounts with TokenRequest tokens", "impersonation",
                       "for impersonation", "acting as ServiceAccounts by impersonation");
}

/* Whether the informer of `src` holds ns/sa (false when it has none, is not synced yet, or
 * lost an event: then it is not to be trusted). */
static bool informer_has(const clusterextension_identity_source *src, const char *ns, const char *sa)
{
    kube_informer *inf = src->service_accounts;
    if (!inf || !kube_informer_has_synced(inf) || kube_informer_lost_events(inf) != 0)
        return false;
    char *key = NULL;
    if (asprintf(&key, "%s/%s", ns, sa) < 0)
        return false;
    json_t *kept = kube_informer_get(inf, key);
    free(key);
    json_decref(kept);
    return kept != NULL;
}

int clusterextension_identity_mint_impersonation(void *data, const char *ns, const char *sa, int64_t seconds,
                                                 char **credential, time_t *expires, olm_error *err)
{
    const clusterextension_identity_source *src = data;
    *credential = NULL;
    if (!informer_has(src, ns, sa)) {
        kube_resource_info ri;
        kube_builtin_kind("v1", "ServiceAccount", &ri);
        json_t *obj = NULL;
        /* From the watch cache: the ServiceAccount is usually created just before the
         * extension, so a 404 there is read again from etcd before it counts. */
        int rc = kube_get_resource_cached(src->admin, &ri, ns, sa, &obj, err);
        if (rc == KUBE_NOT_FOUND)
            rc = kube_get_resource(src->admin, &ri, ns, sa, &obj, err);
        json_decref(obj);
        if (rc < 0)
            return rc;
    }
    /* A serial after the user: each credential is new, as each token is (kube_config.h). */
    static atomic_ullong serial;
    if (asprintf(credential, "%ssystem:serviceaccount:%s:%s %llu", KUBE_IMPERSONATION_PREFIX, ns, sa,
                 (unsigned long long)atomic_fetch_add(&serial, 1) + 1) < 0) {
        *credential = NULL;
        return olm_error_set(err, "out of memory");
    }
    *expires = time(NULL) + (time_t)seconds;
    return 0;
}

bool clusterextension_identity_may_watch_service_accounts(kube_client *admin)
{
    static const char *const need[] = {"list", "watch"};
    return all_allowed(admin, need, "reading each ServiceAccount before acting as it", "watching them",
                       "to keep them in a watch instead",
                       "knowing which ServiceAccounts exist from a watch of them (list and watch serviceaccounts allowed)");
}

json_t *clusterextension_identity_service_account_form(const json_t *obj, void *data)
{
    (void)obj;
    (void)data;
    return json_true();
}
