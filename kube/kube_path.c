/* kube_path: apiVersion + kind -> resource for the kinds this project uses, and REST
 * paths and query strings (see kube_path.h).  No I/O.
 *
 * Common kinds come from a built-in table so the controllers need no discovery
 * round trip for their own objects.  Escaping is curl_easy_escape's: everything but
 * RFC 3986 unreserved characters is percent-encoded, which the API server decodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "kube_path.h"
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
    {"olm.operatorframework.io", "v1", "ClusterObjectSet", "clusterobjectsets", false},
    {"olm.operatorframework.io", "v1", "ClusterCatalog", "clustercatalogs", false},
    {"config.openshift.io", "v1", "ClusterVersion", "clusterversions", false},
    {"config.openshift.io", "v1", "ClusterOperator", "clusteroperators", false},
};

int kube_split_api_version(const char *api_version, kube_resource_info *ri, olm_error *err)
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
    if (!kind || kube_split_api_version(api_version, &ri, NULL) < 0)
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

int kube_query_add(char **query, const char *key, const char *value)
{
    char *v = curl_easy_escape(NULL, value, 0);
    if (!v)
        return -1;
    char *q = NULL;
    int n = *query ? asprintf(&q, "%s&%s=%s", *query, key, v) : asprintf(&q, "%s=%s", key, v);
    curl_free(v);
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
    char *e = curl_easy_escape(NULL, s, 0);
    if (!e)
        return -1;
    int rc = strbuf_putc(sb, '/') < 0 || strbuf_puts(sb, e) < 0 ? -1 : 0;
    curl_free(e);
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
