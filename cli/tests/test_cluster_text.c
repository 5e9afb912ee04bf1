/* Unit tests of the cluster commands' pure helpers: kubectl's HumanDuration, tables,
 * the unhealthy-condition text of `olmv1 get`, Kubernetes names, and the service-proxy
 * path derived from a ClusterCatalog's status.urls.base. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cluster_catalogs.h"
#include "cluster_objects.h"

static void test_human_duration(void **state)
{
    (void)state;
    static const struct {
        long long s;
        const char *want;
    } cases[] = {
        {-5, "<invalid>"}, {-1, "0s"},        {0, "0s"},          {119, "119s"},     {120, "2m"},
        {150, "2m30s"},    {599, "9m59s"},    {600, "10m"},       {10799, "179m"},   {10800, "3h"},
        {3 * 3600 + 60, "3h1m"}, {8 * 3600, "8h"}, {47 * 3600, "47h"}, {48 * 3600, "2d"}, {49 * 3600, "2d1h"},
        {8 * 86400, "8d"}, {729LL * 86400, "729d"}, {730LL * 86400, "2y"}, {731LL * 86400, "2y1d"},
        {8LL * 365 * 86400, "8y"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cluster_human_duration(cases[i].s, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
    }
    cluster_age("2026-01-01T00:00:00Z", 1767225600 + 90, buf, sizeof buf);
    assert_string_equal(buf, "90s");
    cluster_age("yesterday", 0, buf, sizeof buf);
    assert_string_equal(buf, "<unknown>");
}

static void test_table(void **state)
{
    (void)state;
    static const char *const header[] = {"NAME", "VERSION", "MESSAGE"};
    static const char *const r1[] = {"a-long-name", "1.0.0", "ok"};
    static const char *const r2[] = {"b", NULL, ""};
    cluster_table t;
    assert_int_equal(cluster_table_init(&t, 3, header), 0);
    assert_int_equal(cluster_table_add(&t, r1), 0);
    assert_int_equal(cluster_table_add(&t, r2), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(cluster_table_print(&t, f), 0);
    fclose(f);
    assert_string_equal(text, "NAME          VERSION   MESSAGE\n"
                              "a-long-name   1.0.0     ok\n"
                              "b                       \n");
    free(text);
    cluster_table_free(&t);
}

static json_t *parse(const char *text)
{
    json_t *v = json_loads(text, 0, NULL);
    assert_non_null(v);
    return v;
}

static void test_problems(void **state)
{
    (void)state;
    json_t *ce = parse("{\"status\":{\"conditions\":["
                       "{\"type\":\"Installed\",\"status\":\"True\",\"reason\":\"Succeeded\",\"message\":\"fine\"},"
                       "{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"Retrying\",\"message\":\"a\\nb\"},"
                       "{\"type\":\"Deprecated\",\"status\":\"True\",\"reason\":\"Deprecated\",\"message\":\"x\"},"
                       "{\"type\":\"PackageDeprecated\",\"status\":\"True\",\"reason\":\"Deprecated\",\"message\":\"x\"},"
                       "{\"type\":\"BundleDeprecated\",\"status\":\"False\",\"reason\":\"NotDeprecated\"}]}}");
    char *p = cluster_problems(ce, CLUSTER_KIND_EXTENSION);
    assert_string_equal(p, "Progressing Retrying: a b; PackageDeprecated Deprecated: x");
    free(p);
    json_decref(ce);
    /* The roll-up alone (no specific condition says more) is reported. */
    ce = parse("{\"status\":{\"conditions\":[{\"type\":\"Deprecated\",\"status\":\"True\",\"reason\":\"D\"},"
               "{\"type\":\"Installed\",\"status\":\"False\",\"reason\":\"Failed\",\"message\":\"No bundle\"}]}}");
    p = cluster_problems(ce, CLUSTER_KIND_EXTENSION);
    assert_string_equal(p, "Deprecated D; Installed Failed: No bundle");
    free(p);
    json_decref(ce);
    json_t *cat = parse("{\"status\":{\"conditions\":["
                        "{\"type\":\"Serving\",\"status\":\"True\",\"reason\":\"Available\"},"
                        "{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"Succeeded\"}]}}");
    p = cluster_problems(cat, CLUSTER_KIND_CATALOG);
    assert_string_equal(p, "");
    free(p);
    json_decref(cat);
    assert_string_equal(cluster_kind_lookup("ext")->kind, "ClusterExtension");
    assert_string_equal(cluster_kind_lookup("clustercatalogs")->kind, "ClusterCatalog");
    assert_null(cluster_kind_lookup("pods"));
}

static void test_names(void **state)
{
    (void)state;
    assert_true(cluster_dns1123_label("a-1"));
    assert_false(cluster_dns1123_label("-a"));
    assert_false(cluster_dns1123_label("A"));
    assert_false(cluster_dns1123_label("a.b"));
    assert_true(cluster_dns1123_subdomain("a.b-c.d"));
    assert_false(cluster_dns1123_subdomain("a..b"));
    assert_false(cluster_dns1123_subdomain(""));
    char longname[70];
    memset(longname, 'a', 64);
    longname[64] = '\0';
    assert_false(cluster_dns1123_label(longname));
}

static void test_proxy_path(void **state)
{
    (void)state;
    static const struct {
        const char *base, *want;
    } ok[] = {
        {"https://catalogd-service.olmv1-system.svc/catalogs/demo",
         "/api/v1/namespaces/olmv1-system/services/https:catalogd-service:443/proxy/catalogs/demo/api/v1/all"},
        {"http://catalogd.ns.svc.cluster.local:8080/catalogs/demo/",
         "/api/v1/namespaces/ns/services/http:catalogd:8080/proxy/catalogs/demo/api/v1/all"},
        {"https://c.n.svc:9443", "/api/v1/namespaces/n/services/https:c:9443/proxy/api/v1/all"},
    };
    olm_error err;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *p = NULL;
        assert_int_equal(catalog_proxy_path(ok[i].base, "/api/v1/all", &p, &err), 0);
        assert_string_equal(p, ok[i].want);
        free(p);
    }
    static const char *const bad[] = {"https://127.0.0.1:8443/catalogs/x", "https://catalogd.svc/catalogs/x",
                                      "https://a.b.svcx/c", "ftp://a.b.svc/c", "https://a.b.svc:99999/c"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *p = NULL;
        assert_int_equal(catalog_proxy_path(bad[i], "/api/v1/all", &p, &err), -1);
        assert_null(p);
    }
    char *bp = catalog_base_path("https://127.0.0.1:8443/catalogs/x/");
    assert_string_equal(bp, "/catalogs/x");
    free(bp);
    bp = catalog_base_path("http://h");
    assert_string_equal(bp, "");
    free(bp);
    assert_null(catalog_base_path("h/catalogs"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_human_duration), cmocka_unit_test(test_table), cmocka_unit_test(test_problems),
        cmocka_unit_test(test_names),          cmocka_unit_test(test_proxy_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
