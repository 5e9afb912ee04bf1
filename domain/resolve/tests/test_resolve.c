/* Resolver behaviour: every filter, ordering rule and error message of §3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve.h"
#include "strbuf.h"

/* ---- catalog builders: JSON lines fed to the real FBC loader ---- */

static void add_package(strbuf *sb, const char *pkg, const char *default_channel)
{
    strbuf_printf(sb, "{\"schema\":\"olm.package\",\"name\":\"%s\",\"defaultChannel\":\"%s\"}\n", pkg,
                  default_channel);
}

/* extra_props: "" or ",{...}" appended to the properties list. */
static void add_bundle(strbuf *sb, const char *pkg, const char *version, const char *extra_props)
{
    strbuf_printf(sb,
                  "{\"schema\":\"olm.bundle\",\"name\":\"%s.v%s\",\"package\":\"%s\",\"image\":\"registry/%s:%s\","
                  "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"%s\",\"version\":\"%s\"}}%s]}\n",
                  pkg, version, pkg, pkg, version, pkg, version, extra_props);
}

/* entries: the JSON array text of the channel entries. */
static void add_channel(strbuf *sb, const char *pkg, const char *name, const char *entries)
{
    strbuf_printf(sb, "{\"schema\":\"olm.channel\",\"name\":\"%s\",\"package\":\"%s\",\"entries\":%s}\n", name, pkg,
                  entries);
}

static fbc_catalog *load(strbuf *sb)
{
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(sb->data, sb->len, "test", &err);
    if (!c)
        fail_msg("load: %s", err.msg);
    strbuf_free(sb);
    return c;
}

/* The catalog of upstream's update.feature: 1.0.0 alpha+beta, 1.0.1 beta replaces
 * 1.0.0, 1.0.2 alpha replaces 1.0.0, 1.0.4 beta, 1.2.0 beta replaces 1.0.1. */
static fbc_catalog *update_catalog(const char *pkg)
{
    strbuf sb = STRBUF_INIT;
    add_package(&sb, pkg, "beta");
    char entries[1024];
    snprintf(entries, sizeof entries,
             "[{\"name\":\"%s.v1.0.0\"},{\"name\":\"%s.v1.0.2\",\"replaces\":\"%s.v1.0.0\"}]", pkg, pkg, pkg);
    add_channel(&sb, pkg, "alpha", entries);
    snprintf(entries, sizeof entries,
             "[{\"name\":\"%s.v1.0.0\"},{\"name\":\"%s.v1.0.1\",\"replaces\":\"%s.v1.0.0\"},"
             "{\"name\":\"%s.v1.0.4\"},{\"name\":\"%s.v1.2.0\",\"replaces\":\"%s.v1.0.1\"}]",
             pkg, pkg, pkg, pkg, pkg, pkg);
    add_channel(&sb, pkg, "beta", entries);
    const char *versions[] = {"1.0.0", "1.0.1", "1.0.2", "1.0.4", "1.2.0"};
    for (size_t i = 0; i < 5; i++)
        add_bundle(&sb, pkg, versions[i], "");
    return load(&sb);
}

/* ---- running the resolver ---- */

typedef struct outcome {
    int rc;
    char bundle[256];
    char catalog[64];
    char version[64];
    char error[OLM_ERROR_MAX];
} outcome;

static outcome run(const resolve_request *req, const resolve_catalog *cats, size_t n)
{
    outcome o = {0};
    resolve_result res;
    olm_error err = {{0}};
    strbuf explain = STRBUF_INIT;
    o.rc = resolve_bundle(req, cats, n, &res, &explain, &err);
    if (o.rc == 0) {
        snprintf(o.bundle, sizeof o.bundle, "%s", res.bundle->name);
        snprintf(o.catalog, sizeof o.catalog, "%s", res.catalog->name);
        char *v = bundle_version_format(&res.version);
        snprintf(o.version, sizeof o.version, "%s", v);
        free(v);
        resolve_result_free(&res);
    } else {
        snprintf(o.error, sizeof o.error, "%s", err.msg);
    }
    strbuf_free(&explain);
    return o;
}

static outcome run_one(const resolve_request *req, const fbc_catalog *fbc)
{
    resolve_catalog cat = {.name = "test", .fbc = fbc};
    return run(req, &cat, 1);
}

#define ASSERT_RESOLVES(o, want_bundle)                   \
    do {                                                  \
        outcome o_ = (o);                                 \
        if (o_.rc != 0)                                   \
            fail_msg("unexpected error: %s", o_.error);   \
        assert_string_equal(o_.bundle, want_bundle);      \
    } while (0)

#define ASSERT_FAILS(o, want_error)                       \
    do {                                                  \
        outcome o_ = (o);                                 \
        if (o_.rc == 0)                                   \
            fail_msg("unexpectedly resolved %s", o_.bundle); \
        assert_string_equal(o_.error, want_error);        \
    } while (0)

/* ---- tests ---- */

static void test_latest_without_filters(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    resolve_request req = {.package = "test"};
    ASSERT_RESOLVES(run_one(&req, c), "test.v1.2.0");
    fbc_catalog_free(c);
}

static void test_channel_filter(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    const char *alpha[] = {"alpha"};
    resolve_request req = {.package = "test", .channels = alpha, .nchannels = 1};
    ASSERT_RESOLVES(run_one(&req, c), "test.v1.0.2");
    fbc_catalog_free(c);
}

static void test_version_ranges(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    struct {
        const char *range, *want;
    } cases[] = {
        {"1.0.0", "test.v1.0.0"},       {"1.0.1", "test.v1.0.1"},     {">=1.0.1, <1.2.0", "test.v1.0.4"},
        {"~1.0.0", "test.v1.0.4"},      {"1.0.x", "test.v1.0.4"},     {"<1.0.2", "test.v1.0.1"},
        {"^1.0.0", "test.v1.2.0"},      {">1.0.1 <1.0.4", "test.v1.0.2"}, {"1.0.0 || 1.0.1", "test.v1.0.1"},
        {"!=1.2.0", "test.v1.0.4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        resolve_request req = {.package = "test", .version_range = cases[i].range};
        outcome o = run_one(&req, c);
        if (o.rc != 0 || strcmp(o.bundle, cases[i].want) != 0)
            fail_msg("range %s: got %s (%s), want %s", cases[i].range, o.bundle, o.error, cases[i].want);
    }
    fbc_catalog_free(c);
}

static void test_no_match_messages(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    const char *channels[] = {"beta", "alpha"};
    resolve_request req = {.package = "test", .version_range = "9.0.0", .channels = channels, .nchannels = 2};
    ASSERT_FAILS(run_one(&req, c),
                 "no bundles found for package \"test\" matching version \"9.0.0\" in channels [beta alpha]");
    resolve_request missing = {.package = "missing"};
    ASSERT_FAILS(run_one(&missing, c), "no bundles found for package \"missing\"");
    resolve_request bad = {.package = "test", .version_range = ">=1.0.0,,<2.0.0"};
    outcome o = run_one(&bad, c);
    assert_int_equal(o.rc, -1);
    assert_non_null(strstr(o.error, "desired version range \">=1.0.0,,<2.0.0\" is invalid: "));
    fbc_catalog_free(c);
}

static void test_prerelease_needs_prerelease_in_range(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    add_package(&sb, "pre", "stable");
    add_channel(&sb, "pre", "stable",
                "[{\"name\":\"pre.v1.0.0\"},{\"name\":\"pre.v1.1.0-rc.1\",\"replaces\":\"pre.v1.0.0\"}]");
    add_bundle(&sb, "pre", "1.0.0", "");
    add_bundle(&sb, "pre", "1.1.0-rc.1", "");
    fbc_catalog *c = load(&sb);
    resolve_request plain = {.package = "pre", .version_range = ">=1.0.0"};
    ASSERT_RESOLVES(run_one(&plain, c), "pre.v1.0.0");
    resolve_request opt_in = {.package = "pre", .version_range = ">=1.0.0-0"};
    ASSERT_RESOLVES(run_one(&opt_in, c), "pre.v1.1.0-rc.1");
    /* No range at all: the highest version wins, prerelease or not. */
    resolve_request any = {.package = "pre"};
    ASSERT_RESOLVES(run_one(&any, c), "pre.v1.1.0-rc.1");
    fbc_catalog_free(c);
}

static void test_successors_from_replaces(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    resolve_installed inst = {.bundle_name = "test.v1.0.0", .version = "1.0.0"};
    /* Pinned 1.0.1 is a successor of 1.0.0 (replaces in beta). */
    resolve_request req = {.package = "test", .version_range = "1.0.1", .installed = &inst};
    ASSERT_RESOLVES(run_one(&req, c), "test.v1.0.1");
    /* 1.2.0 replaces 1.0.1, not 1.0.0: refused with upstream's exact message. */
    resolve_request jump = {.package = "test", .version_range = "1.2.0", .installed = &inst};
    ASSERT_FAILS(run_one(&jump, c),
                 "error upgrading from currently installed version \"1.0.0\": no bundles found for package \"test\" "
                 "matching version \"1.2.0\"");
    /* No range: the highest direct successor (1.0.2 in alpha beats 1.0.1 in beta). */
    resolve_request any = {.package = "test", .installed = &inst};
    ASSERT_RESOLVES(run_one(&any, c), "test.v1.0.2");
    /* Channel beta only: edges come only from beta. */
    const char *beta[] = {"beta"};
    resolve_request in_beta = {.package = "test", .channels = beta, .nchannels = 1, .installed = &inst};
    ASSERT_RESOLVES(run_one(&in_beta, c), "test.v1.0.1");
    fbc_catalog_free(c);
}

static void test_self_certified_allows_any(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    resolve_installed inst = {.bundle_name = "test.v1.0.0", .version = "1.0.0"};
    resolve_request jump = {.package = "test", .version_range = "1.2.0", .installed = &inst,
                            .policy = RESOLVE_POLICY_SELF_CERTIFIED};
    ASSERT_RESOLVES(run_one(&jump, c), "test.v1.2.0");
    resolve_installed high = {.bundle_name = "test.v1.2.0", .version = "1.2.0"};
    resolve_request down = {.package = "test", .version_range = "1.0.0", .installed = &high,
                            .policy = RESOLVE_POLICY_SELF_CERTIFIED};
    ASSERT_RESOLVES(run_one(&down, c), "test.v1.0.0");
    fbc_catalog_free(c);
}

static void test_stay_put_when_no_successor(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    resolve_installed inst = {.bundle_name = "test.v1.2.0", .version = "1.2.0"};
    resolve_request req = {.package = "test", .installed = &inst};
    ASSERT_RESOLVES(run_one(&req, c), "test.v1.2.0");
    /* 1.0.4 has no edges: installed 1.0.4 has no successor but stays put. */
    resolve_installed lone = {.bundle_name = "test.v1.0.4", .version = "1.0.4"};
    resolve_request req2 = {.package = "test", .installed = &lone};
    ASSERT_RESOLVES(run_one(&req2, c), "test.v1.0.4");
    fbc_catalog_free(c);
}

static void test_skips_and_skip_range(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    add_package(&sb, "sk", "stable");
    add_channel(&sb, "sk", "stable",
                "[{\"name\":\"sk.v1.0.0\"},"
                "{\"name\":\"sk.v1.1.0\",\"skips\":[\"sk.v1.0.0\"]},"
                "{\"name\":\"sk.v2.0.0\",\"skipRange\":\">=1.0.0 <1.1.0\"},"
                "{\"name\":\"sk.v3.0.0\",\"skipRange\":\"~1.0.0\"},"
                "{\"name\":\"sk.v4.0.0\",\"skipRange\":\">=1.1.0 <2.0.0\"}]");
    const char *versions[] = {"1.0.0", "1.1.0", "2.0.0", "3.0.0", "4.0.0"};
    for (size_t i = 0; i < 5; i++)
        add_bundle(&sb, "sk", versions[i], "");
    fbc_catalog *c = load(&sb);

    /* From 1.0.0: 1.1.0 (skips) and 2.0.0 (blang skipRange) are successors; 3.0.0's
     * "~1.0.0" is invalid blang syntax and is ignored; 4.0.0's range misses. */
    resolve_installed inst = {.bundle_name = "sk.v1.0.0", .version = "1.0.0"};
    resolve_request req = {.package = "sk", .installed = &inst};
    ASSERT_RESOLVES(run_one(&req, c), "sk.v2.0.0");
    /* From 1.1.0: only 4.0.0's skipRange covers it. */
    resolve_installed inst2 = {.bundle_name = "sk.v1.1.0", .version = "1.1.0"};
    resolve_request req2 = {.package = "sk", .installed = &inst2};
    ASSERT_RESOLVES(run_one(&req2, c), "sk.v4.0.0");
    /* skipRange uses blang: a prerelease below 1.1.0 is inside ">=1.0.0 <1.1.0"
     * (no prerelease gate), so 2.0.0 succeeds an installed 1.0.5-rc.1. */
    resolve_installed pre = {.bundle_name = "sk.v1.0.5-rc.1", .version = "1.0.5-rc.1"};
    resolve_request req3 = {.package = "sk", .installed = &pre, .version_range = "<3.0.0"};
    ASSERT_RESOLVES(run_one(&req3, c), "sk.v2.0.0");
    fbc_catalog_free(c);
}

static void test_installed_version_unparsable(void **state)
{
    (void)state;
    fbc_catalog *c = update_catalog("test");
    resolve_installed inst = {.bundle_name = "test.v1.0.0", .version = "1.0"};
    resolve_request req = {.package = "test", .installed = &inst};
    outcome o = run_one(&req, c);
    assert_int_equal(o.rc, -1);
    assert_non_null(strstr(o.error, "error walking catalogs: error finding upgrade edges: "));
    fbc_catalog_free(c);
}

static fbc_catalog *deprecated_catalog(const char *pkg, const char *deprecated_version)
{
    strbuf sb = STRBUF_INIT;
    add_package(&sb, pkg, "stable");
    char entries[512];
    snprintf(entries, sizeof entries, "[{\"name\":\"%s.v1.1.0\"},{\"name\":\"%s.v1.2.0\",\"replaces\":\"%s.v1.1.0\"}]",
             pkg, pkg, pkg);
    add_channel(&sb, pkg, "stable", entries);
    add_bundle(&sb, pkg, "1.1.0", "");
    add_bundle(&sb, pkg, "1.2.0", "");
    if (deprecated_version)
        strbuf_printf(&sb,
                      "{\"schema\":\"olm.deprecations\",\"package\":\"%s\",\"entries\":[{\"reference\":{\"schema\":"
                      "\"olm.bundle\",\"name\":\"%s.v%s\"},\"message\":\"do not use %s\"}]}\n",
                      pkg, pkg, deprecated_version, deprecated_version);
    return load(&sb);
}

static void test_deprecated_bundles_sort_last(void **state)
{
    (void)state;
    fbc_catalog *c = deprecated_catalog("dep", "1.2.0");
    resolve_request req = {.package = "dep"};
    ASSERT_RESOLVES(run_one(&req, c), "dep.v1.1.0");
    /* If only the deprecated bundle is allowed, it is still chosen. */
    resolve_request pinned = {.package = "dep", .version_range = "1.2.0"};
    ASSERT_RESOLVES(run_one(&pinned, c), "dep.v1.2.0");
    fbc_catalog_free(c);
}

static void test_multiple_catalogs(void **state)
{
    (void)state;
    fbc_catalog *a = update_catalog("test"), *b = update_catalog("test"), *d = update_catalog("test");
    resolve_request req = {.package = "test"};

    resolve_catalog same[] = {{.name = "test", .fbc = a}, {.name = "extra", .fbc = b}};
    ASSERT_FAILS(run(&req, same, 2),
                 "found bundles for package \"test\" in multiple catalogs with the same priority [extra test]");

    resolve_catalog prio[] = {{.name = "test", .fbc = a}, {.name = "extra", .fbc = b, .priority = 5}};
    outcome o = run(&req, prio, 2);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.catalog, "extra");

    /* Top two tie: every candidate stays in the message, the lower one too (upstream quirk). */
    resolve_catalog three[] = {{.name = "c", .fbc = a, .priority = 1},
                               {.name = "b", .fbc = b, .priority = 1},
                               {.name = "a", .fbc = d, .priority = 0}};
    resolve_installed inst = {.bundle_name = "test.v1.0.0", .version = "1.0.0"};
    resolve_request up = {.package = "test", .installed = &inst, .version_range = ">=1.0.0"};
    ASSERT_FAILS(run(&up, three, 3),
                 "error upgrading from currently installed version \"1.0.0\": found bundles for package \"test\" "
                 "matching version \">=1.0.0\" in multiple catalogs with the same priority [a b c]");

    /* An Unavailable catalog is skipped. */
    resolve_catalog unavailable[] = {{.name = "test", .fbc = a}, {.name = "extra", .fbc = b, .unavailable = true}};
    o = run(&req, unavailable, 2);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.catalog, "test");

    /* A catalog that cannot be read aborts resolution. */
    resolve_catalog broken[] = {{.name = "test", .fbc = a},
                                {.name = "extra", .fetch_error = "catalog \"extra\" is not being served"}};
    ASSERT_FAILS(run(&req, broken, 2),
                 "error walking catalogs: error getting package \"test\" from catalog \"extra\": catalog \"extra\" "
                 "is not being served");
    fbc_catalog_free(a);
    fbc_catalog_free(b);
    fbc_catalog_free(d);
}

static void test_deprecation_beats_priority(void **state)
{
    (void)state;
    fbc_catalog *high = deprecated_catalog("dep", "1.2.0"), *low = deprecated_catalog("dep", NULL);
    /* In "high", 1.2.0 is deprecated so its candidate is 1.1.0 (not deprecated);
     * pinned to 1.2.0, high's candidate is deprecated and low's is not: low wins. */
    resolve_request req = {.package = "dep", .version_range = "1.2.0"};
    resolve_catalog cats[] = {{.name = "high", .fbc = high, .priority = 10}, {.name = "low", .fbc = low}};
    outcome o = run(&req, cats, 2);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.catalog, "low");
    fbc_catalog_free(high);
    fbc_catalog_free(low);
}

static void test_dependencies_rejected(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    add_package(&sb, "deps", "stable");
    add_channel(&sb, "deps", "stable", "[{\"name\":\"deps.v1.0.0\"}]");
    add_bundle(&sb, "deps", "1.0.0",
               ",{\"type\":\"olm.gvk\",\"value\":{\"group\":\"a\",\"kind\":\"B\",\"version\":\"v1\"}},"
               "{\"type\":\"olm.package.required\",\"value\":{\"packageName\":\"x\",\"versionRange\":\">=1\"}}");
    fbc_catalog *c = load(&sb);
    resolve_request req = {.package = "deps"};
    ASSERT_FAILS(run_one(&req, c),
                 "validating bundle \"deps.v1.0.0\": bundle \"deps.v1.0.0\" has a dependency declared via property "
                 "\"olm.package.required\" which is currently not supported");
    fbc_catalog_free(c);
}

static void test_release_orders_equal_versions(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    add_package(&sb, "rel", "stable");
    add_channel(&sb, "rel", "stable",
                "[{\"name\":\"rel.v1.0.0\"},{\"name\":\"rel.v1.0.0+1\",\"replaces\":\"rel.v1.0.0\"},"
                "{\"name\":\"rel.v1.0.0+2\",\"replaces\":\"rel.v1.0.0+1\"}]");
    add_bundle(&sb, "rel", "1.0.0", "");
    add_bundle(&sb, "rel", "1.0.0+2", "");
    add_bundle(&sb, "rel", "1.0.0+1", "");
    fbc_catalog *c = load(&sb);
    resolve_request req = {.package = "rel"};
    outcome o = run_one(&req, c);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.bundle, "rel.v1.0.0+2");
    assert_string_equal(o.version, "1.0.0+2");
    /* The range sees 1.0.0 for all three (release is not part of the version). */
    resolve_request pinned = {.package = "rel", .version_range = "=1.0.0"};
    ASSERT_RESOLVES(run_one(&pinned, c), "rel.v1.0.0+2");
    /* Installed 1.0.0+1: replaces gives +2; stay-put matches +1 only, not 1.0.0. */
    resolve_installed inst = {.bundle_name = "rel.v1.0.0+1", .version = "1.0.0+1"};
    resolve_request up = {.package = "rel", .installed = &inst};
    ASSERT_RESOLVES(run_one(&up, c), "rel.v1.0.0+2");
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latest_without_filters),
        cmocka_unit_test(test_channel_filter),
        cmocka_unit_test(test_version_ranges),
        cmocka_unit_test(test_no_match_messages),
        cmocka_unit_test(test_prerelease_needs_prerelease_in_range),
        cmocka_unit_test(test_successors_from_replaces),
        cmocka_unit_test(test_self_certified_allows_any),
        cmocka_unit_test(test_stay_put_when_no_successor),
        cmocka_unit_test(test_skips_and_skip_range),
        cmocka_unit_test(test_installed_version_unparsable),
        cmocka_unit_test(test_deprecated_bundles_sort_last),
        cmocka_unit_test(test_multiple_catalogs),
        cmocka_unit_test(test_deprecation_beats_priority),
        cmocka_unit_test(test_dependencies_rejected),
        cmocka_unit_test(test_release_orders_equal_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
