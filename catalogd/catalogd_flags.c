/* catalogd's flags; see catalogd_flags.h and catalogd_usage(). */
#include "catalogd_flags.h"

#include <stdio.h>
#include <string.h>

#include "olm_flags.h"
#include "olm_parse.h"

/* Feature gates that change what catalogd does: none.  Upstream's APIV1MetasHandler is
 * always on here and GraphQLCatalogQueries is not implemented, so neither is accepted. */
/* Upstream catalogd's gates at df2c201, with this project's defaults (/metas on; upstream:
 * off).  `f` NULL: the table for --help only. */
#define CATALOGD_NGATES 2
static void catalogd_gates(catalogd_flags *f, olm_feature_gate g[CATALOGD_NGATES])
{
    static bool scratch[CATALOGD_NGATES];
    g[0] = (olm_feature_gate){"APIV1MetasHandler", f ? &f->gate_metas : &scratch[0], true,
                              "serve /catalogs/<name>/api/v1/metas; upstream: false"};
    g[1] = (olm_feature_gate){"GraphQLCatalogQueries", f ? &f->gate_graphql : &scratch[1], false,
                              "not built: accepted, and /api/v1/graphql answers 501"};
}

void catalogd_usage(FILE *out)
{
    fprintf(out,
            "Usage: catalogd [flags]\n"
            "       catalogd version\n"
            "\n"
            "Reconciles ClusterCatalogs: pulls each catalog image, validates its File-Based Catalog,\n"
            "stores it under --cache-dir and serves it on /catalogs/<name>/api/v1/{all,metas}.\n"
            "\n"
            "Flags (--flag VALUE or --flag=VALUE; addresses are :PORT for every address, or IP:PORT):\n"
            "  --kubeconfig PATH              default: $KUBECONFIG, in-cluster, ~/.kube/config\n"
            "  --cache-dir DIR                stores and image cache (default /var/cache/catalogd)\n"
            "  --catalogs-server-addr ADDR    catalog HTTP(S) server (default 127.0.0.1:8443; in a Pod :8443,\n"
            "                                 as upstream)\n"
            "  --external-address HOST[:PORT] used in status.urls.base (default: the server address);\n"
            "                                 the scheme is https with --tls-cert/--tls-key, else http\n"
            "  --tls-cert PATH --tls-key PATH serve the catalogs and metrics over HTTPS\n"
            "                                 (reloaded for new connections when the files change)\n"
            OLM_DAEMON_TLS_LOG_USAGE
            "  --log-format FORMAT            text (default) or json: one object a line (ts, level, msg,\n"
            "                                 catalog)\n"            "  --health-probe-bind-address ADDR\n"
            "                                 a separate listener for /healthz and /readyz (default:\n"
            "                                 none, in a Pod :8081 as upstream; they are always served on\n"
            "                                 the catalog server too);\n"
            "                                 --health-addr is the same flag\n"
            "  --metrics-bind-address ADDR    a separate listener for /metrics, HTTPS with --tls-cert, for\n"
            "                                 bearer tokens allowed to get /metrics (TokenReview +\n"
            "                                 SubjectAccessReview); then only there (default \"0\": none,\n"
            "                                 /metrics is on the catalog server)\n"
            "  --leader-elect                 run the reconciler only while holding the Lease\n"
            "                                 catalogd-operator-lock\n"
            "  --leader-election-namespace NS the Lease's namespace (default: --system-namespace)\n"
            OLM_DAEMON_LEADER_USAGE
            "  --system-namespace NS          default: the pod's namespace, else olmv1-system\n"
            "  --gc-interval DURATION         store garbage collection period (default 12h)\n"
            "  --insecure-registries LIST     comma-separated insecure registries: TLS unverified, else HTTP\n"
            "                                 (default $OLMV1_INSECURE_REGISTRIES; loopback: plain HTTP)\n"
            "  --authfile PATH                registry credentials (docker config JSON)\n"
            OLM_DAEMON_REGISTRY_USAGE
            "  --max-concurrent-reconciles N  default 2\n"
            "  --pull-timeout DURATION        deadline of a whole catalog image pull (default 10m)\n"
            "  --no-access-log                do not log each HTTP request\n"
            "  --webhook-server-port PORT     upstream's ClusterCatalog mutating webhook, HTTPS with --tls-cert\n"
            "                                 (default 9443; 0: none; none without a certificate)\n"
            "  --shutdown-delay DURATION      after SIGTERM, keep serving this long with /readyz 503, so that\n"
            "                                 the Service sends no new request here before the server\n"
            "                                 stops (default in a Pod 5s, elsewhere 0: stop at once; a\n"
            "                                 second SIGTERM stops now)\n"
            "  --feature-gates LIST           Name=true|false,... Known gates:\n");
    olm_feature_gate gates[CATALOGD_NGATES];
    catalogd_gates(NULL, gates);
    olm_feature_gates_usage(out, gates, CATALOGD_NGATES, "                                   ");
    fprintf(out,
            "  --check-flags                  parse and check the command line only (no files, network\n"
            "                                 or API server): exit 0 when valid, else 2 with the error\n"
            "  --version                      print \"catalogd <version>\" and exit\n"
            "  -h, --help\n"
            "\n"
            "Test-only: --poll-interval-override-seconds N makes every catalog that sets\n"
            "pollIntervalMinutes poll every N seconds instead.\n"
            "\n"
            "Exit codes: 0 stopped by SIGTERM/SIGINT; 1 a start-up or runtime failure (a bad\n"
            "--tls-cert, a CA directory, a port in use, a lost Lease); 2 a bad command line.\n");
}

/* The value checks beyond what the table does; no I/O. */
static int check(catalogd_flags *f, char *msg, size_t msgsz)
{
    if (!f->server_addr)
        f->server_addr = olm_listen_default(":8443", "127.0.0.1:8443");
    if (!f->common.health_addr) /* in a Pod: where upstream's manifests send the probes */
        f->common.health_addr = olm_listen_default(":8081", NULL);
    olm_flag_empty_is_unset(&f->external_addr);
    /* In a Pod a Service may still send clients here for a second or two after SIGTERM;
     * anywhere else nothing does. */
    const char *delay = f->shutdown_delay ? f->shutdown_delay : olm_listen_default("5s", "0");
    if (olm_parse_duration(delay, &f->shutdown_delay_ms) != 0) {
        snprintf(msg, msgsz, "--shutdown-delay: bad duration \"%s\" (e.g. 5s; 0 stops at once)", delay);
        return -1;
    }
    olm_flag_empty_is_unset(&f->lease_namespace);
    char host[256];
    int port;
    if (olm_parse_listen_addr(f->server_addr, host, sizeof host, &port) != 0) {
        snprintf(msg, msgsz, "--catalogs-server-addr: want :PORT, IP:PORT or [IPv6]:PORT, got \"%s\"",
                 f->server_addr);
        return -1;
    }
    if (f->lease_namespace && !olm_is_dns1123_label(f->lease_namespace, strlen(f->lease_namespace))) {
        snprintf(msg, msgsz, "--leader-election-namespace: \"%s\" is not a namespace name", f->lease_namespace);
        return -1;
    }
    olm_feature_gate gates[CATALOGD_NGATES];
    catalogd_gates(f, gates);
    return olm_daemon_flags_check(&f->common, gates, CATALOGD_NGATES, msg, msgsz);
}

int catalogd_flags_parse(int argc, char **argv, catalogd_flags *f, char *msg, size_t msgsz)
{
    memset(f, 0, sizeof *f);
    olm_daemon_flags *c = &f->common;
    /* An alias is a second row with the same destination and the same default. */
    const olm_flag flags[] = {
        OLM_FLAG_STRING("--kubeconfig", &f->kubeconfig, NULL),
        OLM_FLAG_STRING("--cache-dir", &f->cache_dir, "/var/cache/catalogd"),
        OLM_FLAG_STRING("--catalogs-server-addr", &f->server_addr, NULL),
        OLM_FLAG_STRING("--external-address", &f->external_addr, NULL),
        OLM_DAEMON_TLS_FLAGS(c),
        OLM_DAEMON_LOG_FLAGS(c),
        OLM_DAEMON_LISTENER_FLAGS(c),
        OLM_FLAG_BOOL("--leader-elect", &f->leader_elect, "false"),
        OLM_FLAG_STRING("--leader-election-namespace", &f->lease_namespace, NULL),
        OLM_DAEMON_LEADER_FLAGS(c),
        OLM_FLAG_STRING("--system-namespace", &c->system_namespace, NULL),
        OLM_FLAG_DURATION("--gc-interval", &f->gc_interval_ms, "12h", 1,
                          "--gc-interval: bad duration \"%s\" (e.g. 12h, 30m, 10s)"),
        OLM_FLAG_STRING("--insecure-registries", &f->insecure_registries, NULL),
        OLM_FLAG_STRING("--authfile", &f->authfile, NULL),
        OLM_DAEMON_REGISTRY_FLAGS(c),
        OLM_FLAG_APPEND("--feature-gates", c->feature_gates),
        OLM_FLAG_UINT("--webhook-server-port", &f->webhook_port, "9443", 0, 65535,
                      "--webhook-server-port must be 0..65535, not %s"),
        OLM_FLAG_STRING("--shutdown-delay", &f->shutdown_delay, NULL),
        OLM_FLAG_DURATION("--poll-interval-override-seconds", &f->poll_override_ms, NULL, 1,
                          "--poll-interval-override-seconds: bad value \"%s\""),
        OLM_FLAG_NO("--no-access-log", &f->access_log),
        OLM_FLAG_UINT("--max-concurrent-reconciles", &f->concurrency, "2", 1, 64,
                      "--max-concurrent-reconciles: want 1..64, got \"%s\""),
        OLM_FLAG_DURATION("--pull-timeout", &f->pull_timeout_ms, "10m", 1000,
                          "--pull-timeout: want a duration of at least 1s (e.g. 10m), got \"%s\""),
        OLM_FLAG_BOOL("--check-flags", &c->check_flags, "false"),
        OLM_FLAG_BOOL("--version", &c->version, "false"),
    };
    int rc = olm_flags_parse(flags, OLM_FLAGS_COUNT(flags), "unknown flag %s", argc, argv, msg, msgsz);
    if (rc == 1)
        catalogd_usage(stdout);
    if (rc != 0)
        return rc;
    return check(f, msg, msgsz);
}
