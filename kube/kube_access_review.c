/* kube_access_review: SelfSubjectAccessReview, "may I?" asked of the API server (see
 * kube_verbs.h).  Every authenticated identity may ask it about itself. */
#include <stdlib.h>

#include "kube_verbs.h"

int kube_self_allowed(kube_client *c, const kube_access *a, bool *allowed, olm_error *err)
{
    *allowed = false;
    json_t *attrs = json_pack("{s:s, s:s, s:s}", "verb", a->verb, "group", a->group ? a->group : "", "resource",
                              a->resource);
    if (attrs && a->namespace && json_object_set_new(attrs, "namespace", json_string(a->namespace)) != 0) {
        json_decref(attrs);
        attrs = NULL;
    }
    json_t *review = attrs ? json_pack("{s:s, s:s, s:{s:o}}", "apiVersion", "authorization.k8s.io/v1", "kind",
                                       "SelfSubjectAccessReview", "spec", "resourceAttributes", attrs)
                           : NULL;
    char *body = review ? json_dumps(review, JSON_COMPACT) : NULL;
    json_decref(review);
    if (!body)
        return olm_error_set(err, "out of memory");
    json_t *resp = NULL;
    int rc = kube_request_json(c, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", NULL,
                               "application/json", body, &resp, err);
    free(body);
    if (rc < 0) {
        olm_error_wrap(err, "SelfSubjectAccessReview of %s %s", a->verb, a->resource);
        return rc;
    }
    *allowed = json_is_true(json_object_get(json_object_get(resp, "status"), "allowed"));
    json_decref(resp);
    return 0;
}
