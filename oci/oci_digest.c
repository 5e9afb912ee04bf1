/* sha256 digests in the OCI "algorithm:hex" form, via OpenSSL's EVP API. */
#include "oci_digest.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

struct oci_sha256 {
    EVP_MD_CTX *ctx; /* owned */
    int finished;
};

oci_sha256 *oci_sha256_new(void)
{
    oci_sha256 *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
        oci_sha256_free(h);
        return NULL;
    }
    return h;
}

int oci_sha256_update(oci_sha256 *h, const void *data, size_t len)
{
    if (h->finished)
        return -1;
    if (len == 0)
        return 0;
    return EVP_DigestUpdate(h->ctx, data, len) == 1 ? 0 : -1;
}

int oci_sha256_final(oci_sha256 *h, char out[OCI_DIGEST_BUFSZ])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    static const char hex[] = "0123456789abcdef";
    if (h->finished || EVP_DigestFinal_ex(h->ctx, md, &mdlen) != 1 || mdlen != 32)
        return -1;
    h->finished = 1;
    memcpy(out, "sha256:", 7);
    for (unsigned int i = 0; i < mdlen; i++) {
        out[7 + 2 * i] = hex[md[i] >> 4];
        out[8 + 2 * i] = hex[md[i] & 15];
    }
    out[7 + 64] = '\0';
    return 0;
}

void oci_sha256_free(oci_sha256 *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->ctx);
    free(h);
}

int oci_sha256_buf(const void *data, size_t len, char out[OCI_DIGEST_BUFSZ])
{
    oci_sha256 *h = oci_sha256_new();
    if (!h)
        return -1;
    int rc = oci_sha256_update(h, data, len) == 0 && oci_sha256_final(h, out) == 0 ? 0 : -1;
    oci_sha256_free(h);
    return rc;
}

int oci_sha256_stream(FILE *f, char out[OCI_DIGEST_BUFSZ], uint64_t *size_out, olm_error *err)
{
    oci_sha256 *h = oci_sha256_new();
    if (!h)
        return olm_error_set(err, "sha256: out of memory");
    unsigned char buf[64 * 1024];
    uint64_t total = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (oci_sha256_update(h, buf, n) != 0) {
            oci_sha256_free(h);
            return olm_error_set(err, "sha256: digest update failed");
        }
        total += n;
    }
    if (ferror(f)) {
        oci_sha256_free(h);
        return olm_error_set(err, "sha256: read error: %s", strerror(errno));
    }
    int rc = oci_sha256_final(h, out);
    oci_sha256_free(h);
    if (rc != 0)
        return olm_error_set(err, "sha256: digest finalisation failed");
    if (size_out)
        *size_out = total;
    return 0;
}

int oci_sha256_file(const char *path, char out[OCI_DIGEST_BUFSZ], uint64_t *size_out,
                    olm_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return olm_error_set(err, "open %s: %s", path, strerror(errno));
    int rc = oci_sha256_stream(f, out, size_out, err);
    fclose(f);
    if (rc != 0)
        olm_error_wrap(err, "%s", path);
    return rc;
}

int oci_digest_validate(const char *digest, olm_error *err)
{
    if (!digest || strncmp(digest, "sha256:", 7) != 0)
        return olm_error_set(err, "digest \"%s\" is not of the form sha256:<64 hex digits>",
                             digest ? digest : "");
    const char *hex = digest + 7;
    size_t n = strlen(hex);
    if (n != 64)
        return olm_error_set(err, "digest \"%s\" must have 64 hex digits after \"sha256:\", not %zu",
                             digest, n);
    for (size_t i = 0; i < n; i++)
        if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
            return olm_error_set(err, "digest \"%s\" must use lowercase hex digits", digest);
    return 0;
}
