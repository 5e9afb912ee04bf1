"""OpenShift upgrade blocking end to end, through real ClusterExtensions
(shared/spec/openshift-upgradeable.md §1, §5).

Unlike test_upgradeable.py (hand-made install records, the reconciler run by a test
program), here operator-controller itself installs registry+v1 bundles whose
metadata/properties.yaml declares olm.maxOpenShiftVersion, records the bundle's
properties in the install record, and — because config.openshift.io/v1 is served (the
session `crds` fixture installs config/openshift) — runs the upgradeable reconciler,
which writes Upgradeable on ClusterOperator "olm".

Package (channel "stable"): 1.0.0 says "4.18"; 1.1.0 (replaces 1.0.0) says "4.19";
1.2.0 (replaces 1.1.0) says "4.18.0", which is invalid.  The cluster is 4.18.3
(ClusterVersion "version" status.desired.version), so the next minor is 4.19.

ClusterVersion "version" and ClusterOperator "olm" are cluster singletons that
test_upgradeable.py also uses: this module deletes them before it starts (whatever
state an earlier run left) and again at the end, after its operator-controller has
stopped.  The reconciler re-evaluates on install record / ClusterExtension /
ClusterVersion events only, so every check polls with a generous deadline and nothing
asserts timing.
"""

import json
import os
import subprocess

import pytest

import olmv1_bundles
import olmv1_e2e
from conftest import REPO, kubectl, kubectl_json, unique
from olmv1_e2e import SA_RULES_FULL, WAIT, olmv1, setup_namespace, wait_for, write_yaml
from test_operator_controller import LABEL, apply_ce, delete_ce, wait_installed

MAX_OCP = {"1.0.0": "4.18", "1.1.0": "4.19", "1.2.0": "4.18.0"}
CLUSTER_VERSION = "4.18.3"
UPG_TYPE = "InstalledOLMOperatorsUpgradeable"
DEGRADED_TYPE = "OLMIncompatibleOperatorControllerDegraded"


def reset_singletons():
    for kind, obj in (("clusteroperator", "olm"), ("clusterversion", "version")):
        kubectl("delete", kind, obj, "--ignore-not-found", "--wait=true")


@pytest.fixture(scope="module")
def osworld(crds, tmp_path_factory):
    registry = olmv1_e2e.require_binaries()
    work = tmp_path_factory.mktemp("osupg")
    pkg = unique("osupg")
    images = {}
    for v, max_ocp in MAX_OCP.items():
        d = olmv1_bundles.write_bundle(work, pkg, v)
        write_yaml(d / "metadata" / "properties.yaml",
                   {"properties": [{"type": "olm.maxOpenShiftVersion", "value": max_ocp}]})
        images[v] = olmv1("bundle", "push", "-q", str(d), f"{registry}/e2e/{pkg}-bundle:v{v}")
    # The catalog deliberately carries no olm.maxOpenShiftVersion: the check must read the
    # installed bundle's own properties (spec §1).
    cat_ref = olmv1("catalog", "push", "-q", str(olmv1_bundles.write_catalog(work / "catalog", pkg, images,
                                                                              list(MAX_OCP))),
                    f"{registry}/e2e/{pkg}-catalog:latest")

    # A known starting state for the singletons, then the 4.18.3 cluster.
    reset_singletons()
    kubectl("create", "-f", "-", input={
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": "version"}, "spec": {"clusterID": "e2e-openshift-upgradeable"}})
    kubectl("patch", "clusterversion", "version", "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"desired": {"version": CLUSTER_VERSION}}}))
    try:
        with olmv1_e2e.olm_env(work, LABEL) as env:
            env["packages"].append(pkg)
            env.update(pkg=pkg, images=images, catalog=olmv1_e2e.create_catalog(env, pkg, cat_ref))
            yield env
    finally:
        # Only now that no reconciler can recreate them.
        kubectl("delete", "clusteroperator", "olm", "--ignore-not-found", check=False)
        kubectl("delete", "clusterversion", "version", "--ignore-not-found", check=False)


def co_conditions():
    co = kubectl_json("get", "clusteroperator", "olm")
    return {c["type"]: c for c in co.get("status", {}).get("conditions", [])}


def wait_co(world, predicate, what):
    """Polls ClusterOperator "olm" until predicate(conditions) holds; returns the conditions."""
    seen = {}

    def check():
        c = co_conditions()
        seen["last"] = c
        return predicate(c) and c
    try:
        return wait_for(check, f'ClusterOperator "olm": {what}', world["ctl"])
    except AssertionError as e:
        raise AssertionError(f"{e}\nlast conditions: {seen.get('last')!r}") from None


def cli(world, *args):
    """olmv1 upgradeable in cluster mode, or None when this olmv1 was built without it."""
    binary = os.environ.get("OLMV1_BIN") or str(REPO / "build" / "cli" / "olmv1")
    proc = subprocess.run([binary, "upgradeable", "--kubeconfig", os.environ["KUBECONFIG"],
                           "--system-namespace", world["system_ns"], *args],
                          capture_output=True, text=True, timeout=60)
    if "built without cluster access" in proc.stderr:
        return None
    return proc


def test_upgrade_blocking_through_cluster_extensions(osworld, name):
    w = osworld
    pkg = w["pkg"]
    ns = name[:50]
    setup_namespace(ns, SA_RULES_FULL)
    try:
        # Nothing installed yet: the reconciler creates "olm" and nothing blocks.
        c = wait_co(w, lambda c: c.get("Upgradeable", {}).get("status") == "True", "the first pass")
        assert (c["Upgradeable"]["reason"], c["Upgradeable"]["message"]) == ("AsExpected", "All is well")

        # 1.0.0 says 4.18 on a 4.18.3 cluster: the upgrade to 4.19 is blocked.
        apply_ce(w, name, ns, version="1.0.0")
        wait_installed(w, name, "1.0.0")
        record = kubectl_json("get", "secret", f"olmv1-install-{name}", "-n", w["system_ns"])
        assert record["type"] == "olm.operatorframework.io/install-record"
        blocked = (f"{UPG_TYPE}: Found ClusterExtensions that require upgrades prior to upgrading cluster to "
                   f'version 4.19: bundle "{pkg}.v1.0.0" for ClusterExtension "{name}".')
        c = wait_co(w, lambda c: c.get("Upgradeable", {}).get("message") == blocked, "Upgradeable=False naming 1.0.0")
        up = c["Upgradeable"]
        assert up["reason"] == "InstalledOLMOperators_IncompatibleOperatorsInstalled", up
        assert up["message"] == blocked, up
        assert c[DEGRADED_TYPE]["status"] == "False", c[DEGRADED_TYPE]

        # The administrator's check names the same extension and bundle.
        got = cli(w, "--to", "4.19")
        if got is not None:
            assert got.returncode == 1, got.stdout + got.stderr
            assert f"blocks  {name} (bundle {pkg}.v1.0.0): olm.maxOpenShiftVersion 4.18" in got.stdout, got.stdout
            assert cli(w, "--to", "4.18").returncode == 0

        # 1.1.0 says 4.19: compatible again.
        apply_ce(w, name, ns, version="1.1.0")
        wait_installed(w, name, "1.1.0")
        c = wait_co(w, lambda c: c.get("Upgradeable", {}).get("status") == "True", "Upgradeable=True after 1.1.0")
        assert (c["Upgradeable"]["reason"], c["Upgradeable"]["message"]) == ("AsExpected", "All is well")
        assert c[DEGRADED_TYPE]["status"] == "False", c[DEGRADED_TYPE]
        got = cli(w, "--to", "4.19")
        if got is not None:
            assert got.returncode == 0, got.stdout + got.stderr
            assert f"ok      {name} (bundle {pkg}.v1.1.0): olm.maxOpenShiftVersion 4.19" in got.stdout, got.stdout

        # 1.2.0 says "4.18.0": invalid; fails closed with upstream's wording, and the sync
        # error shows as the Degraded-style condition.
        apply_ce(w, name, ns, version="1.2.0")
        wait_installed(w, name, "1.2.0")
        error = (f"error(s) with cluster extension {name}: error in bundle {pkg}.v1.2.0: "
                 'error converting to semver for version "4.18.0": invalid version format')
        c = wait_co(w, lambda c: c.get("Upgradeable", {}).get("message") == f"{UPG_TYPE}: {error}",
                    "Upgradeable=False with the 1.2.0 error")
        up = c["Upgradeable"]
        assert up["reason"] == "InstalledOLMOperators_FailureGettingExtensionMetadata", up
        assert up["message"] == f"{UPG_TYPE}: {error}", up
        deg = c[DEGRADED_TYPE]
        assert (deg["status"], deg["reason"]) == ("True", "SyncError"), deg
        assert error in deg["message"], deg
        got = cli(w, "--to", "4.19")
        if got is not None:
            assert got.returncode == 1, got.stdout + got.stderr

        # Uninstalled: nothing blocks.
        delete_ce(w, name)
        c = wait_co(w, lambda c: c.get("Upgradeable", {}).get("status") == "True", "Upgradeable=True after uninstall")
        assert (c["Upgradeable"]["reason"], c["Upgradeable"]["message"]) == ("AsExpected", "All is well")
        c = wait_co(w, lambda c: c.get(DEGRADED_TYPE, {}).get("status") == "False", "Degraded=False after uninstall")
    finally:
        kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=true", f"--timeout={WAIT}s",
                check=False)
        olmv1_e2e.delete_namespace(ns)
