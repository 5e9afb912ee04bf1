/* §5.2 rejections and §5.3 validators: exact messages.  Each case mutates a copy
 * of a valid fixture bundle so the test shows the one thing that is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "bundle.h"
#include "render.h"

#define FIX "fixtures/bundles/"

static bundle b;

static int setup(void **state)
{
    (void)state;
    olm_error err;
    return bundle_load_dir(FIX "webhook", &b, &err);
}

static int teardown(void **state)
{
    (void)state;
    bundle_free(&b);
    return 0;
}

static json_t *patch(const char *json)
{
    json_error_t je;
    json_t *v = json_loads(json, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad JSON in test: %s", je.text);
    return v;
}

/* Renders `b` after setting CSV `path` (a.b.c) to `value`; returns the message. */
static const char *render_with(const char *path, const char *value, olm_error *err)
{
    bundle c = b;
    c.csv = json_deep_copy(b.csv);
    if (path) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", path);
        char *last = strrchr(buf, '.');
        *last = '\0';
        json_t *parent = bundle_json_path(c.csv, buf);
        assert_non_null(parent);
        json_object_set_new(parent, last + 1, patch(value));
    }
    json_t *objs = NULL;
    render_options o = {"webhook-system", NULL, NULL, RENDER_CERT_OPENSHIFT_SERVICE_CA};
    int rc = render_bundle(&c, &o, &objs, err);
    json_decref(objs);
    json_decref(c.csv);
    if (rc == 0)
        return "(rendered)";
    return err->msg;
}

static void test_valid(void **state)
{
    (void)state;
    olm_error err;
    assert_string_equal(render_with(NULL, NULL, &err), "(rendered)");
}

static void test_rejections(void **state)
{
    (void)state;
    olm_error err;
    assert_string_equal(render_with("spec.apiservicedefinitions", "{\"owned\":[{\"name\":\"x\"}]}", &err),
                        "unsupported bundle: apiServiceDefintions are not supported");
    assert_string_equal(render_with("spec.installModes", "[{\"type\":\"MultiNamespace\",\"supported\":true}]", &err),
                        "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace "
                        "OwnNamespace] install modes");
}

static void test_deployment_validators(void **state)
{
    (void)state;
    olm_error err;
    json_t *dep = json_array_get(bundle_json_path(b.csv, "spec.install.spec.deployments"), 0);
    char *d = json_dumps(dep, 0);
    char list[8192];
    snprintf(list, sizeof list, "[%s,%s,{\"name\":\"Bad_Name\",\"spec\":{}}]", d, d);
    free(d);
    assert_string_equal(
        render_with("spec.install.spec.deployments", list, &err),
        "cluster service version contains duplicate strategy deployment spec 'webhook-operator.controller-manager'\n"
        "invalid cluster service version strategy deployment name 'Bad_Name': a lowercase RFC 1123 subdomain must "
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

static void test_crd_validators(void **state)
{
    (void)state;
    olm_error err;
    /* Duplicate CRD in the bundle. */
    bundle c = b;
    c.crds = json_array();
    json_array_append(c.crds, json_array_get(b.crds, 0));
    json_array_append(c.crds, json_array_get(b.crds, 0));
    json_t *objs = NULL;
    render_options o = {"ns", NULL, NULL, RENDER_CERT_OPENSHIFT_SERVICE_CA};
    assert_int_equal(render_bundle(&c, &o, &objs, &err), -1);
    assert_string_equal(err.msg, "bundle contains duplicate custom resource definition 'webhooktests.webhook.operators.coreos.io'");
    json_decref(c.crds);
    /* Owned CRD not shipped (and the conversion webhook's CRD is then not owned... it is
     * still owned: only the bundle's CRD list is missing it). */
    assert_string_equal(render_with("spec.customresourcedefinitions",
                                    "{\"owned\":[{\"name\":\"webhooktests.webhook.operators.coreos.io\"},{\"name\":\"zz.example.com\"},{\"name\":\"aa.example.com\"}]}",
                                    &err),
                        "cluster service definition references owned custom resource definition 'aa.example.com' not found in bundle\n"
                        "cluster service definition references owned custom resource definition 'zz.example.com' not found in bundle");
}

static void test_package_name(void **state)
{
    (void)state;
    olm_error err;
    bundle c = b;
    c.package_name = "";
    json_t *objs = NULL;
    render_options o = {"ns", NULL, NULL, RENDER_CERT_OPENSHIFT_SERVICE_CA};
    assert_int_equal(render_bundle(&c, &o, &objs, &err), -1);
    assert_string_equal(err.msg, "package name is empty");
}

static void test_webhook_validators(void **state)
{
    (void)state;
    olm_error err;
    assert_string_equal(render_with("spec.installModes",
                                    "[{\"type\":\"OwnNamespace\",\"supported\":true},{\"type\":\"AllNamespaces\",\"supported\":true}]",
                                    &err),
                        "bundle contains conversion webhook \"cwebhooktests.kb.io\" and supports install modes "
                        "[AllNamespaces OwnNamespace] - conversion webhooks are only supported for bundles that only "
                        "support AllNamespaces install mode");
    assert_string_equal(
        render_with("spec.webhookdefinitions",
                    "[{\"type\":\"ValidatingAdmissionWebhook\",\"generateName\":\"v.example.com\",\"deploymentName\":\"missing\"},"
                    "{\"type\":\"ValidatingAdmissionWebhook\",\"generateName\":\"v.example.com\",\"deploymentName\":\"webhook-operator.controller-manager\"},"
                    "{\"type\":\"MutatingAdmissionWebhook\",\"generateName\":\"Bad.Name\",\"deploymentName\":\"webhook-operator.controller-manager\"}]",
                    &err),
        "webhook of type 'ValidatingAdmissionWebhook' with name 'v.example.com' references non-existent deployment 'missing'\n"
        "duplicate webhook 'v.example.com' of type 'ValidatingAdmissionWebhook'\n"
        "webhook of type 'MutatingAdmissionWebhook' has invalid name 'Bad.Name': a lowercase RFC 1123 subdomain must "
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    assert_string_equal(
        render_with("spec.webhookdefinitions",
                    "[{\"type\":\"ConversionWebhook\",\"generateName\":\"c2.example.com\",\"deploymentName\":\"webhook-operator.controller-manager\",\"conversionCRDs\":[\"webhooktests.webhook.operators.coreos.io\"]},"
                    "{\"type\":\"ConversionWebhook\",\"generateName\":\"c1.example.com\",\"deploymentName\":\"webhook-operator.controller-manager\",\"conversionCRDs\":[\"webhooktests.webhook.operators.coreos.io\",\"other.example.com\"]}]",
                    &err),
        "conversion webhooks [c1.example.com,c2.example.com] reference same custom resource definition 'webhooktests.webhook.operators.coreos.io'\n"
        "conversion webhook 'c1.example.com' references custom resource definition 'other.example.com' not owned bundle");
    assert_string_equal(
        render_with("spec.webhookdefinitions",
                    "[{\"type\":\"ValidatingAdmissionWebhook\",\"generateName\":\"v.example.com\",\"deploymentName\":\"webhook-operator.controller-manager\","
                    "\"rules\":[{\"apiGroups\":[\"olm.operatorframework.io\",\"*\",\"admissionregistration.k8s.io\"],"
                    "\"resources\":[\"pods\",\"ValidatingWebhookConfigurations\",\"*\"]}]},"
                    "{\"type\":\"ConversionWebhook\",\"generateName\":\"c.example.com\",\"deploymentName\":\"webhook-operator.controller-manager\","
                    "\"rules\":[{\"apiGroups\":[\"*\"]}]}]",
                    &err),
        "webhook \"v.example.com\" contains forbidden rule: admission webhook rules cannot reference API group \"olm.operatorframework.io\"\n"
        "webhook \"v.example.com\" contains forbidden rule: admission webhook rules cannot reference API group \"*\"\n"
        "webhook \"v.example.com\" contains forbidden rule: admission webhook rules cannot reference resource \"ValidatingWebhookConfigurations\" for API group \"admissionregistration.k8s.io\"\n"
        "webhook \"v.example.com\" contains forbidden rule: admission webhook rules cannot reference resource \"*\" for API group \"admissionregistration.k8s.io\"");
}

static void test_unsupported_kind_and_crd_generator(void **state)
{
    (void)state;
    olm_error err;
    bundle c = b;
    c.others = json_array();
    json_array_append_new(c.others, patch("{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"ds\"}}"));
    json_t *objs = NULL;
    render_options o = {"ns", NULL, NULL, RENDER_CERT_OPENSHIFT_SERVICE_CA};
    assert_int_equal(render_bundle(&c, &o, &objs, &err), -1);
    assert_string_equal(err.msg, "unsupported resource \"ds\" with kind \"DaemonSet\"");
    json_decref(c.others);
    /* preserveUnknownFields on a converted CRD. */
    c = b;
    c.crds = json_deep_copy(b.crds);
    json_object_set_new(json_object_get(json_array_get(c.crds, 0), "spec"), "preserveUnknownFields", json_true());
    assert_int_equal(render_bundle(&c, &o, &objs, &err), -1);
    assert_string_equal(err.msg, "custom resource definition 'webhooktests.webhook.operators.coreos.io' must have "
                                 ".spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion");
    json_decref(c.crds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_deployment_validators),
        cmocka_unit_test(test_crd_validators),
        cmocka_unit_test(test_package_name),
        cmocka_unit_test(test_webhook_validators),
        cmocka_unit_test(test_unsupported_kind_and_crd_generator),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
