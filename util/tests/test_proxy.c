/* olm_proxy_for_url: Go's ProxyFromEnvironment choices, case by case (golang.org/x/net
 * http/httpproxy's own table has most of these). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "olm_proxy.h"

static const char *proxy(const char *url)
{
    static char out[256];
    olm_proxy_for_url(url, out, sizeof out);
    return out;
}

static void clear(void)
{
    const char *vars[] = {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void test_scheme_and_variables(void **state)
{
    (void)state;
    clear();
    assert_string_equal(proxy("https://registry.example.com/v2/"), "");
    setenv("https_proxy", "proxy.corp:3128", 1);
    assert_string_equal(proxy("https://registry.example.com/v2/"), "http://proxy.corp:3128");
    setenv("HTTPS_PROXY", "https://secure.corp:443", 1); /* the upper-case one wins */
    assert_string_equal(proxy("https://registry.example.com/v2/"), "https://secure.corp:443");
    assert_string_equal(proxy("http://registry.example.com/v2/"), ""); /* http wants HTTP_PROXY */
    setenv("HTTP_PROXY", "http://plain.corp:8080", 1); /* honoured, unlike libcurl */
    assert_string_equal(proxy("http://registry.example.com/v2/"), "http://plain.corp:8080");
    assert_string_equal(proxy("ftp://x/"), "");
    assert_string_equal(proxy("not a url"), "");
    clear();
}

static void test_never_loopback(void **state)
{
    (void)state;
    clear();
    setenv("HTTPS_PROXY", "http://p:1", 1);
    assert_string_equal(proxy("https://localhost:8443/x"), "");
    assert_string_equal(proxy("https://127.0.0.1:8443/x"), "");
    assert_string_equal(proxy("https://127.3.2.1/x"), "");
    assert_string_equal(proxy("https://[::1]:8443/x"), "");
    assert_string_equal(proxy("https://user:pw@localhost/x"), "");
    assert_string_equal(proxy("https://10.96.0.1/api"), "http://p:1");
    clear();
}

static void test_no_proxy(void **state)
{
    (void)state;
    clear();
    setenv("HTTPS_PROXY", "http://p:1", 1);
    setenv("NO_PROXY", " .svc, example.com,10.0.0.0/8, 192.168.1.5 ,reg.corp:5000,*.wild.io,[fd00::1]", 1);
    assert_string_equal(proxy("https://catalogd-service.olmv1-system.svc/catalogs/x"), "");
    assert_string_equal(proxy("https://svc/"), "http://p:1"); /* ".svc" is subdomains only */
    assert_string_equal(proxy("https://example.com/"), "");
    assert_string_equal(proxy("https://www.example.com/"), "");
    assert_string_equal(proxy("https://notexample.com/"), "http://p:1");
    assert_string_equal(proxy("https://10.96.0.1/"), "");
    assert_string_equal(proxy("https://11.0.0.1/"), "http://p:1");
    assert_string_equal(proxy("https://192.168.1.5:6443/"), "");
    assert_string_equal(proxy("https://reg.corp:5000/v2/"), "");
    assert_string_equal(proxy("https://reg.corp/v2/"), "http://p:1"); /* another port */
    assert_string_equal(proxy("https://a.wild.io/"), "");
    assert_string_equal(proxy("https://wild.io/"), "http://p:1");
    assert_string_equal(proxy("https://[fd00::1]:443/"), "");
    assert_string_equal(proxy("https://WWW.EXAMPLE.COM/"), "");
    setenv("NO_PROXY", "*", 1);
    assert_string_equal(proxy("https://anything/"), "");
    unsetenv("NO_PROXY");
    setenv("no_proxy", "example.com", 1);
    assert_string_equal(proxy("https://example.com/"), "");
    clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scheme_and_variables),
        cmocka_unit_test(test_never_loopback),
        cmocka_unit_test(test_no_proxy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
