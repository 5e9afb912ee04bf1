/* fuzz_fbc_json_diff: the JSON fast path against jansson on the same bytes.  Whatever the fast
 * path accepts, jansson (with the loader's flags) must accept too, ending after the same
 * number of bytes, with an equal value and the same normalised text; the fast path only ever
 * declines, never decides differently (api/fbc_json_fast.c's contract). */
#include "fbc_internal.h"
#include "fuzz_util.h"

#define JANSSON_FLAGS (JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The fast path's precondition, as fbc_decode_json calls it: an object starts here. */
    if (size == 0 || data[0] != '{')
        return 0;
    const char *in = (const char *)data;
    size_t used = 0;
    strbuf scratch = STRBUF_INIT;
    json_t *fast = fbc_json_fast_object(in, size, &scratch, &used);
    strbuf_free(&scratch);
    if (!fast)
        return 0;
    json_error_t jerr;
    json_t *slow = json_loadb(in, size, JANSSON_FLAGS, &jerr);
    FUZZ_CHECK(slow != NULL, "fast path accepted what jansson rejects: %s", jerr.text);
    FUZZ_CHECK(used == (size_t)jerr.position, "fast path used %zu bytes, jansson %d", used, jerr.position);
    FUZZ_CHECK(json_equal(fast, slow), "fast path and jansson decoded different values");
    strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    FUZZ_CHECK(fbc_encode_json(fast, &a, NULL) == 0 && fbc_encode_json(slow, &b, NULL) == 0, "out of memory");
    FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0, "normalised differently:\n%.*s\n%.*s",
               (int)a.len, a.data, (int)b.len, b.data);
    strbuf_free(&a);
    strbuf_free(&b);
    json_decref(fast);
    json_decref(slow);
    return 0;
}
