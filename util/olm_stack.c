/* olm_stack: release a worker thread's dead stack pages (olm_stack.h). */
#include "olm_stack.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEEP_BELOW_FRAME (8 * 1024) /* not needed for safety (dead pages come back as zero pages): spares the very next calls a fault */

/* The lowest address of this thread's stack (above its guard page); 1: not known. */
static _Thread_local uintptr_t stack_low;

static uintptr_t find_stack_low(void)
{
    if (getpid() == (pid_t)gettid())
        return 1; /* the main thread's stack grows on demand: its bounds are not fixed */
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return 1;
    void *addr = NULL;
    size_t size = 0, guard = 0;
    int rc = pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_getguardsize(&a, &guard);
    pthread_attr_destroy(&a);
    /* glibc reports the stack above its guard already; skipping a guard's worth more
     * costs nothing and is right whichever way a libc reports it. */
    return rc == 0 && addr ? (uintptr_t)addr + guard : 1;
}

void olm_stack_release_unused(void)
{
    if (!stack_low)
        stack_low = find_stack_low();
    if (stack_low == 1)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    volatile char here = 0;
    uintptr_t frame = (uintptr_t)&here;
    if (frame < stack_low + KEEP_BELOW_FRAME + page)
        return;
    uintptr_t lo = (stack_low + page - 1) & ~(page - 1);
    uintptr_t hi = (frame - KEEP_BELOW_FRAME) & ~(page - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
