/* clusterextension_info: the per-extension table (catalog of the installed bundle, since when
 * the generation fails) forgets an extension when it is deleted and holds no memory once the
 * last one is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterextension_internal.h"

static void test_forget_all_releases_the_table(void **state)
{
    (void)state;
    clusterextension_infos *m = clusterextension_infos_new();
    assert_non_null(m);
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "ext-%d", i);
        clusterextension_infos_set(m, name, "operatorhubio");
    }
    assert_true(clusterextension_infos_capacity(m) >= 100);
    /* Down to a few: the room shrinks with them; what is left is still there. */
    for (int i = 0; i < 95; i++) {
        snprintf(name, sizeof name, "ext-%d", i);
        clusterextension_infos_forget(m, name);
    }
    assert_true(clusterextension_infos_capacity(m) <= 32);
    clusterextension_reconciler r = {.infos = m};
    char buf[64];
    clusterextension_reconciler_catalog_of(&r, "ext-97", buf, sizeof buf);
    assert_string_equal(buf, "operatorhubio");
    clusterextension_reconciler_catalog_of(&r, "ext-3", buf, sizeof buf);
    assert_string_equal(buf, "");
    for (int i = 95; i < 100; i++) {
        snprintf(name, sizeof name, "ext-%d", i);
        clusterextension_infos_forget(m, name);
    }
    assert_int_equal(clusterextension_infos_capacity(m), 0);
    /* Usable again afterwards. */
    assert_int_equal(clusterextension_infos_failing_since(m, "again", 2, 1000), 1000);
    assert_int_equal(clusterextension_infos_failing_since(m, "again", 2, 2000), 1000);
    clusterextension_infos_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forget_all_releases_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
