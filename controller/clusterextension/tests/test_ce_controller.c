/* The ClusterExtension controller's setup: which updates call for a reconcile, what the
 * cache keeps, what the metrics say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
    clusterextension_cache_form(o);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
