/* olm_base64: RFC 4648 base64 through OpenSSL's EVP block coder.
 *
 * The strict form (flags 0) is what Kubernetes Secret data and docker "auth" values are:
 * the standard alphabet, '=' padding to a multiple of four characters, nothing else.
 * Kubeconfig *-data values are looser (YAML may fold them, hand-written ones drop the
 * padding), so the decoder takes flags for that. */
#ifndef OLMV1_OLM_BASE64_H
#define OLMV1_OLM_BASE64_H

#include <stddef.h>

#include "olm_error.h"

enum {
    OLM_BASE64_UNPADDED = 1u << 0, /* '=' padding may be missing or incomplete */
    OLM_BASE64_URL = 1u << 1,      /* '-' and '_' are accepted for '+' and '/' */
    OLM_BASE64_SPACE = 1u << 2,    /* whitespace anywhere is skipped */
};

/* Decodes the `len` characters at `in`.  Returns a malloc'd buffer (caller frees) holding
 * *out_len bytes followed by a NUL, so decoded text can be used as a C string (the bytes
 * themselves may contain NULs).  On failure returns NULL with errno EINVAL and err
 * "invalid base64 at offset <n>" / "invalid base64: truncated input" / "invalid base64:
 * wrong padding", or errno ENOMEM and "out of memory". */
char *olm_base64_decode(const char *in, size_t len, unsigned flags, size_t *out_len, olm_error *err);

/* The strict, padded encoding of `len` bytes as a NUL-terminated string (caller frees);
 * *out_len (may be NULL) gets its length.  NULL with err "out of memory" on failure. */
char *olm_base64_encode(const void *data, size_t len, size_t *out_len, olm_error *err);

#endif
