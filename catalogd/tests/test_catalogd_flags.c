/* catalogd_flags: the manifests' arguments, today's spellings kept as aliases, defaults,
 * and one message per bad value (exit 2 in the binary). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "catalogd_flags.h"

static char msg[512];

static int parse(catalogd_flags *f, char **args)
{
    char *argv[40] = {"catalogd"};
    int argc = 1;
    while (*args)
        argv[argc++] = *args++;
    argv[argc] = NULL;
    msg[0] = '\0';
    return catalogd_flags_parse(argc, argv, f, msg, sizeof msg);
}

#define PARSE(f, ...) parse((f), (char *[]){__VA_ARGS__, NULL})

static void test_defaults(void **state)
{
    (void)state;
    catalogd_flags f;
    assert_int_equal(parse(&f, (char *[]){NULL}), 0);
    assert_null(f.common.health_addr); /* probes only on the catalog server */
    assert_string_equal(f.common.metrics_addr, "0");
    assert_null(f.common.system_namespace);
    assert_null(f.lease_namespace);
    assert_null(f.common.pull_cas_dir);
    assert_false(f.common.check_flags);
    assert_false(f.common.version);
    assert_int_equal(f.common.lease_duration_ms, 10000); /* kube_leader.h's, as operator-controller */
    assert_int_equal(f.common.renew_deadline_ms, 7000);
    assert_int_equal(f.common.retry_period_ms, 2000);
}

/* --shutdown-delay: 5s in a Pod (a Service may still send clients for a moment after
 * SIGTERM), 0 elsewhere; as given when given; a bad value is one line. */
static void test_shutdown_delay(void **state)
{
    (void)state;
    catalogd_flags f;
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(parse(&f, (char *[]){NULL}), 0);
    assert_int_equal(f.shutdown_delay_ms, 0);
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    assert_int_equal(parse(&f, (char *[]){NULL}), 0);
    assert_int_equal(f.shutdown_delay_ms, 5000);
    assert_int_equal(PARSE(&f, "--shutdown-delay", "0"), 0);
    assert_int_equal(f.shutdown_delay_ms, 0);
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(PARSE(&f, "--shutdown-delay=1500ms"), 0);
    assert_int_equal(f.shutdown_delay_ms, 1500);
    assert_int_equal(PARSE(&f, "--shutdown-delay", "soon"), -1);
    assert_string_equal(msg, "--shutdown-delay: bad duration \"soon\" (e.g. 5s; 0 stops at once)");
}

static void test_manifest(void **state)
{
    (void)state;
    catalogd_flags f;
    assert_int_equal(PARSE(&f, "--leader-elect", "--health-probe-bind-address=:8081", "--catalogs-server-addr=:8443",
                           "--metrics-bind-address=:7443", "--external-address=catalogd-service.olmv1-system.svc",
                           "--cache-dir=/var/cache/catalogd", "--tls-cert=/var/certs/tls.crt",
                           "--tls-key=/var/certs/tls.key", "--check-flags"),
                     0);
    assert_true(f.leader_elect);
    assert_string_equal(f.common.health_addr, ":8081");
    assert_string_equal(f.server_addr, ":8443");
    assert_string_equal(f.common.metrics_addr, ":7443");
    assert_string_equal(f.external_addr, "catalogd-service.olmv1-system.svc");
    assert_string_equal(f.common.tls_cert, "/var/certs/tls.crt");
    assert_true(f.common.check_flags);
    /* The Lease timings are the shared flags (daemon_flags.h): checked the same way. */
    assert_int_equal(PARSE(&f, "--leader-elect", "--leader-elect-lease-duration=137s",
                           "--leader-elect-renew-deadline=107s", "--leader-elect-retry-period=26s"),
                     0);
    assert_int_equal(f.common.lease_duration_ms, 137000);
    assert_int_equal(f.common.renew_deadline_ms, 107000);
    assert_int_equal(f.common.retry_period_ms, 26000);
}

static void test_aliases_and_new(void **state)
{
    (void)state;
    catalogd_flags f;
    assert_int_equal(PARSE(&f, "--health-addr", "127.0.0.1:1", "--system-namespace", "olm", "--pull-cas-dir", "/cas",
                           "--global-pull-secret=olm/pull", "--feature-gates", "", "--metrics-bind-address", "0",
                           "--leader-election-namespace=", "--version"),
                     0);
    assert_string_equal(f.common.health_addr, "127.0.0.1:1");
    assert_string_equal(f.common.system_namespace, "olm");
    assert_string_equal(f.common.pull_cas_dir, "/cas");
    assert_string_equal(f.common.global_pull_secret, "olm/pull");
    assert_null(f.lease_namespace); /* "" is "not given": the system namespace */
    assert_true(f.common.version);
}

static void expect_error(char **args, const char *want)
{
    catalogd_flags f;
    assert_int_equal(parse(&f, args), -1);
    assert_string_equal(msg, want);
}

#define EXPECT_ERROR(want, ...) expect_error((char *[]){__VA_ARGS__, NULL}, (want))

static void test_feature_gates(void **state)
{
    (void)state;
    catalogd_flags f;
    assert_int_equal(PARSE(&f, "--check-flags"), 0);
    assert_true(f.gate_metas); /* on here; upstream's default is off */
    assert_false(f.gate_graphql);
    /* upstream's experimental.yaml: one gate per flag, all of them count */
    assert_int_equal(PARSE(&f, "--feature-gates=APIV1MetasHandler=false", "--feature-gates=GraphQLCatalogQueries=true"), 0);
    assert_false(f.gate_metas);
    assert_true(f.gate_graphql);
    assert_string_equal(f.common.feature_gates, "APIV1MetasHandler=false,GraphQLCatalogQueries=true");
    /* Listen addresses: loopback on a workstation, upstream's in a Pod (its manifests rely on them). */
    assert_int_equal(PARSE(&f, "--check-flags"), 0);
    assert_string_equal(f.server_addr, "127.0.0.1:8443");
    assert_null(f.common.health_addr);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    assert_int_equal(PARSE(&f, "--check-flags"), 0);
    assert_string_equal(f.server_addr, ":8443");
    assert_string_equal(f.common.health_addr, ":8081");
    unsetenv("KUBERNETES_SERVICE_HOST");
}

static void test_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("unknown flag --no-such-flag", "--check-flags", "--no-such-flag");
    EXPECT_ERROR("--catalogs-server-addr: want :PORT, IP:PORT or [IPv6]:PORT, got \"catalogd:8443\"",
                 "--catalogs-server-addr", "catalogd:8443");
    EXPECT_ERROR("--metrics-bind-address: want :PORT, IP:PORT or [IPv6]:PORT (\"0\": off), got \":metrics\"",
                 "--metrics-bind-address=:metrics");
    EXPECT_ERROR("--tls-cert and --tls-key go together (both paths, or neither)", "--tls-key", "/k");
    EXPECT_ERROR("--feature-gates: unrecognized feature gate \"Nope\" (known: APIV1MetasHandler, GraphQLCatalogQueries)",
                 "--feature-gates=APIV1MetasHandler=true", "--feature-gates=Nope=true");
    EXPECT_ERROR("--leader-election-namespace: \"A_B\" is not a namespace name", "--leader-election-namespace=A_B");
    EXPECT_ERROR("--gc-interval: bad duration \"0\" (e.g. 12h, 30m, 10s)", "--gc-interval", "0");
    EXPECT_ERROR("--leader-elect-renew-deadline (12s) must be shorter than --leader-elect-lease-duration (10s)",
                 "--leader-elect-renew-deadline=12s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_shutdown_delay),
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_aliases_and_new),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_feature_gates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
