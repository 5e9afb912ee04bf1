/* fuzz_fbc_yaml: a multi-document YAML stream through the loader's YAML decoder (sigs.k8s.io/yaml
 * scalar rules, the alias budget, the nesting limit) and the normaliser, as catalogd reads a
 * .yaml catalog file.  Errors are fine; crashes, leaks and UB are not. */
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
    /* not `consumed`: malloc per value, so ASan sees every use of the decoder's values (the
     * arena path, which the loader takes, is fuzz_fbc_load's) */
    (void)fbc_decode_yaml((const char *)data, size, "fuzz.yaml", normalise, &out, false, &err);
    strbuf_free(&out);
    return 0;
}
