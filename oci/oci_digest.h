/* oci_digest: sha256 digests ("sha256:<hex>") of buffers, files and streams. */
#ifndef OLM_OCI_DIGEST_H
#define OLM_OCI_DIGEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "olm_error.h"

/* "sha256:" + 64 lowercase hex + NUL */
#define OCI_DIGEST_BUFSZ 72

/* A streaming sha256.  Owned by the caller: oci_sha256_new, then _update any
 * number of times, then _final (which may be called once), then _free. */
typedef struct oci_sha256 oci_sha256;
oci_sha256 *oci_sha256_new(void); /* NULL on OOM */
int oci_sha256_update(oci_sha256 *h, const void *data, size_t len);
int oci_sha256_final(oci_sha256 *h, char out[OCI_DIGEST_BUFSZ]);
void oci_sha256_free(oci_sha256 *h);

int oci_sha256_buf(const void *data, size_t len, char out[OCI_DIGEST_BUFSZ]);
/* Digest of a file's content; *size_out (if not NULL) gets its length. */
int oci_sha256_file(const char *path, char out[OCI_DIGEST_BUFSZ], uint64_t *size_out,
                    olm_error *err);
/* Digest of a stream from its current position to EOF. */
int oci_sha256_stream(FILE *f, char out[OCI_DIGEST_BUFSZ], uint64_t *size_out, olm_error *err);
/* Accepts exactly "sha256:" + 64 lowercase hex (the only algorithm we produce or verify). */
int oci_digest_validate(const char *digest, olm_error *err);

#endif
