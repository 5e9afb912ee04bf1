/* olm_tls_profile: the TLS settings of the daemons' servers, from --tls-profile and the
 * --tls-custom-* flags that cluster-olm-operator passes (upstream's spellings).
 *
 * Profiles are OpenShift's TLS security profiles (openshift/api config/v1
 * TLSSecurityProfile), which follow Mozilla's server side TLS guidelines:
 *   old           TLS 1.0+, the long cipher list (CBC, 3DES included)
 *   intermediate  TLS 1.2+, AEAD ciphers with forward secrecy (the default, as upstream)
 *   modern        TLS 1.3 only
 *   custom        --tls-custom-version (default TLS 1.2), --tls-custom-ciphers (default
 *                 intermediate's), --tls-custom-curves (default OpenSSL's groups)
 * Names are taken in any case ("Intermediate", "intermediate").  Versions: TLSv1.2,
 * VersionTLS12 or 1.2.  Ciphers: IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, what Go
 * and upstream take) or OpenSSL names (ECDHE-RSA-AES128-GCM-SHA256, what OpenShift's profiles
 * list); TLS 1.3 suites (TLS_AES_128_GCM_SHA256) go to TLS 1.3.  Curves: X25519, X448,
 * secp256r1/P-256/prime256v1/CurveP256, secp384r1, secp521r1, and the ML-KEM hybrids
 * (X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024) when this OpenSSL has them.
 *
 * Pure values: no I/O; any thread. */
#ifndef OLMV1_OLM_TLS_PROFILE_H
#define OLMV1_OLM_TLS_PROFILE_H

#include <stddef.h>

#include "olm_error.h"

typedef struct olm_tls_profile {
    char name[16];         /* old, intermediate, modern, custom */
    int min_version;       /* TLS1_VERSION .. TLS1_3_VERSION (OpenSSL's numbers) */
    char ciphers12[2048];  /* OpenSSL cipher list for TLS 1.2 and older */
    char suites13[256];    /* TLS 1.3 ciphersuites; "" keeps OpenSSL's */
    char groups[256];      /* key exchange groups, ':'-joined; "" keeps OpenSSL's */
    char skipped[256];     /* curves asked for that this OpenSSL lacks (dropped), or "" */
} olm_tls_profile;

/* The default: intermediate. */
void olm_tls_profile_default(olm_tls_profile *p);

/* From the flags' values (NULL: not given).  0, or -1 with a one-line msg naming the flag and
 * the value at fault: an unknown profile, version, cipher or curve, a custom flag without
 * --tls-profile custom, or only curves this OpenSSL lacks. */
int olm_tls_profile_from_flags(const char *profile, const char *version, const char *ciphers, const char *curves,
                               olm_tls_profile *out, char *msg, size_t msgsz);

/* Sets the minimum version, ciphers and groups on `ssl_ctx` (an SSL_CTX *).  0, or -1 with err. */
int olm_tls_profile_apply(const olm_tls_profile *p, void *ssl_ctx, olm_error *err);

#endif
