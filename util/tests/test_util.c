#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "olm_error.h"
#include "strbuf.h"

static void test_error_set_and_wrap(void **state)
{
    (void)state;
    olm_error err;
    assert_int_equal(olm_error_set(&err, "bad %s at %d", "token", 3), -1);
    assert_string_equal(err.msg, "bad token at 3");
    olm_error_wrap(&err, "parsing %s", "x");
    assert_string_equal(err.msg, "parsing x: bad token at 3");
    assert_int_equal(olm_error_set(NULL, "ignored"), -1);
}

static void test_strbuf_grows(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    assert_string_equal(strbuf_str(&sb), "");
    for (int i = 0; i < 1000; i++)
        assert_int_equal(strbuf_printf(&sb, "%d,", i % 10), 0);
    assert_int_equal(sb.len, 2000);
    assert_memory_equal(sb.data, "0,1,2,", 6);
    char *s = strbuf_detach(&sb);
    assert_null(sb.data);
    assert_int_equal(strlen(s), 2000);
    free(s);
    s = strbuf_detach(&sb);
    assert_string_equal(s, "");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_set_and_wrap),
        cmocka_unit_test(test_strbuf_grows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
