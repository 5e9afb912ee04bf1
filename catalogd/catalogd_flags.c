/* catalogd's flags; see catalogd_flags.h and catalogd_usage(). */
#include "catalogd_flags.h"

#include <stdio.h>
#include <string.h>

#include "olm_flags.h"
#include "olm_parse.h"

void catalogd_usage(FILE *out)
{
    fprintf(out,
            "Usage: catalogd [options]\n"
            "\n"
            "Reconciles ClusterCatalogs: pulls each catalog image, validates its File-Based Catalog,\n"
            "stores it under --cache-dir and serves it on /catalogs/<name>/api/v1/{all,metas}.\n"
            "\n"
            "Options (--flag VALUE or --flag=VALUE):\n"
            "  --kubeconfig PATH              default: $KUBECONFIG, in-cluster, ~/.kube/config\n"
            "  --cache-dir DIR                stores and image cache (default /var/cache/catalogd)\n"
            "  --catalogs-server-addr H:P     catalog HTTP(S) server (default 127.0.0.1:8443)\n"
            "  --external-address HOST[:PORT] used in status.urls.base (default: the server address);\n"
            "                                 the scheme is https with --tls-cert/--tls-key, else http\n"
            "  --tls-cert PATH --tls-key PATH serve HTTPS\n"
            "  --health-addr H:P              a separate listener for /healthz and /readyz\n"
            "                                 (they are always served on the catalog server too)\n"
            "  --leader-elect                 run the reconciler only while holding the Lease\n"
            "                                 catalogd-operator-lock\n"
            "  --leader-election-namespace NS default: the kubeconfig namespace, else olmv1-system\n"
            "  --gc-interval DURATION         store garbage collection period (default 12h)\n"
            "  --insecure-registries LIST     comma-separated registries reached over plain HTTP\n"
            "                                 (default $OLMV1_INSECURE_REGISTRIES; loopback always)\n"
            "  --authfile PATH                registry credentials (docker config JSON)\n"
            "  --max-concurrent-reconciles N  default 2\n"
            "  --no-access-log                do not log each HTTP request\n"
            "  -h, --help\n"
            "\n"
            "Test-only: --poll-interval-override-seconds N makes every catalog that sets\n"
            "pollIntervalMinutes poll every N seconds instead.\n"
            "\n"
            "SIGTERM or SIGINT stops it gracefully (exit 0).\n");
}

int catalogd_flags_parse(int argc, char **argv, catalogd_flags *f, char *msg, size_t msgsz)
{
    memset(f, 0, sizeof *f);
    const olm_flag flags[] = {
        OLM_FLAG_STRING("--kubeconfig", &f->kubeconfig, NULL),
        OLM_FLAG_STRING("--cache-dir", &f->cache_dir, "/var/cache/catalogd"),
        OLM_FLAG_STRING("--catalogs-server-addr", &f->server_addr, "127.0.0.1:8443"),
        OLM_FLAG_STRING("--external-address", &f->external_addr, NULL),
        OLM_FLAG_STRING("--tls-cert", &f->tls_cert, NULL),
        OLM_FLAG_STRING("--tls-key", &f->tls_key, NULL),
        OLM_FLAG_STRING("--health-addr", &f->health_addr, NULL),
        OLM_FLAG_BOOL("--leader-elect", &f->leader_elect, "false"),
        OLM_FLAG_STRING("--leader-election-namespace", &f->lease_namespace, NULL),
        OLM_FLAG_DURATION("--gc-interval", &f->gc_interval_ms, "12h", 1,
                          "--gc-interval: bad duration \"%s\" (e.g. 12h, 30m, 10s)"),
        OLM_FLAG_STRING("--insecure-registries", &f->insecure_registries, NULL),
        OLM_FLAG_STRING("--authfile", &f->authfile, NULL),
        OLM_FLAG_DURATION("--poll-interval-override-seconds", &f->poll_override_ms, NULL, 1,
                          "--poll-interval-override-seconds: bad value \"%s\""),
        OLM_FLAG_NO("--no-access-log", &f->access_log),
        OLM_FLAG_UINT("--max-concurrent-reconciles", &f->concurrency, "2", 1, 64,
                      "--max-concurrent-reconciles: want 1..64, got \"%s\""),
    };
    int rc = olm_flags_parse(flags, OLM_FLAGS_COUNT(flags), "unknown option %s", argc, argv, msg, msgsz);
    if (rc == 1)
        catalogd_usage(stdout);
    if (rc != 0)
        return rc;
    if ((f->tls_cert == NULL) != (f->tls_key == NULL)) {
        snprintf(msg, msgsz, "--tls-cert and --tls-key go together");
        return -1;
    }
    char host[256];
    int port;
    if (olm_parse_host_port(f->server_addr, CATALOGD_ANY_HOST, host, sizeof host, &port) != 0) {
        snprintf(msg, msgsz, "--catalogs-server-addr: want HOST:PORT, got \"%s\"", f->server_addr);
        return -1;
    }
    if (f->health_addr && olm_parse_host_port(f->health_addr, CATALOGD_ANY_HOST, host, sizeof host, &port) != 0) {
        snprintf(msg, msgsz, "--health-addr: want HOST:PORT, got \"%s\"", f->health_addr);
        return -1;
    }
    return 0;
}
