/* probe: each built-in probe (probe.h) passing and failing, with upstream's exact messages
 * (boxcutter v0.14.0 probing; the PVC line is the one upstream's revision.feature expects),
 * boxcutter's And (Unknown before False, " and " between messages), the generation checks,
 * the object's line, and the digest the drift watcher compares.
 *
 * Mutation checks (production line broken, test seen failing, line restored):
 *   probe.c  ObservedGenerationProbe skipped (`if (0 && json_is_integer(og) ...)`)
 *       -> test_outdated_status_is_unknown
 *   probe.c  condition_equal: the condition's own observedGeneration not compared
 *       -> test_outdated_condition_is_unknown
 *   probe.c  condition_equal: `strcmp(..., want) == 0` -> `!= 0`
 *       -> test_deployment_available_passes, test_crd_established, test_certificate_and_issuer_ready
 *   probe.c  Deployment: fields_equal dropped -> test_deployment_rollout_incomplete
 *   probe.c  count_or: a missing count read as missing (`return f;`) -> test_deployment_scaled_to_zero_passes
 *   probe.c  StatefulSet: readyReplicas check dropped -> test_statefulset_ready_replicas
 *   probe.c  StatefulSet: spec.replicas default 1 -> 0 -> test_statefulset_ready_replicas
 *   probe.c  PVC: "Bound" -> "Pending" (the wanted phase) -> test_pvc_bound
 *   probe.c  Namespace branch removed -> test_namespace_active
 *   probe.c  And: False before Unknown (`else if (v.any_false)` first) -> test_unknown_wins_over_false
 *   probe.c  add(): " and " separator dropped -> test_deployment_both_fail_joined_with_and
 *   probe.c  probe_digest: the messages not hashed (status only) -> test_digest_follows_the_line
 *   probe.c  probe_verdict: the line not handed out -> test_verdict_is_digest_and_line (and the
 *       drift_watch and clusterextension_reconcile suites, whose Available lines come from it)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static json_t *obj(const char *text)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o)
        fail_msg("bad fixture: %s: %s", je.text, text);
    return o;
}

/* Runs the probes on `text`; checks the status and (when want_msgs) the messages. */
static void expect(const char *text, probe_status want, const char *want_msgs)
{
    json_t *o = obj(text);
    probe_result r;
    assert_int_equal(probe_object(o, &r), 0);
    if (r.status != want)
        fail_msg("status %d, want %d (%s) for %s", r.status, want, r.messages ? r.messages : "", text);
    if (want == PROBE_TRUE)
        assert_null(r.messages);
    else if (want_msgs)
        assert_string_equal(r.messages, want_msgs);
    probe_result_free(&r);
    json_decref(o);
}

/* The object's line, as the Available condition shows it. */
static void expect_line(const char *text, const char *want)
{
    json_t *o = obj(text);
    probe_result r;
    assert_int_equal(probe_object(o, &r), 0);
    assert_int_not_equal(r.status, PROBE_TRUE);
    strbuf sb = STRBUF_INIT;
    assert_int_equal(probe_describe(&sb, o, r.messages), 0);
    assert_string_equal(strbuf_str(&sb), want);
    strbuf_free(&sb);
    probe_result_free(&r);
    json_decref(o);
}

#define DEPLOY(gen, status)                                                                                         \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"mgr\",\"namespace\":\"ops\","    \
    "\"generation\":" gen "},\"spec\":{\"replicas\":2},\"status\":" status "}"
#define AVAILABLE(st) "{\"type\":\"Available\",\"status\":\"" st "\",\"reason\":\"R\"}"
#define PROGRESSING "{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"NewReplicaSetAvailable\"}"

/* ------------------------------------------------------------ Deployment */

static void test_deployment_available_passes(void **state)
{
    (void)state;
    expect(DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,\"readyReplicas\":2,"
                       "\"availableReplicas\":2,\"conditions\":[" PROGRESSING "," AVAILABLE("True") "]}"),
           PROBE_TRUE, NULL);
}

static void test_deployment_unavailable(void **state)
{
    (void)state;
    const char *d = DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
                                "\"unavailableReplicas\":2,\"conditions\":[" AVAILABLE("False") "," PROGRESSING "]}");
    expect(d, PROBE_FALSE, ".status.condition[\"Available\"] is False");
    expect_line(d, "Object Deployment.apps/v1 ops/mgr: .status.condition[\"Available\"] is False");
}

static void test_deployment_rollout_incomplete(void **state)
{
    (void)state;
    /* Old and new Pods side by side: available, but not rolled out. */
    expect(DEPLOY("4", "{\"observedGeneration\":4,\"replicas\":3,\"updatedReplicas\":1,\"availableReplicas\":2,"
                       "\"conditions\":[" AVAILABLE("True") "]}"),
           PROBE_FALSE, "\"status.updatedReplicas\" != \"status.replicas\" expected: 1 got: 3");
}

static void test_deployment_both_fail_joined_with_and(void **state)
{
    (void)state;
    expect(DEPLOY("4", "{\"observedGeneration\":4,\"replicas\":3,\"updatedReplicas\":1,"
                       "\"conditions\":[" AVAILABLE("False") "]}"),
           PROBE_FALSE,
           "\"status.updatedReplicas\" != \"status.replicas\" expected: 1 got: 3 and "
           ".status.condition[\"Available\"] is False");
}

static void test_outdated_status_is_unknown(void **state)
{
    (void)state;
    /* A new spec the controller has not seen yet: the old Available says nothing. */
    expect(DEPLOY("5", "{\"observedGeneration\":4,\"replicas\":2,\"updatedReplicas\":2,"
                       "\"conditions\":[" AVAILABLE("True") "]}"),
           PROBE_UNKNOWN, ".status outdated");
    /* Any kind: a custom resource whose controller is behind. */
    expect("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"generation\":2},"
           "\"status\":{\"observedGeneration\":1}}",
           PROBE_UNKNOWN, ".status outdated");
}

static void test_outdated_condition_is_unknown(void **state)
{
    (void)state;
    expect(DEPLOY("5", "{\"replicas\":2,\"updatedReplicas\":2,\"conditions\":[{\"type\":\"Available\","
                       "\"status\":\"True\",\"observedGeneration\":4}]}"),
           PROBE_UNKNOWN, ".status.condition[\"Available\"] outdated");
}

static void test_fresh_deployment_is_unknown(void **state)
{
    (void)state;
    expect_line(DEPLOY("1", "{}"), "Object Deployment.apps/v1 ops/mgr: missing .status.conditions");
    expect(DEPLOY("1", "{\"conditions\":[" PROGRESSING "]}"), PROBE_UNKNOWN,
           "missing .status.condition[\"Available\"]");
    expect(DEPLOY("1", "{\"conditions\":{}}"), PROBE_UNKNOWN, "malformed .status.conditions");
}

static void test_unknown_wins_over_false(void **state)
{
    (void)state;
    /* The replica counts fail (False), the condition is missing (Unknown): only Unknown's says. */
    expect(DEPLOY("1", "{\"replicas\":2,\"updatedReplicas\":1}"), PROBE_UNKNOWN, "missing .status.conditions");
}

static void test_deployment_scaled_to_zero_passes(void **state)
{
    (void)state;
    /* replicas 0: the apiserver leaves every count out. */
    expect(DEPLOY("2", "{\"observedGeneration\":2,\"conditions\":[" AVAILABLE("True") "]}"), PROBE_TRUE, NULL);
}

/* ------------------------------------------------------------ StatefulSet */

#define STS(spec, status)                                                                                           \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ops\","    \
    "\"generation\":1},\"spec\":" spec ",\"status\":" status "}"

static void test_statefulset_ready_replicas(void **state)
{
    (void)state;
    expect(STS("{\"replicas\":2}", "{\"observedGeneration\":1,\"replicas\":2,\"updatedReplicas\":2,\"readyReplicas\":2}"),
           PROBE_TRUE, NULL);
    expect(STS("{\"replicas\":2}", "{\"observedGeneration\":1,\"replicas\":2,\"updatedReplicas\":2,\"readyReplicas\":1}"),
           PROBE_FALSE, "\"status.readyReplicas\" != \"spec.replicas\" expected: 1 got: 2");
    /* spec.replicas unset means 1; a Pod that is not ready (readyReplicas left out) fails. */
    expect(STS("{}", "{\"observedGeneration\":1,\"replicas\":1,\"updatedReplicas\":1}"), PROBE_FALSE,
           "\"status.readyReplicas\" != \"spec.replicas\" expected: 0 got: 1");
    expect(STS("{}", "{\"observedGeneration\":1,\"replicas\":1,\"updatedReplicas\":1,\"readyReplicas\":1}"),
           PROBE_TRUE, NULL);
    /* No Available condition is asked for (the StatefulSet controller writes none). */
    expect(STS("{\"replicas\":2}", "{\"observedGeneration\":1,\"replicas\":2,\"updatedReplicas\":1,\"readyReplicas\":2}"),
           PROBE_FALSE, "\"status.updatedReplicas\" != \"status.replicas\" expected: 1 got: 2");
}

/* ------------------------------------------------------------ CRD, cert-manager */

#define CRD(conds)                                                                                                  \
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\",\"metadata\":{\"name\":"    \
    "\"widgets.example.com\",\"generation\":1},\"status\":{\"conditions\":" conds "}}"

static void test_crd_established(void **state)
{
    (void)state;
    expect(CRD("[{\"type\":\"NamesAccepted\",\"status\":\"True\"},{\"type\":\"Established\",\"status\":\"True\"}]"),
           PROBE_TRUE, NULL);
    expect_line(CRD("[{\"type\":\"NamesAccepted\",\"status\":\"False\"},{\"type\":\"Established\",\"status\":\"False\"}]"),
                "Object CustomResourceDefinition.apiextensions.k8s.io/v1 /widgets.example.com: "
                ".status.condition[\"Established\"] is False");
    expect(CRD("[]"), PROBE_UNKNOWN, "missing .status.condition[\"Established\"]");
}

static void test_certificate_and_issuer_ready(void **state)
{
    (void)state;
    static const char *const kinds[] = {"Certificate", "Issuer"};
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"apiVersion\":\"cert-manager.io/v1\",\"kind\":\"%s\",\"metadata\":{\"name\":\"c\",\"namespace\":"
                 "\"ops\",\"generation\":1},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
                 kinds[i], "True");
        expect(text, PROBE_TRUE, NULL);
        snprintf(text, sizeof text,
                 "{\"apiVersion\":\"cert-manager.io/v1\",\"kind\":\"%s\",\"metadata\":{\"name\":\"c\",\"namespace\":"
                 "\"ops\",\"generation\":1},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
                 kinds[i], "False");
        expect(text, PROBE_FALSE, ".status.condition[\"Ready\"] is False");
    }
}

/* ------------------------------------------------------------ PVC, Namespace, the rest */

static void test_pvc_bound(void **state)
{
    (void)state;
#define PVC(phase)                                                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"test-pvc\","                 \
    "\"namespace\":\"ns1\"},\"status\":{\"phase\":\"" phase "\"}}"
    expect(PVC("Bound"), PROBE_TRUE, NULL);
    const char *text = PVC("Pending");
    /* Word for word what upstream's revision.feature expects. */
    expect_line(text, "Object PersistentVolumeClaim.v1 ns1/test-pvc: value at key \"status.phase\" != \"Bound\"; "
                      "expected: \"Bound\" got: \"Pending\"");
    expect("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"p\",\"namespace\":"
           "\"n\"}}",
           PROBE_FALSE, "missing key: \"status.phase\"");
}

static void test_namespace_active(void **state)
{
    (void)state;
    expect("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ops\"},\"status\":{\"phase\":"
           "\"Active\"}}",
           PROBE_TRUE, NULL);
    expect("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ops\"},\"status\":{\"phase\":"
           "\"Terminating\"}}",
           PROBE_FALSE, "value at key \"status.phase\" != \"Active\"; expected: \"Active\" got: \"Terminating\"");
}

static void test_other_kinds_pass(void **state)
{
    (void)state;
    expect("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"n\"}}",
           PROBE_TRUE, NULL);
    /* A custom resource's own Ready condition is its operator's business, as upstream. */
    expect("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"generation\":1},"
           "\"status\":{\"observedGeneration\":1,\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}",
           PROBE_TRUE, NULL);
    /* A Deployment of another group is not apps' Deployment. */
    expect("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"}}", PROBE_TRUE,
           NULL);
}

/* ------------------------------------------------------------ digest */

static uint64_t digest(const char *text)
{
    json_t *o = obj(text);
    uint64_t d = probe_digest(o);
    json_decref(o);
    return d;
}

static void test_digest_follows_the_line(void **state)
{
    (void)state;
    uint64_t pass = digest(DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
                                       "\"conditions\":[" AVAILABLE("True") "]}"));
    assert_int_equal(pass, PROBE_DIGEST_PASS);
    /* Status writes that change nothing the line says: the same digest. */
    assert_int_equal(digest(DEPLOY("4", "{\"observedGeneration\":4,\"replicas\":2,\"updatedReplicas\":2,"
                                        "\"availableReplicas\":2,\"conditions\":[" PROGRESSING "," AVAILABLE("True") "]}")),
                     PROBE_DIGEST_PASS);
    uint64_t unavailable = digest(DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
                                              "\"conditions\":[" AVAILABLE("False") "]}"));
    uint64_t unavailable2 = digest(DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
                                               "\"unavailableReplicas\":1,\"conditions\":[" AVAILABLE("False") "]}"));
    uint64_t rolling = digest(DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":3,\"updatedReplicas\":2,"
                                          "\"conditions\":[" AVAILABLE("False") "]}"));
    uint64_t rolling2 = digest(DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":3,\"updatedReplicas\":1,"
                                           "\"conditions\":[" AVAILABLE("False") "]}"));
    assert_int_not_equal(unavailable, 0);
    assert_int_not_equal(unavailable, PROBE_DIGEST_PASS);
    assert_int_equal(unavailable, unavailable2);
    assert_int_not_equal(unavailable, rolling);
    assert_int_not_equal(rolling, rolling2); /* the line names the counts */
}

/* The digest and the line at once, as the drift watches and the Available condition keep
 * them: the same as probe_digest and probe_describe each give. */
static void test_verdict_is_digest_and_line(void **state)
{
    (void)state;
    const char *passing = DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
                                      "\"conditions\":[" AVAILABLE("True") "]}");
    const char *failing = DEPLOY("3", "{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
                                      "\"conditions\":[" AVAILABLE("False") "]}");
    json_t *o = obj(passing);
    uint64_t d = 7;
    char *line = (char *)"unset";
    assert_int_equal(probe_verdict(o, &d, &line), 0);
    assert_int_equal(d, PROBE_DIGEST_PASS);
    assert_null(line);
    json_decref(o);
    o = obj(failing);
    assert_int_equal(probe_verdict(o, &d, &line), 0);
    assert_int_equal(d, digest(failing));
    assert_string_equal(line, "Object Deployment.apps/v1 ops/mgr: .status.condition[\"Available\"] is False");
    free(line);
    json_decref(o);
    expect_line(failing, "Object Deployment.apps/v1 ops/mgr: .status.condition[\"Available\"] is False");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deployment_available_passes),
        cmocka_unit_test(test_deployment_unavailable),
        cmocka_unit_test(test_deployment_rollout_incomplete),
        cmocka_unit_test(test_deployment_both_fail_joined_with_and),
        cmocka_unit_test(test_outdated_status_is_unknown),
        cmocka_unit_test(test_outdated_condition_is_unknown),
        cmocka_unit_test(test_fresh_deployment_is_unknown),
        cmocka_unit_test(test_unknown_wins_over_false),
        cmocka_unit_test(test_deployment_scaled_to_zero_passes),
        cmocka_unit_test(test_statefulset_ready_replicas),
        cmocka_unit_test(test_crd_established),
        cmocka_unit_test(test_certificate_and_issuer_ready),
        cmocka_unit_test(test_pvc_bound),
        cmocka_unit_test(test_namespace_active),
        cmocka_unit_test(test_other_kinds_pass),
        cmocka_unit_test(test_digest_follows_the_line),
        cmocka_unit_test(test_verdict_is_digest_and_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
