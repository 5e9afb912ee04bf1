/* operator_flags: operator-controller's command line.  Parsing only; no I/O. */
#ifndef OLM_OPERATOR_FLAGS_H
#define OLM_OPERATOR_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct operator_flags {
    const char *kubeconfig;          /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *system_namespace;    /* default olmv1-system */
    const char *cache_path;          /* default /var/cache/operator-controller */
    const char *catalogd_ca_file;    /* PEM for https catalog URLs; NULL: system store */
    const char *health_addr;         /* default 127.0.0.1:8081; "" or "0" disables */
    bool leader_elect;
    const char *insecure_registries; /* NULL: $OLMV1_INSECURE_REGISTRIES */
    const char *authfile;            /* NULL: $REGISTRY_AUTH_FILE */
    unsigned concurrency;            /* --max-concurrent-reconciles, default 4 */
    uint64_t repair_interval_ms;     /* --drift-repair-interval, default 5m; 0 disables */
    uint64_t pull_timeout_ms;        /* --pull-timeout: a whole bundle image pull, default 10m */
} operator_flags;

/* Strings point into argv.  Returns 0, 1 when help was asked for (usage printed to
 * stdout), or -1 with a message in msg. */
int operator_flags_parse(int argc, char **argv, operator_flags *f, char *msg, size_t msgsz);
void operator_usage(FILE *out);

/* The health address ":port" means loopback only; olm_parse_host_port with this. */
#define OPERATOR_EMPTY_HOST "127.0.0.1"

#endif
