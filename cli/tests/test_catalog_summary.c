/* Unit tests of catalog_summary: what `olmv1 search` shows of a package (channel heads,
 * versions highest first, deprecations, the channel filter). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "catalog_summary.h"

static const char *const CATALOG =
    "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"p\",\"entries\":["
    "{\"name\":\"p.v1.0.0\"},{\"name\":\"p.v1.1.0\",\"replaces\":\"p.v1.0.0\"},"
    "{\"name\":\"p.v1.10.0\",\"replaces\":\"p.v1.1.0\",\"skips\":[\"p.v1.2.0\"]},{\"name\":\"p.v1.2.0\"}]}\n"
    "{\"schema\":\"olm.channel\",\"name\":\"alpha\",\"package\":\"p\",\"entries\":[{\"name\":\"p.v2.0.0-rc.1\"}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"p.v1.0.0\",\"package\":\"p\",\"image\":\"r/p:1.0.0\",\"properties\":"
    "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"p.v1.1.0\",\"package\":\"p\",\"image\":\"r/p:1.1.0\",\"properties\":"
    "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.1.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"p.v1.2.0\",\"package\":\"p\",\"image\":\"r/p:1.2.0\",\"properties\":"
    "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.2.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"p.v1.10.0\",\"package\":\"p\",\"image\":\"r/p:1.10.0\",\"properties\":"
    "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.10.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"p.v2.0.0-rc.1\",\"package\":\"p\",\"image\":\"r/p:2\",\"properties\":"
    "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"2.0.0-rc.1\"}}]}\n"
    "{\"schema\":\"olm.deprecations\",\"package\":\"p\",\"entries\":["
    "{\"reference\":{\"schema\":\"olm.package\"},\"message\":\"use q\"},"
    "{\"reference\":{\"schema\":\"olm.channel\",\"name\":\"alpha\"},\"message\":\"no more alpha\"},"
    "{\"reference\":{\"schema\":\"olm.bundle\",\"name\":\"p.v1.0.0\"},\"message\":\"old\"}]}\n"
    "{\"schema\":\"olm.package\",\"name\":\"q\"}\n";

static fbc_catalog *load(void)
{
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(CATALOG, strlen(CATALOG), "test", &err);
    assert_non_null(c);
    return c;
}

static void assert_json(json_t *v, const char *want)
{
    char *got = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_SORT_KEYS);
    assert_non_null(got);
    json_t *w = json_loads(want, 0, NULL);
    assert_non_null(w);
    char *wtext = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(got, wtext);
    free(got);
    free(wtext);
    json_decref(w);
}

static void test_summary(void **state)
{
    (void)state;
    fbc_catalog *c = load();
    json_t *s = catalog_package_summary(c, "cat", "p", NULL);
    assert_non_null(s);
    /* Heads: 1.10.0 (replaces 1.1.0, skips 1.2.0), not the lexically larger 1.2.0. */
    assert_json(json_object_get(s, "channels"),
                "[{\"name\":\"alpha\",\"head\":\"p.v2.0.0-rc.1\",\"headVersion\":\"2.0.0-rc.1\","
                "\"deprecation\":\"no more alpha\"},"
                "{\"name\":\"stable\",\"head\":\"p.v1.10.0\",\"headVersion\":\"1.10.0\",\"deprecation\":null}]");
    json_t *bundles = json_object_get(s, "bundles");
    assert_int_equal(json_array_size(bundles), 5);
    static const char *const order[] = {"2.0.0-rc.1", "1.10.0", "1.2.0", "1.1.0", "1.0.0"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(bundles, i), "version")), order[i]);
    assert_json(json_array_get(bundles, 4), "{\"name\":\"p.v1.0.0\",\"version\":\"1.0.0\",\"image\":\"r/p:1.0.0\","
                                            "\"channels\":[\"stable\"],\"deprecation\":\"old\"}");
    assert_string_equal(json_string_value(json_object_get(s, "deprecation")), "use q");
    assert_string_equal(json_string_value(json_object_get(s, "defaultChannel")), "stable");
    json_decref(s);

    /* The channel filter keeps that channel and its bundles. */
    s = catalog_package_summary(c, "cat", "p", "alpha");
    assert_int_equal(json_array_size(json_object_get(s, "channels")), 1);
    assert_int_equal(json_array_size(json_object_get(s, "bundles")), 1);
    json_decref(s);

    /* A package without channels or deprecations. */
    s = catalog_package_summary(c, "cat", "q", NULL);
    assert_json(s, "{\"catalog\":\"cat\",\"package\":\"q\",\"defaultChannel\":null,\"deprecation\":null,"
                   "\"channels\":[],\"bundles\":[]}");
    json_decref(s);
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_summary)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
