/* operator_flags: operator-controller's command line.  Parsing and value checks only; no
 * I/O (what --check-flags runs). */
#ifndef OLM_OPERATOR_FLAGS_H
#define OLM_OPERATOR_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clusterextension.h"
#include "daemon_flags.h"
#include "olm_parse.h"

typedef struct operator_flags {
    olm_daemon_flags common;         /* health, metrics, TLS, system namespace, pull CAs, gates, ... */
    const char *kubeconfig;          /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *cache_path;          /* default /var/cache/operator-controller */
    const char *catalogd_cas_dir;    /* a directory of PEM CAs for https catalog URLs, or NULL */
    const char *catalogd_ca_file;    /* the same for one PEM file (the older flag), or NULL */
    bool leader_elect;
    const char *insecure_registries; /* NULL: $OLMV1_INSECURE_REGISTRIES */
    const char *authfile;            /* NULL: $REGISTRY_AUTH_FILE */
    unsigned concurrency;            /* --max-concurrent-reconciles, default 8 */
    uint64_t repair_interval_ms;     /* --drift-repair-interval, default 5m; 0 disables */
    uint64_t pull_timeout_ms;        /* --pull-timeout: a whole bundle image pull, default 10m */
    unsigned deadline_minute_s;      /* test-only --progress-deadline-minute-seconds, default 60 */
    const char *webhook_cert_provider; /* --webhook-cert-provider auto|cert-manager|openshift-service-ca */
    bool ignore_service_account;     /* --ignore-service-account: upstream's meaning of spec.serviceAccount */
    bool available_condition;        /* --available-condition: Available from the built-in probes (default true) */
    clusterextension_cert_mode cert_mode; /* what it says, after the webhook gates */
    const char *service_account_identity; /* --service-account-identity auto|impersonation|token */
    clusterextension_identity_mode identity_mode; /* what it says */
    /* Upstream's --feature-gates (operator_flags.c lists them with our defaults). */
    bool gate_single_own_namespace; /* SingleOwnNamespaceInstallSupport: spec.config.inline.watchNamespace */
    bool gate_deployment_config;    /* DeploymentConfig: spec.config.inline.deploymentConfig */
    bool gate_cert_manager;         /* WebhookProviderCertManager */
    bool gate_service_ca;           /* WebhookProviderOpenshiftServiceCA */
    bool gate_boxcutter;            /* BoxcutterRuntime: installs and upgrades as ClusterObjectSet revisions, rolled out by controller/objectset */
    bool gate_bundle_release;       /* BundleReleaseSupport: not built (likewise) */
} operator_flags;

/* The WARN lines for gates asked for that this build does not have: calls say(line, data) for
 * each (none when there is nothing to say). */
void operator_flags_unbuilt_gates(const operator_flags *f, void (*say)(const char *line, void *data), void *data);

/* Strings point into argv.  Returns 0, 1 when help was asked for (usage printed to
 * stdout), or -1 with a one-line message in msg. */
int operator_flags_parse(int argc, char **argv, operator_flags *f, char *msg, size_t msgsz);
void operator_usage(FILE *out);

#endif
