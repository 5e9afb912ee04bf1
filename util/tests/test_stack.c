/* Unit tests for olm_stack: a worker thread's dead stack pages go back to the kernel, and
 * the thread goes on working; the main thread is left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "olm_stack.h"

#define DEEP_FRAMES 64
#define FRAME_BYTES (8 * 1024) /* 64 x 8 KiB: 512 KiB of stack */

/* Recursion that really writes every frame, and returns a checksum of what it wrote. */
static __attribute__((noinline)) unsigned deep(int n)
{
    volatile unsigned char buf[FRAME_BYTES];
    /* The array's address escapes into an empty asm: without it clang keeps only the 16
     * bytes written in a 256-byte frame, and the stack never grows. */
    __asm__ volatile("" : : "r"(buf) : "memory");
    for (size_t i = 0; i < sizeof buf; i += 512)
        buf[i] = (unsigned char)(n + i);
    unsigned sum = n > 0 ? deep(n - 1) : 0;
    return sum + buf[0] + buf[FRAME_BYTES - 512];
}

/* Resident pages of this thread's stack more than 64 KiB below the calling frame. */
static size_t resident_deep_pages(void)
{
    pthread_attr_t a;
    assert_int_equal(pthread_getattr_np(pthread_self(), &a), 0);
    void *addr;
    size_t size;
    assert_int_equal(pthread_attr_getstack(&a, &addr, &size), 0);
    pthread_attr_destroy(&a);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    volatile char here = 0;
    uintptr_t lo = ((uintptr_t)addr + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)&here - 64 * 1024) & ~(page - 1);
    size_t n = (hi - lo) / page;
    unsigned char vec[4096];
    assert_true(n <= sizeof vec);
    assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
    size_t resident = 0;
    for (size_t i = 0; i < n; i++)
        resident += vec[i] & 1;
    return resident;
}

struct result {
    size_t before, after, again;
    unsigned sum1, sum2;
};

static void *worker(void *arg)
{
    struct result *r = arg;
    r->sum1 = deep(DEEP_FRAMES);
    r->before = resident_deep_pages();
    olm_stack_release_unused();
    r->after = resident_deep_pages();
    r->sum2 = deep(DEEP_FRAMES); /* the released pages come back as needed */
    r->again = resident_deep_pages();
    return NULL;
}

static void test_worker_stack_released(void **state)
{
    (void)state;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 2 * 1024 * 1024);
    pthread_t t;
    struct result r = {0};
    assert_int_equal(pthread_create(&t, &a, worker, &r), 0);
    pthread_attr_destroy(&a);
    pthread_join(t, NULL);
    assert_true(r.before >= 64); /* the recursion left ~400 KiB resident */
    assert_int_equal(r.after, 0);
    assert_int_equal(r.sum1, r.sum2);
    assert_true(r.again >= 64);
}

static void test_main_thread_untouched(void **state)
{
    (void)state;
    unsigned s1 = deep(8);
    olm_stack_release_unused(); /* does nothing here, and must not crash */
    assert_int_equal(deep(8), s1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_stack_released),
        cmocka_unit_test(test_main_thread_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
