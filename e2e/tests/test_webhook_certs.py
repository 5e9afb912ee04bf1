"""Webhook certificates outside OpenShift (issue 13, item 4): operator-controller
--webhook-cert-provider cert-manager renders a bundle's webhooks with a cert-manager Issuer and
Certificate and the cainjector annotation, instead of OpenShift's service-ca annotations.

The local cluster has no cert-manager: the test installs its two CRDs (Issuer, Certificate; no
controller), which is all the apply needs.  "auto" picks OpenShift's service-ca on this cluster
(config/openshift's CRDs make config.openshift.io/v1 served), which test_operator_controller_inputs
covers; its choice table and the no-provider message are unit-tested.
"""

import pytest

import olmv1_e2e
from conftest import kubectl, kubectl_json, unique  # noqa: F401
from olmv1_e2e import OWNER_LABEL, ns, set_rules  # noqa: F401
from test_operator_controller import LABEL
from test_operator_controller_inputs import WEBHOOK_GROUP, WEBHOOK_RULES


def crd(plural, kind):
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.cert-manager.io"},
        "spec": {"group": "cert-manager.io", "scope": "Namespaced",
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]}}


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    kubectl("apply", "-f", "-", input={"apiVersion": "v1", "kind": "List",
                                       "items": [crd("issuers", "Issuer"), crd("certificates", "Certificate")]})
    kubectl("wait", "--for=condition=Established", "crd/issuers.cert-manager.io", "crd/certificates.cert-manager.io")
    try:
        with olmv1_e2e.olm_env(tmp_path_factory.mktemp("webhook-certs"), LABEL,
                               ctl_extra=["--webhook-cert-provider", "cert-manager"]) as env:
            yield env
    finally:
        kubectl("delete", "crd", "issuers.cert-manager.io", "certificates.cert-manager.io", "--ignore-not-found",
                check=False)


def test_cert_manager_provider(world, ns, name):
    env = world
    pkg = unique("wcm")
    hook = f"vwh.{pkg}.olmv1.example.com"
    svc, dep = f"{pkg}-manager-service", f"{pkg}-manager"
    cert = f"{svc}-cert"

    def add_webhook(csv):
        csv["spec"]["webhookdefinitions"] = [{
            "type": "ValidatingAdmissionWebhook", "generateName": hook, "deploymentName": dep,
            "containerPort": 443, "targetPort": 9443, "webhookPath": "/validate", "admissionReviewVersions": ["v1"],
            "sideEffects": "None", "failurePolicy": "Ignore",
            "rules": [{"apiGroups": [WEBHOOK_GROUP], "apiVersions": ["v1"], "operations": ["CREATE"],
                       "resources": ["nothings"]}]}]

    try:
        set_rules(ns, WEBHOOK_RULES + [{"apiGroups": ["cert-manager.io"], "resources": ["issuers", "certificates"],
                                        "verbs": ["*"]}])
        images = olmv1_e2e.push_bundles(env, pkg, ("1.0.0",), csv_hook=add_webhook)
        olmv1_e2e.create_catalog(env, pkg, olmv1_e2e.push_catalog(env, pkg, images, ["1.0.0"], "latest"))
        olmv1_e2e.apply_ce(env, pkg, name, ns)
        olmv1_e2e.wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")

        ann = kubectl_json("get", "validatingwebhookconfiguration", hook)["metadata"].get("annotations", {})
        assert ann.get("cert-manager.io/inject-ca-from") == f"{ns}/{cert}", ann
        assert "service.beta.openshift.io/inject-cabundle" not in ann, ann
        service = kubectl_json("get", "service", svc, "-n", ns)
        assert "service.beta.openshift.io/serving-cert-secret-name" not in service["metadata"].get("annotations", {})
        c = kubectl_json("get", "certificates.cert-manager.io", cert, "-n", ns)
        assert c["spec"]["secretName"] == cert and f"{svc}.{ns}.svc" in c["spec"]["dnsNames"], c["spec"]
        assert c["metadata"]["labels"][OWNER_LABEL] == name
        issuer = c["spec"]["issuerRef"]["name"]
        assert kubectl_json("get", "issuers.cert-manager.io", issuer, "-n", ns)["spec"] == {"selfSigned": {}}
        pod = kubectl_json("get", "deployment", dep, "-n", ns)["spec"]["template"]["spec"]
        assert {v["name"]: v for v in pod["volumes"]}["webhook-cert"]["secret"]["secretName"] == cert

        olmv1_e2e.delete_ce(name)
        assert kubectl("get", "certificates.cert-manager.io", cert, "-n", ns, "--ignore-not-found",
                       "-o", "name").stdout.strip() == ""
    finally:
        kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=true", "--timeout=120s",
                check=False)
        kubectl("delete", "validatingwebhookconfiguration", hook, "--ignore-not-found", check=False)
