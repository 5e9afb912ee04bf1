/* http_client_setup against real peers on loopback: a TLS server (OpenSSL, one handshake
 * per test, on a thread) and a plain TCP "proxy" that records what it is asked.  What is
 * checked is what a handle set up here does, not which options it holds. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "http_client.h"

#define FIX "../../util/tests/fixtures/tls/"

typedef struct peer {
    int fd;
    int port;
    int max_tls;    /* TLS server: the highest version it speaks */
    bool tls;       /* false: read one request and keep it */
    char got[512];  /* what a plain peer read */
    pthread_t thread;
} peer;

static void *serve(void *arg)
{
    peer *p = arg;
    int c = accept(p->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    if (!p->tls) {
        ssize_t n = read(c, p->got, sizeof p->got - 1);
        p->got[n > 0 ? n : 0] = '\0';
        const char *no = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";
        (void)!write(c, no, strlen(no));
        close(c);
        return NULL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_security_level(ctx, 0); /* so that an old TLS version can be offered at all */
    SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
    SSL_CTX_set_max_proto_version(ctx, p->max_tls);
    SSL_CTX_use_certificate_file(ctx, FIX "server.crt", SSL_FILETYPE_PEM);
    SSL_CTX_use_PrivateKey_file(ctx, FIX "server.key", SSL_FILETYPE_PEM);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, c);
    if (SSL_accept(ssl) == 1) {
        char buf[1024];
        SSL_read(ssl, buf, sizeof buf);
        const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        SSL_write(ssl, ok, (int)strlen(ok));
        SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(c);
    return NULL;
}

static void peer_start(peer *p)
{
    p->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(p->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(p->fd, 4), 0);
    socklen_t len = sizeof a;
    getsockname(p->fd, (struct sockaddr *)&a, &len);
    p->port = ntohs(a.sin_port);
    pthread_create(&p->thread, NULL, serve, p);
}

static void peer_stop(peer *p)
{
    shutdown(p->fd, SHUT_RDWR); /* a peer nobody connected to leaves accept() */
    pthread_join(p->thread, NULL);
    close(p->fd);
}

static CURLcode get(const char *url, const http_client_opts *o)
{
    CURL *h = curl_easy_init();
    olm_error err;
    assert_int_equal(http_client_setup(h, url, o, &err), 0);
    curl_easy_setopt(h, CURLOPT_URL, url);
    FILE *devnull = fopen("/dev/null", "w");
    curl_easy_setopt(h, CURLOPT_WRITEDATA, devnull);
    CURLcode rc = curl_easy_perform(h);
    fclose(devnull);
    curl_easy_cleanup(h);
    return rc;
}

/* A TLS server with the test certificate; GET https://127.0.0.1:port/ with `o`. */
static CURLcode tls_get(int max_tls, const http_client_opts *o)
{
    peer p = {.tls = true, .max_tls = max_tls};
    peer_start(&p);
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/", p.port);
    CURLcode rc = get(url, o);
    peer_stop(&p);
    return rc;
}

static olm_ca_set *test_ca(void)
{
    olm_error err;
    olm_ca_set *cas = olm_ca_set_new(&err);
    assert_int_equal(olm_ca_set_add_file(cas, FIX "server.crt", &err), 0);
    return cas;
}

static void test_extra_cas_are_trusted(void **state)
{
    olm_ca_set *cas = test_ca();
    http_client_opts o = {.tls.extra_cas = cas};
    assert_int_equal(tls_get(TLS1_3_VERSION, &o), CURLE_OK);
    http_client_opts none = {0};
    assert_int_equal(tls_get(TLS1_3_VERSION, &none), CURLE_PEER_FAILED_VERIFICATION);
    olm_ca_set_free(cas);
}

static void test_ca_file_and_skip_verify(void **state)
{
    http_client_opts file = {.tls.ca_file = FIX "server.crt"};
    assert_int_equal(tls_get(TLS1_3_VERSION, &file), CURLE_OK);
    http_client_opts wrong = {.tls.ca_file = FIX "other.crt"};
    assert_int_equal(tls_get(TLS1_3_VERSION, &wrong), CURLE_PEER_FAILED_VERIFICATION);
    http_client_opts skip = {.tls.skip_verify = true};
    assert_int_equal(tls_get(TLS1_3_VERSION, &skip), CURLE_OK);
}

/* TLS 1.2 at least for every client (before this layer only the catalog client asked). */
static void test_tls_minimum(void **state)
{
    olm_ca_set *cas = test_ca();
    http_client_opts o = {.tls.extra_cas = cas};
    assert_int_equal(tls_get(TLS1_2_VERSION, &o), CURLE_OK);
    assert_int_equal(tls_get(TLS1_1_VERSION, &o), CURLE_SSL_CONNECT_ERROR);
    olm_ca_set_free(cas);
}

/* The daemon's --tls-profile reaches the handshake: modern is TLS 1.3 only. */
static void test_tls_profile(void **state)
{
    olm_ca_set *cas = test_ca();
    olm_tls_profile modern;
    char msg[256];
    assert_int_equal(olm_tls_profile_from_flags("modern", NULL, NULL, NULL, &modern, msg, sizeof msg), 0);
    http_client_opts o = {.tls.extra_cas = cas, .tls.profile = &modern};
    assert_int_equal(tls_get(TLS1_3_VERSION, &o), CURLE_OK);
    assert_int_equal(tls_get(TLS1_2_VERSION, &o), CURLE_SSL_CONNECT_ERROR);
    olm_ca_set_free(cas);
}

/* HTTPS_PROXY as Go reads it: a name goes through the proxy (CONNECT), NO_PROXY and
 * loopback do not. */
static void test_proxy_from_environment(void **state)
{
    peer proxy = {0};
    peer_start(&proxy);
    char env[64];
    snprintf(env, sizeof env, "127.0.0.1:%d", proxy.port);
    setenv("HTTPS_PROXY", env, 1);
    unsetenv("NO_PROXY");
    unsetenv("no_proxy");
    http_client_opts o = {.connect_timeout_ms = 5000};
    get("https://registry.example.invalid/v2/", &o);
    peer_stop(&proxy);
    assert_non_null(strstr(proxy.got, "CONNECT registry.example.invalid:443"));

    peer second = {0};
    peer_start(&second);
    snprintf(env, sizeof env, "127.0.0.1:%d", second.port);
    setenv("HTTPS_PROXY", env, 1);
    setenv("NO_PROXY", "example.invalid", 1);
    assert_int_not_equal(get("https://registry.example.invalid/v2/", &o), CURLE_OK); /* no such host */
    peer_stop(&second);
    assert_string_equal(second.got, ""); /* the proxy was never asked */
    unsetenv("HTTPS_PROXY");
    unsetenv("NO_PROXY");
}

static void test_only_http_and_https(void **state)
{
    http_client_opts o = {0};
    assert_int_equal(get("file:///etc/hostname", &o), CURLE_UNSUPPORTED_PROTOCOL);
}

/* A header list's credentials do not stay in memory once it is done with. */
static void test_headers_wiped(void **state)
{
    (void)state;
    struct curl_slist *h = curl_slist_append(NULL, "Authorization: Bearer secret-token");
    h = curl_slist_append(h, "Accept: application/json");
    assert_non_null(h);
    size_t n0 = strlen(h->data), n1 = strlen(h->next->data);
    http_headers_wipe(h);
    for (size_t i = 0; i < n0; i++)
        assert_int_equal(h->data[i], 0);
    for (size_t i = 0; i < n1; i++)
        assert_int_equal(h->next->data[i], 0);
    http_headers_free(h);
    http_headers_free(NULL);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extra_cas_are_trusted), cmocka_unit_test(test_ca_file_and_skip_verify),
        cmocka_unit_test(test_tls_minimum),           cmocka_unit_test(test_tls_profile),
        cmocka_unit_test(test_proxy_from_environment), cmocka_unit_test(test_only_http_and_https),
        cmocka_unit_test(test_headers_wiped),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
