/* extension_outlook: the resolver's pick for the spec and the highest bundle the upgrade
 * edges reach, across the selected catalogs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "extension_outlook.h"
#include "strbuf.h"

static void add_bundle(strbuf *sb, const char *version)
{
    strbuf_printf(sb,
                  "{\"schema\":\"olm.bundle\",\"name\":\"p.v%s\",\"package\":\"p\",\"image\":\"r/p:%s\","
                  "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"%s\"}}]}\n",
                  version, version, version);
}

/* stable: 1.11.0 <- 1.12.0 <- 1.13.0 <- 1.14.0, each replacing the one before. */
static fbc_catalog *chain(size_t upto)
{
    static const char *const versions[] = {"1.11.0", "1.12.0", "1.13.0", "1.14.0"};
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "{\"schema\":\"olm.package\",\"name\":\"p\"}\n"
                     "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"p\",\"entries\":[");
    for (size_t i = 0; i < upto; i++) {
        strbuf_printf(&sb, "%s{\"name\":\"p.v%s\"", i ? "," : "", versions[i]);
        if (i)
            strbuf_printf(&sb, ",\"replaces\":\"p.v%s\"", versions[i - 1]);
        strbuf_putc(&sb, '}');
    }
    strbuf_puts(&sb, "]}\n");
    for (size_t i = 0; i < upto; i++)
        add_bundle(&sb, versions[i]);
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(sb.data, sb.len, "test", &err);
    strbuf_free(&sb);
    if (!c)
        fail_msg("load: %s", err.msg);
    return c;
}

static void test_range_stops_the_resolver_not_the_edges(void **state)
{
    (void)state;
    fbc_catalog *c = chain(4);
    resolve_catalog cats[] = {{.name = "hidden", .fbc = c}};
    resolve_installed inst = {"p.v1.11.0", "1.11.0"};
    resolve_request req = {.package = "p", .version_range = ">=1.11, <1.13", .installed = &inst};
    extension_outlook o;
    olm_error err;
    assert_int_equal(extension_outlook_compute(&req, cats, 1, &o, &err), 0);
    assert_true(o.resolved && o.moves);
    assert_string_equal(o.next_bundle, "p.v1.12.0");
    assert_string_equal(extension_outlook_next_cell(&o), "1.12.0");
    assert_string_equal(o.next_catalog, "hidden");
    assert_string_equal(extension_outlook_reach_cell(&o), "1.14.0");
    assert_false(o.reach_in_range);
    extension_outlook_free(&o);

    /* At 1.12.0 the resolver stays: NEXT is "-", REACHABLE still 1.14.0. */
    resolve_installed at = {"p.v1.12.0", "1.12.0"};
    req.installed = &at;
    assert_int_equal(extension_outlook_compute(&req, cats, 1, &o, &err), 0);
    assert_true(o.resolved && !o.moves);
    assert_string_equal(extension_outlook_next_cell(&o), "-");
    assert_string_equal(extension_outlook_reach_cell(&o), "1.14.0");
    extension_outlook_free(&o);

    /* Without a range the highest reachable is also what the resolver picks. */
    req.version_range = NULL;
    assert_int_equal(extension_outlook_compute(&req, cats, 1, &o, &err), 0);
    assert_string_equal(extension_outlook_next_cell(&o), "1.13.0");
    assert_true(o.reach_in_range);
    extension_outlook_free(&o);
    fbc_catalog_free(c);
}

static void test_highest_across_catalogs_and_unread_ones_skipped(void **state)
{
    (void)state;
    fbc_catalog *small = chain(2), *big = chain(4);
    resolve_catalog cats[] = {{.name = "a", .priority = 1, .fbc = small},
                              {.name = "b", .fbc = big, .unavailable = true}};
    resolve_installed inst = {"p.v1.11.0", "1.11.0"};
    resolve_request req = {.package = "p", .installed = &inst};
    extension_outlook o;
    olm_error err;
    assert_int_equal(extension_outlook_compute(&req, cats, 2, &o, &err), 0);
    assert_string_equal(extension_outlook_reach_cell(&o), "1.12.0");
    assert_string_equal(o.reach_catalog, "a");
    extension_outlook_free(&o);
    cats[1].unavailable = false;
    assert_int_equal(extension_outlook_compute(&req, cats, 2, &o, &err), 0);
    assert_string_equal(extension_outlook_reach_cell(&o), "1.14.0");
    assert_string_equal(o.reach_catalog, "b");
    extension_outlook_free(&o);
    fbc_catalog_free(small);
    fbc_catalog_free(big);
}

static void test_nothing_installed_or_nothing_matches(void **state)
{
    (void)state;
    fbc_catalog *c = chain(2);
    resolve_catalog cats[] = {{.name = "hidden", .fbc = c}};
    resolve_request fresh = {.package = "p"};
    extension_outlook o;
    olm_error err;
    assert_int_equal(extension_outlook_compute(&fresh, cats, 1, &o, &err), 0);
    assert_string_equal(extension_outlook_next_cell(&o), "1.12.0");
    assert_string_equal(extension_outlook_reach_cell(&o), "-");
    extension_outlook_free(&o);
    resolve_request none = {.package = "p", .version_range = ">=2"};
    assert_int_equal(extension_outlook_compute(&none, cats, 1, &o, &err), 0);
    assert_false(o.resolved);
    assert_string_equal(extension_outlook_next_cell(&o), "-");
    assert_string_equal(o.error, "no bundles found for package \"p\" matching version \">=2\"");
    extension_outlook_free(&o);
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_stops_the_resolver_not_the_edges),
        cmocka_unit_test(test_highest_across_catalogs_and_unread_ones_skipped),
        cmocka_unit_test(test_nothing_installed_or_nothing_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
