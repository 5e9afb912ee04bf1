/* olm_base64: see olm_base64.h.
 *
 * EVP_DecodeBlock does the arithmetic but is a poor validator: it wants whole
 * four-character groups, decodes '=' as zero bits (so its length counts the bytes the
 * padding stands for) and skips some whitespace at either end only.  So the input is
 * checked and normalised here first (alphabet, padding only at the end, whitespace
 * dropped, URL alphabet mapped, missing padding added), and the padding is subtracted
 * from EVP's length afterwards. */
#include "olm_base64.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include <openssl/evp.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The standard-alphabet character for c, or 0 when c is not base64 under `flags`. */
static char std_char(char c, unsigned flags)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/')
        return c;
    if (flags & OLM_BASE64_URL) {
        if (c == '-')
            return '+';
        if (c == '_')
            return '/';
    }
    return 0;
}

/* Frees `scratch` and returns NULL with errno e; the caller has set the message. */
static char *fail(int e, void *scratch)
{
    free(scratch);
    errno = e;
    return NULL;
}

char *olm_base64_decode(const char *in, size_t len, unsigned flags, size_t *out_len, olm_error *err)
{
    /* EVP counts in int; a quarter of INT_MAX is far beyond any Secret or kubeconfig. */
    if (len > INT_MAX / 2) {
        olm_error_set(err, "invalid base64: input too large");
        return fail(EINVAL, NULL);
    }
    char *norm = malloc(len + 4); /* data characters + up to 3 '=' + NUL */
    if (!norm) {
        olm_error_set(err, "out of memory");
        return fail(ENOMEM, NULL);
    }
    size_t ndata = 0, npad = 0;
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        if ((flags & OLM_BASE64_SPACE) && is_space(c))
            continue;
        if (c == '=') {
            npad++;
            continue;
        }
        char s = std_char(c, flags);
        if (!s || npad) { /* not base64, or data after padding */
            olm_error_set(err, "invalid base64 at offset %zu", i);
            return fail(EINVAL, norm);
        }
        norm[ndata++] = s;
    }
    size_t rest = ndata % 4;
    if (rest == 1) { /* one lone character carries no whole byte */
        olm_error_set(err, "invalid base64: truncated input");
        return fail(EINVAL, norm);
    }
    size_t need = rest ? 4 - rest : 0;
    if (!(flags & OLM_BASE64_UNPADDED) && npad != need) {
        olm_error_set(err, "invalid base64: wrong padding");
        return fail(EINVAL, norm);
    }
    for (size_t i = 0; i < need; i++)
        norm[ndata + i] = '=';
    size_t quads = (ndata + need) / 4;
    unsigned char *out = malloc(quads * 3 + 1);
    if (!out) {
        olm_error_set(err, "out of memory");
        return fail(ENOMEM, norm);
    }
    int n = quads ? EVP_DecodeBlock(out, (const unsigned char *)norm, (int)(ndata + need)) : 0;
    free(norm);
    if (n < 0 || (size_t)n != quads * 3) { /* cannot happen after the checks above */
        olm_error_set(err, "invalid base64: rejected by the decoder");
        return fail(EINVAL, out);
    }
    /* EVP decoded each '=' as a zero byte. */
    size_t got = (size_t)n - need;
    out[got] = '\0';
    *out_len = got;
    return (char *)out;
}

char *olm_base64_encode(const void *data, size_t len, size_t *out_len, olm_error *err)
{
    /* EVP_EncodeBlock takes and returns an int: 4/3 of the input must fit. */
    if (len > (size_t)INT_MAX / 4 * 3) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (!out) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    int n = EVP_EncodeBlock((unsigned char *)out, data, (int)len); /* NUL-terminates */
    if (out_len)
        *out_len = (size_t)n;
    return out;
}
