"""The OLM v1 CRDs on a real kube-apiserver: install, samples, printer columns, defaults, and
the OpenAPI/CEL validation of shared/spec/olmv1-behaviour.md §1.1 and §1.2 (spec.serviceAccount is
optional and changeable: used when named, as this project decided; absent, as upstream writes it)."""

import copy
import json
import re

import pytest

from conftest import (CONFIG, OLM_CRDS, OPENSHIFT_CRDS, kubectl, kubectl_json,
                      load_yaml_docs)

API = "olm.operatorframework.io/v1"
DIGEST = "sha256:" + "0123456789abcdef" * 4

DNS1123_SUBDOMAIN_MSG = (
    "must be a valid DNS1123 subdomain. It must contain only lowercase alphanumeric characters, "
    "hyphens (-) or periods (.), start and end with an alphanumeric character, and be no longer "
    "than 253 characters")


# ---------------------------------------------------------------- object builders

def cluster_extension(name, version=None, **spec_overrides):
    obj = {
        "apiVersion": API,
        "kind": "ClusterExtension",
        "metadata": {"name": name},
        "spec": {
            "namespace": "extension-ns",
            "serviceAccount": {"name": "extension-installer"},
            "source": {"sourceType": "Catalog",
                       "catalog": {"packageName": "argocd-operator"}},
        },
    }
    if version is not None:
        obj["spec"]["source"]["catalog"]["version"] = version
    obj["spec"].update(spec_overrides)
    return obj


def cluster_catalog(name, ref="quay.io/operatorhubio/catalog:latest", **image_extra):
    return {
        "apiVersion": API,
        "kind": "ClusterCatalog",
        "metadata": {"name": name},
        "spec": {"source": {"type": "Image", "image": {"ref": ref, **image_extra}}},
    }


def create(obj, cleanup=None):
    """kubectl create; registers the object for cleanup when it was created."""
    proc = kubectl("create", "-f", "-", input=obj, check=False)
    if proc.returncode == 0 and cleanup is not None:
        cleanup(obj["kind"].lower(), obj["metadata"]["name"])
    return proc


def assert_created(obj, cleanup):
    proc = create(obj, cleanup)
    assert proc.returncode == 0, f"apiserver rejected a valid object:\n{proc.stderr}"
    return kubectl_json("get", obj["kind"].lower(), obj["metadata"]["name"])


def assert_rejected(obj, cleanup, *messages):
    """The apiserver refuses to create obj, naming every message, and nothing is stored."""
    proc = create(obj, cleanup)
    assert proc.returncode != 0, f"apiserver accepted an invalid object: {obj}"
    for m in messages:
        assert m in proc.stderr, f"expected {m!r} in the error:\n{proc.stderr}"
    got = kubectl("get", obj["kind"].lower(), obj["metadata"]["name"], check=False)
    assert got.returncode != 0, "rejected object exists anyway"
    return proc.stderr


def header_columns(kind_plural, obj_name):
    out = kubectl("get", kind_plural, obj_name).stdout.splitlines()
    assert len(out) == 2, out
    return [c.strip() for c in re.split(r"\s{2,}", out[0].strip())], out[1]


def patch_status(kind, obj_name, status):
    return kubectl("patch", kind, obj_name, "--subresource=status", "--type=merge",
                   "-p", json.dumps({"status": status}), check=False)


def condition(ctype, status, reason="Succeeded", message="ok"):
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}


# ---------------------------------------------------------------- CRDs installed

@pytest.mark.parametrize("crd", OLM_CRDS + OPENSHIFT_CRDS)
def test_crd_established_cluster_scoped_v1(crds, crd):
    obj = kubectl_json("get", "crd", crd)
    conds = {c["type"]: c["status"] for c in obj["status"]["conditions"]}
    assert conds.get("Established") == "True", conds
    assert conds.get("NamesAccepted") == "True", conds
    assert obj["spec"]["scope"] == "Cluster"
    versions = obj["spec"]["versions"]
    assert [v["name"] for v in versions] == ["v1"]
    assert versions[0]["served"] and versions[0]["storage"]
    assert "status" in versions[0]["subresources"]
    assert obj["status"]["acceptedNames"]["kind"] in (
        "ClusterExtension", "ClusterCatalog", "ClusterObjectSet", "ClusterVersion", "ClusterOperator")


def test_olm_crds_have_no_short_names(crds):
    for crd in OLM_CRDS:
        names = kubectl_json("get", "crd", crd)["spec"]["names"]
        assert "shortNames" not in names and "categories" not in names


def test_clusteroperator_short_name(crds):
    assert kubectl("get", "co").returncode == 0


# ---------------------------------------------------------------- samples and manifests

def test_every_sample_applies(crds, cleanup):
    files = sorted((CONFIG / "samples").glob("*.yaml"))
    assert files, "no samples"
    for f in files:
        for doc in load_yaml_docs(f):
            # Namespaces stay: without kube-controller-manager a deleted namespace never goes
            # away, and a re-run in the same cluster could not apply into a terminating one.
            if doc["kind"] != "Namespace":
                cleanup(doc["kind"].lower(), doc["metadata"]["name"],
                        doc["metadata"].get("namespace"))
        kubectl("apply", "-f", f)
    for f in files:
        for doc in load_yaml_docs(f):
            args = ["get", doc["kind"].lower(), doc["metadata"]["name"]]
            if doc["metadata"].get("namespace"):
                args += ["-n", doc["metadata"]["namespace"]]
            stored = kubectl_json(*args)
            if doc["kind"] == "ClusterExtension":
                # every extension sample names an installer ServiceAccount that a sample creates
                sa = stored["spec"]["serviceAccount"]["name"]
                kubectl("get", "serviceaccount", sa, "-n", stored["spec"]["namespace"])
                assert stored["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] in (
                    "CatalogProvided", "SelfCertified")
            if doc["kind"] == "ClusterCatalog":
                assert stored["spec"]["availabilityMode"] in ("Available", "Unavailable")
                assert isinstance(stored["spec"]["priority"], int)


def test_samples_cover_the_seed_examples():
    """The seed documents' ClusterExtension examples: channel, exact version, ranges, forced update."""
    versions, channels, policies = set(), set(), set()
    for f in (CONFIG / "samples").glob("clusterextension*.yaml"):
        for doc in load_yaml_docs(f):
            cat = doc["spec"]["source"]["catalog"]
            versions.add(cat.get("version"))
            channels.update(cat.get("channels", []))
            policies.add(cat.get("upgradeConstraintPolicy"))
            assert doc["spec"]["serviceAccount"]["name"]
    assert {">=1.11, <1.13", "1.11.1", ">1.11.1"} <= versions
    assert "latest" in channels
    assert "SelfCertified" in policies


def test_system_manifests_accepted_by_apiserver(crds):
    """Namespace for real (idempotent), then RBAC and the manager objects in server-side dry-run."""
    kubectl("apply", "-f", CONFIG / "manager" / "00-namespace.yaml")
    kubectl("apply", "--dry-run=server", "-f", CONFIG / "rbac")
    kubectl("apply", "--dry-run=server", "-f", CONFIG / "manager")
    names = set()
    for f in (CONFIG / "manager").glob("*.yaml"):
        for doc in load_yaml_docs(f):
            names.add((doc["kind"], doc["metadata"]["name"]))
    assert ("Deployment", "catalogd-controller-manager") in names
    assert ("Deployment", "operator-controller-controller-manager") in names
    assert ("Service", "catalogd-service") in names
    assert ("Service", "operator-controller-service") in names
    assert ("NetworkPolicy", "default-deny-all-traffic") in names


OC_SA = "system:serviceaccount:olmv1-system:operator-controller-controller-manager"
CATALOGD_SA = "system:serviceaccount:olmv1-system:catalogd-controller-manager"


def can_i(user, *args):
    proc = kubectl("auth", "can-i", "--as", user, *args, check=False)
    assert proc.stdout.strip() in ("yes", "no"), proc.stdout + proc.stderr
    return proc.stdout.strip() == "yes"


@pytest.fixture(scope="module")
def system_rbac(crds):
    """The system namespace and the daemons' RBAC, applied for real once."""
    kubectl("apply", "-f", CONFIG / "manager" / "00-namespace.yaml", "-f", CONFIG / "rbac")


@pytest.mark.parametrize("user, args, allowed", [
    (OC_SA, ("watch", "clusterextensions.olm.operatorframework.io"), True),
    (OC_SA, ("update", "clusterextensions.olm.operatorframework.io", "--subresource=status"), True),
    (OC_SA, ("update", "clusterextensions.olm.operatorframework.io", "--subresource=finalizers"), True),
    (OC_SA, ("list", "clustercatalogs.olm.operatorframework.io"), True),
    (OC_SA, ("watch", "clusterobjectsets.olm.operatorframework.io"), True),
    (OC_SA, ("patch", "clusterobjectsets.olm.operatorframework.io"), True),
    (OC_SA, ("update", "clusterobjectsets.olm.operatorframework.io", "--subresource=status"), True),
    (OC_SA, ("update", "clusterobjectsets.olm.operatorframework.io", "--subresource=finalizers"), True),
    (OC_SA, ("create", "serviceaccounts", "--subresource=token", "-n", "some-extension-ns"), True),
    (OC_SA, ("create", "secrets", "-n", "olmv1-system"), True),
    (OC_SA, ("update", "leases.coordination.k8s.io", "-n", "olmv1-system"), True),
    (OC_SA, ("create", "events", "-n", "default"), True),
    (OC_SA, ("get", "clusterversions.config.openshift.io"), True),
    (OC_SA, ("patch", "clusteroperators.config.openshift.io", "--subresource=status"), True),
    (OC_SA, ("create", "clusteroperators.config.openshift.io"), True),
    (OC_SA, ("get", "namespaces"), True),
    (OC_SA, ("list", "namespaces"), False),
    (OC_SA, ("get", "configmaps", "-n", "default"), False),
    # not cluster-admin: bundle content is applied with the extension's ServiceAccount
    (OC_SA, ("create", "deployments.apps", "-n", "default"), False),
    (OC_SA, ("create", "customresourcedefinitions.apiextensions.k8s.io"), False),
    (OC_SA, ("get", "secrets", "-n", "default"), False),
    # acting as the extensions' ServiceAccounts by impersonation (and knowing which exist first);
    # never as any other user or group
    (OC_SA, ("get", "serviceaccounts", "-n", "default"), True),
    (OC_SA, ("impersonate", "serviceaccounts", "-n", "default"), True),
    (OC_SA, ("list", "serviceaccounts", "-n", "default"), True),  # which exist, kept in a watch
    (OC_SA, ("watch", "serviceaccounts"), True),
    (OC_SA, ("create", "serviceaccounts", "-n", "default"), False),
    (OC_SA, ("impersonate", "users"), False),
    (OC_SA, ("impersonate", "groups"), False),
    (OC_SA, ("update", "clustercatalogs.olm.operatorframework.io"), False),
    (OC_SA, ("update", "clusteroperators.config.openshift.io"), False),
    (CATALOGD_SA, ("patch", "clustercatalogs.olm.operatorframework.io", "--subresource=status"), True),
    (CATALOGD_SA, ("update", "clustercatalogs.olm.operatorframework.io", "--subresource=finalizers"), True),
    # the global pull secret, by name only (list/watch use the field selector metadata.name=)
    (CATALOGD_SA, ("get", "secrets/olmv1-global-pull-secret", "-n", "olmv1-system"), True),
    (CATALOGD_SA, ("watch", "secrets/olmv1-global-pull-secret", "-n", "olmv1-system"), True),
    (CATALOGD_SA, ("get", "secrets/catalogd-service-cert", "-n", "olmv1-system"), False),
    (CATALOGD_SA, ("list", "secrets", "-n", "olmv1-system"), False),
    (CATALOGD_SA, ("create", "leases.coordination.k8s.io", "-n", "olmv1-system"), True),
    (CATALOGD_SA, ("create", "clustercatalogs.olm.operatorframework.io"), False),
    (CATALOGD_SA, ("get", "clusterextensions.olm.operatorframework.io"), False),
    (CATALOGD_SA, ("get", "secrets", "-n", "default"), False),
    (CATALOGD_SA, ("create", "serviceaccounts", "--subresource=token", "-n", "default"), False),
    (CATALOGD_SA, ("impersonate", "serviceaccounts", "-n", "default"), False),
])
def test_rbac_least_privilege(system_rbac, user, args, allowed):
    """The apiserver's RBAC authorizer answers for the daemons' ServiceAccounts."""
    assert can_i(user, *args) is allowed


def test_sample_installer_rbac(crds):
    kubectl("apply", "-f", CONFIG / "samples" / "00-extension-installer-rbac.yaml")
    sa = "system:serviceaccount:pipelines:pipelines-installer"
    assert can_i(sa, "create", "deployments.apps", "-n", "pipelines")
    assert can_i(sa, "create", "customresourcedefinitions.apiextensions.k8s.io")
    assert can_i(sa, "bind", "clusterroles.rbac.authorization.k8s.io")
    assert not can_i(sa, "create", "deployments.apps", "-n", "default")
    assert not can_i(sa, "get", "secrets", "-n", "olmv1-system")


def test_openshift_global_pull_secret_rbac(system_rbac):
    """config/rbac-openshift/global-pull-secret.yaml lets both daemons read openshift-config's
    pull-secret by name, and nothing else there."""
    kubectl("create", "namespace", "openshift-config", check=False)
    rbac = CONFIG / "rbac-openshift" / "global-pull-secret.yaml"
    kubectl("apply", "--server-side", "-f", rbac)
    try:
        for sa in (OC_SA, CATALOGD_SA):
            for verb in ("get", "list", "watch"):
                assert can_i(sa, verb, "secrets/pull-secret", "-n", "openshift-config"), (sa, verb)
            assert not can_i(sa, "get", "secrets/etcd-client", "-n", "openshift-config"), sa
            assert not can_i(sa, "list", "secrets", "-n", "openshift-config"), sa
            assert not can_i(sa, "update", "secrets/pull-secret", "-n", "openshift-config"), sa
    finally:
        kubectl("delete", "--ignore-not-found", "-f", rbac, check=False)


def test_network_policy_ports():
    docs = load_yaml_docs(CONFIG / "manager" / "networkpolicies.yaml")
    ports = {}
    for d in docs:
        sel = d["spec"]["podSelector"].get("matchLabels", {}).get("control-plane", "*")
        ports[sel] = sorted(p["port"] for rule in d["spec"].get("ingress", [])
                            for p in rule.get("ports", []))
    assert ports == {"*": [], "catalogd-controller-manager": [7443, 8443],
                     "operator-controller-controller-manager": [8443]}


def test_operator_controller_is_not_cluster_admin():
    for f in (CONFIG / "rbac").glob("*.yaml"):
        for d in load_yaml_docs(f):
            if d["kind"] in ("ClusterRoleBinding", "RoleBinding"):
                assert d["roleRef"]["name"] not in ("cluster-admin", "admin", "edit"), d
            for rule in d.get("rules", []):
                assert "*" not in rule.get("verbs", []), d["metadata"]["name"]
                assert "*" not in rule.get("resources", []), d["metadata"]["name"]


# ---------------------------------------------------------------- printer columns

def test_clusterextension_printer_columns(crds, cleanup, name):
    assert_created(cluster_extension(name), cleanup)
    cols, _ = header_columns("clusterextensions", name)
    assert cols == ["NAME", "INSTALLED BUNDLE", "VERSION", "INSTALLED", "PROGRESSING", "AGE"]
    status = {
        "conditions": [condition("Installed", "True"), condition("Progressing", "False", "Blocked")],
        "install": {"bundle": {"name": "argocd-operator.v0.6.0", "version": "0.6.0"}},
    }
    proc = patch_status("clusterextension", name, status)
    assert proc.returncode == 0, proc.stderr
    _, row = header_columns("clusterextensions", name)
    assert row.split()[:5] == [name, "argocd-operator.v0.6.0", "0.6.0", "True", "False"]


def test_clustercatalog_printer_columns(crds, cleanup, name):
    assert_created(cluster_catalog(name), cleanup)
    cols, row = header_columns("clustercatalogs", name)
    assert cols == ["NAME", "LASTUNPACKED", "SERVING", "AGE"]
    status = {
        "conditions": [condition("Serving", "True", "Available"),
                       condition("Progressing", "True", "Succeeded")],
        "resolvedSource": {"type": "Image", "image": {"ref": "quay.io/operatorhubio/catalog@" + DIGEST}},
        "urls": {"base": f"https://catalogd-service.olmv1-system.svc/catalogs/{name}"},
        "lastUnpacked": "2026-01-01T00:00:00Z",
    }
    proc = patch_status("clustercatalog", name, status)
    assert proc.returncode == 0, proc.stderr
    _, row = header_columns("clustercatalogs", name)
    fields = row.split()
    assert fields[0] == name and fields[2] == "True", row


def test_printer_column_definitions_match_spec(crds):
    def columns(crd):
        v = kubectl_json("get", "crd", crd)["spec"]["versions"][0]
        return [(c["name"], c["jsonPath"], c["type"]) for c in v["additionalPrinterColumns"]]
    assert columns(OLM_CRDS[0]) == [
        ("Installed Bundle", ".status.install.bundle.name", "string"),
        ("Version", ".status.install.bundle.version", "string"),
        ("Installed", ".status.conditions[?(@.type=='Installed')].status", "string"),
        ("Progressing", ".status.conditions[?(@.type=='Progressing')].status", "string"),
        ("Age", ".metadata.creationTimestamp", "date"),
    ]
    assert columns(OLM_CRDS[1]) == [
        ("LastUnpacked", ".status.lastUnpacked", "date"),
        ("Serving", '.status.conditions[?(@.type=="Serving")].status', "string"),
        ("Age", ".metadata.creationTimestamp", "date"),
    ]


# ---------------------------------------------------------------- defaults

def test_clusterextension_defaults(crds, cleanup, name):
    stored = assert_created(cluster_extension(name), cleanup)
    assert stored["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] == "CatalogProvided"


def test_clustercatalog_defaults(crds, cleanup, name):
    stored = assert_created(cluster_catalog(name), cleanup)
    assert stored["spec"]["priority"] == 0
    assert stored["spec"]["availabilityMode"] == "Available"
    assert "pollIntervalMinutes" not in stored["spec"]["source"]["image"]


def test_clustercatalog_explicit_values_kept(crds, cleanup, name):
    obj = cluster_catalog(name, "quay.io/operatorhubio/catalog@" + DIGEST)
    obj["spec"]["priority"] = -2147483648
    obj["spec"]["availabilityMode"] = "Unavailable"
    stored = assert_created(obj, cleanup)
    assert stored["spec"]["priority"] == -2147483648
    assert stored["spec"]["availabilityMode"] == "Unavailable"


# ---------------------------------------------------------------- ClusterExtension: accepted

SEED_VERSION_RANGES = [
    ">=1.11, <1.13", "~1.12.x", "1.11.x", ">1.11.1", "^1.2.3", "1.2.3 || 2.x",
    "1.11.1", ">=1.12.X", "<=2.x", "*", "~1.11.0", "~1", "~1.12", "~1.x", "^0", "^0.0",
    "^0.0.3", "^0.2", "^1.2.x", "^2.x", "^2.3", ">=1.16", "1.14.x", "=1.2.3", "!=1.2.3",
    "=<1.0", "=>1.0", ">= 1.2.0, < 2.0.0", "~>1.2", ">1 <2", "v1.2.3", ">=1.0.0-0",
    "1.0.0-rc.1+build.5",
]


@pytest.mark.parametrize("version", SEED_VERSION_RANGES)
def test_version_expression_accepted(crds, cleanup, name, version):
    stored = assert_created(cluster_extension(name, version=version), cleanup)
    assert stored["spec"]["source"]["catalog"]["version"] == version


def test_full_clusterextension_accepted(crds, cleanup, name):
    obj = cluster_extension(
        name, version="1.14.x",
        install={"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}},
        config={"configType": "Inline",
                "inline": {"watchNamespace": "team-a",
                           "deploymentConfig": {"nodeSelector": {"kubernetes.io/os": "linux"}}}},
        progressDeadlineMinutes=10)
    cat = obj["spec"]["source"]["catalog"]
    cat["channels"] = ["stable", "pipelines-1.14"]
    cat["upgradeConstraintPolicy"] = "SelfCertified"
    cat["selector"] = {"matchLabels": {"olm.operatorframework.io/metadata.name": "operatorhubio"},
                       "matchExpressions": [{"key": "team", "operator": "In", "values": ["a"]}]}
    stored = assert_created(obj, cleanup)
    # unknown keys under config.inline are preserved (validated later against the bundle schema)
    assert stored["spec"]["config"]["inline"]["deploymentConfig"] == {
        "nodeSelector": {"kubernetes.io/os": "linux"}}
    assert stored["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] == "SelfCertified"


# ---------------------------------------------------------------- ClusterExtension: rejected

@pytest.mark.parametrize("version", [
    "1.0.0 - 2.0.0",   # hyphen range
    "==1.0.0",
    "01.0.0",          # leading zero
    "1.02.0",
    "!1.0.0",
    "1.2.3.4",
    "latest",
    "",
])
def test_bad_version_expression_rejected(crds, cleanup, name, version):
    assert_rejected(cluster_extension(name, version=version), cleanup, "invalid version expression")


def test_version_longer_than_64_rejected(crds, cleanup, name):
    version = ">=1.0.0, " + ", ".join(["<9.9.9"] * 10)
    assert len(version) > 64
    err = assert_rejected(cluster_extension(name, version=version), cleanup,
                          "spec.source.catalog.version")
    assert "Too long" in err and "64" in err, err


@pytest.mark.parametrize("package", ["Argocd", "argo_cd", "-argocd", "argocd.", "a" * 254])
def test_bad_package_name_rejected(crds, cleanup, name, package):
    obj = cluster_extension(name)
    obj["spec"]["source"]["catalog"]["packageName"] = package
    expect = "Too long" if len(package) > 253 else "packageName " + DNS1123_SUBDOMAIN_MSG
    assert_rejected(obj, cleanup, "spec.source.catalog.packageName", expect)


def test_misspelled_upgrade_constraint_policy_rejected(crds, cleanup, name):
    obj = cluster_extension(name)
    obj["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] = "SelfCertifed"
    assert_rejected(obj, cleanup, "spec.source.catalog.upgradeConstraintPolicy",
                    'Unsupported value: "SelfCertifed"', '"CatalogProvided"', '"SelfCertified"')


def test_missing_service_account_accepted(crds, cleanup, name):
    """Upstream's ClusterExtensions have no serviceAccount (deprecated and ignored upstream)."""
    obj = cluster_extension(name)
    del obj["spec"]["serviceAccount"]
    stored = assert_created(obj, cleanup)
    assert "serviceAccount" not in stored["spec"]


def test_service_account_can_change_and_be_cleared(crds, cleanup, name):
    assert_created(cluster_extension(name), cleanup)
    kubectl("patch", "clusterextension", name, "--type=merge", "-p",
            json.dumps({"spec": {"serviceAccount": {"name": "other-installer"}}}))
    assert kubectl_json("get", "clusterextension", name)["spec"]["serviceAccount"] == {"name": "other-installer"}
    kubectl("patch", "clusterextension", name, "--type=json", "-p",
            json.dumps([{"op": "remove", "path": "/spec/serviceAccount"}]))
    assert "serviceAccount" not in kubectl_json("get", "clusterextension", name)["spec"]


@pytest.mark.parametrize("sa, expect", [
    ({}, "spec.serviceAccount"),
    ({"name": ""}, "spec.serviceAccount.name"),
    ({"name": "Installer_SA"}, "name " + DNS1123_SUBDOMAIN_MSG),
    ({"name": "a" * 254}, "Too long"),
])
def test_bad_service_account_rejected(crds, cleanup, name, sa, expect):
    obj = cluster_extension(name)
    obj["spec"]["serviceAccount"] = sa
    assert_rejected(obj, cleanup, expect)


def test_missing_spec_rejected(crds, cleanup, name):
    obj = cluster_extension(name)
    del obj["spec"]
    assert_rejected(obj, cleanup, "spec: Required value")


@pytest.mark.parametrize("namespace, expect", [
    ("Extension-NS", "namespace must be a valid DNS1123 label"),
    ("extension.ns", "namespace must be a valid DNS1123 label"),
    ("n" * 64, "Too long"),
])
def test_bad_namespace_rejected(crds, cleanup, name, namespace, expect):
    obj = cluster_extension(name, namespace=namespace)
    assert_rejected(obj, cleanup, "spec.namespace", expect)


def test_missing_namespace_rejected(crds, cleanup, name):
    obj = cluster_extension(name)
    del obj["spec"]["namespace"]
    assert_rejected(obj, cleanup, "spec.namespace: Required value")


def test_catalog_required_for_catalog_source(crds, cleanup, name):
    obj = cluster_extension(name, source={"sourceType": "Catalog"})
    assert_rejected(obj, cleanup,
                    "catalog is required when sourceType is Catalog, and forbidden otherwise")


def test_unknown_source_type_rejected(crds, cleanup, name):
    obj = cluster_extension(name)
    obj["spec"]["source"]["sourceType"] = "Image"
    # an enum violation stops the apiserver before the CEL rules run
    assert_rejected(obj, cleanup, "spec.source.sourceType", 'Unsupported value: "Image"')


def test_missing_package_name_rejected(crds, cleanup, name):
    obj = cluster_extension(name)
    del obj["spec"]["source"]["catalog"]["packageName"]
    assert_rejected(obj, cleanup, "spec.source.catalog.packageName: Required value")


def test_bad_channel_rejected(crds, cleanup, name):
    obj = cluster_extension(name)
    obj["spec"]["source"]["catalog"]["channels"] = ["stable", "Fast_Track"]
    assert_rejected(obj, cleanup, "channels entries must be valid DNS1123 subdomains")


def test_too_many_channels_rejected(crds, cleanup, name):
    obj = cluster_extension(name)
    obj["spec"]["source"]["catalog"]["channels"] = [f"c{i}" for i in range(257)]
    assert_rejected(obj, cleanup, "spec.source.catalog.channels", "Too many")


@pytest.mark.parametrize("config, expect", [
    ({"configType": "Inline"}, "inline is required when configType is Inline, and forbidden otherwise"),
    ({"inline": {"watchNamespace": "a"}}, "spec.config.configType: Required value"),
    ({"configType": "Inline", "inline": {}}, "spec.config.inline"),
    ({"configType": "Secret", "inline": {"a": 1}}, 'Unsupported value: "Secret"'),
])
def test_config_union_rejected(crds, cleanup, name, config, expect):
    assert_rejected(cluster_extension(name, config=config), cleanup, expect)


@pytest.mark.parametrize("install, expect", [
    ({}, "at least one of [preflight] are required when install is specified"),
    ({"preflight": {}}, "at least one of [crdUpgradeSafety] are required when preflight is specified"),
    ({"preflight": {"crdUpgradeSafety": {}}},
     "spec.install.preflight.crdUpgradeSafety.enforcement: Required value"),
    ({"preflight": {"crdUpgradeSafety": {"enforcement": "Lax"}}}, 'Unsupported value: "Lax"'),
])
def test_install_preflight_rules(crds, cleanup, name, install, expect):
    assert_rejected(cluster_extension(name, install=install), cleanup, expect)


@pytest.mark.parametrize("minutes", [9, 721])
def test_progress_deadline_bounds(crds, cleanup, name, minutes):
    assert_rejected(cluster_extension(name, progressDeadlineMinutes=minutes), cleanup,
                    "spec.progressDeadlineMinutes")


# ---------------------------------------------------------------- ClusterExtension: immutability

@pytest.mark.parametrize("path, value, message", [
    (("source", "catalog", "packageName"), "other-operator", "packageName is immutable"),
    (("namespace",), "other-ns", "namespace is immutable"),
])
def test_immutable_fields(crds, cleanup, name, path, value, message):
    obj = assert_created(cluster_extension(name), cleanup)
    changed = copy.deepcopy(obj)
    node = changed["spec"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    proc = kubectl("replace", "-f", "-", input=changed, check=False)
    assert proc.returncode != 0, "immutable field changed"
    assert message in proc.stderr, proc.stderr
    # merge patch too (what kubectl apply/edit send)
    patch = value
    for key in reversed(path):
        patch = {key: patch}
    proc = kubectl("patch", "clusterextension", name, "--type=merge",
                   "-p", json.dumps({"spec": patch}), check=False)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
    stored = kubectl_json("get", "clusterextension", name)
    node = stored["spec"]
    for key in path:
        node = node[key]
    assert node != value


def test_mutable_fields_can_change(crds, cleanup, name):
    assert_created(cluster_extension(name, version="1.0.0"), cleanup)
    patch = {"spec": {"source": {"catalog": {"version": ">=1.1.0", "channels": ["stable"],
                                             "upgradeConstraintPolicy": "SelfCertified"}},
                      "install": {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}}}}
    kubectl("patch", "clusterextension", name, "--type=merge", "-p", json.dumps(patch))
    stored = kubectl_json("get", "clusterextension", name)
    assert stored["spec"]["source"]["catalog"]["version"] == ">=1.1.0"
    assert stored["metadata"]["generation"] == 2


# ---------------------------------------------------------------- ClusterExtension: status

def test_clusterextension_status_bundle_rules(crds, cleanup, name):
    assert_created(cluster_extension(name), cleanup)
    bad_version = patch_status("clusterextension", name,
                               {"install": {"bundle": {"name": "op.v1", "version": "v1.0.0"}}})
    assert bad_version.returncode != 0
    assert "version must be well-formed semver" in bad_version.stderr, bad_version.stderr
    bad_name = patch_status("clusterextension", name,
                            {"install": {"bundle": {"name": "Op_v1", "version": "1.0.0"}}})
    assert bad_name.returncode != 0
    assert "packageName " + DNS1123_SUBDOMAIN_MSG in bad_name.stderr, bad_name.stderr
    ok = patch_status("clusterextension", name,
                      {"install": {"bundle": {"name": "op.v1.0.0", "version": "1.0.0+2"}}})
    assert ok.returncode == 0, ok.stderr


def test_clusterextension_status_of_upstreams_experimental_crd(crds, cleanup, name):
    """What upstream's experimental operator-controller writes (Boxcutter's activeRevisions, a
    bundle release) stays valid and is kept, so that a cluster switched from it loses nothing."""
    assert_created(cluster_extension(name), cleanup)
    status = {"install": {"bundle": {"name": "op.v1.0.0", "version": "1.0.0", "release": "2"}},
              "activeRevisions": [{"name": f"{name}-1", "conditions": [condition("Progressing", "True")]}]}
    ok = patch_status("clusterextension", name, status)
    assert ok.returncode == 0, ok.stderr
    stored = kubectl_json("get", "clusterextension", name)["status"]
    assert stored["install"]["bundle"]["release"] == "2"
    assert stored["activeRevisions"][0]["name"] == f"{name}-1"
    bad = patch_status("clusterextension", name, {"install": {"bundle": {"name": "op.v1.0.0", "version": "1.0.0",
                                                                        "release": "01"}}})
    assert bad.returncode != 0 and "release must be empty or consist of dot-separated identifiers" in bad.stderr


# ---------------------------------------------------------------- ClusterCatalog: accepted

@pytest.mark.parametrize("ref", [
    "quay.io/operatorhubio/catalog:latest",
    "quay.io/operatorhubio/catalog@" + DIGEST,
    "127.0.0.1:5000/catalogs/test-catalog:v1.2.3",
    "localhost:5000/e2e/test-catalog@" + DIGEST,
    "registry.redhat.io/redhat/redhat-operator-index:v4.18",
    "docker.io/library/catalog_name__x:1",
])
def test_catalog_ref_accepted(crds, cleanup, name, ref):
    stored = assert_created(cluster_catalog(name, ref), cleanup)
    assert stored["spec"]["source"]["image"]["ref"] == ref


def test_poll_interval_with_tag_accepted(crds, cleanup, name):
    stored = assert_created(cluster_catalog(name, pollIntervalMinutes=1), cleanup)
    assert stored["spec"]["source"]["image"]["pollIntervalMinutes"] == 1


# ---------------------------------------------------------------- ClusterCatalog: rejected

@pytest.mark.parametrize("ref, message", [
    ("quay.io/operatorhubio/catalog", "must end with a digest or a tag"),
    ("quay.io/operatorhubio/catalog:-latest",
     'tag is invalid. valid tags must begin with a word character (alphanumeric + "_") '
     'followed by word characters or ".", and "-" characters'),
    ("quay.io/operatorhubio/catalog:" + "t" * 128,
     "tag is invalid. the tag must not be more than 127 characters"),
    ("quay.io/operatorhubio/catalog@sha256:0123456789abcdef",
     "digest is not valid. the encoded string must be at least 32 characters"),
    ("quay.io/operatorhubio/catalog@sha256:" + "g" * 64,
     "digest is not valid. the encoded string must only contain hex characters (A-F, a-f, 0-9)"),
    ("quay.io/operatorhubio/catalog@1sha256:" + "0" * 64,
     "digest algorithm is not valid. valid algorithms must start with an uppercase or lowercase "
     "alpha character followed by alphanumeric characters and may contain the "
     '"-", "_", "+", and "." characters.'),
    ("-quay.io/operatorhubio/catalog:latest",
     "must start with a valid domain. valid domains must be alphanumeric characters "
     '(lowercase and uppercase) separated by the "." character.'),
    ("quay.io:latest",
     "a valid name is required. valid names must contain lowercase alphanumeric characters "
     'separated only by the ".", "_", "__", "-" characters.'),
])
def test_bad_catalog_ref_rejected(crds, cleanup, name, ref, message):
    assert_rejected(cluster_catalog(name, ref), cleanup, "spec.source.image.ref", message)


def test_catalog_ref_too_long_rejected(crds, cleanup, name):
    ref = "quay.io/" + "a" * 1000 + ":latest"
    assert_rejected(cluster_catalog(name, ref), cleanup, "spec.source.image.ref", "Too long")


def test_poll_interval_with_digest_rejected(crds, cleanup, name):
    obj = cluster_catalog(name, "quay.io/operatorhubio/catalog@" + DIGEST, pollIntervalMinutes=5)
    assert_rejected(obj, cleanup,
                    "cannot specify pollIntervalMinutes while using digest-based image")


def test_poll_interval_minimum(crds, cleanup, name):
    assert_rejected(cluster_catalog(name, pollIntervalMinutes=0), cleanup,
                    "spec.source.image.pollIntervalMinutes")


def test_image_required_for_image_source(crds, cleanup, name):
    obj = cluster_catalog(name)
    del obj["spec"]["source"]["image"]
    assert_rejected(obj, cleanup,
                    "image is required when source type is Image, and forbidden otherwise")


def test_unknown_catalog_source_type_rejected(crds, cleanup, name):
    obj = cluster_catalog(name)
    obj["spec"]["source"]["type"] = "Git"
    assert_rejected(obj, cleanup, "spec.source.type", 'Unsupported value: "Git"')


def test_availability_mode_enum(crds, cleanup, name):
    obj = cluster_catalog(name)
    obj["spec"]["availabilityMode"] = "Disabled"
    assert_rejected(obj, cleanup, "spec.availabilityMode", 'Unsupported value: "Disabled"',
                    '"Available"', '"Unavailable"')


@pytest.mark.parametrize("priority", [2147483648, -2147483649])
def test_priority_int32_range(crds, cleanup, name, priority):
    obj = cluster_catalog(name)
    obj["spec"]["priority"] = priority
    assert_rejected(obj, cleanup, "spec.priority")


def test_catalog_missing_spec_rejected(crds, cleanup, name):
    obj = cluster_catalog(name)
    del obj["spec"]
    assert_rejected(obj, cleanup, "spec: Required value")


# ---------------------------------------------------------------- ClusterCatalog: status

@pytest.mark.parametrize("status, message", [
    ({"urls": {"base": "ftp://catalogd-service.olmv1-system.svc/catalogs/x"}},
     "scheme must be either http or https"),
    ({"urls": {"base": "not a url"}}, "must be a valid URL"),
    ({"resolvedSource": {"type": "Image",
                         "image": {"ref": "quay.io/operatorhubio/catalog:latest"}}},
     "must end with a digest"),
    ({"resolvedSource": {"type": "Image"}},
     "status.resolvedSource.image: Required value"),
])
def test_clustercatalog_status_rules(crds, cleanup, name, status, message):
    assert_created(cluster_catalog(name), cleanup)
    proc = patch_status("clustercatalog", name, status)
    assert proc.returncode != 0, "invalid status accepted"
    assert message in proc.stderr, proc.stderr


def test_clustercatalog_status_http_url_accepted(crds, cleanup, name):
    assert_created(cluster_catalog(name), cleanup)
    proc = patch_status("clustercatalog", name,
                        {"urls": {"base": f"http://127.0.0.1:8080/catalogs/{name}"}})
    assert proc.returncode == 0, proc.stderr


def test_status_is_a_subresource(crds, cleanup, name):
    """A spec write does not change status, and a status write does not change spec."""
    obj = cluster_catalog(name)
    obj["status"] = {"urls": {"base": "https://ignored.example/catalogs/x"}}
    stored = assert_created(obj, cleanup)
    assert "urls" not in stored.get("status", {})


# ---------------------------------------------------------------- OpenShift CRDs

def test_openshift_clusterversion_and_clusteroperator(crds, cleanup, name):
    # Unique names, not the singletons "version" and "olm": tests of the upgradeable
    # controller own those.
    cv = {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
          "metadata": {"name": name}, "spec": {"clusterID": "e2e", "channel": "stable-4.18"}}
    assert create(cv, cleanup).returncode == 0
    status = {"desired": {"version": "4.18.3", "image": "quay.io/openshift/release@" + DIGEST},
              "history": [{"state": "Completed", "version": "4.18.3",
                           "startedTime": "2026-01-01T00:00:00Z",
                           "completionTime": "2026-01-01T01:00:00Z"}],
              "observedGeneration": 1}
    proc = patch_status("clusterversion", name, status)
    assert proc.returncode == 0, proc.stderr
    stored = kubectl_json("get", "clusterversion", name)
    assert stored["status"]["desired"]["version"] == "4.18.3"
    assert stored["status"]["history"][0]["state"] == "Completed"

    co = {"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
          "metadata": {"name": name}, "spec": {}}
    assert create(co, cleanup).returncode == 0
    status = {"conditions": [{"type": "Upgradeable", "status": "False",
                              "reason": "InstalledOLMOperators_IncompatibleOperatorsInstalled",
                              "message": "InstalledOLMOperatorsUpgradeable: Found ClusterExtensions",
                              "lastTransitionTime": "2026-01-01T00:00:00Z"}],
              "versions": [{"name": "operator", "version": "4.18.3"}],
              "relatedObjects": [{"group": "operator.openshift.io", "resource": "olms",
                                  "name": "cluster"},
                                 {"group": "", "resource": "namespaces", "name": "olmv1-system"}]}
    proc = patch_status("clusteroperator", name, status)
    assert proc.returncode == 0, proc.stderr
    stored = kubectl_json("get", "co", name)
    assert stored["status"]["conditions"][0]["reason"].startswith("InstalledOLMOperators_")
    cols, row = header_columns("clusteroperators", name)
    assert "UPGRADEABLE" in cols and "False" in row.split(), (cols, row)
    bad = patch_status("clusteroperator", name,
                       {"conditions": [{"type": "Upgradeable", "status": "Maybe"}]})
    assert bad.returncode != 0 and 'Unsupported value: "Maybe"' in bad.stderr, bad.stderr
