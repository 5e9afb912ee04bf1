/* operator_flags: see the header. */
#include <stdlib.h>
#include <string.h>

#include "operator_flags.h"
#include "olm_parse.h"

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
    *f = (operator_flags){
        .system_namespace = "olmv1-system",
        .cache_path = "/var/cache/operator-controller",
        .health_addr = "127.0.0.1:8081",
        .concurrency = 4,
        .repair_interval_ms = 300000,
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            operator_usage(stdout);
            return 1;
        }
        if (strcmp(a, "--leader-elect") == 0 || strcmp(a, "--leader-elect=true") == 0) {
            f->leader_elect = true;
            continue;
        }
        if (strcmp(a, "--leader-elect=false") == 0) {
            f->leader_elect = false;
            continue;
        }
        /* Every other flag takes a value: "--flag value" or "--flag=value". */
        const char *eq = strchr(a, '=');
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        static const char *const names[] = {"--kubeconfig", "--system-namespace", "--cache-path",
                                            "--catalogd-ca-file", "--health-addr", "--insecure-registries",
                                            "--authfile", "--max-concurrent-reconciles", "--drift-repair-interval"};
        int which = -1;
        for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++)
            if (strlen(names[k]) == nlen && strncmp(a, names[k], nlen) == 0)
                which = k;
        if (which < 0) {
            snprintf(msg, msgsz, "unknown flag %s", a);
            return -1;
        }
        if (!val) {
            snprintf(msg, msgsz, "%s needs a value", names[which]);
            return -1;
        }
        if (!eq)
            i++;
        switch (which) {
        case 0: f->kubeconfig = val; break;
        case 1: f->system_namespace = val; break;
        case 2: f->cache_path = val; break;
        case 3: f->catalogd_ca_file = val; break;
        case 4: f->health_addr = val; break;
        case 5: f->insecure_registries = val; break;
        case 6: f->authfile = val; break;
        case 7: {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 1 || n > 64) {
                snprintf(msg, msgsz, "--max-concurrent-reconciles must be 1..64, not %s", val);
                return -1;
            }
            f->concurrency = (unsigned)n;
            break;
        }
        case 8:
            if (olm_parse_duration(val, &f->repair_interval_ms) != 0) {
                snprintf(msg, msgsz, "--drift-repair-interval: bad duration %s", val);
                return -1;
            }
            break;
        }
    }
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
