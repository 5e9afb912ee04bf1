/* kube_discovery: apiVersion + kind -> resource for what kube_path's built-in table
 * does not know (arbitrary bundle content, CRD-defined kinds): looked up with
 * discovery and cached per client. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_client_internal.h"
#include "kube_discovery.h"

/* Fetches the APIResourceList of one group/version.  *resources receives the
 * resources array (new reference) or JSON null when the server does not serve it. */
static int fetch_group_version(kube_client *c, const kube_resource_info *gv, json_t **resources, olm_error *err)
{
    char path[256];
    if (gv->group[0])
        snprintf(path, sizeof path, "/apis/%s/%s", gv->group, gv->version);
    else
        snprintf(path, sizeof path, "/api/%s", gv->version);
    kube_response resp = {0};
    long st = kube_request(c, "GET", path, NULL, NULL, NULL, 0, &resp, err);
    if (st < 0)
        return olm_error_wrap(err, "discovery");
    if (st == 404) {
        kube_response_free(&resp);
        *resources = json_null();
        return 0;
    }
    if (st != 200) {
        kube_status_error(st, resp.body, resp.body_len, "GET", path, err);
        kube_response_free(&resp);
        return olm_error_wrap(err, "discovery");
    }
    json_error_t je;
    json_t *list = json_loadb(resp.body, resp.body_len, 0, &je);
    kube_response_free(&resp);
    json_t *res = json_object_get(list, "resources");
    if (!json_is_array(res)) {
        json_decref(list);
        return olm_error_set(err, "discovery: GET %s: not an APIResourceList (%s)", path, list ? "no resources" : je.text);
    }
    *resources = json_incref(res);
    json_decref(list);
    return 0;
}

static bool find_kind(const json_t *resources, const char *kind, kube_resource_info *ri)
{
    size_t i;
    const json_t *r;
    json_array_foreach(resources, i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *k = json_string_value(json_object_get(r, "kind"));
        if (!name || !k || strchr(name, '/') || strcmp(k, kind) != 0) /* skip subresources */
            continue;
        if (strlen(name) >= sizeof ri->resource)
            continue;
        strcpy(ri->resource, name);
        ri->namespaced = json_is_true(json_object_get(r, "namespaced"));
        return true;
    }
    return false;
}

/* Cached resources of `api_version` (new reference), fetching when absent or when
 * `refresh` is set. */
static int cached_resources(kube_client *c, const char *api_version, const kube_resource_info *gv,
                            bool refresh, json_t **out, olm_error *err)
{
    pthread_mutex_lock(&c->disc_lock);
    json_t *hit = refresh ? NULL : json_incref(json_object_get(c->disc, api_version));
    pthread_mutex_unlock(&c->disc_lock);
    if (hit) {
        *out = hit;
        return 0;
    }
    /* The lock is not held across I/O; two threads may fetch the same group
     * version at once, which is harmless (last one wins). */
    json_t *res = NULL;
    if (fetch_group_version(c, gv, &res, err) < 0)
        return -1;
    pthread_mutex_lock(&c->disc_lock);
    int rc = json_object_set(c->disc, api_version, res);
    pthread_mutex_unlock(&c->disc_lock);
    if (rc < 0) {
        json_decref(res);
        return olm_error_set(err, "out of memory");
    }
    *out = res;
    return 0;
}

int kube_resolve_kind(kube_client *c, const char *api_version, const char *kind,
                      kube_resource_info *out, olm_error *err)
{
    if (!kind || !*kind)
        return olm_error_set(err, "kind is empty");
    if (kube_builtin_kind(api_version, kind, out))
        return 0;
    kube_resource_info gv;
    if (kube_split_api_version(api_version, &gv, err) < 0)
        return -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        json_t *res = NULL;
        bool fresh = attempt > 0;
        if (cached_resources(c, api_version, &gv, fresh, &res, err) < 0)
            return -1;
        bool served = !json_is_null(res);
        bool found = served && find_kind(res, kind, &gv);
        json_decref(res);
        if (found) {
            *out = gv;
            return 0;
        }
        if (attempt == 1) {
            if (!served)
                return olm_error_set(err, "the server does not serve apiVersion \"%s\" (is its CRD or API service installed?)",
                                     api_version);
            return olm_error_set(err, "the server has no kind \"%s\" in apiVersion \"%s\"", kind, api_version);
        }
    }
    return -1; /* not reached */
}

void kube_discovery_reset(kube_client *c)
{
    pthread_mutex_lock(&c->disc_lock);
    json_object_clear(c->disc);
    pthread_mutex_unlock(&c->disc_lock);
}

int kube_group_version_served(kube_client *c, const char *api_version, bool *served, olm_error *err)
{
    kube_resource_info gv;
    if (kube_split_api_version(api_version, &gv, err) < 0)
        return -1;
    json_t *res = NULL;
    if (cached_resources(c, api_version, &gv, false, &res, err) < 0)
        return -1;
    *served = !json_is_null(res);
    json_decref(res);
    return 0;
}
