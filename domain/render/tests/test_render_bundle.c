/* The registry+v1 loader and generators against the fixture bundles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "render.h"

#define FIX "fixtures/bundles/"
#define ARGO_CP "argocd-operator.v0-1dhiybrldl1gyksid1dk2dqjsc72psdybc7iyvse5gpx"
#define ARGO_P "argocd-operator.v0-22gmilmgp91wu25is5i2ec598hni8owq3l71bbkl7iz3"
#define ARGO_PROMOTED "argocd-operator.v0.-3gkm3u8zfarktdile5wekso69zs9bgzb988mhjm0y6p"

static void load(const char *dir, bundle *b)
{
    olm_error err;
    if (bundle_load_dir(dir, b, &err) < 0)
        fail_msg("loading %s: %s", dir, err.msg);
}

static json_t *render_ok(const bundle *b, const char *ns, const char *watch, const json_t *dc, render_cert_provider cp)
{
    olm_error err;
    json_t *objs = NULL;
    render_options o = {ns, watch, dc, cp};
    if (render_bundle(b, &o, &objs, &err) < 0)
        fail_msg("render: %s", err.msg);
    return objs;
}

static const char *render_fail(const bundle *b, const char *ns, const char *watch, render_cert_provider cp, olm_error *err)
{
    json_t *objs = (json_t *)1;
    render_options o = {ns, watch, NULL, cp};
    assert_int_equal(render_bundle(b, &o, &objs, err), -1);
    assert_null(objs);
    return err->msg;
}

static const char *str(const json_t *o, const char *path)
{
    return bundle_json_str(o, path);
}

static json_t *find(json_t *objs, const char *kind, const char *name)
{
    json_t *o;
    size_t i;
    json_array_foreach(objs, i, o) if (strcmp(str(o, "kind"), kind) == 0 && strcmp(str(o, "metadata.name"), name) == 0) return o;
    fail_msg("no %s %s rendered", kind, name);
    return NULL;
}

static size_t count(json_t *objs, const char *kind)
{
    json_t *o;
    size_t i, n = 0;
    json_array_foreach(objs, i, o) n += strcmp(str(o, "kind"), kind) == 0;
    return n;
}

static void expect_kinds(json_t *objs, const char *const *kinds, size_t n)
{
    assert_int_equal(json_array_size(objs), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(str(json_array_get(objs, i), "kind"), kinds[i]);
}

static void test_load_argocd(void **state)
{
    (void)state;
    bundle b;
    load(FIX "argocd", &b);
    assert_string_equal(b.package_name, "argocd-operator");
    assert_string_equal(str(b.csv, "metadata.name"), "argocd-operator.v0.6.0");
    assert_int_equal(json_array_size(b.crds), 1);
    assert_int_equal(json_array_size(b.others), 3);
    /* File order (sorted names), stream order inside a file. */
    assert_string_equal(str(json_array_get(b.others, 0), "kind"), "ClusterRole");
    assert_string_equal(str(json_array_get(b.others, 1), "kind"), "Service");
    assert_string_equal(str(json_array_get(b.others, 2), "kind"), "ConfigMap");
    /* properties.yaml is appended after the CSV's own olm.properties, re-encoded
     * compactly with Go's HTML escaping. */
    json_t *ann = bundle_json_path(b.csv, "metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "olm.properties")),
                        "[{\"type\":\"olm.test\",\"value\":{\"a\":\"\\u003cx\\u003e\",\"b\":1}},"
                        "{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.18\"}]");
    assert_int_equal(bundle_install_modes(b.csv), INSTALL_MODE_ALL | INSTALL_MODE_OWN | INSTALL_MODE_SINGLE);
    bundle_free(&b);
}

static void test_load_errors(void **state)
{
    (void)state;
    bundle b;
    olm_error err;
    assert_int_equal(bundle_load_dir(FIX "no-csv", &b, &err), -1);
    assert_string_equal(err.msg, "no ClusterServiceVersion found in \"manifests\"");
    assert_int_equal(bundle_load_dir(FIX "subdir", &b, &err), -1);
    assert_string_equal(err.msg, "subdirectories are not allowed within the \"manifests\" directory of the bundle "
                                 "image filesystem: found \"manifests/nested\"");
    assert_int_equal(bundle_load_dir(FIX "no-annotations", &b, &err), -1);
    assert_non_null(strstr(err.msg, "metadata/annotations.yaml"));
    assert_int_equal(bundle_load_dir(FIX "does-not-exist", &b, &err), -1);
    assert_null(b.csv);
}

static void test_argocd_all_namespaces(void **state)
{
    (void)state;
    bundle b;
    load(FIX "argocd", &b);
    json_t *objs = render_ok(&b, "argocd-system", NULL, NULL, RENDER_CERT_NONE);
    static const char *const kinds[] = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ClusterRole",
                                        "ClusterRoleBinding", "CustomResourceDefinition", "ClusterRole", "Service",
                                        "ConfigMap", "Deployment"};
    expect_kinds(objs, kinds, 10);
    assert_int_equal(count(objs, "Role"), 0);
    assert_int_equal(count(objs, "RoleBinding"), 0);
    /* clusterPermissions first, then the promoted permission. */
    assert_string_equal(str(json_array_get(objs, 1), "metadata.name"), ARGO_CP);
    assert_string_equal(str(json_array_get(objs, 3), "metadata.name"), ARGO_PROMOTED);
    json_t *promoted = json_array_get(objs, 3);
    json_t *rules = json_object_get(promoted, "rules");
    assert_int_equal(json_array_size(rules), 4);
    json_t *last = json_array_get(rules, 3);
    assert_string_equal(json_string_value(json_array_get(json_object_get(last, "resources"), 0)), "namespaces");
    json_t *crb = find(objs, "ClusterRoleBinding", ARGO_PROMOTED);
    assert_string_equal(str(crb, "roleRef.kind"), "ClusterRole");
    assert_string_equal(str(crb, "roleRef.name"), ARGO_PROMOTED);
    json_t *subj = json_array_get(json_object_get(crb, "subjects"), 0);
    assert_string_equal(str(subj, "kind"), "ServiceAccount");
    assert_string_equal(str(subj, "name"), "argocd-operator-controller-manager");
    assert_string_equal(str(subj, "namespace"), "argocd-system");
    /* Others: namespaced kinds get the install namespace; cluster-scoped ones do not. */
    assert_string_equal(str(find(objs, "Service", "argocd-operator-controller-manager-metrics-service"), "metadata.namespace"), "argocd-system");
    assert_string_equal(str(find(objs, "ConfigMap", "argocd-operator-manager-config"), "metadata.namespace"), "argocd-system");
    assert_null(bundle_json_path(find(objs, "ClusterRole", "argocd-operator-metrics-reader"), "metadata.namespace"));
    /* Deployment. */
    json_t *dep = find(objs, "Deployment", "argocd-operator-controller-manager");
    assert_string_equal(str(dep, "apiVersion"), "apps/v1");
    assert_string_equal(str(dep, "metadata.namespace"), "argocd-system");
    assert_string_equal(str(dep, "metadata.labels.control-plane"), "argocd-operator");
    assert_int_equal(json_integer_value(bundle_json_path(dep, "spec.revisionHistoryLimit")), 1);
    json_t *ann = bundle_json_path(dep, "spec.template.metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "olm.targetNamespaces")), "");
    assert_string_equal(json_string_value(json_object_get(ann, "olm.operatorNamespace")), "argocd-system");
    /* CSV annotations are copied; the template's own value wins. */
    assert_string_equal(json_string_value(json_object_get(ann, "capabilities")), "Template Wins");
    assert_string_equal(json_string_value(json_object_get(ann, "operators.operatorframework.io/builder")), "operator-sdk-v1.10.0");
    /* No cert provider: volumes untouched. */
    assert_int_equal(json_array_size(bundle_json_path(dep, "spec.template.spec.volumes")), 1);
    json_decref(objs);
    bundle_free(&b);
}

static void test_argocd_own_and_single(void **state)
{
    (void)state;
    bundle b;
    load(FIX "argocd", &b);
    const char *watches[] = {"argocd-system", "argocd-watch"};
    for (int w = 0; w < 2; w++) {
        json_t *objs = render_ok(&b, "argocd-system", watches[w], NULL, RENDER_CERT_NONE);
        static const char *const kinds[] = {"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
                                            "CustomResourceDefinition", "ClusterRole", "Service", "ConfigMap", "Deployment"};
        expect_kinds(objs, kinds, 10);
        json_t *role = find(objs, "Role", ARGO_P);
        assert_string_equal(str(role, "metadata.namespace"), watches[w]);
        assert_int_equal(json_array_size(json_object_get(role, "rules")), 3);
        json_t *rb = find(objs, "RoleBinding", ARGO_P);
        assert_string_equal(str(rb, "metadata.namespace"), watches[w]);
        assert_string_equal(str(rb, "roleRef.kind"), "Role");
        assert_string_equal(str(rb, "roleRef.apiGroup"), "rbac.authorization.k8s.io");
        assert_string_equal(str(json_array_get(json_object_get(rb, "subjects"), 0), "namespace"), "argocd-system");
        find(objs, "ClusterRole", ARGO_CP);
        json_t *dep = find(objs, "Deployment", "argocd-operator-controller-manager");
        json_t *ann = bundle_json_path(dep, "spec.template.metadata.annotations");
        assert_string_equal(json_string_value(json_object_get(ann, "olm.targetNamespaces")), watches[w]);
        json_decref(objs);
    }
    bundle_free(&b);
}

static void test_own_only_default_sa_and_targets(void **state)
{
    (void)state;
    bundle b;
    olm_error err;
    load(FIX "own-only", &b);
    /* No watch namespace: an Own-only bundle targets the install namespace. */
    json_t *objs = render_ok(&b, "own-ns", NULL, NULL, RENDER_CERT_NONE);
    static const char *const kinds[] = {"ServiceAccount", "Role", "RoleBinding", "Role", "RoleBinding", "Deployment"};
    expect_kinds(objs, kinds, 6);
    /* "" means the default service account: never generated, used in names and subjects;
     * the hash covers the raw "" (vector computed independently). */
    assert_string_equal(str(json_array_get(objs, 0), "metadata.name"), "own-operator");
    json_t *rb = find(objs, "RoleBinding", "own-operator.v1.0.-3618jliblq3ctgertk5rzp3qi05nvrpi673chmkl8rr3");
    assert_string_equal(str(json_array_get(json_object_get(rb, "subjects"), 0), "name"), "default");
    assert_string_equal(str(rb, "metadata.namespace"), "own-ns");
    find(objs, "Role", "own-operator.v1.0.-24geo74xgqf8qr98bjr79u6u5gf29hs1kl19vt84n19k");
    json_decref(objs);
    assert_string_equal(render_fail(&b, "own-ns", "other", RENDER_CERT_NONE, &err),
                        "invalid option(s): invalid target namespaces [other]: supported install modes "
                        "[MultiNamespace OwnNamespace] do not support target namespaces [other]");
    bundle_free(&b);
    load(FIX "single-only", &b);
    /* Single + Multi: no default target (upstream's generic message)... */
    assert_string_equal(render_fail(&b, "ns", NULL, RENDER_CERT_NONE, &err),
                        "invalid option(s): invalid target namespaces []: at least one target namespace must be specified");
    /* ...and Single alone gets the friendlier one. */
    json_object_set_new(json_array_get(bundle_json_path(b.csv, "spec.installModes"), 2), "supported", json_false());
    assert_string_equal(render_fail(&b, "ns", NULL, RENDER_CERT_NONE, &err),
                        "invalid option(s): invalid target namespaces []: exactly one target namespace must be specified");
    assert_string_equal(render_fail(&b, "ns", "ns", RENDER_CERT_NONE, &err),
                        "invalid option(s): invalid target namespaces [ns]: supported install modes "
                        "[SingleNamespace] do not support targeting own namespace");
    objs = render_ok(&b, "ns", "watched", NULL, RENDER_CERT_NONE);
    find(objs, "Role", "single-operator.v1.-xu1v80vqj9m3dx0yf9388p8qw44cx66qdrujsqa04qz");
    json_decref(objs);
    bundle_free(&b);
}

/* What the webhook fixture renders to, with or without a certificate provider (cert-manager
 * adds its Issuer and Certificate). */
static const char *const webhook_kinds[] = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ClusterRole",
                                            "ClusterRoleBinding", "CustomResourceDefinition", "Deployment",
                                            "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                                            "Service"};

static void test_webhooks_service_ca(void **state)
{
    (void)state;
    bundle b;
    load(FIX "webhook", &b);
    json_t *objs = render_ok(&b, "webhook-system", NULL, NULL, RENDER_CERT_OPENSHIFT_SERVICE_CA);
    expect_kinds(objs, webhook_kinds, 10);
    const char *svc_name = "webhook-operator-controller-manager-service";
    const char *cert = "webhook-operator-controller-manager-service-cert";
    /* Service: dots in the deployment name become dashes; one port per distinct
     * (port, targetPort), sorted; the selector is the deployment's matchLabels. */
    json_t *svc = find(objs, "Service", svc_name);
    assert_string_equal(str(svc, "metadata.namespace"), "webhook-system");
    json_t *ports = bundle_json_path(svc, "spec.ports");
    assert_int_equal(json_array_size(ports), 2);
    assert_string_equal(str(json_array_get(ports, 0), "name"), "443");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ports, 0), "port")), 443);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ports, 0), "targetPort")), 443);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ports, 1), "targetPort")), 9443);
    assert_string_equal(str(svc, "spec.selector.control-plane"), "controller-manager");
    json_t *sann = bundle_json_path(svc, "metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(sann, "service.beta.openshift.io/serving-cert-secret-name")), cert);
    /* Validating: name as generateName; namespaceSelector nil in AllNamespaces mode. */
    json_t *vwc = find(objs, "ValidatingWebhookConfiguration", "vwebhooktest-v1.kb.io");
    assert_string_equal(str(vwc, "metadata.namespace"), "webhook-system");
    json_t *vh = json_array_get(json_object_get(vwc, "webhooks"), 0);
    assert_string_equal(str(vh, "name"), "vwebhooktest-v1.kb.io");
    assert_string_equal(str(vh, "clientConfig.service.name"), svc_name);
    assert_string_equal(str(vh, "clientConfig.service.path"), "/validate-webhook-operators-coreos-io-v1-webhooktest");
    assert_int_equal(json_integer_value(bundle_json_path(vh, "clientConfig.service.port")), 443);
    assert_null(json_object_get(vh, "namespaceSelector"));
    assert_null(json_object_get(vh, "reinvocationPolicy"));
    assert_int_equal((int)json_number_value(json_object_get(vh, "timeoutSeconds")), 5);
    json_t *vann = bundle_json_path(vwc, "metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(vann, "service.beta.openshift.io/inject-cabundle")), "true");
    /* Mutating: reinvocationPolicy copied (a trailing "-" in generateName would fail
     * the DNS-1123 validator before the generator could trim it). */
    json_t *mwc = find(objs, "MutatingWebhookConfiguration", "mwebhooktest-v1.kb.io");
    json_t *mh = json_array_get(json_object_get(mwc, "webhooks"), 0);
    assert_string_equal(str(mh, "name"), "mwebhooktest-v1.kb.io");
    assert_string_equal(str(mh, "reinvocationPolicy"), "IfNeeded");
    assert_string_equal(str(mh, "failurePolicy"), "Fail");
    /* Conversion: the CRD gets the webhook client config and the CA annotation. */
    json_t *crd = find(objs, "CustomResourceDefinition", "webhooktests.webhook.operators.coreos.io");
    assert_string_equal(str(crd, "spec.conversion.strategy"), "Webhook");
    assert_string_equal(str(crd, "spec.conversion.webhook.clientConfig.service.path"), "/convert");
    assert_string_equal(str(crd, "spec.conversion.webhook.clientConfig.service.namespace"), "webhook-system");
    assert_string_equal(str(crd, "spec.conversion.webhook.clientConfig.service.name"), svc_name);
    assert_string_equal(json_string_value(json_array_get(bundle_json_path(crd, "spec.conversion.webhook.conversionReviewVersions"), 0)), "v1");
    json_t *cann = bundle_json_path(crd, "metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(cann, "service.beta.openshift.io/inject-cabundle")), "true");
    /* Deployment: the operator's own cert volume (mounted at the webhook path) is
     * replaced by the provider's Secret, mounted in every container. */
    json_t *dep = find(objs, "Deployment", "webhook-operator.controller-manager");
    json_t *vols = bundle_json_path(dep, "spec.template.spec.volumes");
    assert_int_equal(json_array_size(vols), 3);
    assert_string_equal(str(json_array_get(vols, 0), "name"), "data");
    assert_string_equal(str(json_array_get(vols, 1), "name"), "apiservice-cert");
    assert_string_equal(str(json_array_get(vols, 1), "secret.secretName"), cert);
    assert_string_equal(str(json_array_get(json_object_get(json_object_get(json_array_get(vols, 1), "secret"), "items"), 0), "path"), "apiserver.crt");
    assert_string_equal(str(json_array_get(vols, 2), "name"), "webhook-cert");
    json_t *ctrs = bundle_json_path(dep, "spec.template.spec.containers");
    for (size_t i = 0; i < 2; i++) {
        json_t *mounts = json_object_get(json_array_get(ctrs, i), "volumeMounts");
        size_t n = json_array_size(mounts);
        assert_true(n >= 2);
        assert_string_equal(str(json_array_get(mounts, n - 2), "mountPath"), "/apiserver.local.config/certificates");
        assert_string_equal(str(json_array_get(mounts, n - 1), "mountPath"), "/tmp/k8s-webhook-server/serving-certs");
    }
    assert_int_equal(json_array_size(json_object_get(json_array_get(ctrs, 0), "volumeMounts")), 3);
    /* RBAC vectors for this bundle (computed independently). */
    find(objs, "ClusterRole", "webhook-operator.v-34n5wa0nytssu5appvroebio4hudzjrqxiq2ll6pe0rn");
    find(objs, "ClusterRole", "webhook-operator.v-17nr16eiitmf2dze239eragjpme352w4a2p6kajx3s4n");
    json_decref(objs);
    bundle_free(&b);
}

/* No provider, as upstream's regression generator renders (Renderer with no
 * CertificateProvider): the same objects as with a provider, but nothing injected:
 * no CA annotations, no caBundle, the deployment's own cert volume left as the bundle
 * wrote it, no cert objects.  Webhook configurations still carry metadata.namespace. */
static int has_key_prefix(const json_t *obj, const char *prefix)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) if (strncmp(k, prefix, strlen(prefix)) == 0) return 1;
    return 0;
}

static void test_webhooks_no_provider(void **state)
{
    (void)state;
    bundle b;
    load(FIX "webhook", &b);
    json_t *objs = render_ok(&b, "webhook-system", NULL, NULL, RENDER_CERT_NONE);
    expect_kinds(objs, webhook_kinds, 10);
    const char *svc_name = "webhook-operator-controller-manager-service";
    json_t *o;
    size_t i;
    json_array_foreach(objs, i, o) {
        json_t *ann = bundle_json_path(o, "metadata.annotations");
        assert_false(has_key_prefix(ann, "service.beta.openshift.io/"));
        assert_false(has_key_prefix(ann, "cert-manager.io/"));
    }
    static const char *const hook_kinds[] = {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"};
    static const char *const hook_names[] = {"vwebhooktest-v1.kb.io", "mwebhooktest-v1.kb.io"};
    for (size_t k = 0; k < 2; k++) {
        json_t *cfg = find(objs, hook_kinds[k], hook_names[k]);
        assert_string_equal(str(cfg, "metadata.namespace"), "webhook-system");
        json_t *hook = json_array_get(json_object_get(cfg, "webhooks"), 0);
        assert_string_equal(str(hook, "clientConfig.service.namespace"), "webhook-system");
        assert_string_equal(str(hook, "clientConfig.service.name"), svc_name);
        assert_int_equal(json_integer_value(bundle_json_path(hook, "clientConfig.service.port")), 443);
        assert_null(bundle_json_path(hook, "clientConfig.caBundle"));
        assert_int_equal(json_object_size(json_object_get(hook, "clientConfig")), 1);
    }
    json_t *crd = find(objs, "CustomResourceDefinition", "webhooktests.webhook.operators.coreos.io");
    assert_string_equal(str(crd, "spec.conversion.webhook.clientConfig.service.name"), svc_name);
    assert_string_equal(str(crd, "spec.conversion.webhook.clientConfig.service.path"), "/convert");
    assert_null(bundle_json_path(crd, "spec.conversion.webhook.clientConfig.caBundle"));
    json_t *svc = find(objs, "Service", svc_name);
    assert_int_equal(json_array_size(bundle_json_path(svc, "spec.ports")), 2);
    assert_null(bundle_json_path(svc, "metadata.annotations"));
    /* The deployment keeps the bundle's volumes and mounts untouched. */
    json_t *dep = find(objs, "Deployment", "webhook-operator.controller-manager");
    json_t *vols = bundle_json_path(dep, "spec.template.spec.volumes");
    assert_int_equal(json_array_size(vols), 2);
    assert_string_equal(str(json_array_get(vols, 0), "name"), "webhook-certs");
    assert_string_equal(str(json_array_get(vols, 1), "name"), "data");
    json_t *mounts = json_object_get(json_array_get(bundle_json_path(dep, "spec.template.spec.containers"), 0), "volumeMounts");
    assert_int_equal(json_array_size(mounts), 2);
    assert_string_equal(str(json_array_get(mounts, 0), "name"), "webhook-certs");
    assert_string_equal(str(json_array_get(mounts, 0), "mountPath"), "/tmp/k8s-webhook-server/serving-certs");
    assert_int_equal(count(objs, "Issuer") + count(objs, "Certificate"), 0);
    json_decref(objs);
    bundle_free(&b);
}

static void test_webhooks_cert_manager(void **state)
{
    (void)state;
    bundle b;
    load(FIX "webhook", &b);
    json_t *objs = render_ok(&b, "wh", NULL, NULL, RENDER_CERT_MANAGER);
    assert_int_equal(json_array_size(objs), 12);
    const char *cert = "webhook-operator-controller-manager-service-cert";
    json_t *iss = json_array_get(objs, 10), *crt = json_array_get(objs, 11);
    assert_string_equal(str(iss, "kind"), "Issuer");
    /* ObjectNameForBaseAndSuffix cuts the 48-byte cert name to fit 63. */
    assert_string_equal(str(iss, "metadata.name"), "webhook-operator-controller-manager-service-c-selfsigned-issuer");
    assert_string_equal(str(crt, "kind"), "Certificate");
    assert_string_equal(str(crt, "spec.secretName"), cert);
    assert_string_equal(str(crt, "spec.commonName"), "webhook-operator-controller-manager-service.wh");
    assert_int_equal(json_array_size(bundle_json_path(crt, "spec.dnsNames")), 3);
    assert_string_equal(str(crt, "spec.issuerRef.name"), str(iss, "metadata.name"));
    json_t *crd = find(objs, "CustomResourceDefinition", "webhooktests.webhook.operators.coreos.io");
    assert_string_equal(json_string_value(json_object_get(bundle_json_path(crd, "metadata.annotations"), "cert-manager.io/inject-ca-from")),
                        "wh/webhook-operator-controller-manager-service-cert");
    assert_null(bundle_json_path(find(objs, "Service", "webhook-operator-controller-manager-service"), "metadata.annotations"));
    json_decref(objs);
    bundle_free(&b);
}

static void test_namespace_selector_single(void **state)
{
    (void)state;
    bundle b;
    load(FIX "webhook", &b);
    /* Drop the conversion webhook and allow SingleNamespace. */
    json_array_remove(bundle_json_path(b.csv, "spec.webhookdefinitions"), 0);
    json_object_set_new(json_array_get(bundle_json_path(b.csv, "spec.installModes"), 1), "supported", json_true());
    json_t *objs = render_ok(&b, "wh", "team-a", NULL, RENDER_CERT_OPENSHIFT_SERVICE_CA);
    json_t *vh = json_array_get(json_object_get(find(objs, "ValidatingWebhookConfiguration", "vwebhooktest-v1.kb.io"), "webhooks"), 0);
    json_t *expr = json_array_get(bundle_json_path(vh, "namespaceSelector.matchExpressions"), 0);
    assert_string_equal(str(expr, "key"), "kubernetes.io/metadata.name");
    assert_string_equal(str(expr, "operator"), "In");
    assert_string_equal(json_string_value(json_array_get(json_object_get(expr, "values"), 0)), "team-a");
    find(objs, "Role", "webhook-operator.v-2lroz6busdfxc4bxxcsuj26zh53kjin7gxtvvjyt40z3");
    json_decref(objs);
    bundle_free(&b);
}

static void test_deployment_config(void **state)
{
    (void)state;
    bundle b;
    load(FIX "argocd", &b);
    json_error_t je;
    json_t *dc = json_loads("{\"env\":[{\"name\":\"LOG_LEVEL\",\"value\":\"debug\"},{\"name\":\"NEW\",\"value\":\"1\"}],"
                            "\"envFrom\":[{\"configMapRef\":{\"name\":\"cm\"}},{\"configMapRef\":{\"name\":\"cm\"}}],"
                            "\"volumes\":[{\"name\":\"cert\",\"emptyDir\":{}},{\"name\":\"extra\",\"emptyDir\":{}}],"
                            "\"volumeMounts\":[{\"name\":\"extra\",\"mountPath\":\"/extra\"}],"
                            "\"tolerations\":[{\"key\":\"existing\",\"operator\":\"Exists\"},{\"key\":\"new\",\"operator\":\"Exists\"}],"
                            "\"resources\":{\"limits\":{\"cpu\":\"1\"}},\"nodeSelector\":{\"disk\":\"ssd\"},"
                            "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{}}},"
                            "\"annotations\":{\"capabilities\":\"ignored\",\"new-annotation\":\"yes\"}}",
                            0, &je);
    assert_non_null(dc);
    json_t *objs = render_ok(&b, "argocd-system", NULL, dc, RENDER_CERT_NONE);
    json_t *dep = find(objs, "Deployment", "argocd-operator-controller-manager");
    json_t *pod = bundle_json_path(dep, "spec.template.spec");
    json_t *mgr = json_array_get(json_object_get(pod, "containers"), 0);
    json_t *env = json_object_get(mgr, "env");
    assert_int_equal(json_array_size(env), 3);
    assert_string_equal(str(json_array_get(env, 1), "value"), "debug"); /* overridden in place */
    assert_string_equal(str(json_array_get(env, 2), "name"), "NEW");
    assert_int_equal(json_array_size(json_object_get(mgr, "envFrom")), 1); /* deep-equal entries once */
    json_t *vols = json_object_get(pod, "volumes");
    assert_int_equal(json_array_size(vols), 2);
    assert_non_null(bundle_json_path(json_array_get(vols, 0), "emptyDir"));
    assert_int_equal(json_array_size(json_object_get(mgr, "volumeMounts")), 2);
    assert_int_equal(json_array_size(json_object_get(pod, "tolerations")), 2);
    assert_string_equal(str(mgr, "resources.limits.cpu"), "1");
    json_t *proxy = json_array_get(json_object_get(pod, "containers"), 1);
    assert_string_equal(str(proxy, "resources.limits.cpu"), "1"); /* every container */
    assert_int_equal(json_array_size(json_object_get(proxy, "env")), 2);
    assert_string_equal(str(pod, "nodeSelector.disk"), "ssd");
    assert_non_null(bundle_json_path(pod, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"));
    json_t *dann = bundle_json_path(dep, "metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(dann, "new-annotation")), "yes");
    json_t *tann = bundle_json_path(dep, "spec.template.metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(tann, "capabilities")), "Template Wins"); /* present: kept */
    assert_string_equal(json_string_value(json_object_get(tann, "new-annotation")), "yes");
    json_decref(objs);
    json_decref(dc);

    /* affinity {} erases; an empty sub-field erases only that sub-field. */
    json_t *with_aff = json_loads("{\"affinity\":{\"nodeAffinity\":{\"x\":1},\"podAffinity\":{\"y\":2}}}", 0, &je);
    json_t *erase_sub = json_loads("{\"affinity\":{\"nodeAffinity\":{}}}", 0, &je);
    json_t *erase_all = json_loads("{\"affinity\":{}}", 0, &je);
    json_t *tpl = bundle_json_path(json_array_get(bundle_json_path(b.csv, "spec.install.spec.deployments"), 0), "spec.template.spec");
    json_object_set(tpl, "affinity", json_object_get(with_aff, "affinity"));
    objs = render_ok(&b, "argocd-system", NULL, erase_sub, RENDER_CERT_NONE);
    pod = bundle_json_path(find(objs, "Deployment", "argocd-operator-controller-manager"), "spec.template.spec");
    assert_null(bundle_json_path(pod, "affinity.nodeAffinity"));
    assert_non_null(bundle_json_path(pod, "affinity.podAffinity"));
    json_decref(objs);
    objs = render_ok(&b, "argocd-system", NULL, erase_all, RENDER_CERT_NONE);
    pod = bundle_json_path(find(objs, "Deployment", "argocd-operator-controller-manager"), "spec.template.spec");
    assert_null(json_object_get(pod, "affinity"));
    json_decref(objs);
    json_decref(with_aff);
    json_decref(erase_sub);
    json_decref(erase_all);
    bundle_free(&b);
}

static void test_sort_objects(void **state)
{
    (void)state;
    bundle b;
    load(FIX "argocd", &b);
    json_t *objs = render_ok(&b, "argocd-system", NULL, NULL, RENDER_CERT_NONE);
    assert_int_equal(render_sort_objects(objs), 0);
    assert_string_equal(str(json_array_get(objs, 0), "kind"), "ClusterRole");
    assert_string_equal(str(json_array_get(objs, 0), "metadata.name"), "argocd-operator-metrics-reader");
    assert_string_equal(str(json_array_get(objs, 1), "metadata.name"), ARGO_CP);
    assert_string_equal(str(json_array_get(objs, 2), "metadata.name"), ARGO_PROMOTED);
    assert_string_equal(str(json_array_get(objs, 9), "kind"), "ServiceAccount");
    json_decref(objs);
    bundle_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_argocd),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_argocd_all_namespaces),
        cmocka_unit_test(test_argocd_own_and_single),
        cmocka_unit_test(test_own_only_default_sa_and_targets),
        cmocka_unit_test(test_webhooks_service_ca),
        cmocka_unit_test(test_webhooks_no_provider),
        cmocka_unit_test(test_webhooks_cert_manager),
        cmocka_unit_test(test_namespace_selector_single),
        cmocka_unit_test(test_deployment_config),
        cmocka_unit_test(test_sort_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
