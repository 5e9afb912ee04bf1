/* Unit tests of explain_candidates on real catalog data (shared/data/catalogs-small/sample20):
 * the verdict of each resolver filter on every bundle, and the upgrade edge from the
 * installed bundle (replaces, skipRange, same version), matching `olmv1 resolve`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain_candidates.h"

static fbc_catalog *cat;

static int setup(void **state)
{
    (void)state;
    char dir[1024];
    const char *shared = getenv("OLMV1_SHARED");
    snprintf(dir, sizeof dir, "%s/data/catalogs-small/sample20", shared ? shared : "../../../shared");
    olm_error err;
    cat = fbc_load_dir(dir, &err);
    if (!cat)
        fprintf(stderr, "%s\n", err.msg);
    return cat ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fbc_catalog_free(cat);
    return 0;
}

static const json_t *find(const json_t *arr, const char *bundle)
{
    size_t i;
    const json_t *c;
    json_array_foreach(arr, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "bundle")), bundle) == 0)
            return c;
    }
    fail_msg("no candidate %s", bundle);
    return NULL;
}

static const char *str(const json_t *c, const char *key)
{
    const char *s = json_string_value(json_object_get(c, key));
    return s ? s : "(null)";
}

static void test_no_successor_in_channel(void **state)
{
    (void)state;
    const char *channels[] = {"stable-3.17"};
    resolve_installed inst = {"quay-operator.v3.15.2", "3.15.2"};
    resolve_request req = {"project-quay", NULL, channels, 1, RESOLVE_POLICY_CATALOG_PROVIDED, &inst};
    json_t *out = json_array();
    olm_error err;
    assert_int_equal(explain_candidates(cat, "sample", &req, out, &err), 0);
    assert_int_equal(json_array_size(out), 152);
    size_t i, in = 0;
    const json_t *c;
    json_array_foreach(out, i, c) {
        if (json_is_true(json_object_get(c, "inChannels"))) {
            in++;
            assert_string_equal(str(c, "verdict"), "no upgrade edge from quay-operator.v3.15.2");
        } else {
            assert_string_equal(str(c, "verdict"), "not in channels [stable-3.17]");
        }
    }
    assert_int_equal(in, 5); /* as `olmv1 resolve` says: 5 kept by the channel, 0 successors */
    /* Highest version first. */
    assert_string_equal(str(json_array_get(out, 0), "version"), str(find(out, "quay-operator.v3.17.4"), "version"));
    json_decref(out);

    /* SelfCertified: no edge is looked for. */
    req.policy = RESOLVE_POLICY_SELF_CERTIFIED;
    out = json_array();
    assert_int_equal(explain_candidates(cat, "sample", &req, out, &err), 0);
    c = find(out, "quay-operator.v3.17.4");
    assert_true(json_is_null(json_object_get(c, "edge")));
    assert_string_equal(str(c, "verdict"), "candidate");
    json_decref(out);
}

static void test_edges_and_range(void **state)
{
    (void)state;
    resolve_installed inst = {"tigera-operator.v1.38.0", "1.38.0"};
    resolve_request req = {"tigera-operator", ">=1.38, <1.40", NULL, 0, RESOLVE_POLICY_CATALOG_PROVIDED, &inst};
    json_t *out = json_array();
    olm_error err;
    assert_int_equal(explain_candidates(cat, "sample", &req, out, &err), 0);
    const json_t *top = find(out, "tigera-operator.v1.40.4");
    assert_string_equal(str(top, "verdict"), "not in range >=1.38, <1.40");
    assert_string_equal(str(top, "edge"), "skipRange <1.40.4"); /* the edge resolve's "skiprange" case uses */
    assert_string_equal(str(find(out, "tigera-operator.v1.38.2"), "verdict"), "candidate");
    const json_t *same = find(out, "tigera-operator.v1.38.0");
    assert_string_equal(str(same, "edge"), "same version");
    assert_string_equal(str(same, "verdict"), "candidate");
    json_decref(out);

    req.version_range = ">>nonsense";
    out = json_array();
    assert_int_equal(explain_candidates(cat, "sample", &req, out, &err), -1);
    assert_non_null(strstr(err.msg, "desired version range \">>nonsense\" is invalid"));
    json_decref(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_successor_in_channel),
                                       cmocka_unit_test(test_edges_and_range)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
