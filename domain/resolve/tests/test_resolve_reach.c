/* resolve_reachable: transitive upgrade edges from the installed bundle, per channel,
 * ignoring the version range. */
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

static void add_bundle(strbuf *sb, const char *version)
{
    strbuf_printf(sb,
                  "{\"schema\":\"olm.bundle\",\"name\":\"p.v%s\",\"package\":\"p\",\"image\":\"r/p:%s\","
                  "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"%s\"}}]}\n",
                  version, version, version);
}

/* stable: 1.11.0 <- 1.12.0 (replaces) <- 1.13.0 (skips 1.12.0) <- 1.14.0 (skipRange <1.14.0)
 * fast:   1.12.0 <- 2.0.0 (replaces)
 * 3.0.0 is in stable but has no edge into it; 0.9.0 is replaced by nothing. */
static fbc_catalog *chain_catalog(void)
{
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"stable\"}\n");
    strbuf_puts(&sb, "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"p\",\"entries\":["
                     "{\"name\":\"p.v1.11.0\"},"
                     "{\"name\":\"p.v1.12.0\",\"replaces\":\"p.v1.11.0\"},"
                     "{\"name\":\"p.v1.13.0\",\"skips\":[\"p.v1.12.0\"]},"
                     "{\"name\":\"p.v1.14.0\",\"skipRange\":\">=1.13.0 <1.14.0\"},"
                     "{\"name\":\"p.v3.0.0\"},{\"name\":\"p.v0.9.0\"}]}\n");
    strbuf_puts(&sb, "{\"schema\":\"olm.channel\",\"name\":\"fast\",\"package\":\"p\",\"entries\":["
                     "{\"name\":\"p.v1.12.0\"},{\"name\":\"p.v2.0.0\",\"replaces\":\"p.v1.12.0\"}]}\n");
    const char *versions[] = {"0.9.0", "1.11.0", "1.12.0", "1.13.0", "1.14.0", "2.0.0", "3.0.0"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        add_bundle(&sb, versions[i]);
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(sb.data, sb.len, "test", &err);
    if (!c)
        fail_msg("load: %s", err.msg);
    strbuf_free(&sb);
    return c;
}

/* The reachable bundle names, comma-separated, in the order found. */
static void reach_names(const fbc_catalog *c, const resolve_request *req, char *buf, size_t size, char *hi,
                        size_t hisize)
{
    resolve_reach r;
    olm_error err;
    assert_int_equal(resolve_reachable(c, req, &r, &err), 0);
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r.n; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? "," : "", r.bundles[i]->name);
    snprintf(hi, hisize, "%s", r.highest ? r.highest->name : "-");
    for (size_t i = 0; i < r.n; i++)
        assert_true(resolve_reach_contains(&r, r.bundles[i]));
    resolve_reach_free(&r);
}

static void test_transitive_in_one_channel(void **state)
{
    (void)state;
    fbc_catalog *c = chain_catalog();
    const char *stable[] = {"stable"};
    resolve_installed inst = {"p.v1.11.0", "1.11.0"};
    /* The range would stop the resolver at 1.12.0; reach ignores it. */
    resolve_request req = {.package = "p", .version_range = ">=1.11, <1.13", .channels = stable, .nchannels = 1,
                           .installed = &inst};
    char names[512], hi[64];
    reach_names(c, &req, names, sizeof names, hi, sizeof hi);
    assert_string_equal(names, "p.v1.12.0,p.v1.13.0,p.v1.14.0");
    assert_string_equal(hi, "p.v1.14.0");
    fbc_catalog_free(c);
}

static void test_all_channels_when_none_requested(void **state)
{
    (void)state;
    fbc_catalog *c = chain_catalog();
    resolve_installed inst = {"p.v1.12.0", "1.12.0"};
    resolve_request req = {.package = "p", .installed = &inst};
    char names[512], hi[64];
    reach_names(c, &req, names, sizeof names, hi, sizeof hi);
    assert_string_equal(names, "p.v1.13.0,p.v2.0.0,p.v1.14.0");
    assert_string_equal(hi, "p.v2.0.0");
    /* Only "fast": 2.0.0 replaces 1.12.0 there; stable's edges do not count. */
    const char *fast[] = {"fast"};
    req.channels = fast;
    req.nchannels = 1;
    reach_names(c, &req, names, sizeof names, hi, sizeof hi);
    assert_string_equal(names, "p.v2.0.0");
    assert_string_equal(hi, "p.v2.0.0");
    fbc_catalog_free(c);
}

static void test_nothing_reachable(void **state)
{
    (void)state;
    fbc_catalog *c = chain_catalog();
    char names[512], hi[64];
    /* 3.0.0 is higher but no edge leads to it. */
    resolve_installed top = {"p.v1.14.0", "1.14.0"};
    resolve_request req = {.package = "p", .installed = &top};
    reach_names(c, &req, names, sizeof names, hi, sizeof hi);
    assert_string_equal(names, "");
    assert_string_equal(hi, "-");
    /* Nothing installed: no edges to follow. */
    resolve_request fresh = {.package = "p"};
    reach_names(c, &fresh, names, sizeof names, hi, sizeof hi);
    assert_string_equal(names, "");
    assert_string_equal(hi, "-");
    fbc_catalog_free(c);
}

/* An installed bundle the catalog no longer has still starts the walk by name and
 * version (skipRange sees its version). */
static void test_installed_gone_from_catalog(void **state)
{
    (void)state;
    fbc_catalog *c = chain_catalog();
    resolve_installed gone = {"p.v1.13.5", "1.13.5"};
    resolve_request req = {.package = "p", .installed = &gone};
    char names[512], hi[64];
    reach_names(c, &req, names, sizeof names, hi, sizeof hi);
    assert_string_equal(names, "p.v1.14.0");
    assert_string_equal(hi, "p.v1.14.0");
    fbc_catalog_free(c);
}

/* Edges that loop back (a replaces b, b replaces a) end the walk: each bundle once. */
static void test_cycles_end(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "{\"schema\":\"olm.package\",\"name\":\"p\"}\n"
                     "{\"schema\":\"olm.channel\",\"name\":\"c\",\"package\":\"p\",\"entries\":["
                     "{\"name\":\"p.v1.0.0\",\"replaces\":\"p.v2.0.0\"},{\"name\":\"p.v2.0.0\",\"replaces\":\"p.v1.0.0\"},"
                     "{\"name\":\"p.v1.5.0\",\"replaces\":\"p.v2.0.0\"}]}\n");
    add_bundle(&sb, "1.0.0");
    add_bundle(&sb, "2.0.0");
    add_bundle(&sb, "1.5.0");
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(sb.data, sb.len, "test", &err);
    strbuf_free(&sb);
    assert_non_null(c);
    resolve_installed inst = {"p.v1.0.0", "1.0.0"};
    resolve_request req = {.package = "p", .installed = &inst};
    char names[512], hi[64];
    reach_names(c, &req, names, sizeof names, hi, sizeof hi);
    assert_string_equal(names, "p.v2.0.0,p.v1.5.0");
    assert_string_equal(hi, "p.v2.0.0");
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitive_in_one_channel),
        cmocka_unit_test(test_all_channels_when_none_requested),
        cmocka_unit_test(test_nothing_reachable),
        cmocka_unit_test(test_installed_gone_from_catalog),
        cmocka_unit_test(test_cycles_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
