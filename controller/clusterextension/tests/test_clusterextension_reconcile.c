/* clusterextension_reconcile: every decision of one ClusterExtension reconcile, driven through
 * the real reconciler against testsupport's fake apiserver, a fake catalogd and a pre-filled
 * bundle image cache (ce_fixture.h).  One test per branch:
 *   finalizer: added on first sight (once); on deletion the bundle is uninstalled and the
 *     finalizer (with upstream's) released; someone else's finalizer alone: nothing to do;
 *   install record: absent (first install), present (the installed bundle, no new apply),
 *     unreadable (Installed Unknown, Retrying, nothing applied; also during deletion);
 *   resolution failed: fallback to the installed bundle when no catalog matches any more, but
 *     not when a catalog still matches or the version range excludes it, nor when nothing is
 *     installed;
 *   maintain (installed bundle's image unpullable: kept, Succeeded) vs repair (same bundle:
 *     only drifted objects re-applied) vs apply (new bundle);
 *   token retry: a token rejected with 401 is replaced once, and only once;
 *   progress deadline: Retrying turns ProgressDeadlineExceeded past spec.progressDeadlineMinutes,
 *     the retry is due by the deadline, and a success clears it;
 *   plus: the extension gone, terminal InvalidConfiguration, a status write conflict.
 *
 * Mutation checks: each test was seen to fail with its branch broken on purpose (the
 * production line edited, the test run, the line restored):
 *   clusterextension_reconcile.c:328  `!has_finalizer(ce) && false && set_finalizer(..)`
 *       -> test_finalizer_added_on_first_sight, test_finalizer_write_failure_installs_nothing
 *   clusterextension_reconcile.c:292  finalizer release skipped (`if (0)`)
 *       -> test_deletion_uninstalls_and_releases_finalizers
 *   clusterextension_reconcile.c:234  `if (!has_finalizer_of(ce, true))` -> `if (0)`
 *       -> test_deletion_without_our_finalizer_does_nothing
 *   clusterextension_reconcile.c:238  unreadable record ignored on delete (`if (0)`)
 *       -> test_deletion_with_unreadable_record_retries
 *   clusterextension_reconcile.c:347  `have_rec = found == 1` -> `have_rec = false`
 *       -> test_record_present_is_the_installed_bundle (and the fallback, maintain, repair tests)
 *   clusterextension_reconcile.c:339  unreadable record ignored (`if (0)`) -> test_record_unreadable_applies_nothing
 *   clusterextension_steps.c:103  `|| true` added (never fall back)
 *       -> test_fallback_to_installed_bundle_when_no_catalog_matches
 *   clusterextension_steps.c:103  `|| cats.matched > 0` dropped -> test_no_fallback_while_a_catalog_matches
 *   clusterextension_steps.c:101  `*range &&` -> `0 &&` -> test_no_fallback_when_the_range_excludes_the_installed_version
 *   clusterextension_steps.c:99   `if (!clusterextension_installed(run))` -> `if (0)`
 *       -> test_resolution_failure_without_installed_bundle_retries
 *   clusterextension_steps.c:354  maintain skipped (`if (0)`) -> test_maintain_when_installed_image_cannot_be_pulled
 *   clusterextension_steps.c:356  pull failure RETRYING -> BLOCKED -> test_unpullable_new_bundle_retries
 *   clusterextension_steps.c:310  repair never taken (`0 &&`) -> test_repair_when_bundle_unchanged
 *   clusterextension_steps.c:310-311  repair always taken (`1 || (...)`) -> test_apply_when_bundle_changes (and 16 others)
 *   clusterextension_steps.c:378  token retry dropped (`0 &&`)
 *       -> test_rejected_token_replaced_once, test_token_retry_is_not_a_loop
 *   clusterextension_steps.c:378  `if` -> `while` (retry until a token works) -> test_token_retry_is_not_a_loop
 *   clusterextension_reconcile.c:355  check_deadline not called -> test_progress_deadline
 *   clusterextension_reconcile.c:314  retry_within_ms = 0 -> test_progress_deadline
 *   clusterextension_reconcile.c:404  NotFound not "gone" (`if (0)`) -> test_extension_gone
 *   clusterextension_reconcile.c:353  every failure KUBE_WQ_ERROR -> test_invalid_config_is_terminal
 *   clusterextension_reconcile.c:366  status write failure ignored (`&& 0`) -> test_status_conflict_retries
 *
 * Available (the probes over what the apply, repair or maintain saw; clusterextension_available.c):
 * from the first install on, following the Deployment's status both ways, with no request of its
 * own; left as it was when a reconcile stops before its apply; in maintain mode read from the
 * cluster; and the digests the drift watcher compares reach it.  Mutation checks:
 *   clusterextension_steps.c  `run->probed = true` after the apply dropped
 *       -> test_available_follows_the_deployment
 *   clusterextension_reconcile.c  `.observe = clusterextension_observe` dropped (NULL)
 *       -> test_available_follows_the_deployment
 *   applier_repair.c  the GET of an object left alone not observed -> test_available_follows_the_deployment
 *   applier_apply.c  the apply's answer not observed -> test_available_follows_the_deployment
 *   clusterextension_available.c  observe: an extra GET of each object (as a probe that reads)
 *       -> test_available_follows_the_deployment (two GETs of the Deployment)
 *   clusterextension_reconcile.c  `.available = run->probed ? &avail : NULL` -> always &avail
 *       -> test_available_kept_when_the_reconcile_fails
 *   clusterextension_steps.c  maintain: clusterextension_probe_recorded not called
 *       -> test_available_in_maintain_mode
 *   clusterextension_available.c  probe_recorded: NotFound read as "leave it" (`return -1`)
 *       -> test_available_in_maintain_mode
 *   clusterextension_drift_post.c  digests not passed (NULL) -> test_probe_digests_reach_the_drift_watcher
 *   clusterextension_reconcile.c  `.no_available = ...` dropped -> test_available_condition_turned_off
 *
 * Request budget (issue 25).  Mutation checks:
 *   clusterextension_steps.c  sa_client called before the preflight again (eager token)
 *       -> test_restart_with_nothing_changed_mints_no_token
 *   drift_watcher.c  a tokenless post read as "forget" -> test_restart_with_nothing_changed_mints_no_token
 *   applier_apply.c  system namespace read before every install -> test_first_install_request_budget
 *   clusterextension_reconcile.c  never_installed always false -> test_first_install_request_budget
 *   applier_record.c  the namespace looked at only on a NotFound of the record's own create
 *       -> test_first_install_request_budget
 *   applier_helm.c  no LIST after AlreadyExists -> test_helm_release_of_a_lost_record_listed_after_all
 *   clusterextension_reconcile.c  no prefetched record (NULL) -> test_restart_with_nothing_changed_mints_no_token
 *   clusterextension_record_memo.c  an entry not dropped when told NULL (json_object_del dropped)
 *       -> test_record_known_from_its_writes
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ce_fixture.h"
#include "clusterextension_internal.h"

/* The process does not hold the record (clusterextension_record_memo.c): its first LIST has
 * run, and the record came after it, or a write of it ended without knowing what is there. */
static void record_unknown(ce_fixture *f)
{
    clusterextension_reconciler *r = ce_fixture_reconciler(f);
    json_decref(clusterextension_record_memo_get(r, CE_NAME)); /* the first LIST, if not done yet */
    clusterextension_record_memo_forget(r, CE_NAME);
}

/* The record Secret removed behind operator-controller's back, as a process that never knew
 * it finds it (a record removed by hand shows at the next write of it or the next start;
 * these tests are about what happens then). */
static void record_gone(ce_fixture *f)
{
    fake_apiserver_remove(f->api, CE_RECORD_PATH);
    record_unknown(f);
}
#include "stderr_capture.h"

#define DEPLOYMENT_PATH "/apis/apps/v1/namespaces/" CE_NS "/deployments/pkg-operator"
#define UPSTREAM_FINALIZER "olm.operatorframework.io/cleanup-contentmanager-cache"

/* Finalizer writes: merge PATCHes of the object itself (status goes to /status). */
static size_t finalizer_writes(ce_fixture *f)
{
    return fake_apiserver_count(f->api, "PATCH", CE_PATH, NULL) -
           fake_apiserver_count(f->api, "PATCH", CE_PATH "/status", NULL);
}

/* Writes of the install record (ours: olmv1-install-<name>). */
static size_t record_writes(ce_fixture *f)
{
    return fake_apiserver_count(f->api, "POST", "/namespaces/" CE_SYS "/secrets", NULL) +
           fake_apiserver_count(f->api, "PUT", CE_RECORD_PATH, NULL);
}

static const char *installed_bundle(ce_fixture *f)
{
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    const char *n = json_string_value(
        json_object_get(json_object_get(json_object_get(json_object_get(ce, "status"), "install"), "bundle"), "name"));
    return n ? n : "";
}

static void assert_progressing(ce_fixture *f, const char *status, const char *reason)
{
    const char *s = ce_fixture_condition_field(f, "Progressing", "status");
    const char *r = ce_fixture_condition_field(f, "Progressing", "reason");
    if (strcmp(s, status) != 0 || strcmp(r, reason) != 0)
        fail_msg("Progressing is %s/%s (%s), want %s/%s", s, r, ce_fixture_condition_field(f, "Progressing", "message"),
                 status, reason);
}

static void assert_message_starts(ce_fixture *f, const char *type, const char *want)
{
    const char *m = ce_fixture_condition_field(f, type, "message");
    if (strncmp(m, want, strlen(want)) != 0)
        fail_msg("%s message is \"%s\", want \"%s...\"", type, m, want);
}

/* A first install of pkg.v1.0.0, checked, with the request log cleared after it. */
static void install_v1(ce_fixture *f)
{
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V1);
    fake_apiserver_log_clear(f->api);
}

/* ------------------------------------------------------------ the object itself */

static void test_extension_gone(void **state)
{
    ce_fixture *f = *state;
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_OK);
    assert_true(res.gone);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
}

/* ------------------------------------------------------------ finalizer */

static void test_finalizer_added_on_first_sight(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_true(ce_fixture_has_finalizer(f, CE_FINALIZER));
    assert_int_equal(finalizer_writes(f), 1);
    /* Once: the next reconcile finds it there. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(finalizer_writes(f), 0);
}

/* A failed finalizer write stops the reconcile before anything is installed. */
static void test_finalizer_write_failure_installs_nothing(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    fake_apiserver_fail(f->api, "PATCH", CE_PATH, NULL, 409, NULL, 1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_false(ce_fixture_has_finalizer(f, CE_FINALIZER));
}

static void test_deletion_uninstalls_and_releases_finalizers(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    assert_non_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    /* kubectl delete: the apiserver marks it; upstream's finalizer is there too (adopted). */
    json_t *md = json_object_get(fake_apiserver_object(f->api, CE_PATH), "metadata");
    json_array_append_new(json_object_get(md, "finalizers"), json_string(UPSTREAM_FINALIZER));
    json_object_set_new(md, "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_OK);
    assert_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
    /* Both finalizers released: the apiserver let the object go. */
    assert_null(fake_apiserver_object(f->api, CE_PATH));
    assert_int_equal(finalizer_writes(f), 1);
    assert_int_equal(clusterextension_token_cache_size(f->tokens), 0); /* its token forgotten */
}

static void test_deletion_without_our_finalizer_does_nothing(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    json_t *md = json_object_get(fake_apiserver_object(f->api, CE_PATH), "metadata");
    json_object_set_new(md, "finalizers", json_pack("[s]", "example.com/someone-else"));
    json_object_set_new(md, "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_non_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_non_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
}

static void test_deletion_with_unreadable_record_retries(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, CE_PATH), "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    fake_apiserver_fail(f->api, "GET", CE_RECORD_PATH, NULL, 500, "etcd is down", -1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_progressing(f, "True", "Retrying");
    assert_message_starts(f, "Progressing", "error uninstalling: ");
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "Unknown");
    assert_true(ce_fixture_has_finalizer(f, CE_FINALIZER));
    assert_non_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
}

/* ------------------------------------------------------------ install record */

static void test_record_absent_first_install_applies(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_OK);
    assert_non_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_non_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
    assert_string_equal(installed_bundle(f), CE_V1);
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    assert_progressing(f, "True", "Succeeded");
    /* Applied as the ServiceAccount, with its token. */
    assert_true(fake_apiserver_count(f->api, "PATCH", DEPLOYMENT_PATH, "sa-token-1") >= 1);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", DEPLOYMENT_PATH, "admin"), 0);
}

/* The record says what is installed, even when the status has lost it: nothing is applied
 * again and the status is rebuilt from the record. */
static void test_record_present_is_the_installed_bundle(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    json_object_del(fake_apiserver_object(f->api, CE_PATH), "status");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V1);
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    assert_int_equal(record_writes(f), 0);
}

static void test_record_unreadable_applies_nothing(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    record_unknown(f); /* then it reads it */
    fake_apiserver_fail(f->api, "GET", CE_RECORD_PATH, NULL, 500, "etcd is down", -1);
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_ERROR);
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "Unknown");
    if (!strstr(ce_fixture_condition_field(f, "Installed", "message"), "etcd is down"))
        fail_msg("Installed: %s", ce_fixture_condition_field(f, "Installed", "message"));
    assert_progressing(f, "True", "Retrying");
    assert_message_starts(f, "Progressing", "retrying to get installed bundle");
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", NULL, NULL), 0);
    assert_string_equal(installed_bundle(f), ""); /* status.install removed: unknown */
}

/* ------------------------------------------------------------ resolution failed */

static void test_fallback_to_installed_bundle_when_no_catalog_matches(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    ce_fixture_catalog_gone(f);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_progressing(f, "True", "Succeeded");
    assert_string_equal(installed_bundle(f), CE_V1);
    assert_int_equal(record_writes(f), 0);
}

static void test_no_fallback_while_a_catalog_matches(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    ce_fixture_catalog(f, 0); /* the package is there, with no bundle */
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_progressing(f, "True", "Retrying");
    assert_string_equal(installed_bundle(f), CE_V1); /* still installed */
}

static void test_no_fallback_when_the_range_excludes_the_installed_version(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    ce_fixture_catalog_gone(f);
    json_object_set_new(json_object_get(json_object_get(json_object_get(fake_apiserver_object(f->api, CE_PATH), "spec"),
                                                        "source"), "catalog"),
                        "version", json_string("2.0.0"));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_progressing(f, "True", "Retrying");
}

static void test_resolution_failure_without_installed_bundle_retries(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_extension(f, NULL, NULL); /* no catalog at all */
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_ERROR);
    assert_int_equal(res.requeue_after_ms, 0); /* no deadline: the back-off decides */
    assert_progressing(f, "True", "Retrying");
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "False");
    /* Nothing applied: the only PATCH is the finalizer's. */
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", NULL, NULL) - finalizer_writes(f), 0);
}

/* ------------------------------------------------------------ maintain, repair, apply */

static void test_maintain_when_installed_image_cannot_be_pulled(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    ce_fixture_unpullable(f);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_progressing(f, "True", "Succeeded");
    assert_string_equal(installed_bundle(f), CE_V1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0); /* nothing applied, the status unchanged */
}

static void test_unpullable_new_bundle_retries(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_extension(f, NULL, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_progressing(f, "True", "Retrying");
    assert_message_starts(f, "Progressing", "error for resolved bundle \"" CE_V1 "\" with version \"1.0.0\": ");
    assert_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
}

static void test_repair_when_bundle_unchanged(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    /* Nothing drifted: no apply, no record write. */
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", NULL, NULL), 0);
    assert_int_equal(record_writes(f), 0);
    /* The Deployment deleted by hand: put back, and only it; the record learns the content
     * hash of the new object (one write), so that a restart need not read it. */
    assert_true(fake_apiserver_remove(f->api, DEPLOYMENT_PATH));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_non_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", NULL, NULL), 1);
    assert_int_equal(record_writes(f), 1);
    /* Nothing drifted since: no write at all. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    clusterextension_reconcile_stats st;
    clusterextension_reconciler_stats(f->r, &st);
    assert_int_equal(st.repaired_objects, 1);
}

static void test_apply_when_bundle_changes(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    ce_fixture_catalog(f, CE_CATALOG_V1 | CE_CATALOG_V11);
    ce_fixture_pullable(f, CE_V11);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V11);
    assert_int_equal(fake_apiserver_count(f->api, "PUT", CE_RECORD_PATH, NULL), 1);
    json_t *c = json_array_get(
        json_object_get(json_object_get(json_object_get(json_object_get(fake_apiserver_object(f->api, DEPLOYMENT_PATH),
                                                                           "spec"),
                                                           "template"),
                                        "spec"),
                        "containers"),
        0);
    assert_string_equal(json_string_value(json_object_get(c, "image")), "example.com/pkg-operator:1.1.0");
}

/* Issue 25: the record as this process last saw it (clusterextension_record_memo.c): a
 * reconcile that finds everything as it was reads no record; a record write that fails leaves
 * it unknown, so the next reconcile reads it; after an upgrade it knows the new record from the
 * update's answer (not the old one: the next reconcile leaves 1.1.0 alone); uninstalled, the
 * entry goes.  Mutation checks: record_seen not told the update's answer (the next reconcile
 * applies 1.1.0 again over a 1.0.0 record), nor a failed write (no GET after it), the uninstall
 * not forgetting: each seen failing this test. */
static void test_record_known_from_its_writes(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_RECORD_PATH, NULL), 0);
    /* An upgrade whose record write fails: what is there is not known; the next reconcile
     * reads it (and finishes the upgrade). */
    ce_fixture_catalog(f, CE_CATALOG_V1 | CE_CATALOG_V11);
    ce_fixture_pullable(f, CE_V11);
    fake_apiserver_fail(f->api, "PUT", CE_RECORD_PATH, NULL, 500, "etcd is down", 1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_RECORD_PATH, NULL), 2); /* the read, and the write's before its update */
    assert_string_equal(installed_bundle(f), CE_V11);
    assert_int_equal(fake_apiserver_count(f->api, "PUT", CE_RECORD_PATH, NULL), 1);
    /* The update's answer is what it knows now: 1.1.0, nothing to read or write. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_RECORD_PATH, NULL), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_string_equal(installed_bundle(f), CE_V11);
    /* Uninstalled: its entry goes with it. */
    json_t *md = json_object_get(fake_apiserver_object(f->api, CE_PATH), "metadata");
    json_object_set_new(md, "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(fake_apiserver_object(f->api, CE_PATH));
    clusterextension_reconciler *r = ce_fixture_reconciler(f);
    assert_int_equal(json_object_size(r->records), 0);
}

/* ------------------------------------------------------------ token retry */

static void test_rejected_token_replaced_once(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    /* The first token was minted for a ServiceAccount since re-created: 401. */
    fake_apiserver_fail(f->api, NULL, NULL, "sa-token-1", 401, "Unauthorized", -1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(f->mints, 2);
    assert_non_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_progressing(f, "True", "Succeeded");
}

static void test_token_retry_is_not_a_loop(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    fake_apiserver_fail(f->api, NULL, NULL, "sa-token-1", 401, "Unauthorized", -1);
    fake_apiserver_fail(f->api, NULL, NULL, "sa-token-2", 401, "Unauthorized", -1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_int_equal(f->mints, 2);
    assert_progressing(f, "True", "Retrying");
}

/* ------------------------------------------------------------ progress deadline */

static void test_progress_deadline(void **state)
{
    ce_fixture *f = *state;
    f->deadline_minute_ms = 1; /* a "minute" of 1 ms: the deadline is the clock's next second */
    ce_fixture_extension(f, NULL, "{\"progressDeadlineMinutes\":1}");
    kube_wq_result res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_ERROR);
    assert_progressing(f, "True", "Retrying");
    assert_int_equal(res.requeue_after_ms, 1001); /* due by the deadline, whatever the back-off */
    usleep(1100 * 1000);
    res = ce_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_ERROR); /* retries go on */
    assert_progressing(f, "False", "ProgressDeadlineExceeded");
    assert_message_starts(f, "Progressing", "Revision has not rolled out for 1 minute(s). Last status: ");
    /* Success clears it. */
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_progressing(f, "True", "Succeeded");
}

/* ------------------------------------------------------------ terminal, status */

static void test_invalid_config_is_terminal(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, "{\"config\":{\"configType\":\"Inline\",\"inline\":{\"watchNamespace\":\"other\"}}}");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_TERMINAL);
    assert_progressing(f, "False", "InvalidConfiguration");
    assert_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
}

static void test_status_conflict_retries(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    fake_apiserver_fail(f->api, "PUT", CE_PATH "/status", NULL, 409, NULL, 1);
    stderr_capture cap;
    stderr_capture_begin(&cap);
    kube_wq_result_kind kind = ce_fixture_reconcile(f).kind;
    char *logged = stderr_capture_end(&cap, 8192);
    assert_int_equal(kind, KUBE_WQ_ERROR);
    assert_null(ce_fixture_condition(f, "Installed"));
    /* an expected race, retried: an INFO line that says so, no ERROR line */
    assert_non_null(strstr(logged, "INFO clusterExtension=" CE_NAME " status not written: the ClusterExtension changed"));
    assert_null(strstr(logged, "ERROR"));
    free(logged);
    /* The retry writes it. */
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V1);
}

/* ------------------------------------------------------------ Available */

#define DEPLOYMENT_LINE "Object Deployment.apps/v1 " CE_NS "/pkg-operator: "

/* The Deployment controller's part: a status for the stored Deployment, at its generation. */
static void deployment_status(ce_fixture *f, const char *available)
{
    json_t *d = fake_apiserver_object(f->api, DEPLOYMENT_PATH);
    assert_non_null(d);
    const json_t *gen = json_object_get(json_object_get(d, "metadata"), "generation");
    json_object_set_new(d, "status",
                        json_pack("{s:I, s:i, s:i, s:[{s:s, s:s, s:s}]}", "observedGeneration",
                                  json_is_integer(gen) ? json_integer_value(gen) : (json_int_t)0, "replicas", 1,
                                  "updatedReplicas", 1, "conditions", "type", "Available", "status", available, "reason",
                                  strcmp(available, "True") == 0 ? "MinimumReplicasAvailable"
                                                                 : "MinimumReplicasUnavailable"));
}

static void assert_available(ce_fixture *f, const char *status, const char *reason, const char *message)
{
    const char *s = ce_fixture_condition_field(f, "Available", "status");
    const char *r = ce_fixture_condition_field(f, "Available", "reason");
    const char *m = ce_fixture_condition_field(f, "Available", "message");
    if (strcmp(s, status) != 0 || strcmp(r, reason) != 0 || strcmp(m, message) != 0)
        fail_msg("Available is %s/%s \"%s\", want %s/%s \"%s\"", s, r, m, status, reason, message);
}

static void test_available_follows_the_deployment(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    /* Applied, not available: no controller has written the Deployment's status yet. */
    assert_available(f, "False", "ProbeFailure", DEPLOYMENT_LINE "missing .status.conditions");
    assert_int_equal(json_integer_value(json_object_get(ce_fixture_condition(f, "Available"), "observedGeneration")), 1);
    /* The probe judged the apply's answer: the one GET of the Deployment is the conflict check's. */
    assert_int_equal(fake_apiserver_count(f->api, "GET", DEPLOYMENT_PATH, NULL), 1);
    assert_progressing(f, "True", "Succeeded");

    deployment_status(f, "True");
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_available(f, "True", "ProbesSucceeded", "Objects are available and pass all probes.");
    /* ... and the repair's read: no request of its own. */
    assert_int_equal(fake_apiserver_count(f->api, "GET", DEPLOYMENT_PATH, NULL), 1);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", NULL, NULL), 0);

    /* It loses readiness, then recovers. */
    deployment_status(f, "False");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_available(f, "False", "ProbeFailure", DEPLOYMENT_LINE ".status.condition[\"Available\"] is False");
    assert_progressing(f, "True", "Succeeded"); /* installed as wanted: only unavailable */
    deployment_status(f, "True");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_available(f, "True", "ProbesSucceeded", "Objects are available and pass all probes.");
    /* Nothing changed: nothing written. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
}

static void test_available_kept_when_the_reconcile_fails(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    assert_available(f, "False", "ProbeFailure", DEPLOYMENT_LINE "missing .status.conditions");
    deployment_status(f, "True");
    /* A new generation that does not resolve (the catalog still matches: no fallback). */
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    json_object_set_new(json_object_get(json_object_get(json_object_get(ce, "spec"), "source"), "catalog"), "version",
                        json_string("9.9.9"));
    json_object_set_new(json_object_get(ce, "metadata"), "generation", json_integer(2));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_progressing(f, "True", "Retrying");
    /* Nothing was read: Available says what the last apply saw, at its generation. */
    assert_available(f, "False", "ProbeFailure", DEPLOYMENT_LINE "missing .status.conditions");
    assert_int_equal(json_integer_value(json_object_get(ce_fixture_condition(f, "Available"), "observedGeneration")), 1);
}

static void test_available_condition_turned_off(void **state)
{
    ce_fixture *f = *state;
    f->no_available_condition = true; /* --available-condition=false */
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    /* One written before (by this controller with the condition on): it goes. */
    json_object_set_new(fake_apiserver_object(f->api, CE_PATH), "status",
                        json_pack("{s:[{s:s, s:s, s:s, s:s, s:s, s:i}]}", "conditions", "type", "Available", "status",
                                  "True", "reason", "ProbesSucceeded", "message", "x", "lastTransitionTime", "t",
                                  "observedGeneration", 1));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(ce_fixture_condition(f, "Available"));
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    deployment_status(f, "False");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(ce_fixture_condition(f, "Available"));
}

static void test_available_in_maintain_mode(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    ce_fixture_unpullable(f);
    deployment_status(f, "True");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_available(f, "True", "ProbesSucceeded", "Objects are available and pass all probes.");
    /* Nothing puts a deleted object back in maintain mode: it is not available. */
    assert_true(fake_apiserver_remove(f->api, DEPLOYMENT_PATH));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_available(f, "False", "ProbeFailure", DEPLOYMENT_LINE "not found");
    assert_progressing(f, "True", "Succeeded");
}

/* A drift watcher on the fixture's loop whose watches are handed to the test. */
typedef struct fake_drift {
    char path[8][128];
    drift_watch *w[8];
    int n, enqueued;
} fake_drift;

static void *fd_start(void *data, const kube_config *cfg, const char *path, const char *selector, drift_watch *w,
                      olm_error *err)
{
    (void)cfg;
    (void)selector;
    fake_drift *fd = data;
    if (fd->n >= 8) {
        olm_error_set(err, "too many watches");
        return NULL;
    }
    snprintf(fd->path[fd->n], sizeof fd->path[0], "%s", path);
    fd->w[fd->n] = w;
    return &fd->w[fd->n++];
}

static void fd_stop(void *data, void *handle, void (*closed)(void *), void *cdata)
{
    (void)data;
    (void)handle;
    closed(cdata);
}

static void fd_enqueue(const char *ext, uint64_t delay_ms, void *data)
{
    (void)delay_ms;
    assert_string_equal(ext, CE_NAME);
    ((fake_drift *)data)->enqueued++;
}

static drift_watch *fd_watch(fake_drift *fd, const char *path)
{
    for (int i = fd->n - 1; i >= 0; i--)
        if (strcmp(fd->path[i], path) == 0)
            return fd->w[i];
    fail_msg("no watch of %s", path);
    return NULL;
}

/* The stored Deployment as a watch event reports it. */
static void fd_event(fake_drift *fd, kube_watch_event_type t, ce_fixture *f)
{
    drift_watch_event(fd_watch(fd, "/apis/apps/v1/deployments"), t, fake_apiserver_object(f->api, DEPLOYMENT_PATH));
}

/* f's drift watcher (f->drift, stopped by the fixture), its watches fd's fakes. */
static void start_fake_drift(ce_fixture *f, fake_drift *fd)
{
    static const kube_config base = {.server = "http://127.0.0.1:9"}; /* borrowed by the watcher */
    drift_backend be = {fd_start, fd_stop, fd};
    drift_callbacks cb = {.enqueue_after = fd_enqueue, .data = fd};
    olm_error err;
    f->drift = drift_watcher_new(&f->loop, &base, &be, &cb, NULL, &err);
    assert_non_null(f->drift);
}

static void test_probe_digests_reach_the_drift_watcher(void **state)
{
    ce_fixture *f = *state;
    fake_drift fd = {0};
    start_fake_drift(f, &fd);
    install_v1(f); /* posts its kinds, token and what the probes saw */
    drift_watcher_flush(f->drift);
    /* The Deployment turned available between the apply and the watch's LIST: no event says
     * so, the digest the reconcile posted does. */
    deployment_status(f, "True");
    fd_event(&fd, KUBE_WATCH_ADDED, f);
    assert_int_equal(fd.enqueued, 0);
    drift_watch_synced(fd_watch(&fd, "/apis/apps/v1/deployments"));
    assert_int_equal(fd.enqueued, 1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_available(f, "True", "ProbesSucceeded", "Objects are available and pass all probes.");
    drift_watcher_flush(f->drift);
    assert_int_equal(fd.enqueued, 1); /* the post says what the watch saw */
    fd_event(&fd, KUBE_WATCH_MODIFIED, f); /* another write of the same status: nothing */
    assert_int_equal(fd.enqueued, 1);
    deployment_status(f, "False");
    fd_event(&fd, KUBE_WATCH_MODIFIED, f);
    assert_int_equal(fd.enqueued, 2);
}

/* Every object of the install record, as the fake stores it now, to the shared watch of its
 * type, which then lists (synced): what a restarted watcher holds. */
static void fd_sync_all(fake_drift *fd, ce_fixture *f)
{
    install_record rec;
    olm_error err;
    assert_int_equal(install_record_from_secret(fake_apiserver_object(f->api, CE_RECORD_PATH), &rec, &err), 0);
    char synced[8][128];
    int nsynced = 0;
    for (size_t i = 0; i < rec.nobjects; i++) {
        const install_object_ref *o = &rec.objects[i];
        kube_resource_info ri;
        assert_int_equal(kube_resolve_kind(f->admin, o->api_version, o->kind, &ri, &err), 0);
        char *resource = kube_resource_path(&ri, NULL, NULL, NULL, &err);
        char *path = kube_resource_path(&ri, *o->namespace_ ? o->namespace_ : NULL, o->name, NULL, &err);
        assert_non_null(resource);
        assert_non_null(path);
        json_t *obj = fake_apiserver_object(f->api, path);
        assert_non_null(obj);
        drift_watch_event(fd_watch(fd, resource), KUBE_WATCH_ADDED, obj);
        bool seen = false;
        for (int k = 0; k < nsynced; k++)
            seen |= strcmp(synced[k], resource) == 0;
        if (!seen && nsynced < 8)
            snprintf(synced[nsynced++], sizeof synced[0], "%s", resource);
        free(resource);
        free(path);
    }
    for (int k = 0; k < nsynced; k++)
        drift_watch_synced(fd_watch(fd, synced[k]));
    install_record_free(&rec);
}

/* Issue 25: a restart (the token cache empty) of an extension whose objects are all as the
 * apply left them, as the drift watches' caches show: the reconcile mints no token, reads no
 * object, writes nothing, and its tokenless post keeps it watched (through the shared
 * watches, which run with the token its install posted).  Once an object drifted (its
 * content in the watch differs from the record's), the repair reads it: then a token. */
static void test_restart_with_nothing_changed_mints_no_token(void **state)
{
    ce_fixture *f = *state;
    fake_drift fd = {0};
    start_fake_drift(f, &fd);
    install_v1(f);
    deployment_status(f, "True");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK); /* Available: True, hashes kept */
    drift_watcher_flush(f->drift);
    fd_sync_all(&fd, f);
    assert_int_equal(f->mints, 1);
    int watches = fd.n;

    /* The restart: a new reconciler, an empty token cache.  Another extension is reconciled
     * first: the first reconcile of a process reads its record (the BoxcutterRuntime take-over
     * may write it: clusterextension_retire_may_write), the others take theirs from the LIST. */
    clusterextension_reconciler_free(f->r);
    f->r = NULL;
    clusterextension_token_cache_forget(f->tokens, CE_NS, CE_SA);
    json_t *other = json_deep_copy(fake_apiserver_object(f->api, CE_PATH));
    json_object_set_new(json_object_get(other, "metadata"), "name", json_string("other"));
    json_object_del(json_object_get(other, "metadata"), "uid");
    json_object_del(other, "status");
    json_object_set_new(json_object_get(json_object_get(json_object_get(other, "spec"), "source"), "catalog"),
                        "packageName", json_string("nope"));
    fake_apiserver_put(f->api, "/apis/olm.operatorframework.io/v1/clusterextensions/other", other);
    clusterextension_reconcile("other", ce_fixture_reconciler(f));
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(f->mints, 1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(fake_apiserver_count(f->api, "GET", DEPLOYMENT_PATH, NULL), 0);
    /* Its record came with the LIST of all records (clusterextension_record_memo.c), not a GET. */
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_RECORD_PATH, NULL), 0);
    /* ... and stays known: the next reconcile reads it neither (nor lists them again). */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "install-record%3Dtrue", NULL), 0);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_RECORD_PATH, NULL), 0);
    assert_available(f, "True", "ProbesSucceeded", "Objects are available and pass all probes.");
    drift_watcher_flush(f->drift);
    assert_int_equal(drift_watcher_extensions(f->drift), 1); /* still watched... */
    assert_int_equal(fd.n, watches);                         /* ...by the watches there were */

    /* Drift: the watch holds another content than the record says. */
    json_t *d = fake_apiserver_object(f->api, DEPLOYMENT_PATH);
    json_object_set_new(json_object_get(d, "metadata"), "labels", json_pack("{s:s}", "edited", "by-hand"));
    drift_watch_event(fd_watch(&fd, "/apis/apps/v1/deployments"), KUBE_WATCH_MODIFIED, d);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(f->mints, 2);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", DEPLOYMENT_PATH, "sa-token-2"), 1);
}

/* A reconcile of an extension whose Deployment fails its probes, the drift watch holding it as
 * the apply left it: the Available line comes from what the watch kept, without reading the
 * Deployment (before, every such reconcile read it).  Mutation check: known_unchanged
 * returning false for a failing object again: seen failing this test. */
static void test_failing_object_line_comes_from_the_watch(void **state)
{
    ce_fixture *f = *state;
    fake_drift fd = {0};
    start_fake_drift(f, &fd);
    install_v1(f);
    deployment_status(f, "False");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK); /* read: Available False, its line */
    char *line = strdup(ce_fixture_condition_field(f, "Available", "message"));
    assert_non_null(strstr(line, "is False"));
    drift_watcher_flush(f->drift);
    fd_sync_all(&fd, f);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", DEPLOYMENT_PATH, NULL), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_available(f, "False", "ProbeFailure", line);
    free(line);
}

/* A status write carries the status and the object's identity and preconditions only: the
 * status subresource keeps the stored spec and metadata, so anything more is bytes for the
 * apiserver to decode (kubectl's last-applied annotation, labels, the spec). */
static void test_status_write_sends_status_only(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    json_t *md = json_object_get(fake_apiserver_object(f->api, CE_PATH), "metadata");
    json_object_set_new(md, "annotations", json_pack("{s:s}", "kubectl.kubernetes.io/last-applied-configuration", "{}"));
    json_object_set_new(md, "labels", json_pack("{s:s}", "team", "a"));
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V1);
    const char *body = NULL;
    for (size_t i = 0; i < fake_apiserver_nwrites(f->api); i++)
        if (strncmp(fake_apiserver_write_at(f->api, i), "PUT " CE_PATH "/status", strlen("PUT " CE_PATH "/status")) == 0)
            body = fake_apiserver_write_body_at(f->api, i);
    assert_non_null(body);
    json_t *sent = json_loads(body, 0, NULL);
    assert_non_null(sent);
    const json_t *smd = json_object_get(sent, "metadata");
    assert_string_equal(json_string_value(json_object_get(smd, "name")), CE_NAME);
    assert_non_null(json_string_value(json_object_get(smd, "resourceVersion")));
    assert_null(json_object_get(smd, "annotations"));
    assert_null(json_object_get(smd, "labels"));
    assert_null(json_object_get(sent, "spec"));
    assert_string_equal(json_string_value(json_object_get(sent, "kind")), "ClusterExtension");
    assert_non_null(json_object_get(json_object_get(sent, "status"), "conditions"));
    json_decref(sent);
    /* the stored object keeps what the write did not carry */
    md = json_object_get(fake_apiserver_object(f->api, CE_PATH), "metadata");
    assert_non_null(json_object_get(json_object_get(md, "annotations"), "kubectl.kubernetes.io/last-applied-configuration"));
    assert_non_null(json_object_get(fake_apiserver_object(f->api, CE_PATH), "spec"));
}

/* Issue 25: what one first install asks of the apiserver as the controller (token "admin"):
 * the extension read, the finalizer, no record read (first sight: none of ours), the record and Helm release
 * created, one status write, the system namespace read once for all installs, no LIST of Helm
 * releases (nobody ever installed it); as the ServiceAccount, one token. */
static void test_first_install_request_budget(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V1);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "type%3Dindex", NULL), 0); /* no LIST of Helm releases */
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_RECORD_PATH, NULL), 0);
    assert_int_equal(fake_apiserver_count(f->api, "POST", "/api/v1/namespaces/" CE_SYS "/secrets", NULL), 2);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/" CE_SYS, "admin") -
                         fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/" CE_SYS "/", "admin"),
                     1);
    assert_int_equal(fake_apiserver_count(f->api, "PUT", CE_PATH "/status", NULL), 1);
    assert_int_equal(f->mints, 1);
    /* A second extension's install does not read the system namespace again. */
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    json_object_del(json_object_get(ce, "status"), "install");
    record_gone(f);
    fake_apiserver_remove_under(f->api, "/api/v1/namespaces/" CE_SYS "/secrets/sh.helm");
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/" CE_SYS, "admin") -
                         fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/" CE_SYS "/", "admin"),
                     0);
    /* The record write that finds the namespace gone reads it, says so, and the next
     * install checks first again. */
    record_gone(f);
    fake_apiserver_remove_under(f->api, "/api/v1/namespaces/" CE_SYS "/secrets/sh.helm");
    fake_apiserver_remove(f->api, "/api/v1/namespaces/" CE_SYS);
    fake_apiserver_fail(f->api, "POST", "/api/v1/namespaces/" CE_SYS "/secrets", NULL, 404, "namespaces \"sys\" not found", -1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_non_null(strstr(ce_fixture_condition_field(f, "Progressing", "message"), "the system namespace 'sys' does not exist"));
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", DEPLOYMENT_PATH, NULL), 0); /* nothing applied */
}

/* Issue 25: a reconcile takes its ClusterExtension from the informer's cache (no GET, no
 * LIST), as long as the cached copy is the newest this process knows of: once it wrote the
 * extension (or read it) and the watch has not brought that version back yet, it reads it
 * with a GET; a write refused for a stale copy (409) makes the next reconcile read it too; an
 * extension deleted while the cache still held it ends the reconcile as gone. */
static void test_reconcile_reads_the_informer_copy(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    clusterextension_reconciler_free(f->r); /* a restart */
    f->r = NULL;
    ce_fixture_extensions_informer(f);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/v1/clusterextensions", NULL), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);

    /* Our status write, not in the cache yet: the next reconcile reads the extension. */
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    json_object_set_new(json_object_get(ce, "metadata"), "generation", json_integer(2));
    ce_fixture_informer_apply(f, KUBE_WATCH_MODIFIED, ce); /* a spec change, as the watch delivers it */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK); /* observedGeneration 2: written */
    assert_int_equal(fake_apiserver_count(f->api, "PUT", CE_PATH "/status", NULL), 1);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_PATH, NULL), 0);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_PATH, NULL), 1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    /* The watch brings it back: the cache again. */
    ce_fixture_informer_apply(f, KUBE_WATCH_MODIFIED, fake_apiserver_object(f->api, CE_PATH));
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_PATH, NULL), 0);

    /* Deleted while the cache still holds it (a new process: nothing known): gone, no error. */
    clusterextension_reconciler_free(f->r);
    f->r = NULL;
    json_t *held = json_deep_copy(fake_apiserver_object(f->api, CE_PATH));
    json_object_set_new(json_object_get(held, "metadata"), "finalizers", json_array());
    ce_fixture_informer_apply(f, KUBE_WATCH_MODIFIED, held);
    json_decref(held);
    fake_apiserver_remove(f->api, CE_PATH);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", CE_PATH, NULL), 1); /* the finalizer: 404 */
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", "/apis/apps", NULL), 0); /* nothing applied */
}

/* Issue 25: an extension seen for the first time (no finalizer of ours) is installed without
 * reading a record first; should there be one all the same (our finalizer removed by hand),
 * the record's create answers AlreadyExists and the write reads and replaces it. */
static void test_first_sight_record_there_all_the_same(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    json_object_set_new(json_object_get(ce, "metadata"), "finalizers", json_array());
    json_object_del(json_object_get(ce, "status"), "install");
    record_unknown(f); /* (one that holds it just takes it) */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V1);
    assert_int_equal(fake_apiserver_count(f->api, "GET", CE_RECORD_PATH, NULL), 1); /* after the create's 409 */
    assert_non_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
}

/* Issue 25: the Helm releases are not listed for an extension nobody ever installed; should
 * one exist all the same (our own mirror, its record lost before the status said Installed),
 * the mirror's create answers AlreadyExists and the write goes by a LIST after all. */
static void test_helm_release_of_a_lost_record_listed_after_all(void **state)
{
    ce_fixture *f = *state;
    install_v1(f);
    record_gone(f);
    json_object_del(json_object_get(fake_apiserver_object(f->api, CE_PATH), "status"), "install");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(installed_bundle(f), CE_V1);
    assert_non_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
    assert_int_equal(fake_apiserver_count(f->api, "GET", "type%3Dindex", NULL), 1); /* the releases, once */
}

/* The namespace is read only to explain a missing ServiceAccount: an install (token minted)
 * and the reconciles after it (token cached) never GET it; a missing ServiceAccount, or its
 * namespace, is named in the message. */
static void test_namespace_read_only_to_explain(void **state)
{
    ce_fixture *f = *state;
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    /* (a substring: the admin token tells the namespace from the objects in it, read as the SA) */
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/api/v1/namespaces/" CE_NS, "admin"), 0);
    assert_int_equal(f->mints, 1);

    clusterextension_token_cache_forget(f->tokens, CE_NS, CE_SA);
    fake_apiserver_remove(f->api, "/api/v1/namespaces/" CE_NS "/serviceaccounts/" CE_SA);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_non_null(strstr(ce_fixture_condition_field(f, "Progressing", "message"),
                           "service account \"" CE_SA "\" not found in namespace \"" CE_NS "\": create it"));
    fake_apiserver_remove(f->api, "/api/v1/namespaces/" CE_NS);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_non_null(strstr(ce_fixture_condition_field(f, "Progressing", "message"),
                           "namespace \"" CE_NS "\" not found: create it and the ServiceAccount \"" CE_SA "\" in it"));
}

#define T(name) cmocka_unit_test_setup_teardown(name, ce_fixture_setup, ce_fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_extension_gone),
        T(test_finalizer_added_on_first_sight),
        T(test_finalizer_write_failure_installs_nothing),
        T(test_deletion_uninstalls_and_releases_finalizers),
        T(test_deletion_without_our_finalizer_does_nothing),
        T(test_deletion_with_unreadable_record_retries),
        T(test_record_absent_first_install_applies),
        T(test_record_present_is_the_installed_bundle),
        T(test_record_unreadable_applies_nothing),
        T(test_fallback_to_installed_bundle_when_no_catalog_matches),
        T(test_no_fallback_while_a_catalog_matches),
        T(test_no_fallback_when_the_range_excludes_the_installed_version),
        T(test_resolution_failure_without_installed_bundle_retries),
        T(test_maintain_when_installed_image_cannot_be_pulled),
        T(test_unpullable_new_bundle_retries),
        T(test_repair_when_bundle_unchanged),
        T(test_failing_object_line_comes_from_the_watch),
        T(test_apply_when_bundle_changes),
        T(test_record_known_from_its_writes),
        T(test_rejected_token_replaced_once),
        T(test_token_retry_is_not_a_loop),
        T(test_progress_deadline),
        T(test_invalid_config_is_terminal),
        T(test_status_conflict_retries),
        T(test_available_follows_the_deployment),
        T(test_available_kept_when_the_reconcile_fails),
        T(test_available_in_maintain_mode),
        T(test_available_condition_turned_off),
        T(test_probe_digests_reach_the_drift_watcher),
        T(test_namespace_read_only_to_explain),
        T(test_restart_with_nothing_changed_mints_no_token),
        T(test_status_write_sends_status_only),
        T(test_first_install_request_budget),
        T(test_helm_release_of_a_lost_record_listed_after_all),
        T(test_reconcile_reads_the_informer_copy),
        T(test_first_sight_record_there_all_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
