/* The libcurl we link (scripts/build-curl.sh by default) must still have everything the
 * clients rely on; a build option dropped by mistake would otherwise show up only as a
 * slow or failing cluster:
 *   - TLS through OpenSSL: kube_config and oci hand libcurl an OpenSSL SSL_CTX callback
 *     (CURLOPT_SSL_CTX_FUNCTION) for CA bundles and client certificates;
 *   - HTTP/2: many apiserver watches share one connection (CURLOPT_PIPEWAIT, kube_uvcurl_req);
 *   - zlib: registries and catalogd answer with Content-Encoding: gzip (CURLOPT_ACCEPT_ENCODING);
 *   - the threaded resolver: a slow DNS lookup must not block the libuv loop;
 *   - http and https, and nothing else is asked of it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <curl/curl.h>

static int has_protocol(const curl_version_info_data *v, const char *name)
{
    for (const char *const *p = v->protocols; *p; p++) {
        if (strcmp(*p, name) == 0) return 1;
    }
    return 0;
}

static void test_features_the_clients_rely_on(void **state)
{
    (void)state;
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    assert_non_null(v);
    assert_true(v->features & CURL_VERSION_SSL);
    assert_non_null(v->ssl_version);
    assert_true(strncmp(v->ssl_version, "OpenSSL/", 8) == 0);
    assert_true(v->features & CURL_VERSION_HTTP2);
    assert_true(v->features & CURL_VERSION_LIBZ);
    assert_true(v->features & CURL_VERSION_ASYNCHDNS);
    assert_true(v->features & CURL_VERSION_THREADSAFE);
    assert_true(has_protocol(v, "http"));
    assert_true(has_protocol(v, "https"));
}

/* The SSL_CTX callback is what kube_config and oci use for their trust stores: a libcurl
 * whose TLS backend cannot take it answers CURLE_NOT_BUILT_IN / UNKNOWN_OPTION. */
static CURLcode ctx_callback(CURL *curl, void *ssl_ctx, void *userptr)
{
    (void)curl; (void)ssl_ctx; (void)userptr;
    return CURLE_OK;
}

static void test_ssl_ctx_callback_is_accepted(void **state)
{
    (void)state;
    CURL *h = curl_easy_init();
    assert_non_null(h);
    assert_int_equal(curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, ctx_callback), CURLE_OK);
    assert_int_equal(curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS), CURLE_OK);
    assert_int_equal(curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""), CURLE_OK);
    curl_easy_cleanup(h);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_features_the_clients_rely_on),
        cmocka_unit_test(test_ssl_ctx_callback_is_accepted),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
