/* gocompat_json_scan: encoding/json's syntax errors, string decoding and the
 * compact form of a json.RawMessage.  Expected texts are Go 1.26's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gocompat.h"

static void expect_syntax(const char *in, size_t len, const char *want)
{
    strbuf msg = STRBUF_INIT;
    int rc = gocompat_json_check(in, len, &msg);
    if (!want) {
        if (rc != 0)
            fail_msg("%s: unexpected error %s", in, strbuf_str(&msg));
    } else {
        assert_int_equal(rc, -1);
        assert_string_equal(strbuf_str(&msg), want);
    }
    strbuf_free(&msg);
}

#define CHECK(lit, want) expect_syntax(lit, sizeof lit - 1, want)

static void test_check(void **state)
{
    (void)state;
    CHECK("{\"a\": [1, -2.5e+3, true, false, null, \"s\\u00e9\\n\"], \"b\": {}}", NULL);
    CHECK(" \t\r\n 0 ", NULL);
    CHECK("abc", "invalid character 'a' looking for beginning of value");
    CHECK("{\"a\" 1}", "invalid character '1' after object key");
    CHECK("[1,]", "invalid character ']' looking for beginning of value");
    CHECK("\"abc", "unexpected end of JSON input");
    CHECK("01", "invalid character '1' after top-level value");
    CHECK("trux", "invalid character 'x' in literal true (expecting 'e')");
    CHECK("falsy", "invalid character 'y' in literal false (expecting 'e')");
    CHECK("\"\\x\"", "invalid character 'x' in string escape code");
    CHECK("\"\\u12g4\"", "invalid character 'g' in \\u hexadecimal character escape");
    CHECK("\"a\nb\"", "invalid character '\\n' in string literal");
    CHECK("1.x", "invalid character 'x' after decimal point in numeric literal");
    CHECK("-a", "invalid character 'a' in numeric literal");
    CHECK("1e+x", "invalid character 'x' in exponent of numeric literal");
    CHECK("{\"a\":1,}", "invalid character '}' looking for beginning of object key string");
    CHECK("{1:2}", "invalid character '1' looking for beginning of object key string");
    CHECK("[1 2]", "invalid character '2' after array element");
    CHECK("{\"a\":1 \"b\"}", "invalid character '\"' after object key:value pair");
    CHECK("\xc3\xa9", "invalid character '\xc3\x83' looking for beginning of value");
    CHECK("'", "invalid character '\\'' looking for beginning of value");
    CHECK("\0", "invalid character '\\x00' looking for beginning of value");
    CHECK("[1]x", "invalid character 'x' after top-level value");
    CHECK("[", "unexpected end of JSON input");
    CHECK("", "unexpected end of JSON input");
    CHECK("  ", "unexpected end of JSON input");
}

static void test_value_end(void **state)
{
    (void)state;
    const char *s = "  {\"a\": [1, \"]\"]} , 12.5e3 ]";
    size_t len = strlen(s);
    assert_int_equal(gocompat_json_value_end(s, len, 0), 17);
    assert_int_equal(gocompat_json_value_end(s, len, 19), 26);
}

static void test_unquote(void **state)
{
    (void)state;
    const char *s = "x \"a\\u00e9\\ud83d\\ude00\\ud800x\\udc00\\n\\/\\\"\\b\\f\\r\\t\xff\" y";
    strbuf out = STRBUF_INIT;
    assert_int_equal(gocompat_json_unquote(s, strlen(s), 2, &out), 0);
    assert_string_equal(strbuf_str(&out),
                        "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\xef\xbf\xbd\n/\"\b\f\r\t\xef\xbf\xbd");
    strbuf_reset(&out);
    assert_int_equal(gocompat_json_unquote("\"nul\\u0000\"", 11, 0, &out), 0);
    assert_int_equal(out.len, 4);
    assert_memory_equal(out.data, "nul\0", 4);
    strbuf_free(&out);
}

/* json.Marshal(json.RawMessage(raw)): compacted, with HTML and U+2028/2029 escaped
 * (outside strings too, where only whitespace can be dropped). */
static void test_compact(void **state)
{
    (void)state;
    const char *raw = "{ \"a\" : \"<b>&\" , \"c\":[1, 2], \"d\": \"\xe2\x80\xa8\\u2029 \\\" x\" }";
    strbuf out = STRBUF_INIT;
    assert_int_equal(gocompat_json_compact(&out, raw, strlen(raw)), 0);
    assert_string_equal(strbuf_str(&out),
                        "{\"a\":\"\\u003cb\\u003e\\u0026\",\"c\":[1,2],\"d\":\"\\u2028\\u2029 \\\" x\"}");
    strbuf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_value_end),
        cmocka_unit_test(test_unquote),
        cmocka_unit_test(test_compact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
