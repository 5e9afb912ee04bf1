/* clustercatalog_follow: a replica without the Lease serves the digest the leader wrote in
 * status.resolvedSource, writes nothing to the API server, and hands over without a re-pull
 * when it becomes leader.  Driven through the real reconciler (cc_fixture.h): the leader
 * serves the catalog first, so the status is the leader's own; then the store is removed and
 * the reconciler follows, as a fresh replica with the same image cache would.
 *
 * Mutation checks (the production line broken on purpose, the test seen failing, restored):
 *   clustercatalog_reconcile.c  dispatch always leads (`1 ?`)       -> test_follower_serves_the_leaders_digest
 *   clustercatalog_follow.c     `!ref ||` dropped (not-Serving followed) -> test_follower_waits_for_serving
 *   clustercatalog_follow.c     record's lastUnpacked from the store -> test_follower_serves_the_leaders_digest,
 *                                                                      test_new_leader_finds_its_status_current
 *   clustercatalog_follow.c     deletion not followed              -> test_follower_drops_a_deleted_catalog
 * Not observable: serves() only spares a second pull-cache lookup (the unpack finds the store
 * holds the digest already and loads nothing), so breaking it passes every test.
 *   clustercatalog_controller.c readiness ignores the served source -> test_readiness_needs_the_current_digest
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_fixture.h"
#include "clustercatalog_controller.h"

#define LEADERS_LAST_UNPACKED "2020-01-02T03:04:05Z"

static json_t *stored_object(cc_fixture *f)
{
    return fake_apiserver_object(f->api, CC_PATH);
}

/* The leader serves the catalog; then this replica forgets it and follows. */
static void follow_after_leader(cc_fixture *f)
{
    cc_fixture_pullable(f);
    cc_fixture_catalog(f, NULL);
    kube_wq_result res = cc_fixture_reconcile(f);
    assert_int_equal(res.kind, KUBE_WQ_OK);
    olm_error err;
    assert_int_equal(clustercatalog_remove_content(f->r, CC_NAME, &err), 0);
    clustercatalog_record_drop(f->r, CC_NAME);
    cc_fixture_pullable(f); /* the removal took the image cache too: a new replica pulls it */
    /* A lastUnpacked no unpack here produces: a leader would write its own, a follower must
     * keep the leader's and carry it in its record. */
    json_object_set_new(json_object_get(stored_object(f), "status"), "lastUnpacked",
                        json_string(LEADERS_LAST_UNPACKED));
    cc_fixture_sync(f);
    atomic_store(&f->r->leading, false);
    fake_apiserver_log_clear(f->api);
}

static void test_follower_serves_the_leaders_digest(void **state)
{
    cc_fixture *f = *state;
    follow_after_leader(f);
    unsigned served = cc_fixture_published(f, CC_PUBLISH_SERVE);
    assert_false(cc_fixture_stored(f));
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_true(cc_fixture_stored(f));
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_SERVE), served + 1);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0); /* a follower writes nothing */
    char *source = store_read_source(f->cache_dir, CC_NAME);
    assert_non_null(source);
    assert_string_equal(source, f->image);
    free(source);
    clustercatalog_record rec;
    assert_true(clustercatalog_record_get(f->r, CC_NAME, &rec));
    assert_string_equal(rec.ref, f->image);
    assert_int_equal(rec.last_unpacked, 1577934245); /* LEADERS_LAST_UNPACKED */
    assert_int_equal(rec.generation, 1);
    free(rec.ref);
}

/* A catalog the leader has not served yet (no status) is not followed. */
static void test_follower_waits_for_serving(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_pullable(f);
    cc_fixture_catalog(f, NULL);
    atomic_store(&f->r->leading, false);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_false(cc_fixture_stored(f));
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_UNPACK), 0);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
}

static void test_follower_pulls_each_digest_once(void **state)
{
    cc_fixture *f = *state;
    follow_after_leader(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    unsigned unpacks = cc_fixture_published(f, CC_PUBLISH_UNPACK);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_UNPACK), unpacks);
}

/* The follower's record carries the leader's lastUnpacked: once it leads, the status is
 * current and nothing is pulled, stored or written. */
static void test_new_leader_finds_its_status_current(void **state)
{
    cc_fixture *f = *state;
    follow_after_leader(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    unsigned unpacks = cc_fixture_published(f, CC_PUBLISH_UNPACK);
    clustercatalog_reconciler_lead(f->r);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
    assert_int_equal(cc_fixture_published(f, CC_PUBLISH_UNPACK), unpacks);
}

static void test_follower_drops_a_deleted_catalog(void **state)
{
    cc_fixture *f = *state;
    follow_after_leader(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_true(cc_fixture_stored(f));
    json_object_set_new(json_object_get(stored_object(f), "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    cc_fixture_sync(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_false(cc_fixture_stored(f));
    assert_int_equal(fake_apiserver_nwrites(f->api), 0); /* the finalizer is the leader's to release */
    assert_true(cc_fixture_has_finalizer(f));
}

/* A digest that does not pull: retried, and whatever was served stays. */
static void test_follower_retries_a_digest_that_does_not_pull(void **state)
{
    cc_fixture *f = *state;
    follow_after_leader(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    json_t *image = json_object_get(json_object_get(json_object_get(stored_object(f), "status"), "resolvedSource"),
                                    "image");
    char moved[300];
    snprintf(moved, sizeof moved, "%.*s@sha256:%064d", (int)(strchr(f->image, '@') - f->image), f->image, 7);
    json_object_set_new(image, "ref", json_string(moved));
    cc_fixture_sync(f);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    char *source = store_read_source(f->cache_dir, CC_NAME);
    assert_string_equal(source, f->image);
    free(source);
    assert_int_equal(fake_apiserver_nwrites(f->api), 0);
}

/* ------------------------------------------------------------ readiness */

typedef struct served {
    const char *name, *source;
} served;

static bool serves(const char *name, const char **source, void *data)
{
    served *s = data;
    if (!s->name || strcmp(name, s->name) != 0)
        return false;
    *source = s->source;
    return true;
}

static void test_followed_ref_is_the_serving_digest(void **state)
{
    (void)state;
    json_t *c = json_loads("{\"status\":{\"conditions\":[{\"type\":\"Serving\",\"status\":\"True\","
                           "\"observedGeneration\":3}],\"resolvedSource\":{\"type\":\"Image\",\"image\":"
                           "{\"ref\":\"r.example/c@sha256:aa\"}}}}",
                           0, NULL);
    int64_t gen = 0;
    assert_string_equal(clustercatalog_followed_ref(c, &gen), "r.example/c@sha256:aa");
    assert_int_equal(gen, 3);
    json_t *cond = json_array_get(json_object_get(json_object_get(c, "status"), "conditions"), 0);
    json_object_set_new(cond, "status", json_string("False"));
    assert_null(clustercatalog_followed_ref(c, NULL));
    json_object_set_new(cond, "status", json_string("True"));
    json_object_set_new(json_object_get(json_object_get(json_object_get(c, "status"), "resolvedSource"), "image"),
                        "ref", json_string("r.example/c:latest"));
    assert_null(clustercatalog_followed_ref(c, NULL)); /* only a digest is followed */
    json_decref(c);
}

static void test_readiness_needs_the_current_digest(void **state)
{
    cc_fixture *f = *state;
    cc_fixture_pullable(f);
    cc_fixture_catalog(f, NULL);
    assert_int_equal(cc_fixture_reconcile(f).kind, KUBE_WQ_OK);
    cc_fixture_sync(f);
    clustercatalog_controller c = {.inf = f->informer};
    strbuf why = STRBUF_INIT;
    served s = {0};
    assert_false(clustercatalog_controller_ready(&c, serves, &s, &why));
    assert_string_equal(strbuf_str(&why), "ClusterCatalog cache not synced");
    kube_informer_mark_synced(f->informer);
    strbuf_reset(&why);
    assert_false(clustercatalog_controller_ready(&c, serves, &s, &why));
    assert_non_null(strstr(strbuf_str(&why), "catalog " CC_NAME ": serving nothing, not yet "));
    strbuf_reset(&why);
    s = (served){CC_NAME, "r.example/old@sha256:00"};
    assert_false(clustercatalog_controller_ready(&c, serves, &s, &why));
    assert_non_null(strstr(strbuf_str(&why), "serving r.example/old@sha256:00"));
    s.source = f->image;
    assert_true(clustercatalog_controller_ready(&c, serves, &s, &why));
    /* a catalog that is not Serving asks for nothing */
    json_object_del(json_object_get(stored_object(f), "status"), "conditions");
    cc_fixture_sync(f);
    s.name = NULL;
    assert_true(clustercatalog_controller_ready(&c, serves, &s, &why));
    strbuf_free(&why);
}

#define T(name) cmocka_unit_test_setup_teardown(name, cc_fixture_setup, cc_fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_follower_serves_the_leaders_digest),
        T(test_follower_waits_for_serving),
        T(test_follower_pulls_each_digest_once),
        T(test_new_leader_finds_its_status_current),
        T(test_follower_drops_a_deleted_catalog),
        T(test_follower_retries_a_digest_that_does_not_pull),
        cmocka_unit_test(test_followed_ref_is_the_serving_digest),
        T(test_readiness_needs_the_current_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
