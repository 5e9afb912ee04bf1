"""OpenShift upgrade blocking (shared/spec/openshift-upgradeable.md) against the real apiserver.

The reconciler (controller/upgradeable_reconcile*.c) runs through the small program
controller/upgradeable/tests/upgradeable_live_check.c, built as build/controller/tests/upgradeable_live_check
(or $OLMV1_UPGRADEABLE_LIVE_CHECK): `once` runs one pass, `watch` runs the event-driven reconciler
until SIGTERM. Install records are written by hand in the install_record.h format, in a namespace
of the test's own (passed as --system-namespace) so records of other tests cannot change the
verdict; the ClusterExtensions are real objects (no controller acts on them here). ClusterVersion
"version" and ClusterOperator "olm" are cluster singletons: this module owns them and removes them.
"""

import base64
import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, kubectl, kubectl_json, unique

LIVE_CHECK_ENV = "OLMV1_UPGRADEABLE_LIVE_CHECK"
PROP = '[{"type":"olm.maxOpenShiftVersion","value":%s}]'


def live_check_binary():
    env = os.environ.get(LIVE_CHECK_ENV)
    path = Path(env) if env else REPO / "build" / "controller" / "tests" / "upgradeable_live_check"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(f"{path} is not built (controller/CMakeLists.txt does not build "
                    "controller/upgradeable/tests/upgradeable_live_check.c yet)")
    return path


@pytest.fixture
def world(crds, cleanup):
    """A system namespace, ClusterVersion "version" at 4.18.3, no ClusterOperator "olm" yet,
    and one ClusterExtension object."""
    binary = live_check_binary()
    sysns = cleanup("namespace", unique("upg-sys"))
    kubectl("create", "namespace", sysns)
    for kind, obj in (("clusteroperator", "olm"), ("clusterversion", "version")):
        kubectl("delete", kind, obj, "--ignore-not-found", "--wait=true")
    kubectl("create", "-f", "-", input={
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": "version"}, "spec": {"clusterID": "e2e"}})
    set_cluster_version("4.18.3")
    ce = cleanup("clusterextension", unique("upg-ce"))
    kubectl("create", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": ce},
        "spec": {"namespace": "default", "serviceAccount": {"name": "installer"},
                 "source": {"sourceType": "Catalog", "catalog": {"packageName": "upg-pkg"}}}})
    yield {"bin": binary, "ns": sysns, "ce": ce, "bundle": "upg-pkg.v1.0.0"}
    kubectl("delete", "clusteroperator", "olm", "--ignore-not-found", check=False)
    kubectl("delete", "clusterversion", "version", "--ignore-not-found", check=False)


def set_cluster_version(version):
    kubectl("patch", "clusterversion", "version", "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"desired": {"version": version}}}))


def put_record(w, properties):
    """The install record Secret of w["ce"] (install_record.h), properties as verbatim text."""
    record = {"extension": w["ce"],
              "bundle": {"name": w["bundle"], "version": "1.0.0", "image": "example.com/b@sha256:0",
                         "package": "upg-pkg"},
              "properties": properties, "objects": [], "installedAt": "2026-01-01T00:00:00Z"}
    kubectl("apply", "-f", "-", input={
        "apiVersion": "v1", "kind": "Secret", "type": "olm.operatorframework.io/install-record",
        "metadata": {"name": "olmv1-install-" + w["ce"], "namespace": w["ns"],
                     "labels": {"olm.operatorframework.io/owner-kind": "ClusterExtension",
                                "olm.operatorframework.io/owner-name": w["ce"],
                                "olm.operatorframework.io/install-record": "true"}},
        "data": {"record.json": base64.b64encode(json.dumps(record).encode()).decode()}})


def run_once(w):
    proc = subprocess.run([str(w["bin"]), "--system-namespace", w["ns"], "once"],
                          capture_output=True, text=True, timeout=60, env=os.environ.copy())
    assert proc.returncode == 0 and proc.stdout.strip() == "written", proc.stdout + proc.stderr


def conditions():
    co = kubectl_json("get", "clusteroperator", "olm")
    return {c["type"]: c for c in co.get("status", {}).get("conditions", [])}


def blocked_message(w, version="4.19"):
    return ("InstalledOLMOperatorsUpgradeable: Found ClusterExtensions that require upgrades prior to "
            f'upgrading cluster to version {version}: bundle "{w["bundle"]}" for ClusterExtension "{w["ce"]}".')


def cli(w, *args):
    """olmv1 upgradeable in cluster mode, or None when this olmv1 was built without it."""
    olmv1 = os.environ.get("OLMV1_BIN") or str(REPO / "build" / "cli" / "olmv1")
    proc = subprocess.run([olmv1, "upgradeable", "--kubeconfig", os.environ["KUBECONFIG"],
                           "--system-namespace", w["ns"], *args],
                          capture_output=True, text=True, timeout=60)
    if "built without cluster access" in proc.stderr:
        return None
    return proc


def test_upgradeable_once(world):
    w = world
    # No record: the extension is not installed, nothing blocks; "olm" is created.
    run_once(w)
    c = conditions()
    assert (c["Upgradeable"]["status"], c["Upgradeable"]["reason"], c["Upgradeable"]["message"]) == \
        ("True", "AsExpected", "All is well")

    # maxOpenShiftVersion 4.18 on a 4.18.3 cluster blocks the upgrade to 4.19.
    put_record(w, PROP % '"4.18"')
    run_once(w)
    c = conditions()
    up = c["Upgradeable"]
    assert up["status"] == "False"
    assert up["reason"] == "InstalledOLMOperators_IncompatibleOperatorsInstalled"
    assert up["message"] == blocked_message(w)
    assert c["OLMIncompatibleOperatorControllerDegraded"]["status"] == "False"
    blocked_since = up["lastTransitionTime"]
    degraded_since = c["OLMIncompatibleOperatorControllerDegraded"]["lastTransitionTime"]

    # Someone else's condition stays as it is.
    others = [dict(v) for v in c.values()] + [{"type": "Available", "status": "True", "reason": "Mine",
                                               "message": "kept", "lastTransitionTime": "2020-01-01T00:00:00Z"}]
    kubectl("patch", "clusteroperator", "olm", "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"conditions": others}}))

    # The CLI's cluster mode names the same extension.
    got = cli(w)
    if got is not None:
        assert got.returncode == 1, got.stdout + got.stderr
        assert f'blocks  {w["ce"]} (bundle {w["bundle"]}): olm.maxOpenShiftVersion 4.18' in got.stdout
        assert "Upgrade from OpenShift 4.18.3 to 4.19:" in got.stdout
        assert cli(w, "--to", "4.18").returncode == 0
        js = cli(w, "--to", "4.20", "-o", "json")
        assert js.returncode == 1
        assert json.loads(js.stdout)["extensions"][0]["name"] == w["ce"]

    # Same status again (message unchanged): nothing moves.
    time.sleep(1.1)
    run_once(w)
    c = conditions()
    assert c["Upgradeable"]["lastTransitionTime"] == blocked_since
    assert c["Available"] == {"type": "Available", "status": "True", "reason": "Mine", "message": "kept",
                              "lastTransitionTime": "2020-01-01T00:00:00Z"}

    # 4.19 (a number, raw text kept): compatible. Upgradeable flips, Degraded keeps its time.
    put_record(w, PROP % "4.19")
    run_once(w)
    c = conditions()
    assert (c["Upgradeable"]["status"], c["Upgradeable"]["reason"]) == ("True", "AsExpected")
    assert c["Upgradeable"]["lastTransitionTime"] != blocked_since
    assert c["OLMIncompatibleOperatorControllerDegraded"]["lastTransitionTime"] == degraded_since
    assert c["Available"]["reason"] == "Mine"
    if got is not None:
        assert cli(w).returncode == 0

    # An invalid value fails closed with upstream's wording.
    put_record(w, PROP % '"4.18.0"')
    run_once(w)
    c = conditions()
    assert c["Upgradeable"]["status"] == "False"
    assert c["Upgradeable"]["reason"] == "InstalledOLMOperators_FailureGettingExtensionMetadata"
    assert c["Upgradeable"]["message"] == (
        f'InstalledOLMOperatorsUpgradeable: error(s) with cluster extension {w["ce"]}: error in bundle '
        f'{w["bundle"]}: error converting to semver for version "4.18.0": invalid version format')
    deg = c["OLMIncompatibleOperatorControllerDegraded"]
    assert (deg["status"], deg["reason"]) == ("True", "SyncError")

    # Uninstalled (record gone): nothing blocks.
    kubectl("delete", "secret", "olmv1-install-" + w["ce"], "-n", w["ns"])
    run_once(w)
    c = conditions()
    assert (c["Upgradeable"]["status"], c["Upgradeable"]["message"]) == ("True", "All is well")
    assert c["OLMIncompatibleOperatorControllerDegraded"]["status"] == "False"

    # No ClusterVersion: fails closed, naming what is missing.
    kubectl("delete", "clusterversion", "version")
    run_once(w)
    up = conditions()["Upgradeable"]
    assert up["reason"] == "InstalledOLMOperators_ErrorCheckingOperatorCompatibility"
    assert up["message"].endswith('ClusterVersion "version" not found'), up["message"]


def wait_for(predicate, what, timeout=30):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = conditions().get("Upgradeable")
        except AssertionError:  # "olm" not created yet
            last = None
        if last and predicate(last):
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; Upgradeable is {last}")


def test_upgradeable_watch(world):
    w = world
    proc = subprocess.Popen([str(w["bin"]), "--system-namespace", w["ns"], "watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready and proc.stdout.readline().strip() == "started", proc.stderr.read() if proc.poll() else ""
        wait_for(lambda u: u["status"] == "True", "the first pass")

        put_record(w, PROP % '"4.18"')  # Secret event
        wait_for(lambda u: u["status"] == "False" and u["message"] == blocked_message(w), "the record to block")

        set_cluster_version("4.17.2")  # ClusterVersion event: 4.18 > 4.17, compatible
        wait_for(lambda u: u["status"] == "True", "the older cluster version")

        set_cluster_version("4.18.0")
        wait_for(lambda u: u["status"] == "False", "blocking again")
        kubectl("delete", "clusterextension", w["ce"], "--wait=false")  # ClusterExtension event
        wait_for(lambda u: u["status"] == "True", "the deleted extension to stop blocking")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
    assert out.strip().endswith("stopped"), out + err


def put_revision(w, cleanup, n, properties, succeeded):
    """Revision n of w["ce"] as a ClusterObjectSet whose olm.properties annotation is `properties`
    (no controller rolls it out here); its Succeeded condition set through the status subresource."""
    name = f'{w["ce"]}-{n}'
    if not kubectl("get", "clusterobjectset", name, "--ignore-not-found", "-o", "name").stdout.strip():
        cleanup("clusterobjectset", name)
        kubectl("create", "-f", "-", input={
            "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterObjectSet",
            "metadata": {"name": name,
                         "labels": {"olm.operatorframework.io/owner-kind": "ClusterExtension",
                                    "olm.operatorframework.io/owner-name": w["ce"]},
                         "annotations": {"olm.operatorframework.io/bundle-name": w["bundle"],
                                         "olm.properties": properties}},
            "spec": {"revision": n, "lifecycleState": "Active", "collisionProtection": "Prevent",
                     "phases": [{"name": "deploy", "objects": [{"object": {
                         "apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "upg-cm", "namespace": "default"}}}]}]}})
    kubectl("patch", "clusterobjectset", name, "--subresource=status", "--type=merge", "-p", json.dumps(
        {"status": {"conditions": [{"type": "Succeeded", "status": "True" if succeeded else "False",
                                    "reason": "Succeeded" if succeeded else "RollingOut", "message": "",
                                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}))


def test_upgradeable_watch_revisions(world, cleanup):
    """BoxcutterRuntime on: the installed ClusterObjectSet revision's olm.properties annotation is
    read (there is no install record), through the reconciler's revisions informer."""
    w = world
    proc = subprocess.Popen([str(w["bin"]), "--system-namespace", w["ns"], "--revisions", "watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready and proc.stdout.readline().strip() == "started", proc.stderr.read() if proc.poll() else ""
        wait_for(lambda u: u["status"] == "True", "the first pass")
        put_revision(w, cleanup, 1, PROP % '"4.18"', succeeded=True)  # ClusterObjectSet events
        wait_for(lambda u: u["status"] == "False" and u["message"] == blocked_message(w), "the revision to block")
        # The CLI's cluster mode reads the revisions too (it cannot know the runtime).
        got = cli(w)
        if got is not None:
            assert got.returncode == 1, got.stdout + got.stderr
            assert f'blocks  {w["ce"]} (bundle {w["bundle"]}): olm.maxOpenShiftVersion 4.18' in got.stdout
        # The next revision, without the cap, succeeds: it is the installed one now.
        put_revision(w, cleanup, 2, "[]", succeeded=True)
        wait_for(lambda u: u["status"] == "True", "the newer revision to stop blocking")
        if got is not None:
            got = cli(w)
            assert got.returncode == 0, got.stdout + got.stderr
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
