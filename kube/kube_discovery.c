/* kube_discovery: apiVersion + kind -> REST path.
 *
 * Common kinds come from a built-in table so the controllers need no discovery
 * round trip for their own objects; anything else (arbitrary bundle content,
 * CRD-defined kinds) is looked up with discovery and cached per client. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_client_internal.h"
#include "strbuf.h"

struct builtin {
    const char *group, *version, *kind, *resource;
    bool namespaced;
};

static const struct builtin builtins[] = {
    {"", "v1", "Namespace", "namespaces", false},
    {"", "v1", "ServiceAccount", "serviceaccounts", true},
    {"", "v1", "Secret", "secrets", true},
    {"", "v1", "ConfigMap", "configmaps", true},
    {"", "v1", "Service", "services", true},
    {"", "v1", "Pod", "pods", true},
    {"", "v1", "Event", "events", true},
    {"", "v1", "Node", "nodes", false},
    {"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true},
    {"", "v1", "Endpoints", "endpoints", true},
    {"apps", "v1", "Deployment", "deployments", true},
    {"apps", "v1", "StatefulSet", "statefulsets", true},
    {"apps", "v1", "DaemonSet", "daemonsets", true},
    {"apps", "v1", "ReplicaSet", "replicasets", true},
    {"rbac.authorization.k8s.io", "v1", "Role", "roles", true},
    {"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true},
    {"rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false},
    {"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false},
    {"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false},
    {"admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false},
    {"admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false},
    {"apiregistration.k8s.io", "v1", "APIService", "apiservices", false},
    {"coordination.k8s.io", "v1", "Lease", "leases", true},
    {"networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true},
    {"networking.k8s.io", "v1", "Ingress", "ingresses", true},
    {"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true},
    {"scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", false},
    {"authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", false},
    {"authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", false},
    {"authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", false},
    {"events.k8s.io", "v1", "Event", "events", true},
    {"olm.operatorframework.io", "v1", "ClusterExtension", "clusterextensions", false},
    {"olm.operatorframework.io", "v1", "ClusterCatalog", "clustercatalogs", false},
    {"config.openshift.io", "v1", "ClusterVersion", "clusterversions", false},
    {"config.openshift.io", "v1", "ClusterOperator", "clusteroperators", false},
};

/* Splits "group/version" (or "v1" for core) into ri->group / ri->version. */
static int split_api_version(const char *api_version, kube_resource_info *ri, olm_error *err)
{
    memset(ri, 0, sizeof *ri);
    if (!api_version || !*api_version)
        return olm_error_set(err, "apiVersion is empty");
    const char *slash = strchr(api_version, '/');
    const char *version = slash ? slash + 1 : api_version;
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    if ((slash && (glen == 0 || !*version || strchr(version, '/'))) || glen >= sizeof ri->group ||
        strlen(version) >= sizeof ri->version)
        return olm_error_set(err, "apiVersion \"%s\" is not \"<group>/<version>\" or \"<version>\"", api_version);
    memcpy(ri->group, api_version, glen);
    strcpy(ri->version, version);
    return 0;
}

bool kube_builtin_kind(const char *api_version, const char *kind, kube_resource_info *out)
{
    kube_resource_info ri;
    if (!kind || split_api_version(api_version, &ri, NULL) < 0)
        return false;
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        const struct builtin *b = &builtins[i];
        if (strcmp(b->kind, kind) == 0 && strcmp(b->group, ri.group) == 0 && strcmp(b->version, ri.version) == 0) {
            strcpy(ri.resource, b->resource);
            ri.namespaced = b->namespaced;
            *out = ri;
            return true;
        }
    }
    return false;
}

char *kube_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = malloc(n * 3 + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~') {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    return out;
}

int kube_query_add(char **query, const char *key, const char *value)
{
    char *v = kube_escape(value);
    if (!v)
        return -1;
    char *q = NULL;
    int n = *query ? asprintf(&q, "%s&%s=%s", *query, key, v) : asprintf(&q, "%s=%s", key, v);
    free(v);
    if (n < 0)
        return -1;
    free(*query);
    *query = q;
    return 0;
}

/* A DNS-1123-ish segment check: '/' or an empty / dot name would change the path. */
static int check_segment(const char *what, const char *s, olm_error *err)
{
    if (!*s || strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return olm_error_set(err, "invalid %s \"%s\"", what, s);
    return 0;
}

static int put_segment(strbuf *sb, const char *s)
{
    char *e = kube_escape(s);
    if (!e)
        return -1;
    int rc = strbuf_putc(sb, '/') < 0 || strbuf_puts(sb, e) < 0 ? -1 : 0;
    free(e);
    return rc;
}

char *kube_resource_path(const kube_resource_info *ri, const char *ns, const char *name,
                         const char *subresource, olm_error *err)
{
    if (ri->namespaced && name && (!ns || !*ns)) {
        olm_error_set(err, "%s \"%s\" is namespaced: a namespace is required", ri->resource, name);
        return NULL;
    }
    if ((ns && ri->namespaced && check_segment("namespace", ns, err) < 0) ||
        (name && check_segment("name", name, err) < 0) ||
        (subresource && check_segment("subresource", subresource, err) < 0))
        return NULL;
    if (subresource && !name) {
        olm_error_set(err, "subresource \"%s\" needs an object name", subresource);
        return NULL;
    }
    strbuf sb = STRBUF_INIT;
    int rc = ri->group[0] ? strbuf_printf(&sb, "/apis/%s/%s", ri->group, ri->version)
                          : strbuf_printf(&sb, "/api/%s", ri->version);
    if (rc == 0 && ri->namespaced && ns && *ns)
        rc = strbuf_puts(&sb, "/namespaces") < 0 || put_segment(&sb, ns) < 0 ? -1 : 0;
    if (rc == 0)
        rc = put_segment(&sb, ri->resource);
    if (rc == 0 && name)
        rc = put_segment(&sb, name);
    if (rc == 0 && subresource)
        rc = put_segment(&sb, subresource);
    if (rc < 0) {
        strbuf_free(&sb);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    char *out = strbuf_detach(&sb);
    if (!out)
        olm_error_set(err, "out of memory");
    return out;
}

/* ------------------------------------------------------------ discovery */

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
    if (split_api_version(api_version, &gv, err) < 0)
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
    if (split_api_version(api_version, &gv, err) < 0)
        return -1;
    json_t *res = NULL;
    if (cached_resources(c, api_version, &gv, false, &res, err) < 0)
        return -1;
    *served = !json_is_null(res);
    json_decref(res);
    return 0;
}
