#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "resolve.h"

static const char *deprecations_json =
    "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"stable\"}\n"
    "{\"schema\":\"olm.deprecations\",\"package\":\"p\",\"entries\":["
    "{\"reference\":{\"schema\":\"olm.package\"},\"message\":\"package p is end of life\"},"
    "{\"reference\":{\"schema\":\"olm.channel\",\"name\":\"alpha\"},\"message\":\"alpha is gone\"},"
    "{\"reference\":{\"schema\":\"olm.channel\",\"name\":\"beta\"},\"message\":\"beta is gone\"},"
    "{\"reference\":{\"schema\":\"olm.channel\",\"name\":\"stable\"},\"message\":\"\"},"
    "{\"reference\":{\"schema\":\"olm.bundle\",\"name\":\"p.v1.0.0\"},\"message\":\"p.v1.0.0 has a CVE\"}]}\n";

static fbc_catalog *load(void)
{
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(deprecations_json, strlen(deprecations_json), "dep", &err);
    if (!c)
        fail_msg("%s", err.msg);
    return c;
}

static void expect(const deprecation_condition *c, const char *type, const char *status, const char *reason,
                   const char *message)
{
    assert_string_equal(c->type, type);
    assert_string_equal(c->status, status);
    assert_string_equal(c->reason, reason);
    assert_string_equal(c->message, message);
}

static void test_no_catalog_data(void **state)
{
    (void)state;
    deprecation_condition out[DEPRECATION_NCONDITIONS];
    deprecation_input in = {.installed_bundle = "p.v1.0.0", .has_catalog_data = false};
    assert_int_equal(deprecation_conditions(&in, out, NULL), 0);
    const char *msg = "deprecation status unknown: catalog data unavailable";
    expect(&out[DEPRECATION_ROLLUP], "Deprecated", "Unknown", "DeprecationStatusUnknown", msg);
    expect(&out[DEPRECATION_PACKAGE], "PackageDeprecated", "Unknown", "DeprecationStatusUnknown", msg);
    expect(&out[DEPRECATION_CHANNEL], "ChannelDeprecated", "Unknown", "DeprecationStatusUnknown", msg);
    expect(&out[DEPRECATION_BUNDLE], "BundleDeprecated", "Unknown", "DeprecationStatusUnknown", msg);
    deprecation_conditions_free(out);

    in.installed_bundle = NULL;
    assert_int_equal(deprecation_conditions(&in, out, NULL), 0);
    expect(&out[DEPRECATION_BUNDLE], "BundleDeprecated", "Unknown", "Absent", "no bundle installed yet");
    deprecation_conditions_free(out);
}

static void test_everything_deprecated(void **state)
{
    (void)state;
    fbc_catalog *c = load();
    deprecation_condition out[DEPRECATION_NCONDITIONS];
    deprecation_input in = {.installed_bundle = "p.v1.0.0", .deprecation = fbc_find_deprecation(c, "p"),
                            .has_catalog_data = true};
    assert_non_null(in.deprecation);
    assert_int_equal(deprecation_conditions(&in, out, NULL), 0);
    expect(&out[DEPRECATION_PACKAGE], "PackageDeprecated", "True", "Deprecated", "package p is end of life");
    /* No channels requested: every channel entry counts; empty messages do not. */
    expect(&out[DEPRECATION_CHANNEL], "ChannelDeprecated", "True", "Deprecated", "alpha is gone\nbeta is gone");
    expect(&out[DEPRECATION_BUNDLE], "BundleDeprecated", "True", "Deprecated", "p.v1.0.0 has a CVE");
    expect(&out[DEPRECATION_ROLLUP], "Deprecated", "True", "Deprecated",
           "package p is end of life\nalpha is gone\nbeta is gone\np.v1.0.0 has a CVE");
    deprecation_conditions_free(out);
    fbc_catalog_free(c);
}

static void test_only_requested_channels_and_installed_bundle(void **state)
{
    (void)state;
    fbc_catalog *c = load();
    deprecation_condition out[DEPRECATION_NCONDITIONS];
    const char *channels[] = {"stable"};
    deprecation_input in = {.installed_bundle = "p.v2.0.0", .deprecation = fbc_find_deprecation(c, "p"),
                            .has_catalog_data = true, .channels = channels, .nchannels = 1};
    assert_int_equal(deprecation_conditions(&in, out, NULL), 0);
    expect(&out[DEPRECATION_CHANNEL], "ChannelDeprecated", "False", "NotDeprecated", "channel not deprecated");
    expect(&out[DEPRECATION_BUNDLE], "BundleDeprecated", "False", "NotDeprecated", "bundle not deprecated");
    expect(&out[DEPRECATION_ROLLUP], "Deprecated", "True", "Deprecated", "package p is end of life");
    deprecation_conditions_free(out);

    /* Catalog data but no deprecation blob: nothing is deprecated. */
    in.deprecation = NULL;
    in.installed_bundle = NULL;
    assert_int_equal(deprecation_conditions(&in, out, NULL), 0);
    expect(&out[DEPRECATION_ROLLUP], "Deprecated", "False", "NotDeprecated", "not deprecated");
    expect(&out[DEPRECATION_PACKAGE], "PackageDeprecated", "False", "NotDeprecated", "package not deprecated");
    expect(&out[DEPRECATION_BUNDLE], "BundleDeprecated", "Unknown", "Absent", "no bundle installed yet");
    deprecation_conditions_free(out);
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_catalog_data),
        cmocka_unit_test(test_everything_deprecated),
        cmocka_unit_test(test_only_requested_channels_and_installed_bundle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
