/* The JSON fast path against jansson: whatever the fast parser accepts, jansson must
 * accept with the same flags and give an equal value after the same number of bytes;
 * what jansson rejects, the fast parser must decline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fbc.h"
#include "fbc_internal.h"
#include "strbuf.h"

#define JANSSON_FLAGS (JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL)

/* Returns whether the fast path took the input. */
static bool check_same(const char *in, size_t len)
{
    size_t used = 0;
    strbuf scratch = STRBUF_INIT;
    json_t *fast = fbc_json_fast_object(in, len, &scratch, &used);
    strbuf_free(&scratch);
    json_error_t jerr;
    json_t *slow = json_loadb(in, len, JANSSON_FLAGS, &jerr);
    if (fast) {
        if (!slow)
            fail_msg("fast path accepted what jansson rejects (%s): %.200s", jerr.text, in);
        if (!json_equal(fast, slow))
            fail_msg("fast path and jansson disagree on: %.200s", in);
        if (used != (size_t)jerr.position)
            fail_msg("fast path used %zu bytes, jansson %d: %.200s", used, jerr.position, in);
    }
    json_decref(fast);
    json_decref(slow);
    return fast != NULL;
}

static void test_fast_path_takes_plain_objects(void **state)
{
    (void)state;
    static const char *const taken[] = {
        "{}",
        "{ }",
        "{\"a\":1}",
        "{\"a\" : [ 1 , 2.5 , -0 , -0.0 , 1e3 , 1E+3 , 2e-3 , 0.000001 , 1e-400 ] }",
        "{\"s\":\"plain\",\"t\":true,\"f\":false,\"n\":null}",
        "{\"esc\":\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"}",
        "{\"u\":\"\\u00e9\\u4e2d\\ud83d\\ude00\\u2028\"}",
        "{\"utf8\":\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 \x7f\"}",
        "{\"k\\u00e9y\":{\"n\\\"ested\":[{\"deep\":[[[]]]}]}}",
        "{\"dup\":1,\"dup\":2}",
        "{\"big\":123456789012345678901234567890,\"neg\":-12.5e10}",
        "{\"a\":1}\n{\"b\":2}",
        "{\"a\":1} trailing",
        "{\"\":\"empty key\"}",
    };
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        if (!check_same(taken[i], strlen(taken[i])))
            fail_msg("fast path declined: %s", taken[i]);
}

static void test_fast_path_declines_odd_or_broken_input(void **state)
{
    (void)state;
    static const char *const declined[] = {
        "{\"a\":1,}",            /* trailing comma */
        "{\"a\" 1}",             /* missing colon */
        "{a:1}",                 /* unquoted key */
        "{\"a\":01}",            /* leading zero */
        "{\"a\":1.}",            /* no fraction digits */
        "{\"a\":.5}",
        "{\"a\":-}",
        "{\"a\":1e}",
        "{\"a\":1x}",
        "{\"a\":1e400}",         /* overflow: jansson's "real number overflow" */
        "{\"a\":truex}",
        "{\"a\":nul}",
        "{\"a\":\"\\x\"}",       /* bad escape */
        "{\"a\":\"\\u12\"}",
        "{\"a\":\"\\ud800\"}",   /* lone high surrogate */
        "{\"a\":\"\\udc00\"}",   /* lone low surrogate */
        "{\"a\":\"\\ud800\\u0041\"}",
        "{\"a\":\"\\u0000\"}",   /* NUL: jansson takes it (JSON_ALLOW_NUL), the fast path leaves it */
        "{\"\\u0000\":1}",       /* NUL in a key: jansson's error */
        "{\"a\":\"tab\there\"}", /* raw control byte */
        "{\"a\":\"\xc0\xaf\"}",  /* overlong */
        "{\"a\":\"\xed\xa0\x80\"}", /* encoded surrogate */
        "{\"a\":\"\xf4\x90\x80\x80\"}", /* > U+10FFFF */
        "{\"a\":\"\xe4\xb8\"}",  /* truncated */
        "{\"a\":\"unterminated",
        "{\"a\":[1,2}",
        "{\"a\":1",
        "[1]",
        "{\"a\":\xc3\xa9}",
    };
    for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++)
        if (check_same(declined[i], strlen(declined[i])))
            fail_msg("fast path took: %s", declined[i]);
    /* Declined, not truncated: the length bounds every read. */
    const char *cut = "{\"a\":\"bc\"}";
    for (size_t n = 0; n < strlen(cut); n++)
        if (check_same(cut, n))
            fail_msg("fast path took a prefix of %zu bytes", n);
}

static void test_deep_nesting_falls_back(void **state)
{
    (void)state;
    size_t depth = 1500, n = 0;
    char *s = malloc(depth * 6 + 16);
    assert_non_null(s);
    for (size_t i = 0; i < depth; i++)
        n += (size_t)sprintf(s + n, "{\"a\":");
    n += (size_t)sprintf(s + n, "1");
    for (size_t i = 0; i < depth; i++)
        s[n++] = '}';
    assert_false(check_same(s, n)); /* jansson still decodes it for the loader */
    free(s);
}

/* Random one- to three-byte edits of a catalog-like blob (a fixed-seed generator, so
 * runs repeat): on every one, the fast path either declines or agrees with jansson. */
static void test_mutations_agree_with_jansson(void **state)
{
    (void)state;
    static const char base[] =
        "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1.0.0\",\"image\":\"r/p:1\","
        "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.0\"}},"
        "{\"type\":\"x\",\"value\":[1,-0,2.5e-3,1E+21,0.1,true,false,null,\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\"]}],"
        "\"d\":\"\xc3\xa9\xe4\xb8\xad line\\nnext\"}";
    static const char alphabet[] = "\"\\{}[],:u01\x01\x80\xc3\xff \ne-.+d8x/tn";
    uint32_t seed = 12345;
    size_t taken = 0;
    char buf[sizeof base + 8];
    for (int it = 0; it < 20000; it++) {
        size_t n = sizeof base - 1;
        memcpy(buf, base, n);
        int edits = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
        for (int e = 0; e < edits && n > 0; e++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % n;
            char c = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            switch ((seed >> 4) % 3) {
            case 0: buf[at] = c; break;
            case 1:
                if (n < sizeof buf) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = c;
                    n++;
                }
                break;
            default:
                memmove(buf + at, buf + at + 1, n - at - 1);
                n--;
            }
        }
        taken += check_same(buf, n);
    }
    /* Many edits keep the blob valid (inside strings): make sure both kinds were seen. */
    assert_true(taken > 1000 && taken < 19000);
}

/* Every normalised line of a real catalog, through both parsers. */
static void test_real_catalog_lines(void **state)
{
    (void)state;
    const char *sh = getenv("OLMV1_SHARED");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs-small/sample20", sh && *sh ? sh : "../../../shared");
    olm_error err;
    fbc_catalog *c = fbc_load_dir(dir, &err);
    if (!c)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < c->nmetas; i++)
        if (!check_same(c->metas[i].line, c->metas[i].line_len))
            fail_msg("fast path declined line %zu", i);
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_path_takes_plain_objects),
        cmocka_unit_test(test_fast_path_declines_odd_or_broken_input),
        cmocka_unit_test(test_deep_nesting_falls_back),
        cmocka_unit_test(test_mutations_agree_with_jansson),
        cmocka_unit_test(test_real_catalog_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
