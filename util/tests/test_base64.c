/* olm_base64: round trips, the padding arithmetic around EVP_DecodeBlock, and what each
 * flag lets through. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "olm_base64.h"

static void expect_decode(const char *in, unsigned flags, const char *want, size_t want_len)
{
    olm_error err = {""};
    size_t n = 99;
    char *out = olm_base64_decode(in, strlen(in), flags, &n, &err);
    if (!out)
        fail_msg("decoding \"%s\": %s", in, err.msg);
    assert_int_equal(n, want_len);
    assert_memory_equal(out, want, want_len);
    assert_int_equal(out[n], '\0');
    free(out);
}

static void expect_bad(const char *in, unsigned flags, const char *want_msg)
{
    olm_error err = {""};
    size_t n = 0;
    errno = 0;
    assert_null(olm_base64_decode(in, strlen(in), flags, &n, &err));
    assert_int_equal(errno, EINVAL);
    if (strcmp(err.msg, want_msg) != 0)
        fail_msg("decoding \"%s\": got \"%s\", want \"%s\"", in, err.msg, want_msg);
}

static void test_round_trip(void **state)
{
    (void)state;
    unsigned char bytes[256];
    for (int i = 0; i < 256; i++)
        bytes[i] = (unsigned char)i;
    /* Every length mod 3, so every amount of padding. */
    for (size_t len = 0; len <= sizeof bytes; len++) {
        olm_error err;
        size_t elen = 0, dlen = 0;
        char *enc = olm_base64_encode(bytes, len, &elen, &err);
        assert_non_null(enc);
        assert_int_equal(elen, strlen(enc));
        assert_int_equal(elen, (len + 2) / 3 * 4);
        char *dec = olm_base64_decode(enc, elen, 0, &dlen, &err);
        assert_non_null(dec);
        assert_int_equal(dlen, len);
        assert_memory_equal(dec, bytes, len);
        free(enc);
        free(dec);
    }
}

static void test_known_values(void **state)
{
    (void)state;
    olm_error err;
    char *e = olm_base64_encode("user:pass", 9, NULL, &err);
    assert_string_equal(e, "dXNlcjpwYXNz");
    free(e);
    e = olm_base64_encode("a", 1, NULL, &err);
    assert_string_equal(e, "YQ==");
    free(e);
    e = olm_base64_encode("", 0, NULL, &err);
    assert_string_equal(e, "");
    free(e);
    expect_decode("", 0, "", 0);
    expect_decode("YQ==", 0, "a", 1);
    expect_decode("YWI=", 0, "ab", 2);
    expect_decode("YWJj", 0, "abc", 3);
    expect_decode("AAA=", 0, "\0\0", 2); /* padding is not confused with decoded zeros */
}

static void test_strict(void **state)
{
    (void)state;
    expect_bad("YQ", 0, "invalid base64: wrong padding");
    expect_bad("YQ=", 0, "invalid base64: wrong padding");
    expect_bad("YWJj=", 0, "invalid base64: wrong padding");
    expect_bad("YQ==YQ==", 0, "invalid base64 at offset 4"); /* EVP alone would take this */
    expect_bad("Y", 0, "invalid base64: truncated input");
    expect_bad("YQ==\n", 0, "invalid base64 at offset 4");
    expect_bad("Y Q==", 0, "invalid base64 at offset 1");
    expect_bad("_-8=", 0, "invalid base64 at offset 0");
    expect_bad("not*base64", 0, "invalid base64 at offset 3");
}

static void test_lenient(void **state)
{
    (void)state;
    unsigned loose = OLM_BASE64_UNPADDED | OLM_BASE64_URL | OLM_BASE64_SPACE;
    expect_decode("YQ", OLM_BASE64_UNPADDED, "a", 1);
    expect_decode("YWI", OLM_BASE64_UNPADDED, "ab", 2);
    expect_decode("YQ=", OLM_BASE64_UNPADDED, "a", 1);
    expect_decode("_-8=", OLM_BASE64_URL, "\xff\xef", 2);
    expect_decode(" YW\nJj\r\n\tZA== \n", OLM_BASE64_SPACE, "abcd", 4);
    expect_decode("Q0EgUEVNCg", loose, "CA PEM\n", 7);
    expect_bad("YQ==Y", loose, "invalid base64 at offset 4");
    expect_bad("!!notbase64", loose, "invalid base64 at offset 0");
    expect_bad("YWJjZ", loose, "invalid base64: truncated input");
    expect_bad("YQ", OLM_BASE64_URL | OLM_BASE64_SPACE, "invalid base64: wrong padding");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_strict),
        cmocka_unit_test(test_lenient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
