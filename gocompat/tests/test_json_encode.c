/* gocompat_json_encode: encoding/json's output for jansson values, with each
 * caller's flags.  Expected texts are Go 1.26's (json.Marshal, or an Encoder
 * with SetEscapeHTML(false) where the flag is off). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gocompat.h"

static void expect_json_string(const char *in, size_t len, unsigned flags, const char *want)
{
    strbuf sb = STRBUF_INIT;
    assert_int_equal(gocompat_json_string(&sb, in, len, flags), 0);
    assert_string_equal(strbuf_str(&sb), want);
    strbuf_free(&sb);
}

#define S(lit, flags, want) expect_json_string(lit, sizeof lit - 1, flags, want)

static void test_strings(void **state)
{
    (void)state;
    const unsigned html = GOCOMPAT_JSON_ESCAPE_HTML;
    S("plain text", 0, "\"plain text\"");
    S("q\" b\\ \b\f\n\r\t", 0, "\"q\\\" b\\\\ \\b\\f\\n\\r\\t\"");
    S("\x01\x1f\x7f \0", 0, "\"\\u0001\\u001f\x7f \\u0000\"");
    S("<a & b>", 0, "\"<a & b>\"");
    S("<a & b>", html, "\"\\u003ca \\u0026 b\\u003e\"");
    S("\xe2\x80\xa8\xe2\x80\xa9", 0, "\"\\u2028\\u2029\"");
    S("\xe2\x80\xa8\xe2\x80\xa9", html, "\"\\u2028\\u2029\"");
    S("caf\xc3\xa9 \xf0\x9f\x98\x80", html, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    /* Every byte of invalid UTF-8 is one U+FFFD. */
    S("a\xff\xfe" "b\xc3(\xed\xa0\x80", 0, "\"a\\ufffd\\ufffdb\\ufffd(\\ufffd\\ufffd\\ufffd\"");
    S("\xe2\x80", 0, "\"\\ufffd\\ufffd\"");
    /* Before Go 1.22 (the upgradeable properties text): \b and \f spelled out. */
    S("\b\f\n", GOCOMPAT_JSON_LEGACY_BF | html, "\"\\u0008\\u000c\\n\"");
}

/* Long runs go through the word-at-a-time scan: escapes at every offset. */
static void test_strings_long(void **state)
{
    (void)state;
    char in[40], want[64];
    for (size_t at = 0; at < sizeof in; at++) {
        memset(in, 'x', sizeof in);
        in[at] = '<';
        snprintf(want, sizeof want, "\"%.*s\"", (int)sizeof in, in);
        expect_json_string(in, sizeof in, 0, want);
        snprintf(want, sizeof want, "\"%.*s\\u003c%.*s\"", (int)at, in, (int)(sizeof in - at - 1), in + at + 1);
        expect_json_string(in, sizeof in, GOCOMPAT_JSON_ESCAPE_HTML, want);
        in[at] = '\n';
        snprintf(want, sizeof want, "\"%.*s\\n%.*s\"", (int)at, in, (int)(sizeof in - at - 1), in + at + 1);
        expect_json_string(in, sizeof in, 0, want);
    }
}

static char *encode(const char *json, unsigned flags)
{
    json_error_t jerr;
    json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!v)
        fail_msg("bad test JSON %s: %s", json, jerr.text);
    strbuf sb = STRBUF_INIT;
    assert_int_equal(gocompat_json_encode(&sb, v, flags), 0);
    json_decref(v);
    return strbuf_detach(&sb);
}

static void expect_encode(const char *json, unsigned flags, const char *want)
{
    char *got = encode(json, flags);
    assert_string_equal(got, want);
    free(got);
}

static void test_values(void **state)
{
    (void)state;
    const unsigned fbc = GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_FLOAT64_NUMBERS;
    const unsigned marshal = GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML;
    const char *doc = "{\"z\": 1, \"A\": \"<x>\", \"\": [true, false, null], \"b\": {\"d\": 2.50, \"c\": -0.0},"
                      " \"n\": 12345678901234567, \"\\u00e9\": 1e21, \"m\": 1e-7}";
    /* map[string]interface{} after Unmarshal, no HTML escaping: the catalog line. */
    expect_encode(doc, fbc,
                  "{\"\":[true,false,null],\"A\":\"<x>\",\"b\":{\"c\":-0,\"d\":2.5},\"m\":1e-7,"
                  "\"n\":12345678901234568,\"z\":1,\"\xc3\xa9\":1e+21}");
    /* json.Marshal with integers kept. */
    expect_encode(doc, marshal,
                  "{\"\":[true,false,null],\"A\":\"\\u003cx\\u003e\",\"b\":{\"c\":-0,\"d\":2.5},\"m\":1e-7,"
                  "\"n\":12345678901234567,\"z\":1,\"\xc3\xa9\":1e+21}");
    /* A struct: fields in the object's own order. */
    expect_encode(doc, GOCOMPAT_JSON_ESCAPE_HTML,
                  "{\"z\":1,\"A\":\"\\u003cx\\u003e\",\"\":[true,false,null],\"b\":{\"d\":2.5,\"c\":-0},"
                  "\"n\":12345678901234567,\"\xc3\xa9\":1e+21,\"m\":1e-7}");
    /* The CRD upgrade-safety flavour writes a zero float without its sign. */
    expect_encode("[-0.0, 0.0, -1.0]", GOCOMPAT_JSON_LEGACY_ZERO, "[0,0,-1]");
    expect_encode("[]", 0, "[]");
    expect_encode("{}", fbc, "{}");
    expect_encode("\"a\\u0000b\"", 0, "\"a\\u0000b\"");
    expect_encode("-9223372036854775808", 0, "-9223372036854775808");
    expect_encode("-9223372036854775808", fbc, "-9223372036854776000");
}

/* More than 16 keys take the heap path of the sort. */
static void test_many_keys(void **state)
{
    (void)state;
    json_t *o = json_object();
    assert_non_null(o);
    for (int i = 40; i > 0; i--) {
        char k[8];
        snprintf(k, sizeof k, "k%02d", i);
        assert_int_equal(json_object_set_new(o, k, json_integer(i)), 0);
    }
    strbuf sb = STRBUF_INIT;
    assert_int_equal(gocompat_json_encode(&sb, o, GOCOMPAT_JSON_SORT_KEYS), 0);
    assert_true(strncmp(sb.data, "{\"k01\":1,\"k02\":2,", 17) == 0);
    assert_non_null(strstr(sb.data, "\"k39\":39,\"k40\":40}"));
    strbuf_reset(&sb);
    assert_int_equal(gocompat_json_encode(&sb, o, 0), 0);
    assert_true(strncmp(sb.data, "{\"k40\":40,\"k39\":39,", 19) == 0);
    strbuf_free(&sb);
    json_decref(o);
}

/* Marks report where listed nodes were written, in the order listed. */
static void test_marks(void **state)
{
    (void)state;
    json_t *v = json_loads("{\"b\": [1, {\"x\": \"y\"}], \"a\": \"s\"}", 0, NULL);
    assert_non_null(v);
    json_t *arr = json_object_get(v, "b");
    gocompat_json_mark items[3] = {
        {json_object_get(v, "a"), SIZE_MAX, 0},
        {json_array_get(arr, 1), SIZE_MAX, 0},
        {json_object_get(v, "nope"), SIZE_MAX, 0}, /* NULL: never met */
    };
    gocompat_json_marks marks = {items, 3, 3, 0};
    strbuf sb = STRBUF_INIT;
    assert_int_equal(strbuf_puts(&sb, "prefix "), 0);
    assert_int_equal(gocompat_json_encode_marked(&sb, v, GOCOMPAT_JSON_SORT_KEYS, &marks), 0);
    assert_string_equal(sb.data, "prefix {\"a\":\"s\",\"b\":[1,{\"x\":\"y\"}]}");
    assert_int_equal(marks.next, 2);
    assert_int_equal(items[0].start, 12);
    assert_int_equal(items[0].len, 3);
    assert_int_equal(items[1].start, 23);
    assert_int_equal(items[1].len, 9);
    assert_true(items[2].start == SIZE_MAX);
    strbuf_free(&sb);
    json_decref(v);
}

/* The word-at-a-time scan against the plain byte rule, for every byte value at every
 * position of a 24-byte run.  (Moved from api/tests/test_fbc_json_fast.c.) */
static void test_plain_run(void **state)
{
    (void)state;
    unsigned char buf[24];
    for (int v = 0; v < 256; v++) {
        bool plain = v >= 0x20 && v < 0x80 && v != '"' && v != '\\';
        for (size_t at = 0; at < sizeof buf; at++) {
            memset(buf, 'a', sizeof buf);
            buf[at] = (unsigned char)v;
            size_t want = plain ? sizeof buf : at;
            assert_int_equal(gocompat_json_plain_run(buf, sizeof buf), want);
            /* A special byte after another one: the first still stops the run. */
            if (at + 1 < sizeof buf) {
                buf[at + 1] = 0x01;
                assert_int_equal(gocompat_json_plain_run(buf, sizeof buf), plain ? at + 1 : at);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_strings_long),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_plain_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
