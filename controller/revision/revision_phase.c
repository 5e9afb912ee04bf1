/* revision_phase: upstream's phase of each object kind (phase.go, after package-operator's
 * presets).  Anything not listed rolls out in "deploy". */
#include <string.h>

#include "revision.h"

const char *const revision_phase_order[] = {"namespaces", "policies",       "identity", "configuration", "storage",
                                            "crds",       "roles",          "bindings", "infrastructure", "deploy",
                                            "scaling",    "publish",        "admission"};
const size_t revision_phase_count = sizeof revision_phase_order / sizeof revision_phase_order[0];

static const struct {
    const char *group, *kind, *phase;
} PHASE_OF[] = {
    {"", "Namespace", "namespaces"},
    {"networking.k8s.io", "NetworkPolicy", "policies"},
    {"policy", "PodDisruptionBudget", "policies"},
    {"scheduling.k8s.io", "PriorityClass", "policies"},
    {"", "ServiceAccount", "identity"},
    {"", "Secret", "configuration"},
    {"", "ConfigMap", "configuration"},
    {"", "PersistentVolume", "storage"},
    {"", "PersistentVolumeClaim", "storage"},
    {"storage.k8s.io", "StorageClass", "storage"},
    {"apiextensions.k8s.io", "CustomResourceDefinition", "crds"},
    {"rbac.authorization.k8s.io", "ClusterRole", "roles"},
    {"rbac.authorization.k8s.io", "Role", "roles"},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", "bindings"},
    {"rbac.authorization.k8s.io", "RoleBinding", "bindings"},
    {"", "Service", "infrastructure"},
    {"cert-manager.io", "Issuer", "infrastructure"},
    {"cert-manager.io", "Certificate", "infrastructure"},
    {"apps", "Deployment", "deploy"},
    {"autoscaling.k8s.io", "VerticalPodAutoscaler", "scaling"},
    {"monitoring.coreos.com", "PrometheusRule", "publish"},
    {"monitoring.coreos.com", "ServiceMonitor", "publish"},
    {"monitoring.coreos.com", "PodMonitor", "publish"},
    {"networking.k8s.io", "Ingress", "publish"},
    {"route.openshift.io", "Route", "publish"},
    {"console.openshift.io", "ConsoleYAMLSample", "publish"},
    {"console.openshift.io", "ConsoleQuickStart", "publish"},
    {"console.openshift.io", "ConsoleCLIDownload", "publish"},
    {"console.openshift.io", "ConsoleLink", "publish"},
    {"console.openshift.io", "ConsolePlugin", "publish"},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "admission"},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", "admission"},
};

const char *revision_phase_of(const char *group, const char *kind)
{
    for (size_t i = 0; i < sizeof PHASE_OF / sizeof PHASE_OF[0]; i++)
        if (strcmp(PHASE_OF[i].group, group ? group : "") == 0 && strcmp(PHASE_OF[i].kind, kind ? kind : "") == 0)
            return PHASE_OF[i].phase;
    return "deploy";
}
