/* bundle_config: the inline config rules that domain/render/tests/test_render_config.c
 * leaves out: the deploymentConfig field and item types, the order and format of several
 * errors (upstream's "multiple errors found" list, jsonschema's "validation failed" group in
 * the anyOf branch), lengths counted in characters, gates turning off a required field, and
 * what a valid config hands back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

#define P BUNDLE_CONFIG_ERROR_PREFIX
#define ALL INSTALL_MODE_ALL
#define OWN INSTALL_MODE_OWN
#define SINGLE INSTALL_MODE_SINGLE

/* The message for `config` (JSON text, NULL: none) installed into `ns`, or "ok". */
static const char *check_in(unsigned modes, const char *ns, const char *config, bundle_config_gates gates)
{
    static olm_error err;
    json_t *cfg = NULL;
    if (config) {
        json_error_t je;
        cfg = json_loads(config, JSON_DECODE_ANY, &je);
        if (!cfg)
            fail_msg("bad JSON in test: %s", config);
    }
    bundle_config out;
    int rc = bundle_config_validate_gated(modes, ns, cfg, gates, &out, &err);
    json_decref(cfg);
    if (rc == 0) {
        bundle_config_free(&out);
        return "ok";
    }
    assert_null(out.watch_namespace);
    assert_null(out.deployment_config);
    return err.msg;
}

static const char *check(unsigned modes, const char *config)
{
    return check_in(modes, "install-ns", config, BUNDLE_CONFIG_ALL_GATES);
}

static void test_deployment_config_field_types(void **state)
{
    (void)state;
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"resources\":[]}}"),
                        P "invalid type for field \"deploymentConfig.resources\": got array, want object");
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"tolerations\":{}}}"),
                        P "invalid type for field \"deploymentConfig.tolerations\": got object, want array");
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"affinity\":true}}"),
                        P "invalid type for field \"deploymentConfig.affinity\": got boolean, want object");
    /* A null field is as good as an absent one. */
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"resources\":null,\"env\":null}}"), "ok");
    assert_string_equal(check(ALL, "{\"deploymentConfig\":7}"),
                        P "invalid type for field \"deploymentConfig\": got number, want object");
}

static void test_deployment_config_map_values_are_strings(void **state)
{
    (void)state;
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"annotations\":{\"a\":\"x\",\"b\":1.5}}}"),
                        P "invalid type for field \"deploymentConfig.annotations.b\": got number, want string");
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"nodeSelector\":{\"zone\":null}}}"),
                        P "invalid type for field \"deploymentConfig.nodeSelector.zone\": got null, want string");
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"nodeSelector\":{\"zone\":\"a\"}}}"), "ok");
}

static void test_deployment_config_items(void **state)
{
    (void)state;
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"tolerations\":[{},\"x\"]}}"),
                        P "invalid type for field \"deploymentConfig.tolerations.1\": got string, want object");
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"volumes\":[{\"name\":\"v\"},{\"emptyDir\":{}}]}}"),
                        P "required field \"name\" is missing");
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"volumeMounts\":[{\"name\":5}]}}"),
                        P "required field \"name\" is missing");
    /* envFrom items need no name. */
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"envFrom\":[{\"configMapRef\":{\"name\":\"c\"}}]}}"), "ok");
}

static void test_unknown_fields_first_in_document_order(void **state)
{
    (void)state;
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"zeta\":1,\"alpha\":2}}"),
                        P "unknown field \"zeta\"");
    assert_string_equal(check(ALL, "{\"zeta\":1,\"alpha\":2}"), P "unknown field \"zeta\"");
    assert_string_equal(check(ALL, "\"text\""), P "invalid type: got string, want object");
}

static void test_several_errors_listed(void **state)
{
    (void)state;
    assert_string_equal(check(ALL, "{\"deploymentConfig\":{\"env\":\"x\",\"volumes\":{}},\"other\":1}"),
                        P "multiple errors found:\n"
                          "  - invalid type for field \"deploymentConfig.env\": got string, want array\n"
                          "  - invalid type for field \"deploymentConfig.volumes\": got object, want array\n"
                          "  - unknown field \"other\"");
}

/* AllNamespaces too: watchNamespace is anyOf [null, string]; a string failing two rules of
 * the string branch is jsonschema's "validation failed" group. */
static void test_any_of_branch_with_several_errors(void **state)
{
    (void)state;
    assert_string_equal(check_in(ALL | SINGLE, "Bad_NS", "{\"watchNamespace\":\"Bad_NS\"}", BUNDLE_CONFIG_ALL_GATES),
                        P "multiple errors found:\n"
                          "  - invalid value for field \"watchNamespace\"\n"
                          "  - invalid type for field \"watchNamespace\": got string, want null\n"
                          "  - validation failed\n"
                          "  - invalid format for field \"watchNamespace\": 'Bad_NS' is not valid "
                          "singleNamespaceInstallMode: invalid value \"Bad_NS\": must be different from \"Bad_NS\" "
                          "(the install namespace) because this operator uses SingleNamespace install mode to watch "
                          "a different namespace\n"
                          "  - field \"watchNamespace\" must match pattern \"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\"");
    assert_string_equal(check(ALL | OWN, "{\"watchNamespace\":[]}"),
                        P "multiple errors found:\n"
                          "  - invalid value for field \"watchNamespace\"\n"
                          "  - invalid type for field \"watchNamespace\": got array, want null\n"
                          "  - invalid type for field \"watchNamespace\": got array, want string");
}

static void test_length_counts_characters(void **state)
{
    (void)state;
    char cfg[512] = "{\"watchNamespace\":\"";
    for (int i = 0; i < 63; i++)
        strcat(cfg, "\xc3\xa9"); /* é: 63 characters, 126 bytes */
    strcat(cfg, "\"}");
    const char *m = check(SINGLE, cfg);
    /* Not too long (63 characters), only not a DNS label. */
    assert_string_equal(m, P "field \"watchNamespace\" must match pattern \"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\"");
}

static void test_gates_off_make_nothing_required(void **state)
{
    (void)state;
    bundle_config_gates none = {0};
    assert_string_equal(check_in(OWN, "install-ns", NULL, none), "ok");
    assert_string_equal(check_in(OWN, "install-ns", "{\"watchNamespace\":\"install-ns\"}", none),
                        P "unknown field \"watchNamespace\"");
    assert_string_equal(check_in(OWN, "install-ns", NULL, BUNDLE_CONFIG_ALL_GATES),
                        P "required field \"watchNamespace\" is missing");
}

static void test_valid_config_handed_back(void **state)
{
    (void)state;
    json_t *cfg = json_loads("{\"watchNamespace\":\"team-a\",\"deploymentConfig\":{\"env\":[{\"name\":\"A\"}]}}", 0, NULL);
    assert_non_null(cfg);
    bundle_config out;
    olm_error err;
    assert_int_equal(bundle_config_validate(ALL | SINGLE, "install-ns", cfg, &out, &err), 0);
    assert_string_equal(out.watch_namespace, "team-a");
    assert_ptr_equal(out.deployment_config, json_object_get(cfg, "deploymentConfig"));
    json_decref(cfg);
    /* Its own references: still usable after the config is gone. */
    assert_int_equal(json_array_size(json_object_get(out.deployment_config, "env")), 1);
    bundle_config_free(&out);
    assert_null(out.watch_namespace);
    assert_null(out.deployment_config);
    /* A null watchNamespace hands back none. */
    cfg = json_loads("{\"watchNamespace\":null}", 0, NULL);
    assert_int_equal(bundle_config_validate(ALL | OWN, "install-ns", cfg, &out, &err), 0);
    assert_null(out.watch_namespace);
    bundle_config_free(&out);
    json_decref(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deployment_config_field_types),
        cmocka_unit_test(test_deployment_config_map_values_are_strings),
        cmocka_unit_test(test_deployment_config_items),
        cmocka_unit_test(test_unknown_fields_first_in_document_order),
        cmocka_unit_test(test_several_errors_listed),
        cmocka_unit_test(test_any_of_branch_with_several_errors),
        cmocka_unit_test(test_length_counts_characters),
        cmocka_unit_test(test_gates_off_make_nothing_required),
        cmocka_unit_test(test_valid_config_handed_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
