/* upgradeable_reconcile: one pass of the OpenShift upgrade check against the cluster
 * (see upgradeable_reconciler.h), and the write of its conditions on ClusterOperator
 * "olm".  Blocking REST calls: worker threads only. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "olm_time.h"
#include "upgradeable_internal.h"
#include "upgradeable_reconciler.h"

#define CO_API "config.openshift.io/v1"
#define CO_KIND "ClusterOperator"
#define WRITE_ATTEMPTS 5

/* GET the ClusterOperator, creating it (empty status) when absent.  The status
 * subresource ignores status on create, so conditions always go through
 * update_status afterwards. */
static int get_or_create(kube_client *c, json_t **co, olm_error *err)
{
    int rc = kube_get(c, CO_API, CO_KIND, NULL, UPGRADEABLE_CO_NAME, co, err);
    if (rc != KUBE_NOT_FOUND)
        return rc;
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{}}", "apiVersion", CO_API, "kind", CO_KIND, "metadata",
                            "name", UPGRADEABLE_CO_NAME, "annotations", "capability.openshift.io/name",
                            "OperatorLifecycleManagerV1", "spec");
    if (!obj)
        return olm_error_set(err, "out of memory");
    rc = kube_create(c, obj, co, err);
    json_decref(obj);
    if (rc == KUBE_ALREADY_EXISTS) /* someone else created it meanwhile */
        rc = kube_get(c, CO_API, CO_KIND, NULL, UPGRADEABLE_CO_NAME, co, err);
    return rc;
}

int upgradeable_write_cluster_operator(kube_client *c, const upgradeable_condition *conds, size_t n,
                                       olm_error *err)
{
    int rc = KUBE_CONFLICT;
    for (int attempt = 0; rc == KUBE_CONFLICT && attempt < WRITE_ATTEMPTS; attempt++) {
        json_t *co = NULL;
        if ((rc = get_or_create(c, &co, err)) < 0)
            break;
        char now[OLM_TIME_RFC3339_SIZE]; /* the epoch if the clock is unrepresentable */
        olm_time_rfc3339(time(NULL), now);
        json_t *status = json_object_get(co, "status");
        bool changed = false;
        json_t *merged = upgradeable_conditions_merge(json_object_get(status, "conditions"), conds, n, now, &changed);
        if (!merged) {
            json_decref(co);
            return olm_error_set(err, "out of memory");
        }
        if (!changed) { /* no write, so no watch event for others and no resourceVersion churn */
            json_decref(merged);
            json_decref(co);
            return 0;
        }
        if (!json_is_object(status)) {
            status = json_object();
            if (!status || json_object_set_new(co, "status", status) < 0) {
                json_decref(merged);
                json_decref(co);
                return olm_error_set(err, "out of memory");
            }
        }
        if (json_object_set_new(status, "conditions", merged) < 0) {
            json_decref(co);
            return olm_error_set(err, "out of memory");
        }
        /* co carries the resourceVersion just read: a concurrent writer gives 409 and
         * the loop merges again over its version. */
        rc = kube_update_status(c, co, NULL, err);
        json_decref(co);
    }
    if (rc < 0)
        olm_error_wrap(err, "writing ClusterOperator \"%s\" status", UPGRADEABLE_CO_NAME);
    return rc < 0 ? -1 : 0;
}

/* The pass over inputs read one way or the other: `lists` says whether ces/secrets are
 * given (the informers' slim copies) or listed now. */
static int pass(kube_client *admin, const upgradeable_reconcile_opts *opts, bool lists, const json_t *ces,
                const json_t *secrets, const json_t *revisions, olm_error *err)
{
    bool served = false;
    if (kube_group_version_served(admin, UPGRADEABLE_OPENSHIFT_API, &served, err) < 0)
        return -1;
    if (!served)
        return UPGRADEABLE_NOT_OPENSHIFT;
    upgradeable_inputs in;
    if ((lists ? upgradeable_inputs_from_lists(admin, opts, ces, secrets, revisions, &in, err)
               : upgradeable_inputs_read(admin, opts, &in, err)) < 0)
        return -1;
    upgradeable_result r;
    int rc = upgradeable_inputs_check(&in, NULL, &r, err);
    upgradeable_inputs_free(&in);
    if (rc < 0)
        return -1;
    /* Upgradeable is what the CVO reads; the Degraded-style condition carries the
     * sync error the way library-go reports a failed sync. */
    upgradeable_condition conds[2] = {r.upgradeable, r.degraded};
    rc = upgradeable_write_cluster_operator(admin, conds, 2, err);
    upgradeable_result_free(&r);
    return rc;
}

int upgradeable_reconcile_once(kube_client *admin, const upgradeable_reconcile_opts *opts, olm_error *err)
{
    return pass(admin, opts, false, NULL, NULL, NULL, err);
}

int upgradeable_reconcile_lists(kube_client *admin, const upgradeable_reconcile_opts *opts, const json_t *ces,
                                const json_t *secrets, const json_t *revisions, olm_error *err)
{
    return pass(admin, opts, true, ces, secrets, revisions, err);
}
