/* §5.4 config validation: every message, with the InvalidConfiguration prefix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"

#define P BUNDLE_CONFIG_ERROR_PREFIX
#define ALL INSTALL_MODE_ALL
#define OWN INSTALL_MODE_OWN
#define SINGLE INSTALL_MODE_SINGLE

static const char *check(unsigned modes, const char *config_json, olm_error *err, bundle_config *out)
{
    json_error_t je;
    json_t *cfg = config_json ? json_loads(config_json, JSON_DECODE_ANY, &je) : NULL;
    if (config_json && !cfg)
        fail_msg("bad JSON in test: %s", je.text);
    int rc = bundle_config_validate(modes, "install-ns", cfg, out, err);
    json_decref(cfg);
    return rc == 0 ? "ok" : err->msg;
}

static const char *msg(unsigned modes, const char *config_json)
{
    static olm_error err;
    bundle_config c;
    const char *m = check(modes, config_json, &err, &c);
    bundle_config_free(&c);
    return m;
}

/* With upstream's gates off (operator-controller --feature-gates), the key is not in the
 * schema: an unknown field, as upstream reports it. */
static const char *gated(unsigned modes, const char *config_json, bundle_config_gates gates)
{
    static olm_error err;
    bundle_config c;
    json_error_t je;
    json_t *cfg = config_json ? json_loads(config_json, 0, &je) : NULL;
    int rc = bundle_config_validate_gated(modes, "install-ns", cfg, gates, &c, &err);
    json_decref(cfg);
    bundle_config_free(&c);
    return rc == 0 ? "ok" : err.msg;
}

static void test_gates(void **state)
{
    (void)state;
    bundle_config_gates none = {0}, all = BUNDLE_CONFIG_ALL_GATES;
    assert_string_equal(gated(ALL | SINGLE, "{\"watchNamespace\":\"other\"}", all), "ok");
    assert_string_equal(gated(ALL | SINGLE, "{\"watchNamespace\":\"other\"}", none), P "unknown field \"watchNamespace\"");
    assert_string_equal(gated(ALL, "{\"deploymentConfig\":{\"env\":[]}}", all), "ok");
    assert_string_equal(gated(ALL, "{\"deploymentConfig\":{\"env\":[]}}", none), P "unknown field \"deploymentConfig\"");
    assert_string_equal(gated(ALL, NULL, none), "ok");
    bundle_config_gates only_dc = {.deployment_config = true};
    assert_string_equal(gated(ALL | OWN, "{\"deploymentConfig\":{}}", only_dc), "ok");
}

static void test_all_namespaces_only(void **state)
{
    (void)state;
    assert_string_equal(msg(ALL, NULL), "ok");
    assert_string_equal(msg(ALL, "{}"), "ok");
    assert_string_equal(msg(ALL, "{\"watchNamespace\":\"x\"}"), P "unknown field \"watchNamespace\"");
    assert_string_equal(msg(ALL, "{\"foo\":1}"), P "unknown field \"foo\"");
}

static void test_required(void **state)
{
    (void)state;
    assert_string_equal(msg(OWN, NULL), P "required field \"watchNamespace\" is missing");
    assert_string_equal(msg(SINGLE | OWN, "{}"), P "required field \"watchNamespace\" is missing");
    assert_string_equal(msg(SINGLE, "{\"watchNamespace\":null}"), P "required field \"watchNamespace\" is missing");
    assert_string_equal(msg(OWN, "{\"foo\":true}"),
                        P "multiple errors found:\n  - required field \"watchNamespace\" is missing\n  - unknown field \"foo\"");
}

static void test_own_and_single_formats(void **state)
{
    (void)state;
    assert_string_equal(msg(OWN, "{\"watchNamespace\":\"install-ns\"}"), "ok");
    assert_string_equal(msg(OWN, "{\"watchNamespace\":\"some-ns\"}"),
                        P "invalid format for field \"watchNamespace\": 'some-ns' is not valid ownNamespaceInstallMode: "
                          "invalid value \"some-ns\": must be \"install-ns\" (the namespace where the operator is "
                          "installed) because this operator only supports OwnNamespace install mode");
    assert_string_equal(msg(SINGLE, "{\"watchNamespace\":\"other\"}"), "ok");
    assert_string_equal(msg(SINGLE, "{\"watchNamespace\":\"install-ns\"}"),
                        P "invalid format for field \"watchNamespace\": 'install-ns' is not valid singleNamespaceInstallMode: "
                          "invalid value \"install-ns\": must be different from \"install-ns\" (the install namespace) "
                          "because this operator uses SingleNamespace install mode to watch a different namespace");
    /* Both supported: no format. */
    assert_string_equal(msg(SINGLE | OWN, "{\"watchNamespace\":\"install-ns\"}"), "ok");
    assert_string_equal(msg(SINGLE | OWN, "{\"watchNamespace\":\"other\"}"), "ok");
}

static void test_pattern_length_type(void **state)
{
    (void)state;
    assert_string_equal(msg(SINGLE, "{\"watchNamespace\":\"invalid-namespace-\"}"),
                        P "field \"watchNamespace\" must match pattern \"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\"");
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"watchNamespace\":\"%s\"}", "a123456789a123456789a123456789a123456789a123456789a123456789a123");
    assert_string_equal(msg(SINGLE, cfg), P "field \"watchNamespace\" must have maximum length of 63 (len=64)");
    assert_string_equal(msg(SINGLE, "{\"watchNamespace\":\"\"}"),
                        P "multiple errors found:\n  - field \"watchNamespace\" must have minimum length of 1 (len=0)\n"
                          "  - field \"watchNamespace\" must match pattern \"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\"");
    assert_string_equal(msg(SINGLE, "{\"watchNamespace\":5}"),
                        P "invalid type for field \"watchNamespace\": got number, want string");
    assert_string_equal(msg(SINGLE, "[]"), P "invalid type: got array, want object");
}

static void test_any_of_when_all_supported(void **state)
{
    (void)state;
    bundle_config c;
    olm_error err;
    assert_string_equal(check(ALL | OWN, "{\"watchNamespace\":null}", &err, &c), "ok");
    assert_null(c.watch_namespace);
    bundle_config_free(&c);
    assert_string_equal(check(ALL | SINGLE, "{\"watchNamespace\":\"team-a\"}", &err, &c), "ok");
    assert_string_equal(c.watch_namespace, "team-a");
    bundle_config_free(&c);
    assert_string_equal(msg(ALL | OWN, "{\"watchNamespace\":\"Bad\"}"),
                        P "multiple errors found:\n  - invalid value for field \"watchNamespace\"\n"
                          "  - invalid type for field \"watchNamespace\": got string, want null\n"
                          "  - validation failed\n" /* jsonschema's group: two errors in one branch */
                          "  - invalid format for field \"watchNamespace\": 'Bad' is not valid ownNamespaceInstallMode: "
                          "invalid value \"Bad\": must be \"install-ns\" (the namespace where the operator is installed) "
                          "because this operator only supports OwnNamespace install mode\n"
                          "  - field \"watchNamespace\" must match pattern \"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\"");
}

static void test_deployment_config(void **state)
{
    (void)state;
    bundle_config c;
    olm_error err;
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"nodeSelector\":{\"a\":\"b\"}}}", &err, &c), "ok");
    assert_non_null(c.deployment_config);
    assert_null(c.watch_namespace);
    bundle_config_free(&c);
    assert_string_equal(msg(ALL, "{\"deploymentConfig\":null}"), "ok");
    assert_string_equal(msg(ALL, "{\"deploymentConfig\":{\"selector\":{}}}"), P "unknown field \"selector\"");
    assert_string_equal(msg(ALL, "{\"deploymentConfig\":{\"env\":\"x\"}}"),
                        P "invalid type for field \"deploymentConfig.env\": got string, want array");
    assert_string_equal(msg(ALL, "{\"deploymentConfig\":[]}"),
                        P "invalid type for field \"deploymentConfig\": got array, want object");
    assert_string_equal(msg(ALL, "{\"deploymentConfig\":{\"env\":[{\"value\":\"x\"}]}}"),
                        P "required field \"name\" is missing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_namespaces_only),
        cmocka_unit_test(test_required),
        cmocka_unit_test(test_own_and_single_formats),
        cmocka_unit_test(test_pattern_length_type),
        cmocka_unit_test(test_any_of_when_all_supported),
        cmocka_unit_test(test_deployment_config),
        cmocka_unit_test(test_gates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
