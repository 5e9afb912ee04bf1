/* catalog_client over HTTPS: a catalogd whose certificate only --catalogd-cas-dir vouches for
 * is trusted with that CA set, and refused with the system store alone or another CA.  The
 * fake catalogd is a thread speaking TLS with OpenSSL on blocking sockets, one canned answer
 * per connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "catalog.h"

#define FIX "../../../util/tests/fixtures/tls/"

static const char *PKG = "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n";

typedef struct fake {
    int fd, port;
    SSL_CTX *ctx;
    pthread_t thr;
    atomic_int stop;
} fake;

static void answer(SSL *ssl)
{
    char req[4096];
    int n = SSL_read(ssl, req, sizeof req - 1);
    req[n > 0 ? n : 0] = '\0';
    const char *body = strstr(req, "name=foo ") ? PKG : ""; /* the rest of the package: empty */
    char resp[512];
    int len = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                       strlen(body), body);
    SSL_write(ssl, resp, len);
    SSL_shutdown(ssl);
}

static void *serve(void *arg)
{
    fake *f = arg;
    for (;;) {
        int c = accept(f->fd, NULL, NULL);
        if (c < 0)
            continue;
        if (atomic_load(&f->stop)) {
            close(c);
            return NULL;
        }
        SSL *ssl = SSL_new(f->ctx);
        SSL_set_fd(ssl, c);
        if (SSL_accept(ssl) == 1) /* fails when the client does not trust us: nothing to answer */
            answer(ssl);
        SSL_free(ssl);
        ERR_clear_error();
        close(c);
    }
}

static int fake_start(void **state)
{
    fake *f = calloc(1, sizeof *f);
    f->ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate_chain_file(f->ctx, FIX "server.crt"), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->ctx, FIX "server.key", SSL_FILETYPE_PEM), 1);
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(f->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t len = sizeof sa;
    getsockname(f->fd, (struct sockaddr *)&sa, &len);
    f->port = ntohs(sa.sin_port);
    assert_int_equal(listen(f->fd, 16), 0);
    pthread_create(&f->thr, NULL, serve, f);
    *state = f;
    return 0;
}

static int fake_stop(void **state)
{
    fake *f = *state;
    atomic_store(&f->stop, 1);
    int c = socket(AF_INET, SOCK_STREAM, 0); /* wakes accept() */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    (void)!connect(c, (struct sockaddr *)&sa, sizeof sa);
    close(c);
    pthread_join(f->thr, NULL);
    close(f->fd);
    SSL_CTX_free(f->ctx);
    free(f);
    return 0;
}

/* Fetches package foo of a Serving catalog at the fake with `cas` trusted; returns 0 or -1
 * with err. */
static int fetch(fake *f, const olm_ca_set *cas, olm_error *err)
{
    char base[128];
    snprintf(base, sizeof base, "https://127.0.0.1:%d/catalogs/c", f->port);
    json_t *cat = json_pack("{s:{s:s}, s:{}, s:{s:[{s:s,s:s}], s:{s:s,s:{s:s}}, s:{s:s}}}", "metadata", "name", "c",
                            "spec", "status", "conditions", "type", "Serving", "status", "True", "resolvedSource",
                            "type", "Image", "image", "ref", "reg/c@sha256:1", "urls", "base", base);
    catalog_client_options o = {.cas = cas};
    catalog_client *cc = catalog_client_new(&o, err);
    assert_non_null(cc);
    catalog_package *p = NULL;
    int rc = catalog_client_get_package(cc, cat, "foo", &p, err);
    if (rc == 0)
        assert_string_equal(catalog_package_fbc(p)->packages[0].name, "foo");
    catalog_package_release(p);
    catalog_client_free(cc);
    json_decref(cat);
    return rc;
}

static olm_ca_set *load(const char *file)
{
    olm_error err;
    olm_ca_set *s = olm_ca_set_new(&err);
    assert_non_null(s);
    if (olm_ca_set_add_file(s, file, &err) != 0)
        fail_msg("%s", err.msg);
    return s;
}

static void test_trusted_by_the_ca_set(void **state)
{
    fake *f = *state;
    olm_error err;
    olm_ca_set *ours = load(FIX "server.crt");
    if (fetch(f, ours, &err) != 0)
        fail_msg("%s", err.msg);
    olm_ca_set_free(ours);
}

static void test_refused_without_it(void **state)
{
    fake *f = *state;
    olm_error err;
    assert_int_equal(fetch(f, NULL, &err), -1); /* the system store alone */
    assert_non_null(strstr(err.msg, "SSL certificate problem"));
    olm_ca_set *other = load(FIX "other.crt");
    assert_int_equal(fetch(f, other, &err), -1);
    assert_non_null(strstr(err.msg, "SSL certificate problem"));
    olm_ca_set_free(other);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trusted_by_the_ca_set),
        cmocka_unit_test(test_refused_without_it),
    };
    int rc = cmocka_run_group_tests(tests, fake_start, fake_stop);
    curl_global_cleanup();
    return rc;
}
