/* The ClusterExtension controller's setup: which updates call for a reconcile, what the
 * cache keeps, what the metrics say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "clusterextension_controller.h"

static json_t *obj(const char *text)
{
    json_error_t e;
    json_t *o = json_loads(text, 0, &e);
    if (!o)
        fail_msg("%s", e.text);
    return o;
}


static bool needs(const char *old_text, const char *new_text)
{
    json_t *a = obj(old_text), *b = obj(new_text);
    bool r = clusterextension_update_needs_reconcile(a, b);
    json_decref(a);
    json_decref(b);
    return r;
}

static void test_update_filter(void **state)
{
    /* Status only (what our own status writes look like): no. */
    assert_false(needs("{\"metadata\":{\"generation\":1,\"resourceVersion\":\"1\"},\"status\":{}}",
                       "{\"metadata\":{\"generation\":1,\"resourceVersion\":\"2\"},\"status\":{\"x\":1}}"));
    /* A spec change: the generation moves. */
    assert_true(needs("{\"metadata\":{\"generation\":1}}", "{\"metadata\":{\"generation\":2}}"));
    /* Deletion. */
    assert_true(needs("{\"metadata\":{\"generation\":1}}",
                      "{\"metadata\":{\"generation\":1,\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}"));
    /* Our finalizer appended by our first step: no second reconcile. */
    assert_false(needs("{\"metadata\":{\"generation\":1,\"finalizers\":[\"x\"]}}",
                       "{\"metadata\":{\"generation\":1,\"finalizers\":[\"x\",\"" CE_FINALIZER "\"]}}"));
    /* Someone else's finalizer, ours removed, or ours appended while another went: yes. */
    assert_true(needs("{\"metadata\":{\"generation\":1}}", "{\"metadata\":{\"generation\":1,\"finalizers\":[\"x\"]}}"));
    assert_true(needs("{\"metadata\":{\"generation\":1,\"finalizers\":[\"" CE_FINALIZER "\"]}}",
                      "{\"metadata\":{\"generation\":1,\"finalizers\":[]}}"));
    assert_true(needs("{\"metadata\":{\"generation\":1,\"finalizers\":[\"x\"]}}",
                      "{\"metadata\":{\"generation\":1,\"finalizers\":[\"y\",\"" CE_FINALIZER "\"]}}"));
}

static void test_cache_form(void **state)
{
    json_t *o = obj("{\"apiVersion\":\"olm.operatorframework.io/v1\",\"metadata\":{\"name\":\"e\",\"uid\":\"u\","
                    "\"resourceVersion\":\"7\",\"generation\":3,\"finalizers\":[\"f\"],\"annotations\":{\"big\":\"x\"},"
                    "\"managedFields\":[]},\"spec\":{\"namespace\":\"n\",\"source\":{\"sourceType\":\"Catalog\","
                    "\"catalog\":{\"packageName\":\"p\",\"version\":\"1.x\"}}},\"status\":{\"install\":{\"bundle\":"
                    "{\"name\":\"p.v1\",\"version\":\"1.0.0\"}},\"conditions\":[{\"type\":\"Installed\",\"status\":"
                    "\"True\",\"reason\":\"Succeeded\",\"message\":\"long text\",\"lastTransitionTime\":\"t\"}]}}");
    json_t *whole = json_deep_copy(o);
    json_object_del(json_object_get(whole, "metadata"), "managedFields"); /* the watch drops them before */
    json_object_del(json_object_get(o, "metadata"), "managedFields");
    clusterextension_cache_form(o);
    /* The whole object, as text, for reconciles. */
    json_t *text = json_loads(clusterextension_cached_text(o), 0, NULL);
    assert_non_null(text);
    assert_true(json_equal(text, whole));
    json_decref(text);
    json_decref(whole);
    json_object_del(o, CE_CACHE_TEXT_KEY);
    json_t *want = obj("{\"apiVersion\":\"olm.operatorframework.io/v1\",\"metadata\":{\"name\":\"e\",\"uid\":\"u\","
                       "\"resourceVersion\":\"7\",\"generation\":3,\"finalizers\":[\"f\"]},\"spec\":{\"source\":"
                       "{\"catalog\":{\"packageName\":\"p\"}}},\"status\":{\"install\":{\"bundle\":{\"name\":\"p.v1\","
                       "\"version\":\"1.0.0\"}},\"conditions\":[{\"type\":\"Installed\",\"status\":\"True\"}]}}");
    if (!json_equal(o, want)) {
        char *got = json_dumps(o, JSON_SORT_KEYS);
        fail_msg("cache form: %s", got);
    }
    json_decref(want);
    json_decref(o);
}

/* BoxcutterRuntime: the revision cache keeps the owner label and the hash of what the
 * reconcile reads; the teardown finalizer appearing calls for no reconcile, a status, spec,
 * annotation or deletion change does.  (Mutation checks: the hash left out of the cache form,
 * or the filter answering true, or false, each fails this test.) */
static json_t *revision(const char *rv, const char *finalizers, const char *status)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"ext-1\",\"uid\":\"u\",\"resourceVersion\":\"%s\",\"generation\":1,"
             "\"labels\":{\"olm.operatorframework.io/owner-name\":\"ext\",\"other\":\"x\"},"
             "\"annotations\":{\"olm.operatorframework.io/bundle-version\":\"1.0.0\"}%s},"
             "\"spec\":{\"revision\":1,\"lifecycleState\":\"Active\",\"phases\":[]},\"status\":%s}",
             rv, finalizers, status);
    json_error_t je;
    json_t *o = json_loads(buf, 0, &je);
    assert_non_null(o);
    clusterextension_revision_cache_form(o);
    return o;
}

static void test_revision_update_filter(void **state)
{
    (void)state;
    const char *rolling = "{\"conditions\":[{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"RollingOut\"}]}";
    const char *done = "{\"conditions\":[{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"Succeeded\"}]}";
    json_t *a = revision("1", "", rolling);
    /* The cache form: the owner label, name, uid, resourceVersion and the hash; no spec or status. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(a, "metadata"), "labels"),
                                                          "olm.operatorframework.io/owner-name")),
                        "ext");
    assert_null(json_object_get(a, "spec"));
    assert_null(json_object_get(a, "status"));
    assert_non_null(json_string_value(json_object_get(a, "readHash")));
    json_t *fin = revision("2", ",\"finalizers\":[\"olm.operatorframework.io/teardown\"]", rolling);
    assert_false(clusterextension_revision_update_needs_reconcile(a, fin));
    json_t *st = revision("3", ",\"finalizers\":[\"olm.operatorframework.io/teardown\"]", done);
    assert_true(clusterextension_revision_update_needs_reconcile(fin, st));
    json_t *del = revision("4", ",\"finalizers\":[\"olm.operatorframework.io/teardown\"],"
                                "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"", done);
    assert_true(clusterextension_revision_update_needs_reconcile(st, del));
    /* Objects without the hash (not in cache form): always. */
    json_t *bare = json_pack("{s:{s:s}}", "metadata", "name", "ext-1");
    assert_true(clusterextension_revision_update_needs_reconcile(bare, bare));
    json_decref(a);
    json_decref(fin);
    json_decref(st);
    json_decref(del);
    json_decref(bare);
}

static void test_metrics(void **state)
{
    json_t *list = obj("[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"source\":{\"catalog\":{\"packageName\":\"p\\\"q\"}}},"
                       "\"status\":{\"install\":{\"bundle\":{\"version\":\"1.2.3\"}},\"conditions\":[{\"type\":"
                       "\"Installed\",\"status\":\"True\"}]}},"
                       "{\"metadata\":{\"name\":\"b\"},\"status\":{\"conditions\":[{\"type\":\"Installed\",\"status\":"
                       "\"False\"}]}}]");
    clusterextension_metrics_sources src = {.extensions = list, .queue_depth = 4, .tokens_requested = 9};
    strbuf b = STRBUF_INIT;
    clusterextension_metrics_render(&src, &b);
    const char *t = strbuf_str(&b);
    assert_non_null(strstr(t, "\noperator_controller_clusterextensions 2\n"));
    assert_non_null(strstr(t, "\noperator_controller_installed_extensions 1\n"));
    assert_non_null(strstr(t, "\noperator_controller_workqueue_depth 4\n"));
    assert_non_null(strstr(t, "\noperator_controller_serviceaccount_tokens_requested_total 9\n"));
    assert_non_null(strstr(t, "operator_controller_reconcile_duration_seconds_count 0\n"));
    strbuf_reset(&b);
    clusterextension_info_metrics_render(&src, &b);
    t = strbuf_str(&b);
    assert_non_null(strstr(t, "olm_clusterextension_info{name=\"a\",package=\"p\\\"q\",version=\"1.2.3\",catalog=\"\"} 1\n"));
    assert_non_null(strstr(t, "olm_clusterextension_info{name=\"b\",package=\"\",version=\"\",catalog=\"\"} 1\n"));
    strbuf_free(&b);
    json_decref(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_filter),
        cmocka_unit_test(test_cache_form),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_revision_update_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
