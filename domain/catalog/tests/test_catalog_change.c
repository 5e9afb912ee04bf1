/* catalog_change: which ClusterCatalog updates requeue the ClusterExtensions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "catalog.h"

static const char *base_catalog =
    "{\"metadata\":{\"name\":\"c\",\"labels\":{\"olm.operatorframework.io/metadata.name\":\"c\"},"
    "\"resourceVersion\":\"1\"},"
    "\"spec\":{\"priority\":0,\"availabilityMode\":\"Available\",\"source\":{\"type\":\"Image\"}},"
    "\"status\":{\"conditions\":[{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"Succeeded\","
    "\"message\":\"ok\"},{\"type\":\"Serving\",\"status\":\"True\",\"reason\":\"Available\",\"message\":\"m\"}],"
    "\"urls\":{\"base\":\"https://catalogd/catalogs/c\"},\"lastUnpacked\":\"2026-01-01T00:00:00Z\","
    "\"resolvedSource\":{\"type\":\"Image\",\"image\":{\"ref\":\"r@sha256:aa\"}}}}";

static json_t *catalog(void)
{
    json_t *c = json_loads(base_catalog, 0, NULL);
    assert_non_null(c);
    return c;
}

static json_t *path(json_t *obj, const char *a, const char *b)
{
    json_t *o = json_object_get(obj, a);
    return b ? json_object_get(o, b) : o;
}

/* Apply `edit` to a copy and report whether the change predicate fires. */
static bool changed_by(void (*edit)(json_t *))
{
    json_t *old_obj = catalog(), *new_obj = catalog();
    edit(new_obj);
    bool r = catalog_resolution_inputs_changed(old_obj, new_obj);
    json_decref(old_obj);
    json_decref(new_obj);
    return r;
}

static void e_nothing(json_t *c) { (void)c; }
static void e_resource_version(json_t *c) { json_object_set_new(path(c, "metadata", NULL), "resourceVersion", json_string("2")); }
static void e_last_unpacked(json_t *c) { json_object_set_new(path(c, "status", NULL), "lastUnpacked", json_string("2026-02-02T00:00:00Z")); }
static void e_progressing_message(json_t *c)
{
    json_object_set_new(json_array_get(path(c, "status", "conditions"), 0), "message", json_string("retrying"));
    json_object_set_new(json_array_get(path(c, "status", "conditions"), 0), "status", json_string("False"));
}
static void e_serving_message(json_t *c) { json_object_set_new(json_array_get(path(c, "status", "conditions"), 1), "message", json_string("other")); }
static void e_priority(json_t *c) { json_object_set_new(path(c, "spec", NULL), "priority", json_integer(10)); }
static void e_priority_removed(json_t *c) { json_object_del(path(c, "spec", NULL), "priority"); }
static void e_label_added(json_t *c) { json_object_set_new(path(c, "metadata", "labels"), "tier", json_string("gold")); }
static void e_labels_removed(json_t *c) { json_object_del(path(c, "metadata", NULL), "labels"); }
static void e_unavailable(json_t *c) { json_object_set_new(path(c, "spec", NULL), "availabilityMode", json_string("Unavailable")); }
static void e_not_serving(json_t *c) { json_object_set_new(json_array_get(path(c, "status", "conditions"), 1), "status", json_string("False")); }
static void e_serving_gone(json_t *c) { json_array_remove(path(c, "status", "conditions"), 1); }
static void e_base_url(json_t *c) { json_object_set_new(path(c, "status", "urls"), "base", json_string("https://other/catalogs/c")); }
static void e_new_digest(json_t *c) { json_object_set_new(path(path(c, "status", "resolvedSource"), "image", NULL), "ref", json_string("r@sha256:bb")); }
static void e_resolved_gone(json_t *c) { json_object_del(path(c, "status", NULL), "resolvedSource"); }

static void bookkeeping_does_not_requeue(void **state)
{
    (void)state;
    assert_false(changed_by(e_nothing));
    assert_false(changed_by(e_resource_version));
    assert_false(changed_by(e_last_unpacked));
    assert_false(changed_by(e_progressing_message));
    assert_false(changed_by(e_serving_message));
}

static void resolution_inputs_requeue(void **state)
{
    (void)state;
    assert_true(changed_by(e_priority));
    assert_true(changed_by(e_priority_removed));
    assert_true(changed_by(e_label_added));
    assert_true(changed_by(e_labels_removed));
    assert_true(changed_by(e_unavailable));
    assert_true(changed_by(e_not_serving));
    assert_true(changed_by(e_serving_gone));
    assert_true(changed_by(e_base_url));
    assert_true(changed_by(e_new_digest));
    assert_true(changed_by(e_resolved_gone));
}

static void missing_versions_requeue(void **state)
{
    (void)state;
    json_t *c = catalog();
    assert_true(catalog_resolution_inputs_changed(NULL, c));
    assert_true(catalog_resolution_inputs_changed(c, NULL));
    json_t *empty = json_object();
    assert_false(catalog_resolution_inputs_changed(empty, empty));
    json_decref(empty);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bookkeeping_does_not_requeue),
        cmocka_unit_test(resolution_inputs_requeue),
        cmocka_unit_test(missing_versions_requeue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
