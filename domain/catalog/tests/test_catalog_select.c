/* catalog_select: the one ClusterCatalog selection of operator-controller and the CLI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"

static const char *const CATALOGS =
    "[{\"metadata\":{\"name\":\"zeta\",\"labels\":{\"tier\":\"prod\"}},\"spec\":{\"priority\":5}},"
    " {\"metadata\":{\"name\":\"alpha\",\"labels\":{\"tier\":\"prod\"}},\"spec\":{\"availabilityMode\":\"Unavailable\"}},"
    " {\"metadata\":{\"name\":\"mid\",\"labels\":{\"tier\":\"dev\"}},\"spec\":{\"priority\":-1}},"
    " {\"metadata\":{\"labels\":{\"tier\":\"prod\"}}}]";

static void test_selects_sorted_with_priority_and_availability(void **state)
{
    json_t *cats = json_loads(CATALOGS, 0, NULL);
    json_t *sel = json_loads("{\"matchLabels\":{\"tier\":\"prod\"}}", 0, NULL);
    catalog_pick *p;
    size_t n;
    olm_error err;
    assert_int_equal(catalog_select(cats, sel, &p, &n, &err), 0);
    assert_int_equal(n, 2); /* the nameless one is no catalog */
    assert_string_equal(p[0].name, "alpha");
    assert_true(p[0].unavailable);
    assert_string_equal(p[1].name, "zeta");
    assert_int_equal(p[1].priority, 5);
    assert_false(p[1].unavailable);
    free(p);
    assert_int_equal(catalog_select(cats, NULL, &p, &n, &err), 0); /* no selector: all */
    assert_int_equal(n, 3);
    assert_string_equal(p[1].name, "mid");
    assert_int_equal(p[1].priority, -1);
    free(p);
    json_decref(sel);
    json_decref(cats);
}

static void test_invalid_selector(void **state)
{
    json_t *cats = json_loads(CATALOGS, 0, NULL);
    json_t *sel = json_loads("{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"Sometimes\"}]}", 0, NULL);
    catalog_pick *p;
    size_t n;
    olm_error err;
    assert_int_equal(catalog_select(cats, sel, &p, &n, &err), -1);
    assert_non_null(strstr(err.msg, "desired catalog selector is invalid: "));
    assert_null(p);
    json_decref(sel);
    json_decref(cats);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selects_sorted_with_priority_and_availability),
        cmocka_unit_test(test_invalid_selector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
