/* catalog_publish: events published from other threads wake the loop and are all taken off
 * the queue there; with no server yet they are dropped (their views released), and the
 * publisher closes leaving no handle on the loop. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "catalog_publish.h"

static catalog_publisher pub;

static void *publisher_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        clustercatalog_publish_event ev = {.kind = CC_PUBLISH_REMOVE, .name = "c"};
        catalog_publisher_publish(&ev, &pub);
    }
    return NULL;
}

static void test_cross_thread_wakeups_drain_everything(void **state)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    catalog_server *srv = NULL;
    olm_error err;
    assert_int_equal(catalog_publisher_init(&pub, &loop, &srv, &err), 0);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, publisher_thread, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    uv_run(&loop, UV_RUN_NOWAIT); /* the wake-up: the loop thread takes the queue */
    assert_null(pub.head);
    assert_null(pub.tail);
    catalog_publisher_close(&pub);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0); /* no handle left behind */
    catalog_publisher_destroy(&pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cross_thread_wakeups_drain_everything)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
