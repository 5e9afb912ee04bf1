/* fuzz_fbc_json: a stream of concatenated JSON values through the loader's JSON decoder (the
 * fast path first, jansson for what it declines) and the normaliser, as catalogd reads a
 * .json catalog file.  Errors are fine; crashes, leaks and UB are not. */
#include "fbc_internal.h"
#include "fuzz_util.h"

static int normalise(void *ud, json_t *obj, int lineno, olm_error *err)
{
    strbuf *out = ud;
    FUZZ_CHECK(json_is_object(obj) && lineno >= 1, "decoder handed over a non-object or line %d", lineno);
    out->len = 0;
    int rc = fbc_encode_json(obj, out, NULL);
    json_decref(obj);
    return rc < 0 ? olm_error_set(err, "out of memory") : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    olm_error err;
    strbuf out = STRBUF_INIT;
    (void)fbc_decode_json((const char *)data, size, "fuzz.json", normalise, &out, false, &err); /* see fuzz_fbc_yaml */
    strbuf_free(&out);
    return 0;
}
