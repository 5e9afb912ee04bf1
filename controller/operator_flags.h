/* operator_flags: operator-controller's command line.  Parsing and value checks only; no
 * I/O (what --check-flags runs). */
#ifndef OLM_OPERATOR_FLAGS_H
#define OLM_OPERATOR_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clusterextension.h"
#include "olm_daemon.h"
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
    unsigned concurrency;            /* --max-concurrent-reconciles, default 4 */
    uint64_t repair_interval_ms;     /* --drift-repair-interval, default 5m; 0 disables */
    uint64_t pull_timeout_ms;        /* --pull-timeout: a whole bundle image pull, default 10m */
    unsigned deadline_minute_s;      /* test-only --progress-deadline-minute-seconds, default 60 */
    const char *webhook_cert_provider; /* --webhook-cert-provider auto|cert-manager|openshift-service-ca */
    clusterextension_cert_mode cert_mode; /* what it says */
} operator_flags;

/* Strings point into argv.  Returns 0, 1 when help was asked for (usage printed to
 * stdout), or -1 with a one-line message in msg. */
int operator_flags_parse(int argc, char **argv, operator_flags *f, char *msg, size_t msgsz);
void operator_usage(FILE *out);

#endif
