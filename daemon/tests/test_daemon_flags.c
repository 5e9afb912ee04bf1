/* olm_daemon, olm_feature_gates, olm_tls and the listen/namespace parsers: what both daemons
 * check of their shared flags before (and without) starting, and the one-line messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_flags.h"
#include "olm_feature_gates.h"
#include "olm_parse.h"
#include "olm_tls.h"

#define FIX "../../util/tests/fixtures/tls/"

static char dir[] = "/tmp/olm_daemon_XXXXXX";
static char msg[512];

static const char *path_of(const char *name)
{
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void copy_file(const char *from, const char *name)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp %s %s", from, path_of(name));
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_listen_addr(void **state)
{
    (void)state;
    char host[64];
    int port;
    assert_int_equal(olm_parse_listen_addr(":8081", host, sizeof host, &port), 0);
    assert_string_equal(host, "0.0.0.0"); /* every address, as Go */
    assert_int_equal(port, 8081);
    assert_int_equal(olm_parse_listen_addr("127.0.0.1:0", host, sizeof host, &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(olm_parse_listen_addr("[::1]:7443", host, sizeof host, &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 7443);
    /* Nothing resolves names, so they are refused up front rather than at bind time. */
    assert_int_equal(olm_parse_listen_addr("localhost:80", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_listen_addr("8081", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_listen_addr(":65536", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_listen_addr(":", host, sizeof host, &port), -1);
    assert_true(olm_listen_off("0") && olm_listen_off("") && olm_listen_off(NULL));
    assert_false(olm_listen_off(":0"));
}

static void test_names(void **state)
{
    (void)state;
    assert_true(olm_is_dns1123_label("olmv1-system", 12));
    assert_false(olm_is_dns1123_label("Olmv1", 5));
    assert_false(olm_is_dns1123_label("-a", 2));
    assert_false(olm_is_dns1123_label("a.b", 3));
    char long_label[65];
    memset(long_label, 'a', 64);
    long_label[64] = '\0';
    assert_false(olm_is_dns1123_label(long_label, 64));
    assert_true(olm_is_dns1123_label(long_label, 63));
    assert_true(olm_is_dns1123_subdomain("pull-secret.v1"));
    assert_false(olm_is_dns1123_subdomain("a..b"));
    assert_false(olm_is_dns1123_subdomain("a."));
    char ns[64], name[254];
    assert_int_equal(olm_parse_ns_name("olmv1-system/global-pull", ns, sizeof ns, name, sizeof name), 0);
    assert_string_equal(ns, "olmv1-system");
    assert_string_equal(name, "global-pull");
    const char *bad[] = {"global-pull", "/x", "ns/", "ns/a/b", "NS/x", "ns/x_y", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(olm_parse_ns_name(bad[i], ns, sizeof ns, name, sizeof name), -1);
}

static bool gate_a, gate_b;
static const olm_feature_gate gates[] = {
    {"Alpha", &gate_a, false, "a test gate"},
    {"Beta", &gate_b, true, "another"},
};
#define GATES gates, sizeof gates / sizeof gates[0]

static void test_feature_gates(void **state)
{
    (void)state;
    assert_int_equal(olm_feature_gates_parse(GATES, NULL, msg, sizeof msg), 0);
    assert_false(gate_a);
    assert_true(gate_b);
    assert_int_equal(olm_feature_gates_parse(GATES, " Alpha = true ,Beta=0,", msg, sizeof msg), 0);
    assert_true(gate_a);
    assert_false(gate_b);
    assert_int_equal(olm_feature_gates_parse(GATES, "Alpha=T", msg, sizeof msg), 0);
    assert_true(gate_a);
    assert_true(gate_b); /* back to its default: each parse starts from the defaults */
    assert_int_equal(olm_feature_gates_parse(GATES, "Gamma=true", msg, sizeof msg), -1);
    assert_string_equal(msg, "--feature-gates: unrecognized feature gate \"Gamma\" (known: Alpha, Beta)");
    assert_int_equal(olm_feature_gates_parse(GATES, "Alpha=yes", msg, sizeof msg), -1);
    assert_string_equal(msg, "--feature-gates: invalid value of Alpha: \"yes\" (want true or false)");
    assert_int_equal(olm_feature_gates_parse(GATES, "Alpha", msg, sizeof msg), -1);
    assert_string_equal(msg, "--feature-gates: want Name=true|false, got \"Alpha\"");
    assert_int_equal(olm_feature_gates_parse(GATES, "alpha=true", msg, sizeof msg), -1); /* names are exact */
    /* A build with no gates refuses every name, and says so. */
    assert_int_equal(olm_feature_gates_parse(NULL, 0, "", msg, sizeof msg), 0);
    assert_int_equal(olm_feature_gates_parse(NULL, 0, "APIV1MetasHandler=true", msg, sizeof msg), -1);
    assert_string_equal(msg, "--feature-gates: unrecognized feature gate \"APIV1MetasHandler\" (this build has none)");
}

/* The values of the manifests' arguments (config/manager/deployments.yaml). */
static olm_daemon_flags manifest_flags(void)
{
    return (olm_daemon_flags){.health_addr = ":8081", .metrics_addr = ":8443", .tls_cert = "/var/certs/tls.crt",
                              .tls_key = "/var/certs/tls.key", .system_namespace = "olmv1-system"};
}

static void expect_check_error(olm_daemon_flags f, const char *want)
{
    assert_int_equal(olm_daemon_flags_check(&f, GATES, msg, sizeof msg), -1);
    assert_string_equal(msg, want);
}

static void test_flags_check(void **state)
{
    (void)state;
    olm_daemon_flags f = manifest_flags();
    assert_int_equal(olm_daemon_flags_check(&f, GATES, msg, sizeof msg), 0);
    /* "" is "not given", as upstream's defaults are. */
    f = (olm_daemon_flags){.tls_cert = "", .tls_key = "", .system_namespace = "", .metrics_addr = "0",
                           .pull_cas_dir = "", .global_pull_secret = ""};
    assert_int_equal(olm_daemon_flags_check(&f, GATES, msg, sizeof msg), 0);
    assert_null(f.tls_cert);
    assert_null(f.system_namespace);
    assert_null(f.pull_cas_dir);
    assert_null(f.global_pull_secret);

    f = manifest_flags();
    f.tls_key = NULL;
    expect_check_error(f, "--tls-cert and --tls-key go together (both paths, or neither)");
    f = manifest_flags();
    f.health_addr = "localhost:8081";
    expect_check_error(f, "--health-probe-bind-address: want :PORT, IP:PORT or [IPv6]:PORT (\"0\": off), got "
                          "\"localhost:8081\"");
    f = manifest_flags();
    f.metrics_addr = ":http";
    expect_check_error(f, "--metrics-bind-address: want :PORT, IP:PORT or [IPv6]:PORT (\"0\": off), got \":http\"");
    f = manifest_flags();
    f.system_namespace = "OLM";
    expect_check_error(f, "--system-namespace: \"OLM\" is not a namespace name (lower-case DNS-1123 label)");
    f = manifest_flags();
    f.global_pull_secret = "pull-secret";
    expect_check_error(f, "--global-pull-secret: want NAMESPACE/NAME, got \"pull-secret\"");
    f = manifest_flags();
    snprintf(f.feature_gates, sizeof f.feature_gates, "Nope=true");
    expect_check_error(f, "--feature-gates: unrecognized feature gate \"Nope\" (known: Alpha, Beta)");
}

static void test_version_command(void **state)
{
    (void)state;
    char *plain[] = {"d", "--leader-elect", NULL};
    assert_int_equal(olm_daemon_version_command("d", 2, plain, msg, sizeof msg), -1);
    char *none[] = {"d", NULL};
    assert_int_equal(olm_daemon_version_command("d", 1, none, msg, sizeof msg), -1);
    char *extra[] = {"d", "version", "--short", NULL};
    assert_int_equal(olm_daemon_version_command("d", 3, extra, msg, sizeof msg), 2);
    assert_string_equal(msg, "version takes no arguments, got \"--short\"");
    char *ok[] = {"d", "version", NULL};
    assert_int_equal(olm_daemon_version_command("d", 2, ok, msg, sizeof msg), 0);
}

static void test_system_namespace(void **state)
{
    (void)state;
    char buf[64];
    write_file("namespace", "team-olm\n");
    assert_string_equal(olm_daemon_system_namespace(path_of("namespace"), buf, sizeof buf), "team-olm");
    assert_string_equal(olm_daemon_system_namespace(path_of("absent"), buf, sizeof buf), "olmv1-system");
    write_file("namespace", "Not A Namespace");
    assert_string_equal(olm_daemon_system_namespace(path_of("namespace"), buf, sizeof buf), "olmv1-system");
}

static void test_tls_pair(void **state)
{
    (void)state;
    olm_error err;
    assert_int_equal(olm_tls_check_pair("--tls-cert", FIX "server.crt", "--tls-key", FIX "server.key", &err), 0);
    assert_int_equal(olm_tls_check_pair("--tls-cert", FIX "absent.crt", "--tls-key", FIX "server.key", &err), -1);
    assert_string_equal(err.msg, "--tls-cert: cannot open " FIX "absent.crt: No such file or directory");
    assert_int_equal(olm_tls_check_pair("--tls-cert", FIX "server.key", "--tls-key", FIX "server.key", &err), -1);
    assert_string_equal(err.msg, "--tls-cert " FIX "server.key: holds no PEM certificate");
    assert_int_equal(olm_tls_check_pair("--tls-cert", FIX "server.crt", "--tls-key", FIX "server.crt", &err), -1);
    assert_string_equal(err.msg, "--tls-key " FIX "server.crt: holds no PEM private key");
    assert_int_equal(olm_tls_check_pair("--tls-cert", FIX "server.crt", "--tls-key", FIX "other.key", &err), -1);
    assert_string_equal(err.msg, "--tls-cert " FIX "server.crt and --tls-key " FIX "other.key do not match");
}

static void test_ca_dir(void **state)
{
    (void)state;
    olm_error err;
    olm_ca_set *s = olm_ca_set_new(&err);
    assert_non_null(s);
    /* What a Kubernetes Secret volume looks like: ..data/ holds the files, the names are
     * symlinks into it; other names and hidden entries are passed over. */
    assert_int_equal(mkdir(path_of("cas"), 0755), 0);
    assert_int_equal(mkdir(path_of("cas/..data"), 0755), 0);
    copy_file(FIX "server.crt", "cas/..data/ca.crt");
    assert_int_equal(symlink("..data/ca.crt", path_of("cas/ca.crt")), 0);
    copy_file(FIX "other.crt", "cas/service-ca.pem");
    write_file("cas/README.txt", "not a certificate");
    assert_int_equal(olm_ca_set_add_dir(s, path_of("cas"), &err), 0);
    assert_int_equal(olm_ca_set_count(s), 2);
    assert_int_equal(olm_ca_set_add_file(s, FIX "server.crt", &err), 0);
    assert_int_equal(olm_ca_set_count(s), 3);

    assert_int_equal(olm_ca_set_add_dir(s, path_of("absent"), &err), -1);
    assert_non_null(strstr(err.msg, "cannot read the directory "));
    assert_non_null(strstr(err.msg, "absent: No such file or directory"));
    assert_int_equal(mkdir(path_of("empty"), 0755), 0);
    write_file("empty/notes.txt", "x");
    assert_int_equal(olm_ca_set_add_dir(s, path_of("empty"), &err), -1);
    assert_non_null(strstr(err.msg, "empty holds no *.crt or *.pem file"));
    write_file("empty/junk.crt", "not PEM");
    assert_int_equal(olm_ca_set_add_dir(s, path_of("empty"), &err), -1);
    assert_non_null(strstr(err.msg, "empty/junk.crt holds no PEM certificate"));
    assert_int_equal(olm_ca_set_add_file(s, FIX "server.key", &err), -1); /* a key is not a CA */
    olm_ca_set_free(s);
}

static void test_preflight(void **state)
{
    (void)state;
    olm_daemon_flags f = {.tls_cert = FIX "server.crt", .tls_key = FIX "server.key", .pull_cas_dir = path_of("cas")};
    olm_ca_set *cas = NULL;
    assert_int_equal(olm_daemon_preflight(&f, &cas, msg, sizeof msg), 0);
    assert_int_equal(olm_ca_set_count(cas), 2);
    olm_ca_set_free(cas);
    f.pull_cas_dir = path_of("empty");
    assert_int_equal(olm_daemon_preflight(&f, &cas, msg, sizeof msg), -1);
    assert_null(cas);
    assert_non_null(strstr(msg, "--pull-cas-dir: "));
    f.tls_key = FIX "absent.key";
    assert_int_equal(olm_daemon_preflight(&f, &cas, msg, sizeof msg), -1);
    assert_string_equal(msg, "--tls-key: cannot open " FIX "absent.key: No such file or directory");
    f = (olm_daemon_flags){0};
    assert_int_equal(olm_daemon_preflight(&f, &cas, msg, sizeof msg), 0);
    assert_null(cas);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_addr),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_feature_gates),
        cmocka_unit_test(test_flags_check),
        cmocka_unit_test(test_version_command),
        cmocka_unit_test(test_system_namespace),
        cmocka_unit_test(test_tls_pair),
        cmocka_unit_test(test_ca_dir),
        cmocka_unit_test(test_preflight),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
