/* clusterextension_revision: the ClusterExtension reconcile with BoxcutterRuntime on, through
 * the real reconciler against the fake apiserver (ce_fixture.h).  Installs and upgrades become
 * ClusterObjectSet revisions (nothing applied by this controller), the status follows the
 * revisions as upstream's ApplyBundleWithBoxcutter writes it, deletion takes the revisions and
 * their Secrets, and an install made with the gate off becomes revision 1 without reinstalling.
 *
 * Mutation checks (production line broken, test seen failing, line restored):
 *   revision.c  `same = false` (always a new revision) -> test_rolling_revision_is_reported,
 *       test_upgrade_is_revision_2, test_mutable_fields_updated_in_place
 *   revision.c  update_current skipped -> test_mutable_fields_updated_in_place
 *   revision.c  rolling_target never taken -> test_upgrade_is_revision_2
 *   revision.c  Secrets' owner references not patched -> test_install_is_revision_1
 *   revision.c  ensure_secret_owners ignores what is known (infos_secrets_owned), or not recorded at the creation ->
 *       test_secret_owners_checked_once_per_revision; infos_set_secrets_owned not called after the
 *       LIST -> the same; ensure_secret_owners never LISTs -> the same
 *   revision.c  migrated revision not marked Succeeded -> test_install_record_migrates_to_revision_1
 *   reconcile.c  revisions read again after migrate_record found nothing -> test_install_is_revision_1
 *   reconcile.c  not read again after a migration -> test_install_record_migrates_to_revision_1
 *   revision.c  GC of Active revisions too (`if (0)` for `!archived`) -> test_old_archived_revisions_collected
 *   revision.c  a revision being deleted deleted again -> test_deletion_takes_the_revisions
 *   revision.c  `if (left > 0) return 1` dropped -> test_deletion_takes_the_revisions
 *   revision_status.c  the newest rolling Progressing not mirrored -> test_rolling_revision_is_reported
 *   revision_status.c  the installed revision's conditions not mirrored -> test_succeeded_revision_is_installed
 *   revision_status.c  lastTransitionTime `now` instead of the revision's -> test_rolling_revision_is_reported
 *   revision_status.c  Retrying read as Absent -> test_rolling_revision_is_reported
 *   revision_status.c  old Progressing not restored -> test_install_is_revision_1
 *   reconcile.c  migrate_record not called -> test_install_record_migrates_to_revision_1
 *   reconcile.c  gate ignored in run_pipeline -> 6 tests; steps.c  install_revision skipped -> 8 tests
 *   reconcile.c  revision status never applied on success -> 3 tests
 *   steps.c  install_revision: sa_client not called -> test_missing_service_account_creates_nothing */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ce_fixture.h"

#define COS_PREFIX "/apis/olm.operatorframework.io/v1/clusterobjectsets/"
#define COS1 COS_PREFIX CE_NAME "-1"
#define COS2 COS_PREFIX CE_NAME "-2"
#define DEPLOYMENT_PATH "/apis/apps/v1/namespaces/" CE_NS "/deployments/pkg-operator"

static int setup_gate(void **state)
{
    int rc = ce_fixture_setup(state);
    ((ce_fixture *)*state)->boxcutter = true;
    return rc;
}

static const char *str(const json_t *o, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_string_value(v) ? json_string_value(v) : "";
}

static void assert_condition(ce_fixture *f, const char *type, const char *status, const char *reason)
{
    const char *s = ce_fixture_condition_field(f, type, "status");
    const char *r = ce_fixture_condition_field(f, type, "reason");
    if (strcmp(s, status) != 0 || strcmp(r, reason) != 0)
        fail_msg("%s is %s/%s (%s), want %s/%s", type, s, r, ce_fixture_condition_field(f, type, "message"), status,
                 reason);
}

/* Sets the revision's status conditions as its controller would ("T/Reason/message" each). */
static void revision_status(ce_fixture *f, const char *path, const char *succeeded, const char *progressing_reason,
                            const char *available_reason, const char *message)
{
    json_t *cos = fake_apiserver_object(f->api, path);
    assert_non_null(cos);
    json_t *conds = json_array();
    if (succeeded)
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Succeeded", "status", succeeded,
                                               "reason", "Succeeded", "message", "", "lastTransitionTime",
                                               "2026-01-01T00:00:00Z"));
    if (progressing_reason)
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Progressing", "status",
                                               strcmp(progressing_reason, "ProgressDeadlineExceeded") == 0 ? "False" : "True",
                                               "reason", progressing_reason, "message", message, "lastTransitionTime",
                                               "2026-01-01T00:00:01Z"));
    if (available_reason)
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Available", "status",
                                               strcmp(available_reason, "ProbesSucceeded") == 0 ? "True" : "False",
                                               "reason", available_reason, "message", "probes",
                                               "lastTransitionTime", "2026-01-01T00:00:02Z"));
    json_object_set_new(cos, "status", json_pack("{s:o}", "conditions", conds));
}

static size_t revision_creates(ce_fixture *f)
{
    return fake_apiserver_count(f->api, "PATCH", "/clusterobjectsets/", NULL) -
           fake_apiserver_count(f->api, "PATCH", "/status", NULL);
}

/* The first reconcile of an extension that resolves to pkg.v1.0.0. */
static void first_reconcile(ce_fixture *f)
{
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, "{\"progressDeadlineMinutes\": 12}");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
}

static void test_install_is_revision_1(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    json_t *cos = fake_apiserver_object(f->api, COS1);
    assert_non_null(cos);
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    assert_string_equal(str(cos, "metadata", "labels", "olm.operatorframework.io/owner-name"), CE_NAME);
    assert_string_equal(str(cos, "metadata", "labels", "olm.operatorframework.io/owner-kind"), "ClusterExtension");
    assert_string_equal(str(cos, "metadata", "annotations", "olm.operatorframework.io/bundle-name"), CE_V1);
    assert_string_equal(str(cos, "metadata", "annotations", "olm.operatorframework.io/bundle-version"), "1.0.0");
    assert_string_equal(str(cos, "metadata", "annotations", "olm.operatorframework.io/bundle-reference"), f->image_v1);
    assert_string_equal(str(cos, "metadata", "annotations", "olm.operatorframework.io/package-name"), "pkg");
    /* The objects are applied as the extension's ServiceAccount (the ClusterObjectSet controller reads these). */
    assert_string_equal(str(cos, "metadata", "annotations", "olm.operatorframework.io/service-account-name"), CE_SA);
    assert_string_equal(str(cos, "metadata", "annotations", "olm.operatorframework.io/service-account-namespace"), CE_NS);
    /* The bundle has no olm.properties: neither has the revision (upstream copies it when present). */
    assert_null(json_object_get(json_object_get(json_object_get(cos, "metadata"), "annotations"), "olm.properties"));
    const json_t *owner = json_array_get(json_object_get(json_object_get(cos, "metadata"), "ownerReferences"), 0);
    assert_string_equal(str(owner, "uid", NULL, NULL), str(ce, "metadata", "uid", NULL));
    assert_true(json_is_true(json_object_get(owner, "controller")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cos, "spec"), "revision")), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cos, "spec"), "progressDeadlineMinutes")), 12);
    /* The objects are in Secrets of the system namespace, owned by the revision. */
    const json_t *ref = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(json_object_get(cos, "spec"), "phases"), 0), "objects"), 0),
        "ref");
    char path[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/" CE_SYS "/secrets/%s", str(ref, "name", NULL, NULL));
    json_t *secret = fake_apiserver_object(f->api, path);
    assert_non_null(secret);
    assert_string_equal(str(secret, "type", NULL, NULL), "olm.operatorframework.io/object-data");
    const json_t *sowner = json_array_get(json_object_get(json_object_get(secret, "metadata"), "ownerReferences"), 0);
    assert_string_equal(str(sowner, "kind", NULL, NULL), "ClusterObjectSet");
    assert_string_equal(str(sowner, "name", NULL, NULL), CE_NAME "-1");
    assert_string_equal(str(sowner, "uid", NULL, NULL), str(cos, "metadata", "uid", NULL));
    assert_true(json_is_true(json_object_get(sowner, "controller")));
    /* Nothing applied by this controller, and no install record. */
    assert_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
    /* One LIST of the extension's revisions (none: no install to migrate, no second look). */
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/clusterobjectsets?labelSelector", NULL), 1);
    /* Upstream's status after that first reconcile: nothing installed, no revision seen yet. */
    assert_condition(f, "Installed", "False", "Failed");
    assert_null(json_object_get(json_object_get(ce, "status"), "activeRevisions"));
    /* Progressing comes from a revision only: none has said anything yet. */
    assert_null(ce_fixture_condition(f, "Progressing"));
}

/* The Secrets' ownerReferences to their revision (ensureSecretOwnerReferences): set at the
 * creation; later reconciles of the same revision do not LIST the Secrets again.  A new process
 * (a new reconciler) checks once, and gives a Secret that lacks the reference (a crash between
 * the revision's creation and the patch) its reference. */
static void test_secret_owners_checked_once_per_revision(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    const char *list = "/namespaces/" CE_SYS "/secrets?labelSelector";
    size_t lists = fake_apiserver_count(f->api, "GET", list, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", list, NULL), lists);
    /* A Secret without its reference, seen by a new process. */
    json_t *cos = fake_apiserver_object(f->api, COS1);
    const json_t *ref = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(json_object_get(cos, "spec"), "phases"), 0), "objects"), 0),
        "ref");
    char path[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/" CE_SYS "/secrets/%s", str(ref, "name", NULL, NULL));
    json_t *secret = fake_apiserver_object(f->api, path);
    assert_non_null(secret);
    json_object_del(json_object_get(secret, "metadata"), "ownerReferences");
    clusterextension_reconciler_free(f->r);
    f->r = NULL;
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", list, NULL), lists + 1);
    secret = fake_apiserver_object(f->api, path);
    const json_t *sowner = json_array_get(json_object_get(json_object_get(secret, "metadata"), "ownerReferences"), 0);
    assert_string_equal(str(sowner, "name", NULL, NULL), CE_NAME "-1");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", list, NULL), lists + 1);
}

static void test_rolling_revision_is_reported(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    revision_status(f, COS1, NULL, "RollingOut", "ProbeFailure", "Revision 1.0.0 is rolling out.");
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(revision_creates(f), 0); /* the same content: no new revision */
    assert_null(fake_apiserver_object(f->api, COS2));
    assert_condition(f, "Installed", "False", "Absent");
    assert_condition(f, "Progressing", "True", "RollingOut");
    assert_string_equal(ce_fixture_condition_field(f, "Progressing", "message"), "Revision 1.0.0 is rolling out.");
    assert_null(ce_fixture_condition(f, "Available")); /* only the installed revision's is mirrored */
    json_t *active = json_object_get(json_object_get(fake_apiserver_object(f->api, CE_PATH), "status"), "activeRevisions");
    assert_int_equal(json_array_size(active), 1);
    const json_t *a0 = json_array_get(active, 0);
    assert_string_equal(str(a0, "name", NULL, NULL), CE_NAME "-1");
    assert_int_equal(json_array_size(json_object_get(a0, "conditions")), 2);
    /* The deadline passes: the revision's words reach the extension. */
    revision_status(f, COS1, NULL, "ProgressDeadlineExceeded", "ProbeFailure",
                    "Revision has not rolled out for 1 minute(s). Last status: Revision 1.0.0 is rolling out.");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_condition(f, "Progressing", "False", "ProgressDeadlineExceeded");
    assert_string_equal(ce_fixture_condition_field(f, "Progressing", "lastTransitionTime"), "2026-01-01T00:00:01Z");
    /* A Retrying revision: Installed False/Failed. */
    revision_status(f, COS1, NULL, "Retrying", NULL, "revision object collisions: ...");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_condition(f, "Installed", "False", "Failed");
    assert_condition(f, "Progressing", "True", "Retrying");
}

static void test_succeeded_revision_is_installed(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    revision_status(f, COS1, "True", "Succeeded", "ProbesSucceeded", "Revision 1.0.0 has rolled out.");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_condition(f, "Installed", "True", "Succeeded");
    char want[512];
    snprintf(want, sizeof want, "Installed bundle %s successfully", f->image_v1);
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "message"), want);
    assert_condition(f, "Available", "True", "ProbesSucceeded");
    assert_condition(f, "Progressing", "True", "Succeeded");
    assert_string_equal(ce_fixture_condition_field(f, "Progressing", "message"), "Revision 1.0.0 has rolled out.");
    json_t *status = json_object_get(fake_apiserver_object(f->api, CE_PATH), "status");
    assert_string_equal(str(status, "install", "bundle", "name"), CE_V1);
    json_t *active = json_object_get(status, "activeRevisions");
    assert_int_equal(json_array_size(active), 1);
    assert_null(json_object_get(json_array_get(active, 0), "conditions"));
    /* The workload turns unready: Available follows the revision. */
    revision_status(f, COS1, "True", "Succeeded", "ProbeFailure", "Revision 1.0.0 has rolled out.");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_condition(f, "Available", "False", "ProbeFailure");
    assert_condition(f, "Installed", "True", "Succeeded");
}

static void test_upgrade_is_revision_2(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    revision_status(f, COS1, "True", "Succeeded", "ProbesSucceeded", "Revision 1.0.0 has rolled out.");
    ce_fixture_catalog(f, CE_CATALOG_V1 | CE_CATALOG_V11);
    ce_fixture_pullable(f, CE_V11);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    json_t *cos2 = fake_apiserver_object(f->api, COS2);
    assert_non_null(cos2);
    assert_string_equal(str(cos2, "metadata", "annotations", "olm.operatorframework.io/bundle-version"), "1.1.0");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cos2, "spec"), "revision")), 2);
    assert_string_equal(str(cos2, "spec", "lifecycleState", NULL), "Active");
    /* Revision 1 stays until revision 2 succeeds (its controller archives it). */
    assert_string_equal(str(fake_apiserver_object(f->api, COS1), "spec", "lifecycleState", NULL), "Active");
    /* While 2 rolls out, the extension reports both and takes no new resolution (the catalog
     * gone would fall back to the installed 1.0.0 otherwise: a revision 3). */
    revision_status(f, COS2, NULL, "RollingOut", "ProbeFailure", "Revision 1.1.0 is rolling out.");
    ce_fixture_catalog_gone(f);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(revision_creates(f), 0);
    json_t *status = json_object_get(fake_apiserver_object(f->api, CE_PATH), "status");
    json_t *active = json_object_get(status, "activeRevisions");
    assert_int_equal(json_array_size(active), 2);
    assert_string_equal(str(json_array_get(active, 0), "name", NULL, NULL), CE_NAME "-1");
    assert_string_equal(str(json_array_get(active, 1), "name", NULL, NULL), CE_NAME "-2");
    assert_condition(f, "Progressing", "True", "RollingOut");
    assert_condition(f, "Installed", "True", "Succeeded");
    assert_string_equal(str(status, "install", "bundle", "version"), "1.0.0");
    /* 2 succeeds and 1 is archived: 2 is installed. */
    revision_status(f, COS2, "True", "Succeeded", "ProbesSucceeded", "Revision 1.1.0 has rolled out.");
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, COS1), "spec"), "lifecycleState",
                        json_string("Archived"));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    status = json_object_get(fake_apiserver_object(f->api, CE_PATH), "status");
    assert_string_equal(str(status, "install", "bundle", "version"), "1.1.0");
    active = json_object_get(status, "activeRevisions");
    assert_int_equal(json_array_size(active), 1);
    assert_string_equal(str(json_array_get(active, 0), "name", NULL, NULL), CE_NAME "-2");
}

/* A changed progressDeadlineMinutes updates the current revision in place (it is mutable). */
static void test_mutable_fields_updated_in_place(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, CE_PATH), "spec"), "progressDeadlineMinutes",
                        json_integer(30));
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(fake_apiserver_object(f->api, COS2));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(fake_apiserver_object(f->api, COS1), "spec"), "progressDeadlineMinutes")),
        30);
}

static void test_revisions_unreadable(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    fake_apiserver_fail(f->api, "GET", "/clusterobjectsets", NULL, 500, "etcd is down", -1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_condition(f, "Installed", "Unknown", "Failed");
    assert_condition(f, "Progressing", "True", "Retrying");
    assert_string_equal(ce_fixture_condition_field(f, "Progressing", "message"), "retrying to get installed bundle");
    assert_null(fake_apiserver_object(f->api, COS1));
}

static void test_deletion_takes_the_revisions(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    /* A revision whose controller still tears it down (a finalizer) holds the extension. */
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, COS1), "metadata"), "finalizers",
                        json_pack("[s]", "olm.operatorframework.io/teardown"));
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, CE_PATH), "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_REQUEUE_AFTER);
    assert_true(res.requeue_after_ms > 0);
    assert_non_null(json_object_get(json_object_get(fake_apiserver_object(f->api, COS1), "metadata"), "deletionTimestamp"));
    assert_true(ce_fixture_has_finalizer(f, CE_FINALIZER));
    /* Asked once: while it is torn down, the next look deletes nothing again. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_REQUEUE_AFTER);
    assert_int_equal(fake_apiserver_count(f->api, "DELETE", "/clusterobjectsets/", NULL), 0);
    /* Its teardown done: the Secrets go and so does the extension. */
    fake_apiserver_remove(f->api, COS1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(fake_apiserver_object(f->api, CE_PATH));
    json_t *ce = NULL;
    (void)ce;
    assert_int_equal(fake_apiserver_count(f->api, "DELETE", "/namespaces/" CE_SYS "/secrets/" CE_NAME "-1-", NULL), 1);
}

/* The door: an install made with the gate off becomes revision 1, without reinstalling. */
static void test_install_record_migrates_to_revision_1(void **state)
{
    ce_fixture *f = *state;
    f->boxcutter = false;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    json_t *dep = fake_apiserver_object(f->api, DEPLOYMENT_PATH);
    assert_non_null(dep);
    char rv[64];
    snprintf(rv, sizeof rv, "%s", str(dep, "metadata", "resourceVersion", NULL));
    /* The gate is switched on (a new process). */
    clusterextension_reconciler_free(f->r);
    f->r = NULL;
    f->boxcutter = true;
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    json_t *cos = fake_apiserver_object(f->api, COS1);
    assert_non_null(cos);
    assert_string_equal(str(cos, "spec", "collisionProtection", NULL), "None");
    assert_string_equal(str(cos, "metadata", "labels", "olm.operatorframework.io/migrated-from-helm"), "true");
    const json_t *succ = json_array_get(json_object_get(json_object_get(cos, "status"), "conditions"), 0);
    assert_string_equal(str(succ, "type", NULL, NULL), "Succeeded");
    assert_string_equal(str(succ, "status", NULL, NULL), "True");
    assert_string_equal(str(succ, "message", NULL, NULL), "Revision succeeded - migrated from Helm release");
    /* Still installed, nothing re-applied; as upstream, the next revision takes over with
     * collisionProtection Prevent. */
    assert_condition(f, "Installed", "True", "Succeeded");
    assert_string_equal(str(fake_apiserver_object(f->api, DEPLOYMENT_PATH), "metadata", "resourceVersion", NULL), rv);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", "/deployments/", NULL), 0);
    json_t *cos2 = fake_apiserver_object(f->api, COS2);
    assert_non_null(cos2);
    assert_string_equal(str(cos2, "spec", "collisionProtection", NULL), "Prevent");
}

/* The CRD preflight reads with the extension's ServiceAccount: without one, no revision. */
static void test_missing_service_account_creates_nothing(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, "{\"serviceAccount\": {\"name\": \"nobody\"}}");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_null(fake_apiserver_object(f->api, COS1));
    assert_condition(f, "Progressing", "True", "Retrying");
    const char *m = ce_fixture_condition_field(f, "Progressing", "message");
    assert_non_null(strstr(m, "service account \"nobody\" not found"));
}

/* Archived revisions beyond the newest five go when a new one is made. */
static void test_old_archived_revisions_collected(void **state)
{
    ce_fixture *f = *state;
    /* 1 still Active (never deleted), 2-6 archived, 7 the newest. */
    for (int i = 1; i <= 7; i++) {
        char path[256], body[1024];
        snprintf(path, sizeof path, COS_PREFIX CE_NAME "-%d", i);
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"olm.operatorframework.io/v1\",\"kind\":\"ClusterObjectSet\",\"metadata\":{\"name\":"
                 "\"" CE_NAME "-%d\",\"labels\":{\"olm.operatorframework.io/owner-name\":\"" CE_NAME "\"},"
                 "\"annotations\":{\"olm.operatorframework.io/bundle-name\":\"" CE_V1 "\","
                 "\"olm.operatorframework.io/bundle-version\":\"1.0.0\",\"olm.operatorframework.io/package-name\":\"pkg\"}},"
                 "\"spec\":{\"revision\":%d,\"lifecycleState\":\"%s\",\"phases\":[]},"
                 "\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}]}}",
                 i, i, i > 1 && i < 7 ? "Archived" : "Active");
        fake_apiserver_put_json(f->api, path, body);
    }
    first_reconcile(f);
    assert_non_null(fake_apiserver_object(f->api, COS_PREFIX CE_NAME "-8"));
    assert_non_null(fake_apiserver_object(f->api, COS_PREFIX CE_NAME "-1"));
    assert_null(fake_apiserver_object(f->api, COS_PREFIX CE_NAME "-2"));
    assert_non_null(fake_apiserver_object(f->api, COS_PREFIX CE_NAME "-3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_install_is_revision_1, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_secret_owners_checked_once_per_revision, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_rolling_revision_is_reported, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_succeeded_revision_is_installed, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_is_revision_2, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_mutable_fields_updated_in_place, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_revisions_unreadable, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_deletion_takes_the_revisions, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_install_record_migrates_to_revision_1, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_old_archived_revisions_collected, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_missing_service_account_creates_nothing, setup_gate, ce_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
