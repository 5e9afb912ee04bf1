/* operator_flags: see the header. */
#include <string.h>

#include "olm_flags.h"
#include "olm_parse.h"
#include "operator_flags.h"

void operator_usage(FILE *out)
{
    fputs("usage: operator-controller [flags]\n"
          "  --kubeconfig PATH              kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
          "  --system-namespace NS          where install records live (default olmv1-system)\n"
          "  --cache-path DIR               bundle image cache (default /var/cache/operator-controller)\n"
          "  --catalogd-ca-file PEM         CA bundle for https catalog URLs\n"
          "  --health-addr HOST:PORT        /healthz /readyz /metrics (default 127.0.0.1:8081; \"0\" disables)\n"
          "  --leader-elect                 reconcile only while holding the Lease\n"
          "  --insecure-registries LIST     registries over plain HTTP (default $OLMV1_INSECURE_REGISTRIES)\n"
          "  --authfile PATH                registry credentials (default $REGISTRY_AUTH_FILE)\n"
          "  --max-concurrent-reconciles N  (default 4)\n"
          "  --drift-repair-interval DUR    also re-check installed objects this often, a backstop to the\n"
          "                                 drift watches (default 5m; 0 disables)\n",
          out);
}

int operator_flags_parse(int argc, char **argv, operator_flags *f, char *msg, size_t msgsz)
{
    memset(f, 0, sizeof *f);
    const olm_flag flags[] = {
        OLM_FLAG_STRING("--kubeconfig", &f->kubeconfig, NULL),
        OLM_FLAG_STRING("--system-namespace", &f->system_namespace, "olmv1-system"),
        OLM_FLAG_STRING("--cache-path", &f->cache_path, "/var/cache/operator-controller"),
        OLM_FLAG_STRING("--catalogd-ca-file", &f->catalogd_ca_file, NULL),
        OLM_FLAG_STRING("--health-addr", &f->health_addr, "127.0.0.1:8081"),
        OLM_FLAG_BOOL("--leader-elect", &f->leader_elect, "false"),
        OLM_FLAG_STRING("--insecure-registries", &f->insecure_registries, NULL),
        OLM_FLAG_STRING("--authfile", &f->authfile, NULL),
        OLM_FLAG_UINT("--max-concurrent-reconciles", &f->concurrency, "4", 1, 64,
                      "--max-concurrent-reconciles must be 1..64, not %s"),
        OLM_FLAG_DURATION("--drift-repair-interval", &f->repair_interval_ms, "5m", 0,
                          "--drift-repair-interval: bad duration %s"),
    };
    int rc = olm_flags_parse(flags, OLM_FLAGS_COUNT(flags), "unknown flag %s", argc, argv, msg, msgsz);
    if (rc == 1)
        operator_usage(stdout);
    if (rc != 0)
        return rc;
    if (!*f->system_namespace) {
        snprintf(msg, msgsz, "--system-namespace must not be empty");
        return -1;
    }
    char host[256];
    int port;
    if (f->health_addr && *f->health_addr && strcmp(f->health_addr, "0") != 0 &&
        olm_parse_host_port(f->health_addr, OPERATOR_EMPTY_HOST, host, sizeof host, &port) != 0) {
        snprintf(msg, msgsz, "--health-addr: expected host:port, not %s", f->health_addr);
        return -1;
    }
    return 0;
}
