"""operator-controller end to end: bundle shapes and bad input (spec §2.3, §5.4, §5.5).

- a SingleNamespace-only bundle: refused without watchNamespace or with the install namespace as
  watchNamespace (terminal InvalidConfiguration, the §5.4 messages); installed with another
  namespace as watchNamespace: olm.targetNamespaces on the pod template, its permissions as a
  Role/RoleBinding in the watched namespace;
- a bundle with a validating admission webhook: the ValidatingWebhookConfiguration and the Service
  with the OpenShift service-CA annotations, the cert volumes on the Deployment; uninstall removes them;
- a conflicting object the user created before (no owner labels): Retrying with the conflict message,
  nothing overwritten or created; deleting it lets the install proceed by itself;
- a missing install namespace: Retrying naming it; creating it (with the ServiceAccount and RBAC)
  lets the install proceed by itself.

Drives the product as a user would (kubectl apply/delete, kubectl get) against this module's own
catalogd and operator-controller (olmv1_e2e.olm_env); every test builds its own package with
`olmv1 bundle push` / `olmv1 catalog push`.  Every wait polls with a generous deadline; nothing
asserts timing.
"""

import pytest

import olmv1_bundles
import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import (OWNER_LABEL, SA_RULES_FULL, WAIT, apply_ce, assert_nothing_installed, conditions,
                       configmap_version, create_catalog, delete_ce, ns, push_bundles, push_catalog,  # noqa: F401
                       set_rules, setup_installer, wait_for, wait_installed, wait_progressing)

LABEL = "e2e-opctl-in"  # ClusterCatalog label key; its value is the package name
CONFIG_PREFIX = "invalid ClusterExtension configuration: invalid configuration: "


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("opctl-in"), LABEL) as e:
        yield e


def package(env, prefix, versions=("1.0.0",), **bundle_args):
    """A fresh package with one catalog serving it; returns (pkg, images)."""
    pkg = unique(prefix)
    images = push_bundles(env, pkg, versions, **bundle_args)
    create_catalog(env, pkg, push_catalog(env, pkg, images, list(versions), "latest"))
    return pkg, images


def owned(kind, ce_name, namespace=None):
    """Objects of `kind` carrying the extension's owner label (in `namespace`, or cluster-wide)."""
    args = ["get", kind, "-l", f"{OWNER_LABEL}={ce_name}"]
    args += ["-n", namespace] if namespace else []
    return kubectl_json(*args)["items"]


def gone(*args):
    return kubectl("get", *args, "--ignore-not-found", "-o", "name").stdout.strip() == ""


# ---------------------------------------------------------------- SingleNamespace and watchNamespace


def test_single_namespace_bundle_watch_namespace(env, ns, name):
    watch = unique("watched")
    kubectl("create", "namespace", watch)
    try:
        ns_rules = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "update"]}]
        pkg, _ = package(env, "opks", supported=("SingleNamespace",), rules=ns_rules)
        bundle = f"{pkg}.v1.0.0"
        prefix = f'error for resolved bundle "{bundle}" with version "1.0.0": '

        # No watchNamespace: the bundle cannot be installed for all namespaces (§5.4), terminal.
        apply_ce(env, pkg, name, ns)
        want = CONFIG_PREFIX + 'required field "watchNamespace" is missing'
        c = wait_progressing(env, name, "False", "InvalidConfiguration", want)
        assert c["Progressing"]["message"] == prefix + want, c["Progressing"]
        assert (c["Installed"]["status"], c["Installed"]["message"]) == ("False", "No bundle installed")
        assert_nothing_installed(pkg, ns, name, env["system_ns"])

        # The install namespace itself is OwnNamespace, which this bundle does not support.
        apply_ce(env, pkg, name, ns, config={"configType": "Inline", "inline": {"watchNamespace": ns}})
        want = (CONFIG_PREFIX + f'invalid format for field "watchNamespace": \'{ns}\' is not valid '
                f'singleNamespaceInstallMode: invalid value "{ns}": must be different from "{ns}" (the install '
                'namespace) because this operator uses SingleNamespace install mode to watch a different namespace')
        c = wait_progressing(env, name, "False", "InvalidConfiguration", "must be different from")
        assert c["Progressing"]["message"] == prefix + want, c["Progressing"]
        assert c["Installed"]["status"] == "False", c["Installed"]
        assert_nothing_installed(pkg, ns, name, env["system_ns"])

        # Another namespace: installs, watching that namespace only.
        apply_ce(env, pkg, name, ns, config={"configType": "Inline", "inline": {"watchNamespace": watch}})
        wait_installed(env, name, bundle, "1.0.0")
        assert configmap_version(pkg, ns) == "1.0.0"
        dep = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)
        annotations = dep["spec"]["template"]["metadata"]["annotations"]
        assert annotations["olm.targetNamespaces"] == watch, annotations
        assert annotations["olm.operatorNamespace"] == ns, annotations

        # permissions: a Role and a RoleBinding of the same hashed name in the watched namespace,
        # bound to the operator's ServiceAccount in the install namespace; none in the install namespace.
        roles, bindings = owned("roles", name, watch), owned("rolebindings", name, watch)
        assert len(roles) == 1 and len(bindings) == 1, (roles, bindings)
        role, binding = roles[0], bindings[0]
        assert role["rules"] == ns_rules, role["rules"]
        assert binding["metadata"]["name"] == role["metadata"]["name"]
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": role["metadata"]["name"]}, binding["roleRef"]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": f"{pkg}-manager", "namespace": ns}], \
            binding["subjects"]
        assert owned("roles", name, ns) == [] and owned("rolebindings", name, ns) == []
        # clusterPermissions stay a ClusterRole; permissions are not promoted (that is AllNamespaces only).
        cluster_roles = owned("clusterroles", name)
        assert [r["rules"] for r in cluster_roles] == [olmv1_bundles.READ_CONFIGMAPS], cluster_roles

        delete_ce(name)
        assert owned("roles", name, watch) == [] and owned("rolebindings", name, watch) == []
        assert gone("deployment", f"{pkg}-manager", "-n", ns)
    finally:
        kubectl("delete", "namespace", watch, "--wait=false", "--ignore-not-found", check=False)


# ---------------------------------------------------------------- webhooks

WEBHOOK_GROUP = "e2e-webhook.olmv1.example.com"  # nothing in the suite uses this API group
WEBHOOK_RULES = SA_RULES_FULL + [
    {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"],
     "verbs": ["*"]}]


def test_bundle_with_validating_webhook(env, ns, name):
    pkg = unique("opkw")
    hook = f"vwh.{pkg}.olmv1.example.com"
    svc = f"{pkg}-manager-service"
    cert = f"{svc}-cert"

    def add_webhook(csv):
        csv["spec"]["webhookdefinitions"] = [{
            "type": "ValidatingAdmissionWebhook",
            "generateName": hook,
            "deploymentName": f"{pkg}-manager",
            "containerPort": 443,
            "targetPort": 9443,
            "webhookPath": "/validate",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            # No endpoint will ever answer: only a resource nobody creates, and never a blocking failure.
            "failurePolicy": "Ignore",
            "rules": [{"apiGroups": [WEBHOOK_GROUP], "apiVersions": ["v1"], "operations": ["CREATE"],
                       "resources": ["nothings"]}],
        }]

    try:
        set_rules(ns, WEBHOOK_RULES)
        images = push_bundles(env, pkg, ("1.0.0",), csv_hook=add_webhook)
        create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0"], "latest"))
        apply_ce(env, pkg, name, ns)
        wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")

        vwc = kubectl_json("get", "validatingwebhookconfiguration", hook)
        assert vwc["metadata"]["annotations"]["service.beta.openshift.io/inject-cabundle"] == "true", vwc["metadata"]
        assert vwc["metadata"]["labels"][OWNER_LABEL] == name
        (wh,) = vwc["webhooks"]
        assert wh["name"] == hook
        assert wh["clientConfig"]["service"] == {"namespace": ns, "name": svc, "path": "/validate", "port": 443}, wh
        assert wh["failurePolicy"] == "Ignore" and wh["sideEffects"] == "None"
        assert wh["rules"][0]["apiGroups"] == [WEBHOOK_GROUP], wh["rules"]
        # AllNamespaces: no namespaceSelector restriction (the apiserver defaults it to {}).
        assert not wh.get("namespaceSelector"), wh.get("namespaceSelector")

        service = kubectl_json("get", "service", svc, "-n", ns)
        assert service["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"] == cert, \
            service["metadata"]
        assert service["metadata"]["labels"][OWNER_LABEL] == name
        ports = [(p["name"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]]
        assert ports == [("443", 443, 9443)], ports
        assert service["spec"]["selector"] == {"app": pkg}, service["spec"]

        # The serving certificate (the Secret service-ca creates on OpenShift) is mounted into the pod.
        pod = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["spec"]["template"]["spec"]
        vols = {v["name"]: v for v in pod["volumes"]}
        assert vols["webhook-cert"]["secret"]["secretName"] == cert, vols
        assert vols["apiservice-cert"]["secret"]["secretName"] == cert, vols
        mounts = {m["mountPath"]: m["name"] for m in pod["containers"][0]["volumeMounts"]}
        assert mounts["/tmp/k8s-webhook-server/serving-certs"] == "webhook-cert", mounts
        assert mounts["/apiserver.local.config/certificates"] == "apiservice-cert", mounts

        delete_ce(name)
        assert gone("validatingwebhookconfiguration", hook)
        assert gone("service", svc, "-n", ns)
        assert gone("deployment", f"{pkg}-manager", "-n", ns)
    finally:
        # Never leave a webhook without endpoints behind, whatever failed above.
        kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=true", f"--timeout={WAIT}s",
                check=False)
        kubectl("delete", "validatingwebhookconfiguration", hook, "--ignore-not-found", check=False)


# ---------------------------------------------------------------- conflicts and missing namespace


def test_conflicting_pre_existing_object(env, ns, name):
    pkg, _ = package(env, "opkx")
    cm = f"{pkg}-config"
    user_data = {"owner": "the user"}
    kubectl("apply", "-f", "-", input={"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": cm, "namespace": ns}, "data": user_data})
    apply_ce(env, pkg, name, ns)
    want = (f'error for resolved bundle "{pkg}.v1.0.0" with version "1.0.0": ConfigMap \'{cm}\' already exists '
            f"in namespace '{ns}' and cannot be managed by operator-controller")
    c = wait_progressing(env, name, "True", "Retrying", "already exists")
    assert c["Progressing"]["message"] == want, c["Progressing"]
    assert (c["Installed"]["status"], c["Installed"]["reason"], c["Installed"]["message"]) == \
        ("False", "Failed", "No bundle installed"), c["Installed"]

    # Nothing overwritten (data, labels, field managers) and nothing else applied.
    obj = kubectl_json("get", "configmap", cm, "-n", ns)
    assert obj["data"] == user_data, obj
    assert OWNER_LABEL not in obj["metadata"].get("labels", {}), obj["metadata"]
    assert all(m["manager"] != "olm.operatorframework.io" for m in obj["metadata"].get("managedFields", [])), \
        obj["metadata"]["managedFields"]
    assert gone("deployment", f"{pkg}-manager", "-n", ns)
    assert gone("secret", f"{olmv1_e2e.RECORD_PREFIX}{name}", "-n", env["system_ns"])

    # The user removes their object: a later retry installs without any edit of the extension.
    kubectl("delete", "configmap", cm, "-n", ns)
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert configmap_version(pkg, ns) == "1.0.0"
    assert kubectl_json("get", "configmap", cm, "-n", ns)["metadata"]["labels"][OWNER_LABEL] == name
    delete_ce(name)


def test_missing_install_namespace_then_created(env, name):
    pkg, _ = package(env, "opkn")
    missing = name[:50]
    try:
        apply_ce(env, pkg, name, missing)
        want = (f'error for resolved bundle "{pkg}.v1.0.0" with version "1.0.0": namespace "{missing}" not found: '
                'create it and the ServiceAccount "installer" in it')
        c = wait_progressing(env, name, "True", "Retrying", f'namespace "{missing}" not found')
        assert c["Progressing"]["message"] == want, c["Progressing"]
        assert (c["Installed"]["status"], c["Installed"]["message"]) == ("False", "No bundle installed")
        assert gone("namespace", missing)
        assert gone("secret", f"{olmv1_e2e.RECORD_PREFIX}{name}", "-n", env["system_ns"])

        # The administrator creates the namespace, then the ServiceAccount and its RBAC: installs by itself.
        kubectl("create", "namespace", missing)
        setup_installer(missing, SA_RULES_FULL)
        wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
        assert configmap_version(pkg, missing) == "1.0.0"
        delete_ce(name)
    finally:
        olmv1_e2e.delete_namespace(missing)
