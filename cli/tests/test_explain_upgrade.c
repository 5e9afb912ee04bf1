/* explain_upgrade_json: the Upgrade section's words and fields from an outlook. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cluster.h"
#include "explain_upgrade.h"

static void test_stays_because_of_the_range(void **state)
{
    (void)state;
    extension_outlook o = {.resolved = true, .next_bundle = "p.v1.12.0", .next_version = "1.12.0",
                           .next_catalog = "hidden", .reach_bundle = "p.v1.14.0", .reach_version = "1.14.0",
                           .reach_catalog = "hidden"};
    resolve_installed inst = {"p.v1.12.0", "1.12.0"};
    resolve_request req = {.package = "p", .version_range = ">=1.11, <1.13", .installed = &inst};
    json_t *up = explain_upgrade_json("ext", &req, &o, NULL);
    assert_non_null(up);
    assert_string_equal(cluster_str(up, "summary"), "stays at 1.12.0: the newest your version range \">=1.11, <1.13\" allows");
    assert_string_equal(cluster_str(up, "reachable"),
                        "1.14.0 (p.v1.14.0, outside the version range \">=1.11, <1.13\": widen it with olmv1 upgrade "
                        "extension ext --version '>=1.12.0, <=1.14.0')");
    assert_true(json_is_null(json_object_get(up, "next")));
    assert_string_equal(cluster_str(up, "highestReachable.version"), "1.14.0");
    assert_true(json_is_false(json_object_get(json_object_get(up, "highestReachable"), "inRange")));
    json_decref(up);
}

static void test_moves_by_an_edge(void **state)
{
    (void)state;
    extension_outlook o = {.resolved = true, .moves = true, .next_bundle = "p.v1.13.0", .next_version = "1.13.0",
                           .next_catalog = "hidden", .reach_bundle = "p.v1.13.0", .reach_version = "1.13.0",
                           .reach_catalog = "hidden", .reach_in_range = true};
    json_t *cands = json_pack("[{s:s, s:s, s:[s, s], s:s}]", "catalog", "hidden", "bundle", "p.v1.13.0",
                              "channels", "fast", "stable", "edge", "replaces p.v1.12.0");
    resolve_installed inst = {"p.v1.12.0", "1.12.0"};
    const char *stable[] = {"stable"};
    resolve_request req = {.package = "p", .channels = stable, .nchannels = 1, .installed = &inst};
    json_t *up = explain_upgrade_json("ext", &req, &o, cands);
    /* Only the channels the spec asks for: the edge came from those. */
    assert_string_equal(cluster_str(up, "summary"),
                        "would upgrade to 1.13.0 (catalog hidden, channel stable, replaces p.v1.12.0)");
    json_decref(up);
    req.nchannels = 0;
    up = explain_upgrade_json("ext", &req, &o, cands);
    assert_string_equal(cluster_str(up, "summary"),
                        "would upgrade to 1.13.0 (catalog hidden, channels fast, stable, replaces p.v1.12.0)");
    assert_string_equal(cluster_str(up, "next.edge"), "replaces p.v1.12.0");
    assert_string_equal(cluster_str(up, "reachable"), "1.13.0 (p.v1.13.0, within the version range)");
    json_decref(up);
    /* The top of the graph: nothing further. */
    extension_outlook top = {.resolved = true, .next_bundle = "p.v1.12.0", .next_version = "1.12.0",
                             .next_catalog = "hidden"};
    up = explain_upgrade_json("ext", &req, &top, cands);
    assert_string_equal(cluster_str(up, "summary"), "stays at 1.12.0: no upgrade edge leads further from it in its channels");
    assert_string_equal(cluster_str(up, "reachable"),
                        "none: no upgrade edge (replaces, skips, skipRange) leads from p.v1.12.0");
    json_decref(up);
    json_decref(cands);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stays_because_of_the_range),
        cmocka_unit_test(test_moves_by_an_edge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
