/* catalogd_flags: catalogd's command line (catalogd_main.c).  Parsing and value checks
 * only; no I/O (what --check-flags runs). */
#ifndef OLM_CATALOGD_FLAGS_H
#define OLM_CATALOGD_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon_flags.h"
#include "olm_parse.h"

typedef struct catalogd_flags {
    olm_daemon_flags common;    /* health, metrics, TLS, system namespace, pull CAs, gates, ... */
    const char *kubeconfig;     /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *cache_dir;      /* default /var/cache/catalogd */
    const char *server_addr;    /* --catalogs-server-addr, default 127.0.0.1:8443 */
    const char *external_addr;  /* host[:port] for status.urls.base; NULL: the listen address */
    bool leader_elect;
    const char *lease_namespace; /* NULL: the system namespace */
    uint64_t gc_interval_ms;    /* default 12h */
    const char *insecure_registries; /* NULL: $OLMV1_INSECURE_REGISTRIES */
    const char *authfile;       /* NULL: $REGISTRY_AUTH_FILE */
    uint64_t poll_override_ms;  /* test-only --poll-interval-override-seconds */
    bool access_log;            /* one stderr line per HTTP request; --no-access-log */
    unsigned concurrency;       /* --max-concurrent-reconciles, default 2 */
    uint64_t pull_timeout_ms;   /* --pull-timeout: a whole image pull, default 10m */
    unsigned webhook_port;      /* --webhook-server-port, default 9443 (0: none) */
    const char *shutdown_delay; /* --shutdown-delay as given, or NULL */
    uint64_t shutdown_delay_ms; /* unready but serving after SIGTERM: 5s in a Pod, else 0 */
    bool gate_metas;            /* --feature-gates APIV1MetasHandler (default true here) */
    bool gate_graphql;          /* GraphQLCatalogQueries: not built; /api/v1/graphql answers 501 */
} catalogd_flags;

/* Every string points into argv.  Returns 0, 1 when help was asked for (usage printed to
 * stdout), or -1 with a one-line message in msg. */
int catalogd_flags_parse(int argc, char **argv, catalogd_flags *f, char *msg, size_t msgsz);
void catalogd_usage(FILE *out);

/* Listen addresses ":port" mean every IPv4 address (like Go); olm_parse_host_port with this. */
#define CATALOGD_ANY_HOST OLM_ANY_HOST

#endif
