/* clustercatalog_reconcile: every decision of one ClusterCatalog reconcile, driven through the
 * real reconciler against testsupport's fake apiserver and a pre-filled image cache
 * (cc_fixture.h).  One test per branch:
 *   gone from the cache: content removed;  a new catalog: name label + finalizer in one PATCH
 *   beside the pull, then Serving; that PATCH failing: nothing stored (also when only the label
 *   is missing, and for an Unavailable catalog);  nothing changed: no pull, no write; a record
 *   of another generation: unpacked again;  poll interval: requeued, polled when due (one registry request);  a new
 *   generation: status rewritten without reloading;  Unavailable: content removed, Serving
 *   False, finalizer released;  deletion: content removed, finalizer released; someone
 *   else's finalizer alone: nothing;  an unknown source: terminal Blocked;  an image that
 *   does not pull: Retrying;  a status write conflict: retried, the store kept.
 *
 * Mutation checks: each test was seen to fail with its branch broken on purpose (the
 * production line edited, the test run, the line restored):
 *   clustercatalog_reconcile.c:547  `if (!cached)` -> `if (!cached && 0)` -> test_gone_from_cache_removes_content
 *   clustercatalog_reconcile.c:491  PATCH failure beside the pull ignored (`0 &&`)
 *       -> test_label_patch_failure_stores_nothing (and 8 others)
 *   clustercatalog_reconcile.c:461  PATCH failure ignored when no pull is needed -> test_relabel_failure_retries
 *   clustercatalog_reconcile.c:577  `if (rc != 0)` -> `if (0)` -> test_unavailable_label_patch_failure_retries
 *   clustercatalog_reconcile.c:408  always unpack (`if (1)`) -> test_poll_interval_requeues_and_polls_when_due
 *   clustercatalog_reconcile.c:412  generation check dropped -> test_record_of_another_generation_is_refreshed
 *   clustercatalog_reconcile.c:418  poll never due (`if (0)`) -> test_poll_interval_requeues_and_polls_when_due
 *   clustercatalog_reconcile.c:529  no requeue after success (`0 ?`) -> test_poll_interval_requeues_and_polls_when_due
 *   clustercatalog_reconcile.c:510  record not kept -> test_poll_interval_requeues_and_polls_when_due,
 *       test_record_of_another_generation_is_refreshed
 *   clustercatalog_reconcile.c:581  `else if (unavailable)` -> `else if (0)` -> test_unavailable_removes_content_and_finalizer
 *   clustercatalog_reconcile.c:363  finalizer kept when Unavailable -> test_unavailable_removes_content_and_finalizer
 *   clustercatalog_reconcile.c:371  `if (!has_finalizer)` -> `if (0)` -> test_deletion_without_our_finalizer_does_nothing
 *   clustercatalog_reconcile.c:396  finalizer kept on deletion -> test_deletion_removes_content_and_releases_finalizer
 *   clustercatalog_reconcile.c:380  content removal skipped (`if (0)`) -> test_deletion_removes_content_and_releases_finalizer
 *   clustercatalog_reconcile.c:471  unknown source type accepted -> test_unknown_source_is_terminal
 *   clustercatalog_reconcile.c:479  terminal -> retryable -> test_unknown_source_is_terminal
 *   clustercatalog_reconcile.c:498  pull failure without a status -> test_image_that_does_not_pull_retries
 *   clustercatalog_reconcile.c:526  status write failure ignored -> test_status_conflict_retries_and_keeps_the_store
 * Not a decision: clustercatalog_reconcile.c:568 `beside_pull = false` passes every test (the PATCH then
 * runs before the pull instead of beside it: the same outcome, slower), and the `!has_finalizer` branch
 * at :585 is reached only when ensure_name_label's PATCH has just added it (out of memory aside). 
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

#include "cc_fixture.h"

static json_t *stored_object(cc_fixture *f)
{
    return fake_apiserver_object(f->api, CC_PATH);
}

static const char *status_str(cc_fixture *f, const char *a, const char *b, const char *c)
{
    json_t *v = json_object_get(json_object_get(stored_object(f), "status"), a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_string_value(v) ? json_string_value(v) : "";
}

static void assert_condition(cc_fixture *f, const char *type, const char *status, const char *reason)
{
    const char *s = cc_fixture_condition(f, type, "status"), *r = cc_fixture_condition(f, type, "reason");
    if (strcmp(s, status) != 0 || strcmp(r, reason) != 0)
        fail_msg("%s is %s/%s (%s), want %s/%s", type, s, r, cc_fixture_condition(f, type, "message"), status, reason);
}

/* A catalog served: reconciled once from the image cache, checked, the log cleared. */
static void serve_catalog(cc_fixture *f, const char *extra)
{
    cc_fixture_pullable(f);
    cc_fixture_catalog(f, extra);
    kube_wq_result res = cc_fixture_reconcile(f);
    assert_true(res.kind == KUBE_WQ_OK || res.kind == KUBE_WQ_REQUEUE_AFTER);
    assert_condition(f, CC_TYPE_SERVING, "True", CC_REASON_AVAILABLE);
    fake_apiserver_log_clear(f->api);
}

static void mark_deleted(cc_fixture *f)
{
    json_object_set_new(json_object_get(stored_object(f), "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    cc_fixture_sync(f);
}

/* ------------------------------------------------------------ tests */

static void test_gone_from_cache_removes_content(void **state)
{
    cc_fixture *f = *state;
    serve_catalog(f, NULL);
    assert_true(cc_fixture_stored(f));
    /* Deleted with its finalizer removed by hand: the informer no longer has it. */
    assert_true(fake_apiserver_remove(f->api, CC_PATH));
    cc_fixture_sync(f);
    kube_wq_result res = cc_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_OK);
    assert_true(res.gone);
    assert_false(cc_fixture_stored(f));
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_REMOVE), 1);
}

static void test_new_catalog_is_labelled_finalized_and_served(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_pullable(f);
    cc_fixture_catalog(f, NULL);
    kube_wq_result res = cc_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_OK); /* no poll interval */
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", CC_PATH, NULL), 1); /* label and finalizer at once */
    json_t *labels = json_object_get(json_object_get(stored_object(f), "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, CC_NAME_LABEL)), CC_NAME);
    assert_true(cc_fixture_has_finalizer(f));
    assert_condition(f, CC_TYPE_PROGRESSING, "True", CC_REASON_SUCCEEDED);
    assert_condition(f, CC_TYPE_SERVING, "True", CC_REASON_AVAILABLE);
    assert_string_equal(status_str(f, "resolvedSource", "image", "ref"), f->image);
    assert_string_equal(status_str(f, "urls", "base", NULL), CC_URL_ROOT "/" CC_NAME);
    assert_true(cc_fixture_stored(f));
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_SERVE), 1);
}

static void test_label_patch_failure_stores_nothing(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_pullable(f);
    cc_fixture_catalog(f, NULL);
    fake_apiserver_fail(f->api, "PATCH", CC_PATH, NULL, 409, NULL, 1);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_false(cc_fixture_stored(f));
    assert_int_equal(fake_apiserver_count(f->api, "PUT", CC_PATH "/status", NULL), 0);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_SERVE), 0);
    /* The retry does it all. */
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_true(cc_fixture_stored(f));
    assert_true(cc_fixture_has_finalizer(f));
}

static void test_unchanged_catalog_is_left_alone(void **state)
{
    cc_fixture *f = *state;
    serve_catalog(f, NULL);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_UNPACK), 1); /* only the first one's */
}

/* The label removed by hand: put back beside the (needless) pull; that PATCH failing is retried. */
static void test_relabel_failure_retries(void **state)
{
    cc_fixture *f = *state;
    serve_catalog(f, NULL);
    json_object_del(json_object_get(json_object_get(stored_object(f), "metadata"), "labels"), CC_NAME_LABEL);
    cc_fixture_sync(f);
    fake_apiserver_fail(f->api, "PATCH", CC_PATH, NULL, 500, NULL, 1);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    json_t *labels = json_object_get(json_object_get(stored_object(f), "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, CC_NAME_LABEL)), CC_NAME);
}

/* A record of another generation than the one the status observes (another catalogd wrote
 * the status): unpacked again, and the record brought to this generation. */
static void test_record_of_another_generation_is_refreshed(void **state)
{
    cc_fixture *f = *state;
    serve_catalog(f, NULL);
    clustercatalog_record rec;
    assert_true(clustercatalog_record_get(f->r, CC_NAME, &rec));
    rec.generation = 7;
    assert_int_equal(clustercatalog_record_set(f->r, CC_NAME, &rec), 0);
    free(rec.ref);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_true(clustercatalog_record_get(f->r, CC_NAME, &rec));
    assert_int_equal(rec.generation, 1);
    free(rec.ref);
}

static void test_poll_interval_requeues_and_polls_when_due(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_use_tag(f); /* a digest is never polled: there is nothing to resolve */
    serve_catalog(f, "{\"spec\":{\"source\":{\"image\":{\"pollIntervalMinutes\":5}}}}");
    /* Not due: requeued for the rest of the interval, nothing asked of the registry. */
    size_t before = fake_http_count(&f->registry);
    kube_wq_result res = cc_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_REQUEUE_AFTER);
    assert_true(res.requeue_after_ms > 290000 && res.requeue_after_ms <= 303000);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(fake_http_count(&f->registry), before);
    /* Due (a test-only interval of 1 ms): the ref is resolved again, one HEAD. */
    f->r->cfg.poll_override_ms = 1;
    usleep(5 * 1000);
    res = cc_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_REQUEUE_AFTER);
    assert_int_equal(fake_http_count(&f->registry), before + 1);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_SERVE), 1); /* same digest: not loaded again */
}

static void test_new_generation_rewrites_status_without_reloading(void **state)
{
    cc_fixture *f = *state;
    serve_catalog(f, NULL);
    json_object_set_new(json_object_get(stored_object(f), "metadata"), "generation", json_integer(2));
    cc_fixture_sync(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "PUT", CC_PATH "/status", NULL), 1);
    json_t *c = clustercatalog_find_condition(json_object_get(stored_object(f), "status"), CC_TYPE_SERVING);
    assert_int_equal(json_integer_value(json_object_get(c, "observedGeneration")), 2);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_SERVE), 1);
}

static void test_unavailable_removes_content_and_finalizer(void **state)
{
    cc_fixture *f = *state;
    serve_catalog(f, NULL);
    json_object_set_new(json_object_get(stored_object(f), "spec"), "availabilityMode", json_string("Unavailable"));
    cc_fixture_sync(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_false(cc_fixture_stored(f));
    assert_condition(f, CC_TYPE_SERVING, "False", CC_REASON_USER_UNAVAILABLE);
    assert_condition(f, CC_TYPE_PROGRESSING, "True", CC_REASON_SUCCEEDED);
    assert_string_equal(status_str(f, "resolvedSource", "image", "ref"), "");
    assert_false(cc_fixture_has_finalizer(f));
}

/* An Unavailable catalog still gets its name label; that PATCH failing is retried. */
static void test_unavailable_label_patch_failure_retries(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_catalog(f, "{\"spec\":{\"availabilityMode\":\"Unavailable\"}}");
    fake_apiserver_fail(f->api, "PATCH", CC_PATH, NULL, 500, NULL, 1);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_string_equal(cc_fixture_condition(f, CC_TYPE_SERVING, "status"), "");
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_condition(f, CC_TYPE_SERVING, "False", CC_REASON_USER_UNAVAILABLE);
}

static void test_deletion_removes_content_and_releases_finalizer(void **state)
{
    cc_fixture *f = *state;
    serve_catalog(f, NULL);
    mark_deleted(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_false(cc_fixture_stored(f));
    assert_null(stored_object(f)); /* the finalizer released: the apiserver let it go */
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_REMOVE), 1);
}

static void test_deletion_without_our_finalizer_does_nothing(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_catalog(f, "{\"metadata\":{\"finalizers\":[\"example.com/someone-else\"]}}");
    mark_deleted(f);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_REMOVE), 0);
}

static void test_unknown_source_is_terminal(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_catalog(f, "{\"spec\":{\"source\":{\"type\":\"Git\"}}}");
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_TERMINAL);
    assert_condition(f, CC_TYPE_PROGRESSING, "False", CC_REASON_BLOCKED);
    assert_string_equal(cc_fixture_condition(f, CC_TYPE_PROGRESSING, "message"), "unknown source type \"Git\"");
}

static void test_image_that_does_not_pull_retries(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_catalog(f, NULL);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_condition(f, CC_TYPE_PROGRESSING, "True", CC_REASON_RETRYING);
    const char *m = cc_fixture_condition(f, CC_TYPE_PROGRESSING, "message");
    if (strncmp(m, "source catalog content: ", 24) != 0)
        fail_msg("Progressing: %s", m);
    assert_string_equal(cc_fixture_condition(f, CC_TYPE_SERVING, "status"), ""); /* Serving left as it was */
    assert_false(cc_fixture_stored(f));
    assert_true(cc_fixture_has_finalizer(f)); /* the PATCH beside the pull went through */
}

static void test_status_conflict_retries_and_keeps_the_store(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_pullable(f);
    cc_fixture_catalog(f, NULL);
    fake_apiserver_fail(f->api, "PUT", CC_PATH "/status", NULL, 409, NULL, 1);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    assert_true(cc_fixture_stored(f));
    assert_string_equal(cc_fixture_condition(f, CC_TYPE_SERVING, "status"), "");
    /* The retry writes the status from the record, without loading the catalog again. */
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_condition(f, CC_TYPE_SERVING, "True", CC_REASON_AVAILABLE);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_SERVE), 1);
}

#define T(name) cmocka_unit_test_setup_teardown(name, cc_fixture_setup, cc_fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_gone_from_cache_removes_content),
        T(test_new_catalog_is_labelled_finalized_and_served),
        T(test_label_patch_failure_stores_nothing),
        T(test_unchanged_catalog_is_left_alone),
        T(test_relabel_failure_retries),
        T(test_record_of_another_generation_is_refreshed),
        T(test_poll_interval_requeues_and_polls_when_due),
        T(test_new_generation_rewrites_status_without_reloading),
        T(test_unavailable_removes_content_and_finalizer),
        T(test_unavailable_label_patch_failure_retries),
        T(test_deletion_removes_content_and_releases_finalizer),
        T(test_deletion_without_our_finalizer_does_nothing),
        T(test_unknown_source_is_terminal),
        T(test_image_that_does_not_pull_retries),
        T(test_status_conflict_retries_and_keeps_the_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
