/* olm_tls_profile: see the header. */
#include "olm_tls_profile.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

/* openshift/api config/v1 types_tlssecurityprofile.go, TLS 1.2 and older part (OpenSSL names). */
static const char OLD_CIPHERS[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-SHA256:"
    "ECDHE-RSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384:"
    "ECDHE-RSA-AES256-SHA384:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA:DHE-RSA-AES128-SHA256:"
    "DHE-RSA-AES256-SHA256:AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA256:AES256-SHA256:AES128-SHA:"
    "AES256-SHA:DES-CBC3-SHA";
static const char INTERMEDIATE_CIPHERS[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384";
static const char SUITES13[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

/* msg = the formatted line; returns -1. */
static int fail(char *msg, size_t msgsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t msgsz, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msgsz, fmt, ap);
    va_end(ap);
    return -1;
}

static void set_profile(olm_tls_profile *p, const char *name, int min, const char *ciphers)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->min_version = min;
    snprintf(p->ciphers12, sizeof p->ciphers12, "%s", ciphers);
    snprintf(p->suites13, sizeof p->suites13, "%s", SUITES13);
}

void olm_tls_profile_default(olm_tls_profile *p)
{
    set_profile(p, "intermediate", TLS1_2_VERSION, INTERMEDIATE_CIPHERS);
}

static int parse_version(const char *v)
{
    static const struct {
        const char *names[3];
        int version;
    } t[] = {{{"TLSv1.0", "VersionTLS10", "1.0"}, TLS1_VERSION},
             {{"TLSv1.1", "VersionTLS11", "1.1"}, TLS1_1_VERSION},
             {{"TLSv1.2", "VersionTLS12", "1.2"}, TLS1_2_VERSION},
             {{"TLSv1.3", "VersionTLS13", "1.3"}, TLS1_3_VERSION}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        for (size_t j = 0; j < 3; j++)
            if (strcasecmp(v, t[i].names[j]) == 0)
                return t[i].version;
    return 0;
}

/* Appends ":item" (or "item") to buf; false when it does not fit. */
static bool append(char *buf, size_t bufsz, const char *item)
{
    size_t n = strlen(buf);
    int w = snprintf(buf + n, bufsz - n, "%s%s", n ? ":" : "", item);
    return w >= 0 && (size_t)w < bufsz - n;
}

/* TLS 1.3 suites (RFC 8446 B.4) are set apart in OpenSSL, which ignores unknown names there. */
static bool is_tls13_suite(const char *name)
{
    static const char *const suites[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                         "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256",
                                         "TLS_AES_128_CCM_8_SHA256"};
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        if (strcmp(name, suites[i]) == 0)
            return true;
    return false;
}

/* Each cipher checked on a scratch SSL_CTX: OpenSSL accepts a list as long as one entry
 * matches, which would hide a misspelt one. */
static int parse_ciphers(const char *list, olm_tls_profile *p, char *msg, size_t msgsz)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        snprintf(msg, msgsz, "--tls-custom-ciphers: out of memory");
        return -1;
    }
    char c12[sizeof p->ciphers12] = "", c13[sizeof p->suites13] = "", item[128];
    int rc = 0;
    for (const char *s = list; *s && rc == 0;) {
        size_t n = strcspn(s, ", ");
        if (n > 0 && n < sizeof item) {
            snprintf(item, sizeof item, "%.*s", (int)n, s);
            const char *ossl = OPENSSL_cipher_name(item); /* IANA -> OpenSSL; "(NONE)" if not one */
            const char *name = ossl && strcmp(ossl, "(NONE)") != 0 ? ossl : item;
            bool is13 = is_tls13_suite(item);
            bool is12 = !is13 && SSL_CTX_set_cipher_list(ctx, name) == 1;
            if (!is13 && !is12)
                rc = fail(msg, msgsz, "--tls-custom-ciphers: unknown cipher \"%s\"", item);
            else if (!append(is13 ? c13 : c12, is13 ? sizeof c13 : sizeof c12, is13 ? item : name))
                rc = fail(msg, msgsz, "--tls-custom-ciphers: too many ciphers");
        } else if (n > 0) {
            rc = fail(msg, msgsz, "--tls-custom-ciphers: unknown cipher \"%.*s\"", (int)n, s);
        }
        s += n;
        s += strspn(s, ", ");
    }
    ERR_clear_error();
    SSL_CTX_free(ctx);
    if (rc == 0 && !*c12 && !*c13)
        rc = fail(msg, msgsz, "--tls-custom-ciphers: no cipher given");
    if (rc == 0) {
        /* Only TLS 1.3 suites named: TLS 1.2 keeps intermediate's (a 1.3 minimum makes it moot). */
        snprintf(p->ciphers12, sizeof p->ciphers12, "%s", *c12 ? c12 : INTERMEDIATE_CIPHERS);
        snprintf(p->suites13, sizeof p->suites13, "%s", *c13 ? c13 : SUITES13);
    }
    return rc;
}

/* The OpenSSL group name of a curve as Go, IANA or OpenSSL spell it; NULL when unknown. */
static const char *group_name(const char *c)
{
    static const struct {
        const char *alias, *name;
    } t[] = {{"X25519", "X25519"},       {"X448", "X448"},           {"secp256r1", "P-256"},
             {"P-256", "P-256"},         {"P256", "P-256"},          {"prime256v1", "P-256"},
             {"CurveP256", "P-256"},     {"secp384r1", "P-384"},     {"P-384", "P-384"},
             {"P384", "P-384"},          {"CurveP384", "P-384"},     {"secp521r1", "P-521"},
             {"P-521", "P-521"},         {"P521", "P-521"},          {"CurveP521", "P-521"},
             {"X25519MLKEM768", "X25519MLKEM768"}, {"SecP256r1MLKEM768", "SecP256r1MLKEM768"},
             {"SecP384r1MLKEM1024", "SecP384r1MLKEM1024"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcasecmp(c, t[i].alias) == 0)
            return t[i].name;
    return NULL;
}

/* Curves this OpenSSL lacks (the ML-KEM hybrids before 3.5) are dropped and listed in
 * p->skipped, so that a cluster-wide profile naming them does not stop the daemon. */
static int parse_curves(const char *list, olm_tls_profile *p, char *msg, size_t msgsz)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        snprintf(msg, msgsz, "--tls-custom-curves: out of memory");
        return -1;
    }
    char item[64];
    int rc = 0;
    for (const char *s = list; *s && rc == 0;) {
        size_t n = strcspn(s, ", ");
        snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), s);
        const char *g = n < sizeof item ? group_name(item) : NULL;
        if (!g)
            rc = fail(msg, msgsz, "--tls-custom-curves: unknown curve \"%.*s\"", (int)n, s);
        else if (SSL_CTX_set1_groups_list(ctx, g) != 1)
            append(p->skipped, sizeof p->skipped, item);
        else if (!append(p->groups, sizeof p->groups, g))
            rc = fail(msg, msgsz, "--tls-custom-curves: too many curves");
        s += n;
        s += strspn(s, ", ");
    }
    ERR_clear_error();
    SSL_CTX_free(ctx);
    if (rc == 0 && !*p->groups)
        rc = fail(msg, msgsz, "--tls-custom-curves: none of \"%s\" is supported by %s", list,
                      OpenSSL_version(OPENSSL_VERSION));
    return rc;
}

int olm_tls_profile_from_flags(const char *profile, const char *version, const char *ciphers, const char *curves,
                               olm_tls_profile *out, char *msg, size_t msgsz)
{
    olm_tls_profile_default(out);
    bool custom = profile && strcasecmp(profile, "custom") == 0;
    if (!profile || strcasecmp(profile, "intermediate") == 0)
        ;
    else if (strcasecmp(profile, "old") == 0)
        set_profile(out, "old", TLS1_VERSION, OLD_CIPHERS);
    else if (strcasecmp(profile, "modern") == 0)
        set_profile(out, "modern", TLS1_3_VERSION, INTERMEDIATE_CIPHERS);
    else if (custom)
        snprintf(out->name, sizeof out->name, "custom");
    else
        return fail(msg, msgsz, "--tls-profile: want old, intermediate, modern or custom, got \"%s\"", profile);
    const char *given = version ? "--tls-custom-version" : ciphers ? "--tls-custom-ciphers"
                                                         : curves  ? "--tls-custom-curves"
                                                                   : NULL;
    if (given && !custom)
        return fail(msg, msgsz, "%s is used only with --tls-profile custom", given);
    if (version && !(out->min_version = parse_version(version)))
        return fail(msg, msgsz, "--tls-custom-version: want TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3, got \"%s\"",
                        version);
    if (ciphers && parse_ciphers(ciphers, out, msg, msgsz) != 0)
        return -1;
    if (curves && parse_curves(curves, out, msg, msgsz) != 0)
        return -1;
    return 0;
}

int olm_tls_profile_apply(const olm_tls_profile *p, void *ssl_ctx, olm_error *err)
{
    SSL_CTX *ctx = ssl_ctx;
    SSL_CTX_set_dh_auto(ctx, 1); /* the DHE ciphers of old and intermediate need parameters */
    const char *what = SSL_CTX_set_min_proto_version(ctx, p->min_version) != 1         ? "minimum version"
                       : SSL_CTX_set_cipher_list(ctx, p->ciphers12) != 1               ? p->ciphers12
                       : *p->suites13 && SSL_CTX_set_ciphersuites(ctx, p->suites13) != 1 ? p->suites13
                       : *p->groups && SSL_CTX_set1_groups_list(ctx, p->groups) != 1   ? p->groups
                                                                                        : NULL;
    ERR_clear_error();
    if (what)
        return olm_error_set(err, "TLS profile %s: OpenSSL refuses %s", p->name, what);
    return 0;
}
