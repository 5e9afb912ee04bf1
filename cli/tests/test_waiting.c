/* Waiting in install and upgrade: the options (waiting is the default,
 * --no-wait only requests, contradictions refused) and where a wait ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cluster_extension.h"
#include "cluster_wait.h"

static int take(extension_write_opts *w, int opt, const char *arg)
{
    cluster_opts conn = {0};
    return extension_write_opts_take(w, &conn, "test", opt, arg);
}

static void test_waits_by_default(void **state)
{
    (void)state;
    extension_write_opts w;
    extension_write_opts_init(&w);
    assert_int_equal(extension_write_opts_check(&w, "test"), 0);
    assert_true(w.wait);
    assert_int_equal(w.timeout, EXTENSION_DEFAULT_TIMEOUT);
    assert_null(w.output);
}

static void test_no_wait_and_timeout(void **state)
{
    (void)state;
    extension_write_opts w;
    extension_write_opts_init(&w);
    assert_int_equal(take(&w, EXTENSION_OPT_NO_WAIT, NULL), 1);
    assert_int_equal(take(&w, EXTENSION_OPT_TIMEOUT, "90s"), 1);
    assert_int_equal(extension_write_opts_check(&w, "test"), 0);
    assert_false(w.wait);
    assert_int_equal(w.timeout, 90);
    /* --wait repeated is fine; --wait with --no-wait is not. */
    extension_write_opts_init(&w);
    assert_int_equal(take(&w, EXTENSION_OPT_WAIT, NULL), 1);
    assert_int_equal(take(&w, EXTENSION_OPT_WAIT, NULL), 1);
    assert_int_equal(take(&w, EXTENSION_OPT_NO_WAIT, NULL), CLI_EXIT_USAGE);
    assert_int_equal(take(&w, EXTENSION_OPT_TIMEOUT, "soon"), CLI_EXIT_USAGE);
}

static void test_dry_run_does_not_wait(void **state)
{
    (void)state;
    extension_write_opts w;
    extension_write_opts_init(&w);
    assert_int_equal(take(&w, EXTENSION_OPT_DRY_RUN, NULL), 1);
    assert_int_equal(extension_write_opts_check(&w, "test"), 0);
    assert_false(w.wait);
    assert_string_equal(w.output, "yaml");
    /* Asked to wait for a dry run: a contradiction. */
    extension_write_opts_init(&w);
    take(&w, EXTENSION_OPT_DRY_RUN, NULL);
    take(&w, EXTENSION_OPT_WAIT, NULL);
    assert_int_equal(extension_write_opts_check(&w, "test"), CLI_EXIT_USAGE);
}

/* Where waiting ends: the resolved version, or a newer one the range admits. */
static void test_arrived(void **state)
{
    (void)state;
    assert_true(cluster_wait_arrived("1.13.0", "1.13.0", "1.13.0"));
    assert_true(cluster_wait_arrived("1.12.0", NULL, ""));
    assert_false(cluster_wait_arrived("1.12.0", "1.13.0", ""));
    assert_false(cluster_wait_arrived("", "1.13.0", ""));
    /* A catalog grew meanwhile: the controller went further, still inside the range. */
    assert_true(cluster_wait_arrived("1.13.1", "1.13.0", ">=1.13, <1.14"));
    assert_true(cluster_wait_arrived("1.13.1", "1.13.0", NULL));
    assert_false(cluster_wait_arrived("1.14.0", "1.13.0", ">=1.13, <1.14"));
    assert_false(cluster_wait_arrived("1.12.9", "1.13.0", ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waits_by_default),
        cmocka_unit_test(test_no_wait_and_timeout),
        cmocka_unit_test(test_dry_run_does_not_wait),
        cmocka_unit_test(test_arrived),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
