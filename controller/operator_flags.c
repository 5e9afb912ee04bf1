/* operator_flags: see the header. */
#include <stdio.h>
#include <string.h>

#include "olm_flags.h"
#include "olm_parse.h"
#include "operator_flags.h"

/* Every gate of upstream's operator-controller at df2c201, with this project's defaults:
 * Single/OwnNamespace and deploymentConfig are on here (upstream: off).  `f` NULL: the
 * table for --help only. */
#define OPERATOR_NGATES 6
static void operator_gates(operator_flags *f, olm_feature_gate g[OPERATOR_NGATES])
{
    static bool scratch[OPERATOR_NGATES];
    g[0] = (olm_feature_gate){"SingleOwnNamespaceInstallSupport", f ? &f->gate_single_own_namespace : &scratch[0],
                              true, "Single/OwnNamespace installs (spec.config.inline.watchNamespace); upstream: false"};
    g[1] = (olm_feature_gate){"DeploymentConfig", f ? &f->gate_deployment_config : &scratch[1], true,
                              "spec.config.inline.deploymentConfig; upstream: false"};
    g[2] = (olm_feature_gate){"WebhookProviderCertManager", f ? &f->gate_cert_manager : &scratch[2], true,
                              "bundles' webhooks may get cert-manager certificates"};
    g[3] = (olm_feature_gate){"WebhookProviderOpenshiftServiceCA", f ? &f->gate_service_ca : &scratch[3], true,
                              "bundles' webhooks may get OpenShift service-ca certificates (when cert-manager's is off)"};
    g[4] = (olm_feature_gate){"BoxcutterRuntime", f ? &f->gate_boxcutter : &scratch[4], false,
                              "installs and upgrades are ClusterObjectSet revisions, rolled out in phases with probes"};
    g[5] = (olm_feature_gate){"BundleReleaseSupport", f ? &f->gate_bundle_release : &scratch[5], false,
                              "not built: accepted, and bundles are ordered by version alone"};
}

void operator_flags_unbuilt_gates(const operator_flags *f, void (*say)(const char *line, void *data), void *data)
{
    if (f->gate_bundle_release)
        say("--feature-gates BundleReleaseSupport=true: the olm.package release field is not built here; bundles "
            "are ordered by version alone and status.install.bundle.release is not written",
            data);
}

/* --webhook-cert-provider auto follows the webhook gates when --feature-gates names one,
 * as upstream chooses: cert-manager when its gate is on, else service-ca when its gate is. */
static void apply_webhook_gates(operator_flags *f)
{
    if (f->cert_mode != CE_CERT_AUTO || !strstr(f->common.feature_gates, "WebhookProvider"))
        return;
    if (f->gate_cert_manager)
        f->cert_mode = CE_CERT_MANAGER;
    else if (f->gate_service_ca)
        f->cert_mode = CE_CERT_SERVICE_CA;
}

void operator_usage(FILE *out)
{
    fputs("Usage: operator-controller [flags]\n"
          "       operator-controller version\n"
          "\n"
          "Flags (--flag VALUE or --flag=VALUE; addresses are :PORT for every address, or IP:PORT):\n"
          "  --kubeconfig PATH              kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
          "  --system-namespace NS          where install records and the Lease live (default: the pod's\n"
          "                                 namespace, else olmv1-system)\n"
          "  --cache-path DIR               bundle image cache (default /var/cache/operator-controller)\n"
          "  --catalogd-cas-dir DIR         *.crt/*.pem files trusted for https catalog URLs, in addition\n"
          "                                 to the system store\n"
          "  --catalogd-ca-file PEM         the same for one file\n"
          "  --health-probe-bind-address ADDR\n"
          "                                 /healthz /readyz /metrics (default 127.0.0.1:8081, in a Pod :8081\n"
          "                                 as upstream; \"0\" disables);\n"
          "                                 --health-addr is the same flag\n"
          "  --metrics-bind-address ADDR    a separate listener for /metrics, HTTPS with --tls-cert, for\n"
          "                                 bearer tokens allowed to get /metrics (TokenReview +\n"
          "                                 SubjectAccessReview); then only there (default \"0\": none)\n"
          "  --tls-cert PATH --tls-key PATH the metrics listener's certificate and key (reloaded for new\n"
          "                                 connections when the files change)\n"
          OLM_DAEMON_TLS_LOG_USAGE
          "  --log-format FORMAT            text (default) or json: one object a line (ts, level, msg,\n"
          "                                 clusterExtension)\n"
          "  --leader-elect                 reconcile only while holding the Lease\n"
          OLM_DAEMON_LEADER_USAGE
          "  --insecure-registries LIST     insecure registries: TLS unverified, else HTTP (default $OLMV1_INSECURE_REGISTRIES)\n"
          "  --authfile PATH                registry credentials (default $REGISTRY_AUTH_FILE)\n"
          OLM_DAEMON_REGISTRY_USAGE
          "  --max-concurrent-reconciles N  (default 8)\n"
          "  --drift-repair-interval DUR    also re-check installed objects this often, a backstop to the\n"
          "                                 drift watches (default 5m; 0 disables)\n"
          "  --pull-timeout DUR             deadline of a whole bundle image pull (default 10m)\n"
          "  --webhook-cert-provider P      who issues the certificates of bundles' webhooks: auto\n"
          "                                 (default: OpenShift service-ca where config.openshift.io/v1\n"
          "                                 is served, else cert-manager where cert-manager.io/v1 is),\n"
          "                                 cert-manager or openshift-service-ca\n"
          "  --ignore-service-account       spec.serviceAccount means nothing, as in upstream OLM v1: every\n"
          "                                 bundle is applied with this controller's own identity (which then\n"
          "                                 needs config/rbac-upstream-rights); default: a named one is used\n"
          "  --service-account-identity M   how bundles are applied as spec.serviceAccount: impersonation\n"
          "                                 (Impersonate-User with this controller's own credentials),\n"
          "                                 token (a TokenRequest per ServiceAccount, as upstream), or auto\n"
          "                                 (default: impersonation when this controller may impersonate\n"
          "                                 and get serviceaccounts, as config/rbac allows; else token)\n"
          "  --available-condition=false    no Available condition on ClusterExtensions (as upstream without\n"
          "                                 its BoxcutterRuntime gate); default true: Available from the\n"
          "                                 built-in probes over the installed objects (Deployments\n"
          "                                 available, CRDs established, PVCs bound, ...)\n"
          "  --progress-deadline-minute-seconds N\n"
          "                                 test only: the seconds in a minute of\n"
          "                                 spec.progressDeadlineMinutes (default 60)\n"
          "  --feature-gates LIST           Name=true|false,... Known gates:\n",
          out);
    olm_feature_gate gates[OPERATOR_NGATES];
    operator_gates(NULL, gates);
    olm_feature_gates_usage(out, gates, OPERATOR_NGATES, "                                   ");
    fputs("  --check-flags                  parse and check the command line only (no files, network\n"
          "                                 or API server): exit 0 when valid, else 2 with the error\n"
          "  --version                      print \"operator-controller <version>\" and exit\n"
          "  -h, --help\n"
          "\n"
          "Exit codes: 0 stopped by SIGTERM/SIGINT; 1 a start-up or runtime failure (a bad\n"
          "--tls-cert, a CA directory, a port in use, a lost Lease); 2 a bad command line.\n",
          out);
}

int operator_flags_parse(int argc, char **argv, operator_flags *f, char *msg, size_t msgsz)
{
    memset(f, 0, sizeof *f);
    olm_daemon_flags *c = &f->common;
    /* An alias is a second row with the same destination and the same default. */
    const olm_flag flags[] = {
        OLM_FLAG_STRING("--kubeconfig", &f->kubeconfig, NULL),
        OLM_FLAG_STRING("--system-namespace", &c->system_namespace, NULL),
        OLM_FLAG_STRING("--cache-path", &f->cache_path, "/var/cache/operator-controller"),
        OLM_FLAG_STRING("--catalogd-cas-dir", &f->catalogd_cas_dir, NULL),
        OLM_FLAG_STRING("--catalogd-ca-file", &f->catalogd_ca_file, NULL),
        OLM_DAEMON_LISTENER_FLAGS(c),
        OLM_DAEMON_TLS_FLAGS(c),
        OLM_DAEMON_LOG_FLAGS(c),
        OLM_FLAG_BOOL("--leader-elect", &f->leader_elect, "false"),
        OLM_DAEMON_LEADER_FLAGS(c),
        OLM_FLAG_STRING("--insecure-registries", &f->insecure_registries, NULL),
        OLM_FLAG_STRING("--authfile", &f->authfile, NULL),
        OLM_DAEMON_REGISTRY_FLAGS(c),
        OLM_FLAG_APPEND("--feature-gates", c->feature_gates),
        OLM_FLAG_UINT("--max-concurrent-reconciles", &f->concurrency, "8", 1, 64,
                      "--max-concurrent-reconciles must be 1..64, not %s"),
        OLM_FLAG_DURATION("--drift-repair-interval", &f->repair_interval_ms, "5m", 0,
                          "--drift-repair-interval: bad duration %s"),
        OLM_FLAG_DURATION("--pull-timeout", &f->pull_timeout_ms, "10m", 1000,
                          "--pull-timeout: want a duration of at least 1s (e.g. 10m), not %s"),
        OLM_FLAG_STRING("--webhook-cert-provider", &f->webhook_cert_provider, "auto"),
        OLM_FLAG_BOOL("--ignore-service-account", &f->ignore_service_account, "false"),
        OLM_FLAG_STRING("--service-account-identity", &f->service_account_identity, "auto"),
        OLM_FLAG_BOOL("--available-condition", &f->available_condition, "true"),
        OLM_FLAG_UINT("--progress-deadline-minute-seconds", &f->deadline_minute_s, "60", 1, 3600,
                      "--progress-deadline-minute-seconds must be 1..3600, not %s"),
        OLM_FLAG_BOOL("--check-flags", &c->check_flags, "false"),
        OLM_FLAG_BOOL("--version", &c->version, "false"),
    };
    int rc = olm_flags_parse(flags, OLM_FLAGS_COUNT(flags), "unknown flag %s", argc, argv, msg, msgsz);
    if (rc == 1)
        operator_usage(stdout);
    if (rc != 0)
        return rc;
    if (!c->health_addr)
        c->health_addr = olm_listen_default(":8081", "127.0.0.1:8081");
    const char *wcp = f->webhook_cert_provider;
    if (strcmp(wcp, "auto") == 0)
        f->cert_mode = CE_CERT_AUTO;
    else if (strcmp(wcp, "cert-manager") == 0)
        f->cert_mode = CE_CERT_MANAGER;
    else if (strcmp(wcp, "openshift-service-ca") == 0)
        f->cert_mode = CE_CERT_SERVICE_CA;
    else {
        snprintf(msg, msgsz, "--webhook-cert-provider: want auto, cert-manager or openshift-service-ca, got \"%s\"", wcp);
        return -1;
    }
    const char *sai = f->service_account_identity;
    if (strcmp(sai, "auto") == 0)
        f->identity_mode = CE_IDENTITY_AUTO;
    else if (strcmp(sai, "impersonation") == 0)
        f->identity_mode = CE_IDENTITY_IMPERSONATION;
    else if (strcmp(sai, "token") == 0)
        f->identity_mode = CE_IDENTITY_TOKEN;
    else {
        snprintf(msg, msgsz, "--service-account-identity: want auto, impersonation or token, got \"%s\"", sai);
        return -1;
    }
    olm_flag_empty_is_unset(&f->catalogd_cas_dir);
    olm_flag_empty_is_unset(&f->catalogd_ca_file);
    olm_feature_gate gates[OPERATOR_NGATES];
    operator_gates(f, gates);
    if (olm_daemon_flags_check(c, gates, OPERATOR_NGATES, msg, msgsz) != 0)
        return -1;
    apply_webhook_gates(f);
    return 0;
}
