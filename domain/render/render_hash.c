/* render_hash: DeepHash over Go json.Encoder bytes (gocompat), and object names. */
#include "render.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"

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
    /* A Go struct: fields in the object's own order, integers as written. */
    if (gocompat_json_encode(&sb, v, GOCOMPAT_JSON_ESCAPE_HTML) < 0 || strbuf_putc(&sb, '\n') < 0) {
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
