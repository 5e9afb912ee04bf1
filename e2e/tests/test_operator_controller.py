"""operator-controller against a real kube-apiserver, OCI registry and catalogd (spec §2, §3).

Small registry+v1 bundles (a CSV with a Deployment and clusterPermissions, plus a
ConfigMap; AllNamespaces install mode; written by olmv1_bundles.py) are pushed with `olmv1
bundle push`; a catalog referencing them is pushed with `olmv1 catalog push`.  catalogd and
operator-controller run as subprocesses on free 127.0.0.1 ports with temporary cache
dirs and are stopped by PID (olmv1_e2e.py).  The helpers keep their names here for the
modules that import them from this one.  ClusterExtensions are applied with kubectl as a user
would, each in its own namespace with a ServiceAccount and the RBAC the test gives it.

Channel "stable": v1.0.0 <- v1.0.1 (replaces 1.0.0) <- v2.0.0 (replaces 1.0.1), so
2.0.0 is not a successor of 1.0.0.  Every wait polls with a generous deadline; nothing
asserts timing.  Stdlib, PyYAML and pytest only.
"""

import base64
import json

import pytest

import olmv1_bundles
import olmv1_e2e
from conftest import REPO, kubectl, kubectl_json, unique  # noqa: F401  (re-exported)
from olmv1_e2e import (CATALOGD, OPCTL, OWNER_LABEL, RECORD_PREFIX, SA_RULES_FULL, WAIT, Catalogd, Controller,  # noqa: F401
                       conditions, free_port, http, ns, olmv1, set_rules, setup_namespace, wait_for, write_yaml)

VERSIONS = ("1.0.0", "1.0.1", "2.0.0")
REPLACES = {"1.0.1": "1.0.0", "2.0.0": "1.0.1"}
LABEL = "e2e-opctl"  # ClusterCatalog label key; its value is the package name


def write_bundle(root, pkg, version):
    """A registry+v1 bundle dir for <pkg> at <version> (AllNamespaces)."""
    return olmv1_bundles.write_bundle(root, pkg, version)


def write_catalog(root, pkg, images):
    return olmv1_bundles.write_catalog(root / "catalog", pkg, images, VERSIONS)


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    """One package (VERSIONS) in one ClusterCatalog, catalogd and operator-controller: a dict with
    pkg, images ({version: digest ref}), catalog, ctl, system_ns (and the olm_env keys)."""
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("opctl"), LABEL) as env:
        pkg = unique("opk")
        images = olmv1_e2e.push_bundles(env, pkg, VERSIONS)
        ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS, "latest")
        env.update(pkg=pkg, images=images, catalog=olmv1_e2e.create_catalog(env, pkg, ref))
        yield env


def apply_ce(world, ce_name, ns, version=None, policy=None):
    olmv1_e2e.apply_ce(world, world["pkg"], ce_name, ns, version=version, policy=policy)


def wait_installed(world, ce_name, version):
    """Installed=True with bundle <version>, Progressing Succeeded, observedGeneration current, the
    exact messages, and no deprecation."""
    olmv1_e2e.wait_installed(world, ce_name, f"{world['pkg']}.v{version}", version)
    obj, c = conditions(ce_name)
    assert c["Installed"]["message"] == f"Installed bundle {world['images'][version]} successfully"
    assert c["Installed"]["reason"] == "Succeeded"
    assert c["Progressing"]["message"] == "Desired state reached"
    assert obj["status"]["install"]["bundle"]["name"] == f"{world['pkg']}.v{version}"
    for t in ("Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated"):
        assert c[t]["status"] == "False", c[t]
    return obj


def wait_progressing(world, ce_name, reason, contains):
    return olmv1_e2e.wait_progressing(world, ce_name, None, reason, contains)


def configmap_version(world, ns):
    return olmv1_e2e.configmap_version(world["pkg"], ns)


def delete_ce(world, ce_name):
    olmv1_e2e.delete_ce(ce_name)


def test_install_latest_and_uninstall(world, ns, name):
    pkg = world["pkg"]
    apply_ce(world, name, ns)
    wait_installed(world, name, "2.0.0")
    assert configmap_version(world, ns) == "2.0.0"
    dep = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)
    assert dep["metadata"]["labels"]["olm.operatorframework.io/owner-name"] == name
    obj = kubectl_json("get", "clusterextension", name)
    assert "olm.operatorframework.io/cleanup" in obj["metadata"]["finalizers"]
    record = kubectl_json("get", "secret", f"{RECORD_PREFIX}{name}", "-n", world["system_ns"])
    assert record["type"] == "olm.operatorframework.io/install-record"

    delete_ce(world, name)
    for args in (("deployment", f"{pkg}-manager", "-n", ns), ("configmap", f"{pkg}-config", "-n", ns),
                 ("serviceaccount", f"{pkg}-manager", "-n", ns),
                 ("secret", f"{RECORD_PREFIX}{name}", "-n", world["system_ns"])):
        out = kubectl("get", *args, "--ignore-not-found", "-o", "name").stdout.strip()
        assert out == "", f"{args} still exists after uninstall"
    left = kubectl("get", "clusterroles,clusterrolebindings", "-l",
                   f"olm.operatorframework.io/owner-name={name}", "-o", "name").stdout.strip()
    assert left == ""


def test_pinned_upgrade_refusal_and_self_certified(world, ns, name):
    pkg = world["pkg"]
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    assert configmap_version(world, ns) == "1.0.0"

    # 1.0.1 replaces 1.0.0: a successor.
    apply_ce(world, name, ns, version="1.0.1")
    wait_installed(world, name, "1.0.1")
    assert configmap_version(world, ns) == "1.0.1"

    # Back to 1.0.0 is no successor; the exact resolver message, and 1.0.1 stays installed.
    apply_ce(world, name, ns, version="1.0.0")
    want = (f'error upgrading from currently installed version "1.0.1": no bundles found for package '
            f'"{pkg}" matching version "1.0.0"')
    c = wait_progressing(world, name, "Retrying", want)
    assert c["Progressing"]["message"] == want
    assert c["Progressing"]["status"] == "True"
    assert c["Installed"]["status"] == "True"
    assert configmap_version(world, ns) == "1.0.1"

    # SelfCertified forces it (downgrades too).
    apply_ce(world, name, ns, version="1.0.0", policy="SelfCertified")
    wait_installed(world, name, "1.0.0")
    assert configmap_version(world, ns) == "1.0.0"
    delete_ce(world, name)


def test_non_successor_refused_then_forced(world, ns, name):
    pkg = world["pkg"]
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    apply_ce(world, name, ns, version="2.0.0")
    want = (f'error upgrading from currently installed version "1.0.0": no bundles found for package '
            f'"{pkg}" matching version "2.0.0"')
    wait_progressing(world, name, "Retrying", want)
    apply_ce(world, name, ns, version="2.0.0", policy="SelfCertified")
    wait_installed(world, name, "2.0.0")
    assert configmap_version(world, ns) == "2.0.0"
    delete_ce(world, name)


def test_rbac_too_weak_then_fixed(world, name):
    ns = name[:50]
    weak = [r for r in SA_RULES_FULL if r["resources"] != ["deployments"]]
    setup_namespace(ns, weak)
    try:
        apply_ce(world, name, ns, version="1.0.0")
        c = wait_progressing(world, name, "Retrying", "deployments")
        msg = c["Progressing"]["message"]
        assert msg.startswith(f'error for resolved bundle "{world["pkg"]}.v1.0.0" with version "1.0.0": '), msg
        assert "forbidden" in msg and "system:serviceaccount:" + ns + ":installer" in msg, msg
        assert c["Installed"]["status"] == "False" and c["Installed"]["message"] == "No bundle installed"
        set_rules(ns, SA_RULES_FULL)
        wait_installed(world, name, "1.0.0")
        delete_ce(world, name)
    finally:
        olmv1_e2e.delete_namespace(ns)


def test_failed_first_install_deleted_leaves_nothing(world, name):
    """A first install that fails part-way (the ServiceAccount may not apply Deployments) has
    already applied what comes before the Deployment: the ClusterRole(Binding)s, ServiceAccount and
    ConfigMap.  They are listed in a pending install record, so the extension still reports no
    bundle installed, and deleting it (an administrator giving up on the failed install) removes
    them too instead of leaving them behind for good."""
    ns = name[:50]
    # It may read Deployments (so the conflict check before any write passes), not create them.
    weak = [r for r in SA_RULES_FULL if r["resources"] != ["deployments"]]
    weak.append({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]})
    setup_namespace(ns, weak)
    try:
        apply_ce(world, name, ns, version="1.0.0")
        wait_progressing(world, name, "Retrying", "applying Deployment")
        owned = kubectl("get", "clusterroles,clusterrolebindings", "-l", f"{OWNER_LABEL}={name}",
                        "-o", "name").stdout.split()
        assert owned, "the failed install applied no cluster-scoped object: nothing to test"
        # A reconcile that reads the pending record (a new generation) still reports nothing installed.
        apply_ce(world, name, ns, version="1.0.0", policy="SelfCertified")
        gen = kubectl_json("get", "clusterextension", name)["metadata"]["generation"]
        wait_for(lambda: conditions(name)[1]["Progressing"].get("observedGeneration") == gen,
                 "a reconcile of the new generation", world["ctl"])
        obj, c = conditions(name)
        assert c["Installed"]["status"] == "False" and c["Installed"]["message"] == "No bundle installed", c
        assert "install" not in obj["status"], obj["status"]
        assert c["Progressing"]["reason"] == "Retrying", c

        delete_ce(world, name)
        left = kubectl("get", "clusterroles,clusterrolebindings", "-l", f"{OWNER_LABEL}={name}",
                       "-o", "name").stdout.split()
        assert left == [], f"{left} left behind by the uninstall of a failed install"
        left = kubectl("get", "serviceaccounts,configmaps", "-n", ns, "-l", f"{OWNER_LABEL}={name}",
                       "-o", "name").stdout.split()
        assert left == [], f"{left} left behind by the uninstall of a failed install"
        out = kubectl("get", "secret", f"{RECORD_PREFIX}{name}", "-n", world["system_ns"], "--ignore-not-found",
                      "-o", "name").stdout.strip()
        assert out == "", "the pending install record outlived the extension"
    finally:
        olmv1_e2e.delete_namespace(ns)


def test_unreadable_record_during_delete_is_reported(world, ns, name):
    """The install record cannot be read while the extension is being deleted (its Secret was
    edited into something that is no record): the finalizer says so in Progressing Retrying
    "error uninstalling: ..." with the current observedGeneration, instead of the extension hanging
    in deletion with nothing in its status.  Nothing is deleted meanwhile; once the record is put
    back, the uninstall finishes."""
    pkg, system_ns = world["pkg"], world["system_ns"]
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    secret = f"{RECORD_PREFIX}{name}"
    good = kubectl_json("get", "secret", secret, "-n", system_ns)["data"]["record.json"]
    bad = base64.b64encode(b'{"extension":"' + name.encode() + b'"}').decode()
    kubectl("patch", "secret", secret, "-n", system_ns, "--type=merge", "-p",
            json.dumps({"data": {"record.json": bad}}))
    kubectl("delete", "clusterextension", name, "--wait=false")
    c = wait_progressing(world, name, "Retrying", "error uninstalling: ")
    obj, c = conditions(name)
    msg = c["Progressing"]["message"]
    assert f"install record Secret '{secret}'" in msg and "bundle is missing" in msg, msg
    assert c["Progressing"]["observedGeneration"] == obj["metadata"]["generation"], (c, obj["metadata"])
    assert c["Installed"]["status"] == "Unknown" and "bundle is missing" in c["Installed"]["message"], c
    assert configmap_version(world, ns) == "1.0.0"  # nothing deleted on a guess

    kubectl("patch", "secret", secret, "-n", system_ns, "--type=merge", "-p",
            json.dumps({"data": {"record.json": good}}))
    wait_for(lambda: not kubectl("get", "clusterextension", name, "--ignore-not-found", "-o", "name").stdout.strip(),
             "the uninstall to finish", world["ctl"])
    for args in (("deployment", f"{pkg}-manager", "-n", ns), ("configmap", f"{pkg}-config", "-n", ns),
                 ("secret", secret, "-n", system_ns)):
        assert kubectl("get", *args, "--ignore-not-found", "-o", "name").stdout.strip() == "", args


def test_missing_service_account(world, name):
    ns = name[:50]
    kubectl("create", "namespace", ns)
    try:
        apply_ce(world, name, ns, version="1.0.0")
        wait_progressing(world, name, "Retrying", f'service account "installer" not found in namespace "{ns}"')
        delete_ce(world, name)
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found", check=False)


def test_drift_repair(world, ns, name):
    """A deleted or edited object is put back by the periodic repair (--drift-repair-interval 2s)."""
    pkg = world["pkg"]
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    kubectl("delete", "configmap", f"{pkg}-config", "-n", ns)
    kubectl("patch", "deployment", f"{pkg}-manager", "-n", ns, "--type=merge", "-p", '{"spec":{"replicas":3}}')
    wait_for(lambda: configmap_version(world, ns) == "1.0.0", "the ConfigMap to be recreated", world["ctl"])
    wait_for(lambda: kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["spec"]["replicas"] == 1,
             "spec.replicas to be restored", world["ctl"])
    delete_ce(world, name)


def test_metrics(world):
    status, body = http(f"http://127.0.0.1:{world['ctl'].port}/metrics")
    assert status == 200
    assert b"operator_controller_reconcile_total" in body
    assert b"operator_controller_installed_extensions" in body
    assert b"operator_controller_drift_repaired_objects_total" in body
    # The reconcile duration histogram is coherent: cumulative buckets, +Inf = count = reconciles.
    text = body.decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("operator_controller_reconcile_") and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            values[key] = float(value)
    assert "# TYPE operator_controller_reconcile_duration_seconds histogram" in text
    buckets = [v for k, v in values.items() if k.startswith("operator_controller_reconcile_duration_seconds_bucket")]
    assert len(buckets) >= 2 and buckets == sorted(buckets), buckets
    count = values["operator_controller_reconcile_duration_seconds_count"]
    assert buckets[-1] == count == values["operator_controller_reconcile_total"] > 0
    assert values["operator_controller_reconcile_duration_seconds_sum"] > 0
