/* render_hash: Go json.Encoder-compatible encoding, DeepHash and object names. */
#include "render.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "fbc_internal.h" /* fbc_format_float64: Go's float64 text */

static int put_string(strbuf *out, const char *s, size_t n, unsigned flags)
{
    static const char hex[] = "0123456789abcdef";
    if (strbuf_putc(out, '"') < 0)
        return -1;
    size_t start = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char ubuf[7];
        size_t width = 1;
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c < 0x20 || ((flags & GOJSON_ESCAPE_HTML) && (c == '<' || c == '>' || c == '&'))) {
            ubuf[0] = '\\', ubuf[1] = 'u', ubuf[2] = '0', ubuf[3] = '0';
            ubuf[4] = hex[c >> 4], ubuf[5] = hex[c & 15], ubuf[6] = '\0';
            esc = ubuf;
        } else if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {
            /* U+2028/U+2029: Go escapes them whatever the HTML setting (JSONP safety). */
            esc = (unsigned char)s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
            width = 3;
        }
        if (esc) {
            if (strbuf_append(out, s + start, i - start) < 0 || strbuf_puts(out, esc) < 0)
                return -1;
            i += width;
            start = i;
        } else {
            i++;
        }
    }
    if (strbuf_append(out, s + start, n - start) < 0)
        return -1;
    return strbuf_putc(out, '"');
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int put_object(const json_t *v, unsigned flags, strbuf *out)
{
    size_t n = json_object_size(v), k = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys)
        return -1;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) keys[k++] = key;
    if (flags & GOJSON_SORT_KEYS)
        qsort(keys, n, sizeof *keys, cmp_keys);
    int rc = strbuf_putc(out, '{');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if ((i && strbuf_putc(out, ',') < 0) || put_string(out, keys[i], strlen(keys[i]), flags) < 0 ||
            strbuf_putc(out, ':') < 0 || gojson_encode(json_object_get(v, keys[i]), flags, out) < 0)
            rc = -1;
    }
    free(keys);
    return rc < 0 ? -1 : strbuf_putc(out, '}');
}

int gojson_encode(const json_t *v, unsigned flags, strbuf *out)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return put_object(v, flags, out);
    case JSON_ARRAY: {
        if (strbuf_putc(out, '[') < 0)
            return -1;
        for (size_t i = 0; i < json_array_size(v); i++)
            if ((i && strbuf_putc(out, ',') < 0) || gojson_encode(json_array_get(v, i), flags, out) < 0)
                return -1;
        return strbuf_putc(out, ']');
    }
    case JSON_STRING: return put_string(out, json_string_value(v), json_string_length(v), flags);
    case JSON_INTEGER: return strbuf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL: {
        double f = json_real_value(v);
        if (!isfinite(f))
            return -1;
        char num[64];
        fbc_format_float64(f, num, sizeof num);
        return strbuf_puts(out, num);
    }
    case JSON_TRUE: return strbuf_puts(out, "true");
    case JSON_FALSE: return strbuf_puts(out, "false");
    default: return strbuf_puts(out, "null");
    }
}

/* Big-endian bytes to base 36 by repeated long division; the number is small
 * (28 bytes), so this is simpler than pulling in BIGNUM. */
static void base36(const unsigned char *in, size_t n, char out[RENDER_HASH_MAX])
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    unsigned char num[64];
    char rev[RENDER_HASH_MAX];
    size_t nd = 0;
    memcpy(num, in, n);
    for (;;) {
        int zero = 1;
        unsigned rem = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned cur = rem * 256 + num[i];
            num[i] = (unsigned char)(cur / 36);
            rem = cur % 36;
            zero &= num[i] == 0;
        }
        rev[nd++] = digits[rem];
        if (zero || nd == RENDER_HASH_MAX - 1)
            break;
    }
    for (size_t i = 0; i < nd; i++)
        out[i] = rev[nd - 1 - i];
    out[nd] = '\0';
}

int render_deep_hash(const json_t *v, char out[RENDER_HASH_MAX], olm_error *err)
{
    strbuf sb = STRBUF_INIT;
    if (gojson_encode(v, GOJSON_ESCAPE_HTML, &sb) < 0 || strbuf_putc(&sb, '\n') < 0) {
        strbuf_free(&sb);
        return olm_error_set(err, "computing object name hash: out of memory or non-finite number");
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = EVP_Digest(sb.data, sb.len, md, &mdlen, EVP_sha224(), NULL);
    strbuf_free(&sb);
    if (!ok || mdlen != 28)
        return olm_error_set(err, "computing object name hash: SHA-224 failed");
    base36(md, mdlen, out);
    return 0;
}

char *render_object_name(const char *base, const char *suffix)
{
    size_t bl = strlen(base), sl = strlen(suffix);
    if (bl + sl > 63)
        bl = sl + 1 < 63 ? 63 - sl - 1 : 0;
    char *name = malloc(bl + sl + 2);
    if (!name)
        return NULL;
    memcpy(name, base, bl);
    name[bl] = '-';
    memcpy(name + bl + 1, suffix, sl + 1);
    return name;
}

/* Copies a []string field of a PolicyRule; NULL-safe.  Returns 1 copied, 0 when
 * absent/empty (omitted), -1 on a wrong type or OOM. */
static int copy_strings(json_t *dst, const json_t *rule, const char *key, int keep_empty,
                        olm_error *err)
{
    json_t *src = json_object_get(rule, key);
    if (!src || json_is_null(src)) {
        if (keep_empty && json_object_set_new(dst, key, json_null()) < 0)
            return olm_error_set(err, "out of memory");
        return 0;
    }
    if (!json_is_array(src))
        return olm_error_set(err, "invalid permission rule: %s must be a list of strings", key);
    for (size_t i = 0; i < json_array_size(src); i++)
        if (!json_is_string(json_array_get(src, i)))
            return olm_error_set(err, "invalid permission rule: %s must be a list of strings", key);
    if (json_array_size(src) == 0 && !keep_empty)
        return 0;
    json_t *copy = json_deep_copy(src);
    if (!copy || json_object_set_new(dst, key, copy) < 0)
        return olm_error_set(err, "out of memory");
    return 1;
}

static json_t *normalise_rule(const json_t *rule, olm_error *err)
{
    static const char *const optional[] = {"apiGroups", "resources", "resourceNames", "nonResourceURLs"};
    if (!json_is_object(rule)) {
        olm_error_set(err, "invalid permission rule: expected an object");
        return NULL;
    }
    json_t *r = json_object();
    if (!r) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    /* Go: Verbs has no omitempty, so a nil slice is null and an empty one is []. */
    if (copy_strings(r, rule, "verbs", 1, err) < 0)
        goto fail;
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
        if (copy_strings(r, rule, optional[i], 0, err) < 0)
            goto fail;
    return r;
fail:
    json_decref(r);
    return NULL;
}

json_t *render_permission_normalise(const json_t *perm, const json_t *extra_rule, olm_error *err)
{
    if (!json_is_object(perm)) {
        olm_error_set(err, "invalid permission entry: expected an object");
        return NULL;
    }
    json_t *sa = json_object_get(perm, "serviceAccountName");
    if (sa && !json_is_string(sa) && !json_is_null(sa)) {
        olm_error_set(err, "invalid permission entry: serviceAccountName must be a string");
        return NULL;
    }
    json_t *rules_in = json_object_get(perm, "rules");
    if (rules_in && !json_is_array(rules_in) && !json_is_null(rules_in)) {
        olm_error_set(err, "invalid permission entry: rules must be a list");
        return NULL;
    }
    json_t *out = json_object();
    json_t *rules = (json_is_array(rules_in) || extra_rule) ? json_array() : json_null();
    if (!out || !rules ||
        json_object_set_new(out, "serviceAccountName", json_string(sa && json_is_string(sa) ? json_string_value(sa) : "")) < 0 ||
        json_object_set(out, "rules", rules) < 0) {
        olm_error_set(err, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < json_array_size(rules_in); i++) {
        json_t *r = normalise_rule(json_array_get(rules_in, i), err);
        if (!r || json_array_append_new(rules, r) < 0) {
            if (r)
                olm_error_set(err, "out of memory");
            goto fail;
        }
    }
    if (extra_rule) {
        json_t *r = normalise_rule(extra_rule, err);
        if (!r || json_array_append_new(rules, r) < 0)
            goto fail;
    }
    json_decref(rules);
    return out;
fail:
    json_decref(rules);
    json_decref(out);
    return NULL;
}
