/* olm_array: growth by doubling, zeroed slots, and an unchanged array when the size would
 * overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "olm_array.h"

typedef struct pair {
    int a, b;
} pair;

static void test_push_and_grow(void **state)
{
    pair *items = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(OLM_ARRAY_PUSH_SLOT(items, n, cap), 0);
        assert_int_equal(items[n - 1].a, 0); /* zeroed */
        items[n - 1].a = i;
    }
    assert_int_equal(n, 100);
    assert_int_equal(cap, 128); /* 8, 16, ... doubled */
    for (int i = 0; i < 100; i++)
        assert_int_equal(items[i].a, i);
    assert_int_equal(OLM_ARRAY_RESERVE(items, cap, 128), 0);
    assert_int_equal(cap, 128);
    free(items);
}

static void test_overflow_leaves_the_array_alone(void **state)
{
    pair *items = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(OLM_ARRAY_PUSH_SLOT(items, n, cap), 0);
    pair *before = items;
    assert_int_equal(OLM_ARRAY_RESERVE(items, cap, SIZE_MAX / 2), -1);
    assert_ptr_equal(items, before);
    assert_int_equal(cap, 8);
    free(items);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_and_grow),
        cmocka_unit_test(test_overflow_leaves_the_array_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
