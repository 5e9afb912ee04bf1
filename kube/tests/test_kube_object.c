/* kube_object: apimeta's condition semantics, finalizer lists, dotted paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fake_apiserver.h"
#include "kube_object.h"
#include "kube_verbs.h"

static json_t *obj(const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    assert_non_null(o);
    return o;
}

static void test_paths(void **state)
{
    json_t *o = obj("{\"status\":{\"install\":{\"bundle\":{\"name\":\"b\",\"n\":1}}},\"spec\":\"x\"}");
    assert_string_equal(kube_object_string(o, "status.install.bundle.name"), "b");
    assert_null(kube_object_string(o, "status.install.bundle.n")); /* not a string */
    assert_null(kube_object_path(o, "status.missing.name"));
    assert_null(kube_object_path(o, "spec.inner")); /* a string has no fields */
    assert_ptr_equal(kube_object_path(o, ""), o);
    json_decref(o);
}

static void test_set_condition_keeps_transition_time_unless_status_flips(void **state)
{
    json_t *status = json_object();
    kube_condition c = {"Serving", "True", "Available", "served", 3};
    assert_int_equal(kube_object_set_condition(status, &c, "2026-01-01T00:00:00Z"), 0);
    json_t *got = kube_conditions_find(json_object_get(status, "conditions"), "Serving");
    assert_string_equal(json_string_value(json_object_get(got, "lastTransitionTime")), "2026-01-01T00:00:00Z");
    assert_int_equal(json_integer_value(json_object_get(got, "observedGeneration")), 3);

    /* Same status, new reason/message/generation: the time stays. */
    kube_condition again = {"Serving", "True", "Available", NULL, 4};
    assert_int_equal(kube_object_set_condition(status, &again, "2026-01-02T00:00:00Z"), 0);
    assert_int_equal(json_array_size(json_object_get(status, "conditions")), 1);
    assert_string_equal(json_string_value(json_object_get(got, "lastTransitionTime")), "2026-01-01T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(got, "message")), "");
    assert_int_equal(json_integer_value(json_object_get(got, "observedGeneration")), 4);

    /* The status flips: the time moves. */
    kube_condition flip = {"Serving", "False", "Unavailable", "gone", 4};
    assert_int_equal(kube_object_set_condition(status, &flip, "2026-01-03T00:00:00Z"), 0);
    assert_string_equal(json_string_value(json_object_get(got, "lastTransitionTime")), "2026-01-03T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(got, "reason")), "Unavailable");

    /* Another type is another condition. */
    kube_condition other = {"Progressing", "True", "Succeeded", "ok", 4};
    assert_int_equal(kube_object_set_condition(status, &other, "2026-01-03T00:00:00Z"), 0);
    assert_int_equal(json_array_size(json_object_get(status, "conditions")), 2);
    json_t *wrapped = json_pack("{s:O}", "status", status);
    assert_true(kube_object_condition_is(wrapped, "Serving", "False"));
    assert_false(kube_object_condition_is(wrapped, "Serving", "True"));
    assert_false(kube_object_condition_is(wrapped, "Installed", "True"));
    json_decref(wrapped);
    json_decref(status);
}

static void test_finalizers(void **state)
{
    json_t *o = obj("{\"metadata\":{\"finalizers\":[\"a\",\"ours\",\"b\",\"ours\"]}}");
    assert_true(kube_object_has_finalizer(o, "ours"));
    assert_false(kube_object_has_finalizer(o, "c"));
    json_t *without = kube_object_finalizers_with(o, "ours", false);
    json_t *want = obj("[\"a\",\"b\"]");
    assert_true(json_equal(without, want));
    json_t *with = kube_object_finalizers_with(o, "ours", true);
    json_t *want_with = obj("[\"a\",\"ours\",\"b\"]"); /* kept where it was, once */
    assert_true(json_equal(with, want_with));
    json_t *none = obj("{\"metadata\":{}}");
    json_t *added = kube_object_finalizers_with(none, "ours", true);
    assert_int_equal(json_array_size(added), 1);
    json_decref(added);
    json_decref(none);
    json_decref(want_with);
    json_decref(with);
    json_decref(want);
    json_decref(without);
    json_decref(o);
}

#define CC_PATH "/apis/olm.operatorframework.io/v1/clustercatalogs/c"

/* kube_object_set_finalizer against the shared fake apiserver: one merge PATCH, nothing when
 * nothing changes, a 409 on a stale read, and the extra names removed with ours. */
static void test_set_finalizer(void **state)
{
    fake_apiserver *api = fake_apiserver_start();
    assert_non_null(api);
    fake_apiserver_put_json(api, CC_PATH, "{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"other\"]}}");
    kube_config kc = {0};
    kc.server = strdup(fake_apiserver_url(api));
    kube_client_options ko = {.connect_timeout_ms = 2000, .timeout_ms = 10000};
    olm_error err;
    kube_client *c = kube_client_new(&kc, &ko, &err);
    assert_non_null(c);
    const char *av = "olm.operatorframework.io/v1", *kind = "ClusterCatalog";

    json_t *cur = json_deep_copy(fake_apiserver_object(api, CC_PATH)), *out = NULL;
    assert_int_equal(kube_object_set_finalizer(c, av, kind, cur, "ours", true, NULL, &out, &err), 0);
    assert_non_null(out);
    assert_true(kube_object_has_finalizer(fake_apiserver_object(api, CC_PATH), "ours"));
    assert_true(kube_object_has_finalizer(fake_apiserver_object(api, CC_PATH), "other"));
    assert_int_equal(fake_apiserver_count(api, "PATCH", CC_PATH, NULL), 1);

    /* Already there: nothing sent. */
    json_t *again = NULL;
    assert_int_equal(kube_object_set_finalizer(c, av, kind, out, "ours", true, NULL, &again, &err), 0);
    assert_null(again);
    assert_int_equal(fake_apiserver_count(api, "PATCH", CC_PATH, NULL), 1);

    /* The first read is stale now: 409, and the stored list is untouched (no "ours" lost). */
    json_t *stale = NULL;
    assert_int_equal(kube_object_set_finalizer(c, av, kind, cur, "third", true, NULL, &stale, &err), KUBE_CONFLICT);
    assert_null(stale);
    assert_true(kube_object_has_finalizer(fake_apiserver_object(api, CC_PATH), "ours"));
    assert_false(kube_object_has_finalizer(fake_apiserver_object(api, CC_PATH), "third"));

    /* Removing ours takes the listed others along; the rest stays. */
    const char *also[] = {"other", NULL};
    json_t *gone = NULL;
    assert_int_equal(kube_object_set_finalizer(c, av, kind, out, "ours", false, also, &gone, &err), 0);
    assert_non_null(gone);
    assert_int_equal(json_array_size(kube_object_path(fake_apiserver_object(api, CC_PATH), "metadata.finalizers")), 0);
    json_decref(gone);
    json_decref(out);
    json_decref(cur);
    kube_client_free(c);
    fake_apiserver_stop(api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_set_condition_keeps_transition_time_unless_status_flips),
        cmocka_unit_test(test_finalizers),
        cmocka_unit_test(test_set_finalizer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
