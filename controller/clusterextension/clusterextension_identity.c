/* clusterextension_identity: how requests act as a ClusterExtension's ServiceAccount when
 * not with a TokenRequest token (clusterextension_token_cache.c mints those): impersonation,
 * chosen at start when operator-controller may impersonate and get serviceaccounts, and the
 * cache's mint function for it.  See clusterextension.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "clusterextension.h"
#include "olm_log.h"

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
    static const kube_access need[] = {{.verb = "impersonate", .resource = "serviceaccounts"},
                                       {.verb = "get", .resource = "serviceaccounts"}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        bool allowed = false;
        olm_error err;
        if (kube_self_allowed(admin, &need[i], &allowed, &err) != 0) {
            olm_log(OLM_LOG_WARN, "clusterExtension", NULL,
                    "acting as ServiceAccounts with TokenRequest tokens: could not ask whether impersonation is "
                    "allowed: %s", err.msg);
            return false;
        }
        if (!allowed) {
            olm_log(OLM_LOG_INFO, "clusterExtension", NULL,
                    "acting as ServiceAccounts with TokenRequest tokens: not allowed to %s serviceaccounts (config/rbac "
                    "allows it, for impersonation)", need[i].verb);
            return false;
        }
    }
    olm_log(OLM_LOG_INFO, "clusterExtension", NULL, "acting as ServiceAccounts by impersonation");
    return true;
}

int clusterextension_identity_mint_impersonation(void *data, const char *ns, const char *sa, int64_t seconds,
                                                 char **credential, time_t *expires, olm_error *err)
{
    *credential = NULL;
    kube_resource_info ri;
    kube_builtin_kind("v1", "ServiceAccount", &ri);
    json_t *obj = NULL;
    /* From the watch cache: the ServiceAccount is usually created just before the extension,
     * so a 404 there is read again from etcd before it counts. */
    int rc = kube_get_resource_cached(data, &ri, ns, sa, &obj, err);
    if (rc == KUBE_NOT_FOUND)
        rc = kube_get_resource(data, &ri, ns, sa, &obj, err);
    json_decref(obj);
    if (rc < 0)
        return rc;
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
