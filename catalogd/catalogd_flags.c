/* catalogd's flags; see catalogd_flags.h and catalogd_usage(). */
#include "catalogd_flags.h"
#include "olm_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Matches "--name VALUE" and "--name=VALUE"; advances *i past a separate value. */
static bool opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return false;
    if (a[n] == '=') {
        *val = a + n + 1;
        return true;
    }
    if (a[n] != '\0')
        return false;
    *val = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

int catalogd_flags_parse(int argc, char **argv, catalogd_flags *f, char *msg, size_t msgsz)
{
    memset(f, 0, sizeof *f);
    f->cache_dir = "/var/cache/catalogd";
    f->server_addr = "127.0.0.1:8443";
    f->gc_interval_ms = 12u * 3600u * 1000u;
    f->access_log = true;
    f->concurrency = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            catalogd_usage(stdout);
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
        if (strcmp(a, "--no-access-log") == 0) {
            f->access_log = false;
            continue;
        }
        const char **dst = NULL;
        const char *dur = NULL, *num = NULL, *pol = NULL;
        if (opt(argc, argv, &i, "--kubeconfig", &v))
            dst = &f->kubeconfig;
        else if (opt(argc, argv, &i, "--cache-dir", &v))
            dst = &f->cache_dir;
        else if (opt(argc, argv, &i, "--catalogs-server-addr", &v))
            dst = &f->server_addr;
        else if (opt(argc, argv, &i, "--external-address", &v))
            dst = &f->external_addr;
        else if (opt(argc, argv, &i, "--tls-cert", &v))
            dst = &f->tls_cert;
        else if (opt(argc, argv, &i, "--tls-key", &v))
            dst = &f->tls_key;
        else if (opt(argc, argv, &i, "--health-addr", &v))
            dst = &f->health_addr;
        else if (opt(argc, argv, &i, "--leader-election-namespace", &v))
            dst = &f->lease_namespace;
        else if (opt(argc, argv, &i, "--insecure-registries", &v))
            dst = &f->insecure_registries;
        else if (opt(argc, argv, &i, "--authfile", &v))
            dst = &f->authfile;
        else if (opt(argc, argv, &i, "--gc-interval", &v))
            dst = &dur;
        else if (opt(argc, argv, &i, "--max-concurrent-reconciles", &v))
            dst = &num;
        else if (opt(argc, argv, &i, "--poll-interval-override-seconds", &v))
            dst = &pol;
        else {
            snprintf(msg, msgsz, "unknown option %s", a);
            return -1;
        }
        if (!v) {
            snprintf(msg, msgsz, "%s needs a value", a);
            return -1;
        }
        *dst = v;
        if (dur && (olm_parse_duration(dur, &f->gc_interval_ms) != 0 || f->gc_interval_ms == 0)) {
            snprintf(msg, msgsz, "--gc-interval: bad duration \"%s\" (e.g. 12h, 30m, 10s)", dur);
            return -1;
        }
        if (num) {
            char *end;
            long n = strtol(num, &end, 10);
            if (*end || n < 1 || n > 64) {
                snprintf(msg, msgsz, "--max-concurrent-reconciles: want 1..64, got \"%s\"", num);
                return -1;
            }
            f->concurrency = (unsigned)n;
        }
        if (pol && (olm_parse_duration(pol, &f->poll_override_ms) != 0 || f->poll_override_ms == 0)) {
            snprintf(msg, msgsz, "--poll-interval-override-seconds: bad value \"%s\"", pol);
            return -1;
        }
    }
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
