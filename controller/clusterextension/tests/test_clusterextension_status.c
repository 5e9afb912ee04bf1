/* ClusterExtension status computation (clusterextension.h): condition types,
 * reasons and exact messages of §1.1/§2.2/§2.3, lastTransitionTime semantics, message
 * cleaning and truncation; Available's transitions (set from the probes, kept when they did
 * not run, removed with the last bundle).
 *
 * Mutation checks of Available (production line broken, test seen failing, line restored):
 *   clusterextension_status.c  set_available_condition not called -> test_available_transitions
 *   clusterextension_status.c  `if (!in->available) return 0;` -> set True anyway
 *       -> test_available_kept_when_not_probed
 *   clusterextension_status.c  removal skipped (`if (!in->installed)` branch returns 0 at once)
 *       -> test_available_removed_when_nothing_is_installed
 *   clusterextension_status.c  `if (in->installed_error) return 0;` dropped
 *       -> test_available_removed_when_nothing_is_installed
 *   clusterextension_status.c  ProbeFailure message "" instead of the failures -> test_available_transitions
 *   clusterextension_status.c  `|| in->no_available` dropped -> test_available_turned_off_is_removed */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "clusterextension.h"

static const json_t *cond(const json_t *status, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c) if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0) return c;
    return NULL;
}

static void expect_cond(const json_t *status, const char *type, const char *st, const char *reason, const char *msg,
                        int64_t gen)
{
    const json_t *c = cond(status, type);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(c, "status")), st);
    assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
    if (msg)
        assert_string_equal(json_string_value(json_object_get(c, "message")), msg);
    assert_int_equal(json_integer_value(json_object_get(c, "observedGeneration")), gen);
}

static const char *ltt(const json_t *status, const char *type)
{
    return json_string_value(json_object_get(cond(status, type), "lastTransitionTime"));
}

static void test_installed_success(void **state)
{
    (void)state;
    clusterextension_installed_bundle b = {"argocd.v1.0.0", "1.0.0", "reg/argocd@sha256:ab"};
    clusterextension_status_input in = {.generation = 3, .now = "2024-01-01T00:00:00Z", .installed = &b};
    json_t *st = clusterextension_status_compute(NULL, &in, NULL);
    assert_non_null(st);
    expect_cond(st, "Installed", "True", "Succeeded", "Installed bundle reg/argocd@sha256:ab successfully", 3);
    expect_cond(st, "Progressing", "True", "Succeeded", "Desired state reached", 3);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(st, "install"), "bundle"), "name")),
                        "argocd.v1.0.0");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(json_object_get(st, "install"), "bundle"), "version")), "1.0.0");
    assert_null(cond(st, "Deprecated")); /* not given: not written */
    json_decref(st);
}

static void test_retrying_nothing_installed(void **state)
{
    (void)state;
    clusterextension_status_input in = {.generation = 1,
                          .now = "2024-01-01T00:00:00Z",
                          .progress = CE_PROGRESS_RETRYING,
                          .progress_message = "no bundles found for package \"p\""};
    json_t *st = clusterextension_status_compute(NULL, &in, NULL);
    expect_cond(st, "Installed", "False", "Failed", "No bundle installed", 1);
    expect_cond(st, "Progressing", "True", "Retrying", "no bundles found for package \"p\"", 1);
    assert_null(json_object_get(st, "install"));
    json_decref(st);
}

static void test_terminal_reasons(void **state)
{
    (void)state;
    clusterextension_installed_bundle b = {"p.v1", "1.0.0", "img"};
    clusterextension_status_input in = {.generation = 2, .now = "t", .installed = &b, .progress = CE_PROGRESS_BLOCKED,
                          .progress_message = "error for resolved bundle \"p.v2\" with version \"2.0.0\": bad ref"};
    json_t *st = clusterextension_status_compute(NULL, &in, NULL);
    expect_cond(st, "Progressing", "False", "Blocked", in.progress_message, 2);
    expect_cond(st, "Installed", "True", "Succeeded", "Installed bundle img successfully", 2);
    json_decref(st);
    in.progress = CE_PROGRESS_INVALID_CONFIG;
    in.progress_message = "invalid ClusterExtension configuration: invalid configuration: x";
    st = clusterextension_status_compute(NULL, &in, NULL);
    expect_cond(st, "Progressing", "False", "InvalidConfiguration", in.progress_message, 2);
    json_decref(st);
    /* spec.progressDeadlineMinutes passed while retrying: False, the installed bundle stays. */
    in.progress = CE_PROGRESS_DEADLINE_EXCEEDED;
    in.progress_message = "Revision has not rolled out for 10 minute(s). Last status: forbidden";
    st = clusterextension_status_compute(NULL, &in, NULL);
    expect_cond(st, "Progressing", "False", "ProgressDeadlineExceeded", in.progress_message, 2);
    expect_cond(st, "Installed", "True", "Succeeded", "Installed bundle img successfully", 2);
    json_decref(st);
}

/* --webhook-cert-provider: explicit choices stand; auto takes OpenShift, then cert-manager. */
static void test_cert_choose(void **state)
{
    (void)state;
    render_cert_provider p;
    assert_int_equal(clusterextension_cert_choose(CE_CERT_AUTO, true, true, &p), 0);
    assert_int_equal(p, RENDER_CERT_OPENSHIFT_SERVICE_CA);
    assert_int_equal(clusterextension_cert_choose(CE_CERT_AUTO, false, true, &p), 0);
    assert_int_equal(p, RENDER_CERT_MANAGER);
    assert_int_equal(clusterextension_cert_choose(CE_CERT_AUTO, false, false, &p), -1);
    assert_int_equal(clusterextension_cert_choose(CE_CERT_MANAGER, true, false, &p), 0);
    assert_int_equal(p, RENDER_CERT_MANAGER);
    assert_int_equal(clusterextension_cert_choose(CE_CERT_SERVICE_CA, false, false, &p), 0);
    assert_int_equal(p, RENDER_CERT_OPENSHIFT_SERVICE_CA);
}

static void test_installed_unknown(void **state)
{
    (void)state;
    json_t *old = json_pack("{s:{s:{s:s,s:s}}, s:[]}", "install", "bundle", "name", "x", "version", "1.0.0",
                            "conditions");
    clusterextension_status_input in = {.generation = 5, .now = "t", .installed_error = "secrets is forbidden",
                          .progress = CE_PROGRESS_RETRYING, .progress_message = "retrying to get installed bundle"};
    json_t *st = clusterextension_status_compute(old, &in, NULL);
    expect_cond(st, "Installed", "Unknown", "Failed", "secrets is forbidden", 5);
    expect_cond(st, "Progressing", "True", "Retrying", "retrying to get installed bundle", 5);
    assert_null(json_object_get(st, "install"));
    json_decref(st);
    json_decref(old);
}

static void test_transition_time(void **state)
{
    (void)state;
    clusterextension_status_input in = {.generation = 1, .now = "2024-01-01T00:00:00Z", .progress = CE_PROGRESS_RETRYING,
                          .progress_message = "a"};
    json_t *s1 = clusterextension_status_compute(NULL, &in, NULL);
    in.now = "2024-01-02T00:00:00Z";
    in.progress_message = "b"; /* same status True: time kept, message updated */
    in.generation = 2;
    json_t *s2 = clusterextension_status_compute(s1, &in, NULL);
    assert_string_equal(ltt(s2, "Progressing"), "2024-01-01T00:00:00Z");
    expect_cond(s2, "Progressing", "True", "Retrying", "b", 2);
    clusterextension_installed_bundle b = {"n", "1.0.0", "img"};
    in.installed = &b;
    in.progress = CE_PROGRESS_SUCCEEDED;
    in.now = "2024-01-03T00:00:00Z";
    json_t *s3 = clusterextension_status_compute(s2, &in, NULL);
    assert_string_equal(ltt(s3, "Progressing"), "2024-01-01T00:00:00Z"); /* still True */
    assert_string_equal(ltt(s3, "Installed"), "2024-01-03T00:00:00Z");   /* False -> True */
    /* Order kept: Installed was first. */
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(s3, "conditions"), 0), "type")),
                        "Installed");
    /* Nothing changed: the same status (so the reconciler writes nothing). */
    json_t *s4 = clusterextension_status_compute(s3, &in, NULL);
    assert_true(json_equal(s3, s4));
    json_decref(s1);
    json_decref(s2);
    json_decref(s3);
    json_decref(s4);
}

static void test_deprecation_conditions(void **state)
{
    (void)state;
    deprecation_condition dep[DEPRECATION_NCONDITIONS];
    deprecation_input di = {.installed_bundle = NULL, .has_catalog_data = false};
    assert_int_equal(deprecation_conditions(&di, dep, NULL), 0);
    json_t *other = json_pack("{s:[{s:s,s:s,s:s,s:s,s:s}], s:s}", "conditions", "type", "Custom", "status", "True",
                              "reason", "X", "message", "", "lastTransitionTime", "t0", "extra", "kept");
    clusterextension_status_input in = {.generation = 7, .now = "t", .deprecation = dep, .progress = CE_PROGRESS_RETRYING,
                          .progress_message = "m"};
    json_t *st = clusterextension_status_compute(other, &in, NULL);
    deprecation_conditions_free(dep);
    expect_cond(st, "Deprecated", "Unknown", "DeprecationStatusUnknown",
                "deprecation status unknown: catalog data unavailable", 7);
    expect_cond(st, "BundleDeprecated", "Unknown", "Absent", "no bundle installed yet", 7);
    assert_non_null(cond(st, "Custom"));
    assert_string_equal(json_string_value(json_object_get(st, "extra")), "kept");
    assert_int_equal(json_array_size(json_object_get(st, "conditions")), 7);
    json_decref(st);
    json_decref(other);
}

static void test_message_clean(void **state)
{
    (void)state;
    char *m = clusterextension_message_clean("Get \"https://x/y\": read tcp 127.0.0.1:53422->127.0.0.1:5000: read: connection "
                               "reset by peer");
    assert_string_equal(m, "Get \"https://x/y\": read: connection reset by peer");
    free(m);
    m = clusterextension_message_clean("write udp [::1]:1->[::1]:53 broke");
    assert_string_equal(m, " broke");
    free(m);
    m = clusterextension_message_clean("read the docs: tcp is fine");
    assert_string_equal(m, "read the docs: tcp is fine");
    free(m);

    size_t n = 40000;
    char *big = malloc(n + 1);
    memset(big, 'a', n);
    big[n] = '\0';
    big[CE_MESSAGE_MAX - 26] = (char)0xC3; /* a 2-byte UTF-8 sequence across the cut */
    big[CE_MESSAGE_MAX - 25] = (char)0xA9;
    m = clusterextension_message_clean(big);
    assert_true(strlen(m) <= CE_MESSAGE_MAX);
    assert_non_null(strstr(m, CE_TRUNCATED_SUFFIX));
    assert_int_equal(strcmp(m + strlen(m) - strlen(CE_TRUNCATED_SUFFIX), CE_TRUNCATED_SUFFIX), 0);
    json_t *s = json_string(m); /* valid UTF-8 */
    assert_non_null(s);
    json_decref(s);
    free(m);
    free(big);

    char exact[CE_MESSAGE_MAX + 1];
    memset(exact, 'b', CE_MESSAGE_MAX);
    exact[CE_MESSAGE_MAX] = '\0';
    m = clusterextension_message_clean(exact);
    assert_int_equal(strlen(m), CE_MESSAGE_MAX); /* at the limit: untouched */
    free(m);
}

/* ------------------------------------------------------------ Available */

static void test_available_transitions(void **state)
{
    (void)state;
    clusterextension_installed_bundle b = {"p.v1", "1.0.0", "img"};
    clusterextension_availability failing = {false, "Object Deployment.apps/v1 ns/mgr: .status.condition[\"Available\"] "
                                                    "is False\nObject CustomResourceDefinition.apiextensions.k8s.io/v1 "
                                                    "/w.example.com: .status.condition[\"Established\"] is False"};
    clusterextension_status_input in = {.generation = 3, .now = "2024-01-01T00:00:00Z", .installed = &b,
                                        .available = &failing};
    json_t *s1 = clusterextension_status_compute(NULL, &in, NULL);
    expect_cond(s1, "Available", "False", "ProbeFailure", failing.failures, 3);
    /* Next to Installed. */
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(s1, "conditions"), 1), "type")),
                        "Available");
    /* Recovered: True, with upstream's reason and message, a new transition time. */
    clusterextension_availability ok = {true, NULL};
    in.available = &ok;
    in.now = "2024-01-02T00:00:00Z";
    in.generation = 4;
    json_t *s2 = clusterextension_status_compute(s1, &in, NULL);
    expect_cond(s2, "Available", "True", "ProbesSucceeded", "Objects are available and pass all probes.", 4);
    assert_string_equal(ltt(s2, "Available"), "2024-01-02T00:00:00Z");
    /* Unavailable again, then another failure message: the time is that of the transition. */
    clusterextension_availability f1 = {false, "Object Deployment.apps/v1 ns/mgr: missing .status.conditions"};
    in.available = &f1;
    in.now = "2024-01-03T00:00:00Z";
    json_t *s3 = clusterextension_status_compute(s2, &in, NULL);
    expect_cond(s3, "Available", "False", "ProbeFailure", f1.failures, 4);
    in.available = &failing;
    in.now = "2024-01-04T00:00:00Z";
    json_t *s4 = clusterextension_status_compute(s3, &in, NULL);
    expect_cond(s4, "Available", "False", "ProbeFailure", failing.failures, 4);
    assert_string_equal(ltt(s4, "Available"), "2024-01-03T00:00:00Z");
    json_decref(s1);
    json_decref(s2);
    json_decref(s3);
    json_decref(s4);
}

static void test_available_kept_when_not_probed(void **state)
{
    (void)state;
    clusterextension_installed_bundle b = {"p.v1", "1.0.0", "img"};
    clusterextension_availability failing = {false, "Object Deployment.apps/v1 ns/mgr: .status outdated"};
    clusterextension_status_input in = {.generation = 1, .now = "t1", .installed = &b, .available = &failing};
    json_t *s1 = clusterextension_status_compute(NULL, &in, NULL);
    /* A reconcile that stopped before its apply (a new generation that does not resolve). */
    in.available = NULL;
    in.generation = 2;
    in.now = "t2";
    in.progress = CE_PROGRESS_RETRYING;
    in.progress_message = "no bundles found";
    json_t *s2 = clusterextension_status_compute(s1, &in, NULL);
    expect_cond(s2, "Available", "False", "ProbeFailure", failing.failures, 1);
    json_decref(s1);
    json_decref(s2);
}

static void test_available_turned_off_is_removed(void **state)
{
    (void)state;
    clusterextension_installed_bundle b = {"p.v1", "1.0.0", "img"};
    clusterextension_availability ok = {true, NULL};
    clusterextension_status_input in = {.generation = 1, .now = "t1", .installed = &b, .available = &ok};
    json_t *s1 = clusterextension_status_compute(NULL, &in, NULL);
    in.available = NULL;
    in.no_available = true;
    json_t *s2 = clusterextension_status_compute(s1, &in, NULL);
    assert_null(cond(s2, "Available"));
    expect_cond(s2, "Installed", "True", "Succeeded", NULL, 1);
    json_decref(s1);
    json_decref(s2);
}

static void test_available_removed_when_nothing_is_installed(void **state)
{
    (void)state;
    clusterextension_installed_bundle b = {"p.v1", "1.0.0", "img"};
    clusterextension_availability ok = {true, NULL};
    clusterextension_status_input in = {.generation = 1, .now = "t1", .installed = &b, .available = &ok};
    json_t *s1 = clusterextension_status_compute(NULL, &in, NULL);
    expect_cond(s1, "Available", "True", "ProbesSucceeded", NULL, 1);
    /* The installed state cannot be read: nothing is known, the condition stays. */
    clusterextension_status_input unknown = {.generation = 1, .now = "t2", .installed_error = "forbidden",
                                             .progress = CE_PROGRESS_RETRYING, .progress_message = "retrying"};
    json_t *s2 = clusterextension_status_compute(s1, &unknown, NULL);
    expect_cond(s2, "Available", "True", "ProbesSucceeded", NULL, 1);
    /* Nothing installed: it goes, even when probes are given. */
    in.installed = NULL;
    json_t *s3 = clusterextension_status_compute(s2, &in, NULL);
    assert_null(cond(s3, "Available"));
    expect_cond(s3, "Installed", "False", "Failed", "No bundle installed", 1);
    json_decref(s1);
    json_decref(s2);
    json_decref(s3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_installed_success), cmocka_unit_test(test_retrying_nothing_installed),
        cmocka_unit_test(test_terminal_reasons),  cmocka_unit_test(test_installed_unknown),
        cmocka_unit_test(test_transition_time),   cmocka_unit_test(test_deprecation_conditions),
        cmocka_unit_test(test_message_clean),
        cmocka_unit_test(test_cert_choose),
        cmocka_unit_test(test_available_transitions),
        cmocka_unit_test(test_available_kept_when_not_probed),
        cmocka_unit_test(test_available_removed_when_nothing_is_installed),
        cmocka_unit_test(test_available_turned_off_is_removed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
