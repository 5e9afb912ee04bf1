/* catalog_client over HTTPS: a catalogd whose certificate only --catalogd-cas-dir vouches for
 * is trusted with that CA set, and refused with the system store alone or another CA.  The
 * fake catalogd is testsupport's HTTP fake serving HTTPS (fake_http_start_tls). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "catalog.h"
#include "fake_http_server.h"

#define FIX "../../../util/tests/fixtures/tls/"

static const char *PKG = "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n";

/* The fake catalogd: a handler of the shared HTTP fake, over TLS. */
static void answer(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    (void)s;
    resp->status = 200;
    resp->body = strstr(req->target, "name=foo") ? PKG : ""; /* the rest of the package: empty */
}

typedef fake_http_server fake;

static int fake_start(void **state)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(fake_http_start_tls(f, FIX "server.crt", FIX "server.key"), 0);
    pthread_mutex_lock(&f->lock);
    f->handler = answer;
    pthread_mutex_unlock(&f->lock);
    *state = f;
    return 0;
}

static int fake_stop(void **state)
{
    fake *f = *state;
    fake_http_stop(f);
    free(f);
    return 0;
}

/* Fetches package foo of a Serving catalog at the fake with `cas` trusted; returns 0 or -1
 * with err. */
static int fetch(fake *f, const olm_ca_set *cas, olm_error *err)
{
    char base[128];
    snprintf(base, sizeof base, "%s/catalogs/c", f->url);
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
