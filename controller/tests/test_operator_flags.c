/* operator_flags: the manifests' arguments, today's spellings kept as aliases, defaults,
 * and one message per bad value (exit 2 in the binary). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "operator_flags.h"

static char msg[512];

static int parse(operator_flags *f, char **args)
{
    char *argv[40] = {"operator-controller"};
    int argc = 1;
    while (*args)
        argv[argc++] = *args++;
    argv[argc] = NULL;
    msg[0] = '\0';
    return operator_flags_parse(argc, argv, f, msg, sizeof msg);
}

#define PARSE(f, ...) parse((f), (char *[]){__VA_ARGS__, NULL})

static void test_defaults(void **state)
{
    (void)state;
    operator_flags f;
    assert_int_equal(parse(&f, (char *[]){NULL}), 0);
    assert_null(f.common.system_namespace); /* the pod's namespace, resolved at start */
    assert_string_equal(f.cache_path, "/var/cache/operator-controller");
    assert_string_equal(f.common.health_addr, "127.0.0.1:8081");
    assert_string_equal(f.common.metrics_addr, "0");
    assert_null(f.common.tls_cert);
    assert_null(f.catalogd_cas_dir);
    assert_false(f.leader_elect);
    assert_false(f.common.check_flags);
    assert_int_equal(f.concurrency, 8);
    assert_int_equal(f.repair_interval_ms, 300000);
    assert_int_equal(f.cert_mode, CE_CERT_AUTO);
    assert_int_equal(f.deadline_minute_s, 60);
    assert_string_equal(f.common.tls.name, "intermediate");
    assert_int_equal(f.common.level, OLM_LOG_INFO);
    assert_int_equal(f.common.format, OLM_LOG_TEXT);
    /* kube_leader.h's: a dead leader replaced within 10 s + 2 s */
    assert_int_equal(f.common.lease_duration_ms, 10000);
    assert_int_equal(f.common.renew_deadline_ms, 7000);
    assert_int_equal(f.common.retry_period_ms, 2000);
}

/* Ours (upstream's operator-controller hard-codes OpenShift's 137s/107s/26s and has no
 * flags): component-base's spellings, Go-like durations, one flag given alone keeps the
 * others' defaults, and the order retry < renew deadline < lease is checked. */
static void test_leader_election_timings(void **state)
{
    (void)state;
    operator_flags f;
    assert_int_equal(PARSE(&f, "--leader-elect", "--leader-elect-lease-duration=137s", "--leader-elect-renew-deadline",
                           "107s", "--leader-elect-retry-period=26s"),
                     0);
    assert_int_equal(f.common.lease_duration_ms, 137000);
    assert_int_equal(f.common.renew_deadline_ms, 107000);
    assert_int_equal(f.common.retry_period_ms, 26000);
    assert_int_equal(PARSE(&f, "--leader-elect-lease-duration=1m", "--leader-elect-renew-deadline=1500ms",
                           "--leader-elect-retry-period=0.5"),
                     0);
    assert_int_equal(f.common.lease_duration_ms, 60000);
    assert_int_equal(f.common.renew_deadline_ms, 1500);
    assert_int_equal(f.common.retry_period_ms, 500);
    assert_int_equal(PARSE(&f, "--leader-elect-lease-duration=15s"), 0); /* controller-runtime's lease */
    assert_int_equal(f.common.lease_duration_ms, 15000);
    assert_int_equal(f.common.renew_deadline_ms, 7000);
    assert_int_equal(f.common.retry_period_ms, 2000);
}

/* The flags of issue 13: TLS profile, logging, webhook certificates. */
static void test_operations_flags(void **state)
{
    (void)state;
    operator_flags f;
    assert_int_equal(PARSE(&f, "--tls-profile=Modern", "-v", "2", "--log-format=json", "--webhook-cert-provider",
                           "cert-manager", "--progress-deadline-minute-seconds", "1"),
                     0);
    assert_string_equal(f.common.tls.name, "modern");
    assert_int_equal(f.common.level, OLM_LOG_DEBUG);
    assert_int_equal(f.common.format, OLM_LOG_JSON);
    assert_int_equal(f.cert_mode, CE_CERT_MANAGER);
    assert_int_equal(f.deadline_minute_s, 1);
    assert_int_equal(PARSE(&f, "--v=3", "--log-level", "error", "--webhook-cert-provider=openshift-service-ca"), 0);
    assert_int_equal(f.common.level, OLM_LOG_ERROR); /* --log-level wins over -v */
    assert_int_equal(f.cert_mode, CE_CERT_SERVICE_CA);
}

static void test_manifest(void **state)
{
    (void)state;
    operator_flags f;
    assert_int_equal(PARSE(&f, "--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443",
                           "--system-namespace=olmv1-system", "--cache-path=/var/cache/operator-controller",
                           "--catalogd-cas-dir=/var/ca-certs", "--tls-cert=/var/certs/tls.crt",
                           "--tls-key=/var/certs/tls.key", "--check-flags"),
                     0);
    assert_true(f.leader_elect);
    assert_string_equal(f.common.health_addr, ":8081");
    assert_string_equal(f.common.metrics_addr, ":8443");
    assert_string_equal(f.common.system_namespace, "olmv1-system");
    assert_string_equal(f.catalogd_cas_dir, "/var/ca-certs");
    assert_string_equal(f.common.tls_key, "/var/certs/tls.key");
    assert_true(f.common.check_flags);
}

static void test_aliases_and_new(void **state)
{
    (void)state;
    operator_flags f;
    /* What scripts/run-local.sh, bench/ and e2e/ pass today. */
    assert_int_equal(PARSE(&f, "--health-addr", "127.0.0.1:9", "--catalogd-ca-file", "/ca.pem", "--pull-cas-dir",
                           "/cas", "--global-pull-secret", "olmv1-system/pull", "--feature-gates=",
                           "--drift-repair-interval", "0", "--version"),
                     0);
    assert_string_equal(f.common.health_addr, "127.0.0.1:9");
    assert_string_equal(f.catalogd_ca_file, "/ca.pem");
    assert_string_equal(f.common.pull_cas_dir, "/cas");
    assert_string_equal(f.common.global_pull_secret, "olmv1-system/pull");
    assert_true(f.common.version);
    assert_int_equal(f.repair_interval_ms, 0);
    assert_int_equal(PARSE(&f, "--catalogd-cas-dir=", "--tls-cert=", "--tls-key="), 0);
    assert_null(f.catalogd_cas_dir); /* "" is "not given", as upstream */
    assert_null(f.common.tls_cert);
}

static void collect_line(const char *line, void *data)
{
    int *n = data;
    (*n)++;
    assert_non_null(strstr(line, "not built here"));
}

/* Upstream's manifests pass one gate per --feature-gates; every one counts, ours default on. */
static void test_feature_gates(void **state)
{
    (void)state;
    operator_flags f;
    assert_int_equal(PARSE(&f, "--check-flags"), 0);
    assert_true(f.gate_single_own_namespace && f.gate_deployment_config && f.gate_cert_manager && f.gate_service_ca);
    assert_false(f.gate_boxcutter || f.gate_bundle_release);
    assert_int_equal(f.cert_mode, CE_CERT_AUTO);
    assert_false(f.ignore_service_account); /* a named ServiceAccount is used by default */
    assert_true(f.available_condition);     /* Available from the probes, without upstream's gate */
    assert_string_equal(f.common.health_addr, "127.0.0.1:8081");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1); /* in a Pod: upstream's default, as its probes expect */
    assert_int_equal(PARSE(&f, "--check-flags"), 0);
    assert_string_equal(f.common.health_addr, ":8081");
    assert_int_equal(PARSE(&f, "--health-addr", "127.0.0.1:9"), 0);
    assert_string_equal(f.common.health_addr, "127.0.0.1:9");
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(PARSE(&f, "--ignore-service-account"), 0);
    assert_true(f.ignore_service_account);
    assert_int_equal(PARSE(&f, "--available-condition=false"), 0);
    assert_false(f.available_condition);
    int lines = 0;
    operator_flags_unbuilt_gates(&f, collect_line, &lines);
    assert_int_equal(lines, 0);
    /* upstream's standard-e2e.yaml */
    assert_int_equal(PARSE(&f, "--feature-gates=WebhookProviderCertManager=true", "--feature-gates=BoxcutterRuntime=false",
                           "--feature-gates=BundleReleaseSupport=false", "--feature-gates=DeploymentConfig=false",
                           "--feature-gates=SingleOwnNamespaceInstallSupport=false",
                           "--feature-gates=WebhookProviderOpenshiftServiceCA=false"),
                     0);
    assert_false(f.gate_single_own_namespace || f.gate_deployment_config || f.gate_service_ca);
    assert_true(f.gate_cert_manager);
    assert_int_equal(f.cert_mode, CE_CERT_MANAGER); /* upstream picks cert-manager when its gate is on */
    assert_int_equal(PARSE(&f, "--feature-gates=WebhookProviderCertManager=false,WebhookProviderOpenshiftServiceCA=true"), 0);
    assert_int_equal(f.cert_mode, CE_CERT_SERVICE_CA);
    /* an explicit provider wins over the gates */
    assert_int_equal(PARSE(&f, "--webhook-cert-provider", "openshift-service-ca",
                           "--feature-gates=WebhookProviderCertManager=true"), 0);
    assert_int_equal(f.cert_mode, CE_CERT_SERVICE_CA);
    /* upstream's experimental.yaml: the gate we have not built is accepted, and said so;
     * BoxcutterRuntime is built */
    assert_int_equal(PARSE(&f, "--feature-gates=BoxcutterRuntime=true", "--feature-gates=BundleReleaseSupport=true"), 0);
    assert_true(f.gate_boxcutter);
    lines = 0;
    operator_flags_unbuilt_gates(&f, collect_line, &lines);
    assert_int_equal(lines, 1);
}

static void expect_error(char **args, const char *want)
{
    operator_flags f;
    assert_int_equal(parse(&f, args), -1);
    assert_string_equal(msg, want);
}

#define EXPECT_ERROR(want, ...) expect_error((char *[]){__VA_ARGS__, NULL}, (want))

static void test_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("unknown flag --no-such-flag", "--leader-elect", "--no-such-flag");
    EXPECT_ERROR("unknown flag version", "--leader-elect", "version"); /* a subcommand only as the first word */
    EXPECT_ERROR("--tls-cert and --tls-key go together (both paths, or neither)", "--tls-cert=/c");
    EXPECT_ERROR("--metrics-bind-address: want :PORT, IP:PORT or [IPv6]:PORT (\"0\": off), got \"8443\"",
                 "--metrics-bind-address=8443");
    EXPECT_ERROR("--health-probe-bind-address: want :PORT, IP:PORT or [IPv6]:PORT (\"0\": off), got \"x:1\"",
                 "--health-addr", "x:1");
    EXPECT_ERROR("--feature-gates: unrecognized feature gate \"Nope\" (known: SingleOwnNamespaceInstallSupport, "
                 "DeploymentConfig, WebhookProviderCertManager, WebhookProviderOpenshiftServiceCA, BoxcutterRuntime, "
                 "BundleReleaseSupport)",
                 "--feature-gates=DeploymentConfig=true", "--feature-gates=Nope=true");
    EXPECT_ERROR("--feature-gates: invalid value of BoxcutterRuntime: \"maybe\" (want true or false)",
                 "--feature-gates=BoxcutterRuntime=maybe");
    EXPECT_ERROR("--global-pull-secret: want NAMESPACE/NAME, got \"olmv1-system\"", "--global-pull-secret",
                 "olmv1-system");
    EXPECT_ERROR("--system-namespace: \"Olm\" is not a namespace name (lower-case DNS-1123 label)",
                 "--system-namespace", "Olm");
    EXPECT_ERROR("--drift-repair-interval: bad duration 5x", "--drift-repair-interval=5x");
    EXPECT_ERROR("--webhook-cert-provider: want auto, cert-manager or openshift-service-ca, got \"none\"",
                 "--webhook-cert-provider", "none");
    EXPECT_ERROR("-v: want a verbosity 0..10, not x", "-v", "x");
    EXPECT_ERROR("--leader-elect-lease-duration: want a duration of at least 1s (e.g. 10s), not 500ms",
                 "--leader-elect-lease-duration=500ms");
    EXPECT_ERROR("--leader-elect-lease-duration: want a duration of at least 1s (e.g. 10s), not 0",
                 "--leader-elect-lease-duration=0");
    EXPECT_ERROR("--leader-elect-renew-deadline: want a duration (e.g. 7s), not 7x", "--leader-elect-renew-deadline",
                 "7x");
    EXPECT_ERROR("--leader-elect-retry-period: want a duration (e.g. 2s), not -2s", "--leader-elect-retry-period=-2s");
    EXPECT_ERROR("--leader-elect-renew-deadline (7s) must be shorter than --leader-elect-lease-duration (5s)",
                 "--leader-elect-lease-duration=5s");
    EXPECT_ERROR("--leader-elect-renew-deadline (10s) must be shorter than --leader-elect-lease-duration (10s)",
                 "--leader-elect-renew-deadline=10s");
    EXPECT_ERROR("--leader-elect-retry-period (7s) must be shorter than --leader-elect-renew-deadline (7s)",
                 "--leader-elect-retry-period=7s");
    EXPECT_ERROR("--leader-elect-retry-period (2500ms) must be shorter than --leader-elect-renew-deadline (2s)",
                 "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=2.5s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_aliases_and_new),
        cmocka_unit_test(test_operations_flags),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_feature_gates),
        cmocka_unit_test(test_leader_election_timings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
