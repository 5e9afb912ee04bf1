/* gocompat_quote: utf8.DecodeRune and strconv.Quote.  Expected texts are Go's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gocompat.h"

static void test_utf8_decode(void **state)
{
    (void)state;
    static const struct { const char *s; size_t n, want; uint32_t cp; } cases[] = {
        {"a", 1, 1, 'a'},
        {"\xc3\xa9", 2, 2, 0xE9},
        {"\xe2\x80\xa8", 3, 3, 0x2028},
        {"\xf0\x9f\x98\x80", 4, 4, 0x1F600},
        {"\xf4\x8f\xbf\xbf", 4, 4, 0x10FFFF},
        {"\xc0\x80", 2, 0, 0},          /* overlong */
        {"\xe0\x80\xaf", 3, 0, 0},      /* overlong */
        {"\xed\xa0\x80", 3, 0, 0},      /* surrogate */
        {"\xf4\x90\x80\x80", 4, 0, 0},  /* above U+10FFFF */
        {"\xe2\x80", 2, 0, 0},          /* truncated */
        {"\x80", 1, 0, 0},              /* stray continuation byte */
        {"\xff", 1, 0, 0},
        {"\xc3\x28", 2, 0, 0},          /* bad continuation byte */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = 0;
        size_t n = gocompat_utf8_decode((const unsigned char *)cases[i].s, cases[i].n, &cp);
        assert_int_equal(n, cases[i].want);
        if (n)
            assert_int_equal(cp, cases[i].cp);
    }
}

static void expect_quote(const char *in, size_t len, unsigned flags, const char *want)
{
    strbuf sb = STRBUF_INIT;
    assert_int_equal(gocompat_quote(&sb, in, len, flags), 0);
    assert_string_equal(strbuf_str(&sb), want);
    strbuf_free(&sb);
}

#define Q(lit, want) expect_quote(lit, sizeof lit - 1, 0, want)
#define QA(lit, want) expect_quote(lit, sizeof lit - 1, GOCOMPAT_QUOTE_ASCII_ONLY, want)

static void test_quote(void **state)
{
    (void)state;
    Q("", "\"\"");
    Q("abc", "\"abc\"");
    Q("a\"b\\c'", "\"a\\\"b\\\\c'\"");
    Q("\a\b\f\n\r\t\v", "\"\\a\\b\\f\\n\\r\\t\\v\"");
    Q("\x01\x1f\x7f", "\"\\x01\\x1f\\x7f\"");
    Q("nul\0byte", "\"nul\\x00byte\"");
    Q("<&> caf\xc3\xa9 \xf0\x9f\x98\x80", "\"<&> caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    Q("\xc2\x80\xc2\xa0\xc2\xad", "\"\\u0080\\u00a0\\u00ad\"");
    Q("\xe2\x80\xa8\xe2\x80\x8b\xef\xbb\xbf\xe3\x80\x80", "\"\\u2028\\u200b\\ufeff\\u3000\"");
    Q("\xee\x80\x80\xf3\xb0\x80\x80", "\"\\ue000\\U000f0000\"");
    Q("bad\xff\xc3(", "\"bad\\xff\\xc3(\"");
    Q("\xed\xa0\x80", "\"\\xed\\xa0\\x80\"");
}

/* The CRD upgrade-safety flavour: ASCII as Go does, every other byte as it is. */
static void test_quote_ascii_only(void **state)
{
    (void)state;
    QA("a\"b\\c\n\x01\x7f", "\"a\\\"b\\\\c\\n\\x01\\x7f\"");
    QA("\xc2\xa0\xff\xe2\x80\xa8", "\"\xc2\xa0\xff\xe2\x80\xa8\"");
}

/* Moved from openshift/tests/test_upgradeable.c (upstream quotes bundle and
 * ClusterExtension names with %q). */
static void test_go_quote_upgradeable(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"abc", "\"abc\""},          {"a\"b\\", "\"a\\\"b\\\\\""},   {"\t\x01\x7f", "\"\\t\\x01\\x7f\""},
        {"\xc3\xa9", "\"\xc3\xa9\""}, {"\xff", "\"\\xff\""},         {"\xc2\xa0", "\"\\u00a0\""},
        {"\xe2\x80\xa8", "\"\\u2028\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strbuf sb = STRBUF_INIT;
        assert_int_equal(gocompat_quote(&sb, cases[i].in, strlen(cases[i].in), 0), 0);
        assert_string_equal(strbuf_str(&sb), cases[i].out);
        strbuf_free(&sb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_decode),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_quote_ascii_only),
        cmocka_unit_test(test_go_quote_upgradeable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
