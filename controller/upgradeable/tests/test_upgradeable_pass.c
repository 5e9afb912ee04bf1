/* upgradeable_reconcile_once: one pass of the OpenShift upgrade check against testsupport's
 * fake apiserver.  Its decisions: not OpenShift (nothing done); ClusterOperator "olm" created
 * when absent; an extension whose olm.maxOpenShiftVersion is the cluster's minor blocks the
 * upgrade; conditions unchanged: no write; a status conflict re-read and merged again, a
 * lasting one given up; inputs that cannot be read fail closed (no cluster version, the
 * extensions not listable); the version override wins; extensions without a record and
 * records without an extension are left out; other conditions on the ClusterOperator stay.
 *
 * Mutation checks (production line broken, test seen failing, line restored):
 *   upgradeable_reconcile.c:88  `if (!served)` -> `if (0)` -> test_not_openshift_does_nothing
 *   upgradeable_reconcile.c:86  discovery error ignored -> test_discovery_failure_is_an_error
 *   upgradeable_reconcile.c:22  never created (`if (1)`) -> test_cluster_operator_created_and_upgradeable (and 10 others)
 *   upgradeable_reconcile.c:31  AlreadyExists not read again -> test_created_meanwhile_is_read_again
 *   upgradeable_reconcile.c:53  written although unchanged -> test_unchanged_conditions_are_not_written
 *   upgradeable_reconcile.c:40  one attempt only -> test_status_conflict_is_merged_again, test_lasting_conflict_gives_up
 *   upgradeable_reconcile_inputs.c:175  override ignored -> test_override_version_wins
 *   upgradeable_reconcile_inputs.c:333  extensions never listed -> test_extension_at_its_max_blocks,
 *       test_unlistable_extensions_fail_closed
 *   upgradeable_reconcile_watch.c  no retry of an unanswered discovery (retry_later not called at
 *       start) -> test_unanswered_discovery_is_asked_again
 *   upgradeable_reconcile_watch.c  the retry timer not closed at stop -> test_stop_while_discovery_is_unanswered
 *       (uv_loop_close: a handle still open)
 *   BoxcutterRuntime (upgradeable_revisions.c and the revisions in _inputs.c / _watch.c):
 *   _inputs.c  revisions never listed (opts.revisions ignored) -> test_installed_revision_blocks,
 *       test_installed_revision_is_the_newest_succeeded
 *   _inputs.c  the record preferred to the revision -> test_installed_revision_is_the_newest_succeeded
 *   _revisions.c  Archived counted as installed -> test_installed_revision_is_the_newest_succeeded
 *   _revisions.c  the oldest succeeded instead of the newest -> test_installed_revision_is_the_newest_succeeded
 *   _inputs.c  404 not read as "no revisions" -> test_revisions_unlistable
 *   _inputs.c  a failed revision list not failing closed -> test_revisions_unlistable
 *   (the revisions' informer in _watch.c: the fake apiserver serves no watches; e2e
 *   test_upgradeable.py covers it)
 *
 * The reconciler's start (upgradeable_reconciler_start): discovery unanswered at start is asked
 * again (5 s later) and the check then runs; a stop while it waits closes everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fake_apiserver.h"
#include "install_record.h"
#include "upgradeable_reconciler.h"

#define OPENSHIFT_DISCOVERY "/apis/config.openshift.io/v1"
#define CO_PATH "/apis/config.openshift.io/v1/clusteroperators/olm"
#define CV_PATH "/apis/config.openshift.io/v1/clusterversions/version"
#define SYS "olmv1-system"

typedef struct fx {
    fake_apiserver *api;
    kube_client *admin;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->api = fake_apiserver_start();
    assert_non_null(f->api);
    kube_config kc = {0};
    kc.server = strdup(fake_apiserver_url(f->api));
    kc.token = strdup("operator-controller");
    kube_client_options ko = {.connect_timeout_ms = 2000, .timeout_ms = 10000};
    olm_error err;
    f->admin = kube_client_new(&kc, &ko, &err);
    assert_non_null(f->admin);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    kube_client_free(f->admin);
    fake_apiserver_stop(f->api);
    free(f);
    return 0;
}

/* An OpenShift cluster at `version` (NULL: no ClusterVersion). */
static void openshift(fx *f, const char *version)
{
    fake_apiserver_put_json(f->api, OPENSHIFT_DISCOVERY,
                            "{\"kind\":\"APIResourceList\",\"groupVersion\":\"config.openshift.io/v1\",\"resources\":["
                            "{\"name\":\"clusteroperators\",\"kind\":\"ClusterOperator\",\"namespaced\":false},"
                            "{\"name\":\"clusterversions\",\"kind\":\"ClusterVersion\",\"namespaced\":false}]}");
    if (version)
        fake_apiserver_put(f->api, CV_PATH,
                           json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}}}", "apiVersion", "config.openshift.io/v1", "kind",
                                     "ClusterVersion", "metadata", "name", "version", "status", "desired", "version",
                                     version));
}

static void extension(fx *f, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "/apis/olm.operatorframework.io/v1/clusterextensions/%s", name);
    fake_apiserver_put(f->api, path,
                       json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "olm.operatorframework.io/v1", "kind",
                                 "ClusterExtension", "metadata", "name", name));
}

/* The install record of `ext`: bundle `bundle`, olm.maxOpenShiftVersion `max` (NULL: none). */
static void record(fx *f, const char *ext, const char *bundle, const char *max)
{
    char props[128];
    if (max)
        snprintf(props, sizeof props, "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"%s\"}]", max);
    else
        snprintf(props, sizeof props, "[]");
    install_record r = {.extension = (char *)ext, .bundle_name = (char *)bundle, .bundle_version = "1.0.0",
                        .bundle_image = "img", .package = "pkg", .properties = props, .installed_at = "2026-01-01T00:00:00Z"};
    json_t *secret = install_record_to_secret(&r, SYS);
    assert_non_null(secret);
    char *name = install_record_secret_name(ext), path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/" SYS "/secrets/%s", name);
    free(name);
    fake_apiserver_put(f->api, path, secret);
}

static int pass(fx *f, const char *override, olm_error *err)
{
    upgradeable_reconcile_opts o = {.cluster_version_override = override};
    return upgradeable_reconcile_once(f->admin, &o, err);
}

static const char *cond(fx *f, const char *type, const char *field)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(fake_apiserver_object(f->api, CO_PATH), "status"), "conditions"),
                       i, c) {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0) {
            const char *v = json_string_value(json_object_get(c, field));
            return v ? v : "";
        }
    }
    return "(none)";
}

static size_t status_writes(fx *f)
{
    return fake_apiserver_count(f->api, "PUT", CO_PATH "/status", NULL);
}

/* ------------------------------------------------------------ tests */

static void test_not_openshift_does_nothing(void **state)
{
    fx *f = *state;
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), UPGRADEABLE_NOT_OPENSHIFT);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
}

static void test_discovery_failure_is_an_error(void **state)
{
    fx *f = *state;
    fake_apiserver_fail(f->api, "GET", OPENSHIFT_DISCOVERY, NULL, 500, "etcd is down", -1);
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), -1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
}

static void test_cluster_operator_created_and_upgradeable(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    extension(f, "ok");
    record(f, "ok", "ok.v1", "4.19");
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    json_t *co = fake_apiserver_object(f->api, CO_PATH);
    assert_non_null(co);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(co, "metadata"), "annotations"),
                                                          "capability.openshift.io/name")),
                        "OperatorLifecycleManagerV1");
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
    assert_string_equal(cond(f, "Upgradeable", "reason"), "AsExpected");
    assert_string_equal(cond(f, UPGRADEABLE_DEGRADED_TYPE, "status"), "False");
    assert_int_equal(fake_apiserver_count(f->api, "POST", "/clusteroperators", NULL), 1);
    assert_int_equal(status_writes(f), 1);
}

static void test_extension_at_its_max_blocks(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    extension(f, "capped");
    record(f, "capped", "capped.v1", "4.18");
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "False");
    assert_string_equal(cond(f, "Upgradeable", "reason"), "InstalledOLMOperators_IncompatibleOperatorsInstalled");
    const char *m = cond(f, "Upgradeable", "message");
    if (!strstr(m, "capped.v1") || !strstr(m, "4.19"))
        fail_msg("Upgradeable message: %s", m);
}

static void test_override_version_wins(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    extension(f, "capped");
    record(f, "capped", "capped.v1", "4.18");
    olm_error err;
    assert_int_equal(pass(f, "4.17.0", &err), 0); /* next is 4.18: allowed */
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
}

static void test_unchanged_conditions_are_not_written(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
}

static void test_status_conflict_is_merged_again(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    fake_apiserver_fail(f->api, "PUT", CO_PATH "/status", NULL, 409, NULL, 1);
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_int_equal(status_writes(f), 2);
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
}

static void test_lasting_conflict_gives_up(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    fake_apiserver_fail(f->api, "PUT", CO_PATH "/status", NULL, 409, NULL, -1);
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), -1);
    assert_int_equal(status_writes(f), 5);
    if (!strstr(err.msg, "writing ClusterOperator \"olm\" status"))
        fail_msg("%s", err.msg);
}

static void test_created_meanwhile_is_read_again(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    fake_apiserver_put_json(f->api, CO_PATH, "{\"apiVersion\":\"config.openshift.io/v1\",\"kind\":\"ClusterOperator\","
                                             "\"metadata\":{\"name\":\"olm\"}}");
    /* Our GET misses it (another writer creates it just then): the create finds it there. */
    fake_apiserver_fail(f->api, "GET", CO_PATH, NULL, 404, "not found", 1);
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_int_equal(fake_apiserver_count(f->api, "POST", "/clusteroperators", NULL), 1);
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
}

static void test_missing_cluster_version_fails_closed(void **state)
{
    fx *f = *state;
    openshift(f, NULL);
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "False");
    assert_string_equal(cond(f, "Upgradeable", "reason"),
                        "InstalledOLMOperators_ErrorCheckingOperatorCompatibility");
    if (!strstr(cond(f, "Upgradeable", "message"), "ClusterVersion \"version\" not found"))
        fail_msg("%s", cond(f, "Upgradeable", "message"));
}

static void test_unlistable_extensions_fail_closed(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    fake_apiserver_fail(f->api, "GET", "/clusterextensions", NULL, 403, "forbidden", -1);
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "False");
    assert_string_equal(cond(f, "Upgradeable", "reason"), "InstalledOLMOperators_FailureGettingExtensionMetadata");
    assert_string_equal(cond(f, UPGRADEABLE_DEGRADED_TYPE, "status"), "True");
}

static void test_only_installed_extensions_count(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    extension(f, "pending"); /* not installed yet: no record */
    record(f, "gone", "gone.v1", "4.18"); /* its extension was deleted */
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
}

static void test_other_conditions_stay(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    fake_apiserver_put_json(f->api, CO_PATH,
                            "{\"apiVersion\":\"config.openshift.io/v1\",\"kind\":\"ClusterOperator\",\"metadata\":{\"name\":\"olm\"},"
                            "\"status\":{\"conditions\":[{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"x\","
                            "\"message\":\"m\",\"lastTransitionTime\":\"2020-01-01T00:00:00Z\"}]}}");
    olm_error err;
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_string_equal(cond(f, "Available", "lastTransitionTime"), "2020-01-01T00:00:00Z");
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
    assert_int_equal(fake_apiserver_count(f->api, "POST", NULL, NULL), 0);
}

/* ------------------------------------------------------------ the reconciler's start */

typedef struct waiting {
    fx *f;
    bool stopped;
} waiting;

static void stopped(void *data)
{
    ((waiting *)data)->stopped = true;
}

static void on_tick(uv_timer_t *t)
{
    (void)t; /* wakes the loop every 100 ms */
}

/* The API server cannot answer discovery at start (500 once): the reconciler starts all the
 * same, asks again on its own, and once answered writes the ClusterOperator. */
static void test_unanswered_discovery_is_asked_again(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    fake_apiserver_fail(f->api, "GET", OPENSHIFT_DISCOVERY, NULL, 500, "etcd is down", 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    upgradeable_reconcile_opts o = {.system_namespace = SYS};
    upgradeable_reconciler *r = NULL;
    olm_error err;
    assert_int_equal(upgradeable_reconciler_start(&loop, f->admin, &o, &r, &err), 0);
    assert_non_null(r);
    assert_int_equal(status_writes(f), 0);
    waiting w = {.f = f};
    uv_timer_t tick;
    uv_timer_init(&loop, &tick);
    uv_timer_start(&tick, on_tick, 100, 100);
    uint64_t deadline = uv_now(&loop) + 30000; /* the first retry comes after 5 s */
    while (status_writes(f) == 0 && uv_now(&loop) < deadline)
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(status_writes(f) > 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
    uv_close((uv_handle_t *)&tick, NULL);
    upgradeable_reconciler_stop(r, stopped, &w);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(w.stopped);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Stopped while it still waits to ask again: everything closes, nothing was written. */
static void test_stop_while_discovery_is_unanswered(void **state)
{
    fx *f = *state;
    fake_apiserver_fail(f->api, "GET", OPENSHIFT_DISCOVERY, NULL, 500, "etcd is down", -1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    upgradeable_reconciler *r = NULL;
    olm_error err;
    assert_int_equal(upgradeable_reconciler_start(&loop, f->admin, NULL, &r, &err), 0);
    assert_non_null(r);
    waiting w = {.f = f};
    upgradeable_reconciler_stop(r, stopped, &w);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(w.stopped);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Not OpenShift: nothing to start, no handle. */
static void test_start_when_not_openshift(void **state)
{
    fx *f = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    upgradeable_reconciler *r = NULL;
    olm_error err;
    assert_int_equal(upgradeable_reconciler_start(&loop, f->admin, NULL, &r, &err), UPGRADEABLE_NOT_OPENSHIFT);
    assert_null(r);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- BoxcutterRuntime: the install is a ClusterObjectSet revision (opts.revisions) ---- */

/* Revision `n` of `ext`: bundle `bundle`, olm.maxOpenShiftVersion `max` in its olm.properties
 * annotation (NULL: none), lifecycleState `state`, Succeeded True or not. */
static void revision(fx *f, const char *ext, int n, const char *bundle, const char *max, const char *state,
                     bool succeeded)
{
    char path[256], name[128], props[128];
    snprintf(name, sizeof name, "%s-%d", ext, n);
    snprintf(path, sizeof path, "/apis/olm.operatorframework.io/v1/clusterobjectsets/%s", name);
    if (max)
        snprintf(props, sizeof props, "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"%s\"}]", max);
    else
        snprintf(props, sizeof props, "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\"}}]");
    json_t *cos = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}, s:{s:s, s:s}}, s:{s:i, s:s, s:[]}, s:{s:[{s:s, s:s}]}}",
                            "apiVersion", "olm.operatorframework.io/v1", "kind", "ClusterObjectSet", "metadata", "name",
                            name, "labels", "olm.operatorframework.io/owner-kind", "ClusterExtension",
                            "olm.operatorframework.io/owner-name", ext, "annotations",
                            "olm.operatorframework.io/bundle-name", bundle, "olm.properties", props, "spec", "revision",
                            n, "lifecycleState", state, "phases", "status", "conditions", "type", "Succeeded", "status",
                            succeeded ? "True" : "False");
    assert_non_null(cos);
    fake_apiserver_put(f->api, path, cos);
}

static int pass_gate_on(fx *f, olm_error *err)
{
    upgradeable_reconcile_opts o = {.system_namespace = SYS, .revisions = true};
    return upgradeable_reconcile_once(f->admin, &o, err);
}

/* The installed revision's olm.properties: at its max, the upgrade is blocked.  Without the
 * gate nothing reads revisions (the extension has no record: not installed). */
static void test_installed_revision_blocks(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    extension(f, "capped");
    revision(f, "capped", 1, "capped.v1", "4.18", "Active", true);
    olm_error err;
    assert_int_equal(pass_gate_on(f, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "False");
    assert_string_equal(cond(f, "Upgradeable", "reason"), "InstalledOLMOperators_IncompatibleOperatorsInstalled");
    const char *m = cond(f, "Upgradeable", "message");
    if (!strstr(m, "capped.v1") || !strstr(m, "4.19"))
        fail_msg("Upgradeable message: %s", m);
    assert_int_equal(pass(f, NULL, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
}

/* Which revision is installed: the newest Active one that succeeded.  It wins over an install
 * record (one left from before the gate was switched on); an archived revision, or one still
 * rolling out, does not count. */
static void test_installed_revision_is_the_newest_succeeded(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    extension(f, "capped");
    record(f, "capped", "capped.v0", "4.18");                          /* stale */
    revision(f, "capped", 1, "capped.v1", "4.18", "Archived", true);   /* replaced */
    revision(f, "capped", 2, "capped.v2", "4.18", "Active", true);     /* being replaced */
    revision(f, "capped", 3, "capped.v3", NULL, "Active", true);       /* installed */
    revision(f, "capped", 4, "capped.v4", "4.18", "Active", false);    /* rolling out */
    olm_error err;
    assert_int_equal(pass_gate_on(f, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
    fake_apiserver_remove(f->api, "/apis/olm.operatorframework.io/v1/clusterobjectsets/capped-3");
    assert_int_equal(pass_gate_on(f, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "False");
    assert_non_null(strstr(cond(f, "Upgradeable", "message"), "capped.v2"));
    /* Without a succeeded Active revision, the record is what is installed. */
    fake_apiserver_remove(f->api, "/apis/olm.operatorframework.io/v1/clusterobjectsets/capped-2");
    assert_int_equal(pass_gate_on(f, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "False");
    assert_non_null(strstr(cond(f, "Upgradeable", "message"), "capped.v0"));
}

/* The ClusterObjectSet API not served: no revisions, the records count.  Revisions that cannot
 * be listed otherwise: fail closed (the installed bundle is unknown). */
static void test_revisions_unlistable(void **state)
{
    fx *f = *state;
    openshift(f, "4.18.3");
    extension(f, "free");
    record(f, "free", "free.v1", NULL);
    fake_apiserver_fail(f->api, "GET", "/clusterobjectsets", NULL, 404, "the server could not find the requested resource", -1);
    olm_error err;
    assert_int_equal(pass_gate_on(f, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "True");
    fake_apiserver_fail_clear(f->api);
    fake_apiserver_fail(f->api, "GET", "/clusterobjectsets", NULL, 500, "etcd is down", -1);
    assert_int_equal(pass_gate_on(f, &err), 0);
    assert_string_equal(cond(f, "Upgradeable", "status"), "False");
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_not_openshift_does_nothing),
        T(test_discovery_failure_is_an_error),
        T(test_cluster_operator_created_and_upgradeable),
        T(test_extension_at_its_max_blocks),
        T(test_override_version_wins),
        T(test_unchanged_conditions_are_not_written),
        T(test_status_conflict_is_merged_again),
        T(test_lasting_conflict_gives_up),
        T(test_created_meanwhile_is_read_again),
        T(test_missing_cluster_version_fails_closed),
        T(test_unlistable_extensions_fail_closed),
        T(test_only_installed_extensions_count),
        T(test_other_conditions_stay),
        T(test_unanswered_discovery_is_asked_again),
        T(test_stop_while_discovery_is_unanswered),
        T(test_start_when_not_openshift),
        T(test_installed_revision_blocks),
        T(test_installed_revision_is_the_newest_succeeded),
        T(test_revisions_unlistable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
