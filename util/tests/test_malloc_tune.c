/* olm_malloc_tune: the GLIBC_TUNABLES value that turns glibc's per-thread cache off, the
 * re-exec that starts the process again with it (run on this test binary itself), and the
 * fixed mmap/trim thresholds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "olm_malloc_tune.h"

static char *self_path; /* argv[0] of this test */

static void test_unset_gets_tcache_off(void **state)
{
    (void)state;
    char out[128];
    assert_int_equal(olm_malloc_tunables_tcache_off(NULL, out, sizeof out), 1);
    assert_string_equal(out, "glibc.malloc.tcache_count=0");
    assert_int_equal(olm_malloc_tunables_tcache_off("", out, sizeof out), 1);
    assert_string_equal(out, "glibc.malloc.tcache_count=0");
}

static void test_other_tunables_are_kept(void **state)
{
    (void)state;
    char out[128];
    assert_int_equal(olm_malloc_tunables_tcache_off("glibc.malloc.arena_max=4", out, sizeof out), 1);
    assert_string_equal(out, "glibc.malloc.arena_max=4:glibc.malloc.tcache_count=0");
}

static void test_operator_choice_stands(void **state)
{
    (void)state;
    char out[128] = "untouched";
    assert_int_equal(olm_malloc_tunables_tcache_off("glibc.malloc.tcache_count=7", out, sizeof out), 0);
    assert_int_equal(olm_malloc_tunables_tcache_off("a=1:glibc.malloc.tcache_count=3:b=2", out, sizeof out), 0);
    assert_string_equal(out, "untouched");
}

static void test_too_small_is_an_error(void **state)
{
    (void)state;
    char out[8];
    assert_int_equal(olm_malloc_tunables_tcache_off(NULL, out, sizeof out), -1);
}

/* The child re-executes this binary with --print-tunables (see main): what the new process
 * sees in its environment comes back through a pipe. */
static char *reexec_child_sees(const char *initial)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        if (initial)
            setenv("GLIBC_TUNABLES", initial, 1);
        else
            unsetenv("GLIBC_TUNABLES");
        char *argv[] = {self_path, "--print-tunables", NULL};
        olm_malloc_reexec_tcache_off(argv);
        printf("not re-executed\n"); /* already set: the process goes on as it is */
        fflush(stdout);
        _exit(0);
    }
    close(fds[1]);
    static char buf[256];
    ssize_t n, got = 0;
    while ((n = read(fds[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
        got += n;
    buf[got] = 0;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return buf;
}

static void test_reexec_starts_again_with_tcache_off(void **state)
{
    (void)state;
    assert_string_equal(reexec_child_sees(NULL), "glibc.malloc.tcache_count=0\n");
    assert_string_equal(reexec_child_sees("glibc.malloc.arena_max=2"),
                        "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0\n");
}

static void test_no_reexec_when_already_set(void **state)
{
    (void)state;
    assert_string_equal(reexec_child_sees("glibc.malloc.tcache_count=0"), "not re-executed\n");
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN
/* In a child (the thresholds are process state): frees a 1 MiB block, then allocates 256 KiB
 * and exits 1 when that block got its own mapping (glibc counts those in hblks), 0 when it
 * came from the heap. */
static int child_big_block_mapped(bool fixed)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (fixed)
            olm_malloc_fixed_thresholds();
        /* Through a volatile sink: clang removes a malloc whose block is never read. */
        static char *volatile sink;
        char *big = malloc(1024 * 1024);
        if (!big)
            _exit(2);
        sink = big;
        sink[0] = 1;
        free(sink);
        size_t before = mallinfo2().hblks;
        char *p = malloc(256 * 1024);
        if (!p)
            _exit(2);
        sink = p;
        sink[0] = 1;
        _exit(mallinfo2().hblks > before ? 1 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_not_equal(WEXITSTATUS(status), 2);
    return WEXITSTATUS(status);
}
#endif

/* glibc's default: freeing the 1 MiB mapped block raised the thresholds, and the next 256 KiB
 * comes from the heap (and its trim threshold is now 2 MiB).  Fixed: it stays a mapping of its
 * own, so the freed 1 MiB block changed nothing. */
static void test_fixed_thresholds_do_not_follow_freed_blocks(void **state)
{
    (void)state;
#ifdef UNDER_ASAN
    skip(); /* ASan's allocator replaces glibc's: no thresholds to test */
#else
    assert_int_equal(child_big_block_mapped(false), 0);
    assert_int_equal(child_big_block_mapped(true), 1);
#endif
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--print-tunables") == 0) {
        const char *v = getenv("GLIBC_TUNABLES");
        printf("%s\n", v ? v : "(unset)");
        return 0;
    }
    self_path = argv[0];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unset_gets_tcache_off),
        cmocka_unit_test(test_other_tunables_are_kept),
        cmocka_unit_test(test_operator_choice_stands),
        cmocka_unit_test(test_too_small_is_an_error),
        cmocka_unit_test(test_reexec_starts_again_with_tcache_off),
        cmocka_unit_test(test_no_reexec_when_already_set),
        cmocka_unit_test(test_fixed_thresholds_do_not_follow_freed_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
