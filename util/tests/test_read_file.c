/* olm_read_file: contents and length, the size limit, and errors that name the path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "olm_read_file.h"

static char dir[] = "/tmp/olm_read_file_XXXXXX";

static char *path_of(const char *name)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(path_of(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_contents(void **state)
{
    (void)state;
    write_file("text", "hello\n", 6);
    olm_error err;
    size_t len = 0;
    char *s = olm_read_file(path_of("text"), 0, &len, &err);
    assert_non_null(s);
    assert_int_equal(len, 6);
    assert_string_equal(s, "hello\n");
    free(s);
    write_file("empty", "", 0);
    s = olm_read_file(path_of("empty"), 0, NULL, &err);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
    write_file("nul", "a\0b", 3); /* bytes after a NUL still count */
    s = olm_read_file(path_of("nul"), 0, &len, &err);
    assert_int_equal(len, 3);
    assert_memory_equal(s, "a\0b", 4);
    free(s);
}

static void test_big_and_limit(void **state)
{
    (void)state;
    size_t big = 300000; /* several growths past the first guess for a pipe */
    char *data = malloc(big);
    assert_non_null(data);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)('a' + i % 26);
    write_file("big", data, big);
    olm_error err;
    size_t len = 0;
    char *s = olm_read_file(path_of("big"), 0, &len, &err);
    assert_non_null(s);
    assert_int_equal(len, big);
    assert_memory_equal(s, data, big);
    free(s);
    s = olm_read_file(path_of("big"), big, &len, &err); /* exactly the limit is fine */
    assert_non_null(s);
    free(s);
    assert_null(olm_read_file(path_of("big"), big - 1, &len, &err));
    char want[300];
    snprintf(want, sizeof want, "%s is larger than %zu bytes", path_of("big"), big - 1);
    assert_string_equal(err.msg, want);
    free(data);
    /* Not a regular file: no size to go by, read until EOF. */
    s = olm_read_file("/proc/self/status", 0, &len, &err);
    assert_non_null(s);
    assert_true(len > 0 && strstr(s, "Name:") == s);
    free(s);
}

static void test_errors(void **state)
{
    (void)state;
    olm_error err;
    assert_null(olm_read_file(path_of("missing"), 0, NULL, &err));
    char want[300];
    snprintf(want, sizeof want, "cannot open %s: No such file or directory", path_of("missing"));
    assert_string_equal(err.msg, want);
    assert_null(olm_read_file(dir, 0, NULL, &err));
    snprintf(want, sizeof want, "cannot read %s: Is a directory", dir);
    assert_string_equal(err.msg, want);
}

/* olm_read_fd: the rest of an open descriptor, which stays open; messages name `name`. */
static void test_read_fd(void **state)
{
    (void)state;
    write_file("fd", "skip:rest", 9);
    int fd = open(path_of("fd"), O_RDONLY);
    assert_true(fd >= 0);
    char skip[5];
    assert_int_equal(read(fd, skip, 5), 5);
    olm_error err;
    size_t len = 0;
    char *s = olm_read_fd(fd, "fd-name", 0, &len, &err);
    assert_non_null(s);
    assert_int_equal(len, 4);
    assert_string_equal(s, "rest");
    free(s);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0); /* still open */
    s = olm_read_fd(fd, "fd-name", 3, &len, &err);
    assert_null(s);
    assert_int_equal(errno, EFBIG);
    assert_non_null(strstr(err.msg, "fd-name is larger than 3 bytes"));
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contents),
        cmocka_unit_test(test_big_and_limit),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_read_fd),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
