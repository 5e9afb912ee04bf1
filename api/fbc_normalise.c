/* fbc_normalise: a blob's normalised line, byte for byte what catalogd writes to
 * catalog.jsonl (spec §4.3): Go's encoding/json on a map[string]interface{}
 * with SetEscapeHTML(false).
 *
 *  - object keys sorted bytewise, compact separators;
 *  - numbers are float64 and printed with the shortest digits that read back to
 *    the same double, in plain notation unless |f| < 1e-6 or >= 1e21, where Go
 *    switches to 1e+21 / 1e-7 (its exponent has no leading zero when negative);
 *  - strings: \" \\ \b \f \n \r \t, other control bytes as \u00XX (lowercase
 *    hex), U+2028/U+2029 escaped, invalid UTF-8 as \ufffd, and <, >, & as is.
 * The encoder itself is gocompat's; this file fixes the flags. */
#include <strings.h>

#include "fbc_internal.h"

int fbc_encode_json(const json_t *v, strbuf *out, fbc_span_marks *marks)
{
    return gocompat_json_encode_marked(out, v, GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_FLOAT64_NUMBERS,
                                       marks);
}

int fbc_meta_keys(const json_t *obj, const char **schema, const char **package, const char **name,
                  olm_error *err)
{
    static const char *const names[3] = {"schema", "package", "name"};
    const char **outs[3] = {schema, package, name};
    const char *seen[3] = {NULL, NULL, NULL};
    *schema = *package = *name = "";
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        for (int i = 0; i < 3; i++) {
            if (strcasecmp(key, names[i]) != 0)
                continue;
            if (seen[i])
                return olm_error_set(err, "duplicate key %s (as \"%s\" and \"%s\")", names[i],
                                     seen[i], key);
            seen[i] = key;
            if (!json_is_string(val))
                return olm_error_set(err, "expected value for key \"%s\" to be a string", key);
            *outs[i] = json_string_value(val);
        }
    }
    return 0;
}
