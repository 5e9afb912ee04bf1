/* util_tls_server: the TLS profiles from the flags (names, versions, IANA and OpenSSL cipher
 * names, curves, refusals), and a server context that follows its certificate files: a
 * rotated pair is taken, a bad one keeps the previous context and is reported once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "olm_tls_profile.h"
#include "olm_tls_server.h"

#define FIX "fixtures/tls/"

static void test_profiles(void **state)
{
    (void)state;
    olm_tls_profile p;
    char msg[256] = "";
    assert_int_equal(olm_tls_profile_from_flags(NULL, NULL, NULL, NULL, &p, msg, sizeof msg), 0);
    assert_string_equal(p.name, "intermediate");
    assert_int_equal(p.min_version, TLS1_2_VERSION);
    assert_null(strstr(p.ciphers12, "CBC3"));
    assert_int_equal(olm_tls_profile_from_flags("Modern", NULL, NULL, NULL, &p, msg, sizeof msg), 0);
    assert_int_equal(p.min_version, TLS1_3_VERSION);
    assert_int_equal(olm_tls_profile_from_flags("Old", NULL, NULL, NULL, &p, msg, sizeof msg), 0);
    assert_int_equal(p.min_version, TLS1_VERSION);
    assert_non_null(strstr(p.ciphers12, "DES-CBC3-SHA"));

    /* custom: IANA names become OpenSSL's, TLS 1.3 suites go apart, curves by any name. */
    assert_int_equal(olm_tls_profile_from_flags("custom", "VersionTLS13",
                                                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,ECDHE-ECDSA-AES256-GCM-SHA384,"
                                                "TLS_AES_256_GCM_SHA384",
                                                "secp256r1, X25519", &p, msg, sizeof msg),
                     0);
    assert_int_equal(p.min_version, TLS1_3_VERSION);
    assert_string_equal(p.ciphers12, "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384");
    assert_string_equal(p.suites13, "TLS_AES_256_GCM_SHA384");
    assert_string_equal(p.groups, "P-256:X25519");
    assert_int_equal(olm_tls_profile_from_flags("custom", "TLSv1.2", NULL, NULL, &p, msg, sizeof msg), 0);
    assert_int_equal(p.min_version, TLS1_2_VERSION);

    const struct {
        const char *profile, *version, *ciphers, *curves, *want;
    } bad[] = {
        {"strict", NULL, NULL, NULL, "--tls-profile: want old, intermediate, modern or custom, got \"strict\""},
        {NULL, "TLSv1.3", NULL, NULL, "--tls-custom-version is used only with --tls-profile custom"},
        {"modern", NULL, "AES128-SHA", NULL, "--tls-custom-ciphers is used only with --tls-profile custom"},
        {"custom", "TLSv1.4", NULL, NULL,
         "--tls-custom-version: want TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3, got \"TLSv1.4\""},
        {"custom", NULL, "ECDHE-RSA-AES128-GCM-SHA256,TLS_NOT_A_CIPHER", NULL,
         "--tls-custom-ciphers: unknown cipher \"TLS_NOT_A_CIPHER\""},
        {"custom", NULL, NULL, "X25519,brainpool", "--tls-custom-curves: unknown curve \"brainpool\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = olm_tls_profile_from_flags(bad[i].profile, bad[i].version, bad[i].ciphers, bad[i].curves, &p, msg,
                                            sizeof msg);
        assert_int_equal(rc, -1);
        assert_string_equal(msg, bad[i].want);
    }
#if OPENSSL_VERSION_NUMBER < 0x30500000L
    /* The ML-KEM hybrids need OpenSSL 3.5: dropped (and named) when others remain, else refused. */
    assert_int_equal(olm_tls_profile_from_flags("custom", NULL, NULL, "X25519MLKEM768,X25519", &p, msg, sizeof msg), 0);
    assert_string_equal(p.groups, "X25519");
    assert_string_equal(p.skipped, "X25519MLKEM768");
    assert_int_equal(olm_tls_profile_from_flags("custom", NULL, NULL, "SecP256r1MLKEM768", &p, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--tls-custom-curves: none of \"SecP256r1MLKEM768\" is supported by OpenSSL"));
#endif
}

/* The CN of the certificate a context serves. */
static const char *served_cn(void *ctx, char *buf, size_t bufsz)
{
    X509 *x = SSL_CTX_get0_certificate(ctx);
    buf[0] = '\0';
    if (x)
        X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, buf, (int)bufsz);
    return buf;
}

static void copy(const char *from, const char *to)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    FILE *in = fopen(from, "rb"), *out = fopen(tmp, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
    assert_int_equal(rename(tmp, to), 0); /* a new inode, as the kubelet's swap gives */
}

static void wait_past_interval(void)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void test_reload(void **state)
{
    (void)state;
    char dir[] = "/tmp/olm-tls-XXXXXX", cert[256], key[256], cn[128];
    assert_non_null(mkdtemp(dir));
    snprintf(cert, sizeof cert, "%s/tls.crt", dir);
    snprintf(key, sizeof key, "%s/tls.key", dir);
    copy(FIX "server.crt", cert);
    copy(FIX "server.key", key);
    olm_error err;
    olm_tls_server_opts o = {.cert = cert, .key = key, .check_interval_ms = 1, .log_name = "test"};
    olm_tls_server *t = olm_tls_server_new(&o, &err);
    assert_non_null(t);
    assert_string_equal(served_cn(olm_tls_server_ctx(t), cn, sizeof cn), "olmv1-test");

    /* Rotated: the next connection gets the new pair. */
    copy(FIX "rotated.crt", cert);
    copy(FIX "rotated.key", key);
    wait_past_interval();
    assert_string_equal(served_cn(olm_tls_server_ctx(t), cn, sizeof cn), "olmv1-test-rotated");
    assert_int_equal(olm_tls_server_reloads(t), 1);

    /* Half a rotation (a new certificate, the old key): refused, the rotated pair stays. */
    copy(FIX "server.crt", cert);
    wait_past_interval();
    assert_string_equal(served_cn(olm_tls_server_ctx(t), cn, sizeof cn), "olmv1-test-rotated");
    wait_past_interval();
    assert_string_equal(served_cn(olm_tls_server_ctx(t), cn, sizeof cn), "olmv1-test-rotated");
    assert_int_equal(olm_tls_server_reloads(t), 1);

    /* The key follows: now the pair matches and is taken. */
    copy(FIX "server.key", key);
    wait_past_interval();
    assert_string_equal(served_cn(olm_tls_server_ctx(t), cn, sizeof cn), "olmv1-test");
    assert_int_equal(olm_tls_server_reloads(t), 2);

    /* Gone files: the last good pair is served. */
    unlink(cert);
    unlink(key);
    wait_past_interval();
    assert_string_equal(served_cn(olm_tls_server_ctx(t), cn, sizeof cn), "olmv1-test");
    olm_tls_server_free(t);
    assert_int_equal(rmdir(dir), 0);

    /* At start, a bad pair is an error naming the file. */
    olm_tls_server_opts bad = {.cert = FIX "server.crt", .key = FIX "other.key"};
    assert_null(olm_tls_server_new(&bad, &err));
    assert_non_null(strstr(err.msg, "TLS: " FIX "other.key: "));
}

/* The profile is what the context negotiates: modern refuses a TLS 1.2 client. */
static void test_profile_applied(void **state)
{
    (void)state;
    olm_tls_profile p;
    char msg[256];
    assert_int_equal(olm_tls_profile_from_flags("modern", NULL, NULL, NULL, &p, msg, sizeof msg), 0);
    olm_error err;
    olm_tls_server_opts o = {.cert = FIX "server.crt", .key = FIX "server.key", .profile = &p};
    olm_tls_server *t = olm_tls_server_new(&o, &err);
    assert_non_null(t);
    assert_int_equal(SSL_CTX_get_min_proto_version((SSL_CTX *)olm_tls_server_ctx(t)), TLS1_3_VERSION);
    olm_tls_server_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_reload),
        cmocka_unit_test(test_profile_applied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
