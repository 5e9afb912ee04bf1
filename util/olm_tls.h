/* olm_tls: what the daemons check and load of their TLS files before they start.
 *
 *  - olm_ca_set: extra certificate authorities (--catalogd-cas-dir, --pull-cas-dir), as
 *    upstream's NewCertPool: trusted in addition to the system store.  A libcurl user
 *    hands olm_ca_set_add_to_ssl_ctx to CURLOPT_SSL_CTX_FUNCTION (curl is built on
 *    OpenSSL here), so the set needs no temporary bundle file and no c_rehash'ed names.
 *  - olm_tls_check_pair: --tls-cert / --tls-key readable, PEM, and a pair, so that a
 *    daemon refuses a bad one in one line before anything listens.
 *
 * A loaded set is immutable; any thread may use it at once (OpenSSL counts references
 * to the certificates atomically). */
#ifndef OLMV1_OLM_TLS_H
#define OLMV1_OLM_TLS_H

#include <stddef.h>

#include "olm_error.h"

typedef struct olm_ca_set olm_ca_set;

olm_ca_set *olm_ca_set_new(olm_error *err); /* NULL on out of memory */
void olm_ca_set_free(olm_ca_set *s);

/* Adds every certificate of every *.crt and *.pem file in `dir` (following symlinks;
 * names starting with '.' are skipped, which leaves out the "..data" directories of
 * Kubernetes Secret and ConfigMap volumes).  -1 with err when the directory cannot be read,
 * a file cannot be read or holds no PEM certificate, or there is no such file at all;
 * each message names the path at fault. */
int olm_ca_set_add_dir(olm_ca_set *s, const char *dir, olm_error *err);
/* The same for one PEM file, whatever its name. */
int olm_ca_set_add_file(olm_ca_set *s, const char *file, olm_error *err);
size_t olm_ca_set_count(const olm_ca_set *s);

/* Adds the set to an SSL_CTX's verification store (`ssl_ctx` is an SSL_CTX *; void here so
 * that callers need no OpenSSL header).  0, or -1 when OpenSSL refuses. */
int olm_ca_set_add_to_ssl_ctx(const olm_ca_set *s, void *ssl_ctx);

/* Reads and matches a certificate and its key.  -1 with err naming the flag and file:
 * "<cert_flag> <path>: cannot open ...", "... holds no PEM certificate", "<key_flag> <path>:
 * holds no PEM private key", "<cert_flag> <path> and <key_flag> <path> do not match". */
int olm_tls_check_pair(const char *cert_flag, const char *cert, const char *key_flag, const char *key,
                       olm_error *err);

#endif
