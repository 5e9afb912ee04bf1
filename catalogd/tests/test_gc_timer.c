/* clustercatalog_gc_timer's life: started once, stopped for good (no run after), its handle
 * closed so the loop can close; idle is not called when nothing runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "clustercatalog_reconcile.h"

static int idles;
static void on_idle(void *data)
{
    (void)data;
    idles++;
}

static void test_start_once_stop_for_good(void **state)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    clustercatalog_gc_timer t;
    clustercatalog_gc_timer_init(&t, &loop);
    assert_false(t.started);
    clustercatalog_gc_timer_start(&t, NULL, 60000); /* no reconciler: the timer ticks, nothing runs */
    assert_true(t.started);
    assert_false(t.running);
    assert_true(uv_is_active((uv_handle_t *)&t.timer));
    assert_false(clustercatalog_gc_timer_stop(&t, on_idle, NULL)); /* nothing in progress */
    assert_false(uv_is_active((uv_handle_t *)&t.timer));
    t.started = false;
    clustercatalog_gc_timer_start(&t, NULL, 1); /* stopping: never again */
    assert_false(t.started);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(idles, 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_start_once_stop_for_good)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
