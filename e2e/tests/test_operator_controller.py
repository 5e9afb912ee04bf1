"""operator-controller against a real kube-apiserver, OCI registry and catalogd (spec §2, §3).

Small registry+v1 bundles (a CSV with a Deployment and clusterPermissions, plus a
ConfigMap; AllNamespaces install mode) are written here and pushed with `olmv1 bundle
push`; a catalog referencing them is pushed with `olmv1 catalog push`.  catalogd and
operator-controller run as subprocesses on free 127.0.0.1 ports with temporary cache
dirs and are stopped by PID.  ClusterExtensions are applied with kubectl as a user
would, each in its own namespace with a ServiceAccount and the RBAC the test gives it.

Channel "stable": v1.0.0 <- v1.0.1 (replaces 1.0.0) <- v2.0.0 (replaces 1.0.1), so
2.0.0 is not a successor of 1.0.0.  Every wait polls with a generous deadline; nothing
asserts timing.  Stdlib, PyYAML and pytest only.
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, kubectl, kubectl_json, unique
from test_catalogd import Catalogd, free_port, http

OPCTL = os.environ.get("OLMV1_OPERATOR_CONTROLLER") or str(REPO / "build" / "controller" / "operator-controller")
CATALOGD = os.environ.get("OLMV1_CATALOGD") or str(REPO / "build" / "catalogd" / "catalogd")
WAIT = 180  # seconds; retries back off exponentially, so be generous
VERSIONS = ("1.0.0", "1.0.1", "2.0.0")
REPLACES = {"1.0.1": "1.0.0", "2.0.0": "1.0.1"}
RECORD_PREFIX = "olmv1-install-"


def olmv1(*args):
    binary = os.environ.get("OLMV1_BIN") or str(REPO / "build" / "cli" / "olmv1")
    proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"olmv1 {' '.join(args)} exited {proc.returncode}\n{proc.stderr}"
    return proc.stdout.strip()


def write_yaml(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def write_bundle(root, pkg, version):
    """A registry+v1 bundle dir for <pkg> at <version>."""
    d = root / f"bundle-{version}"
    name = f"{pkg}.v{version}"
    csv = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name},
        "spec": {
            "version": version,
            "installModes": [
                {"type": "OwnNamespace", "supported": False},
                {"type": "SingleNamespace", "supported": False},
                {"type": "MultiNamespace", "supported": False},
                {"type": "AllNamespaces", "supported": True},
            ],
            "install": {
                "strategy": "deployment",
                "spec": {
                    "clusterPermissions": [{
                        "serviceAccountName": f"{pkg}-manager",
                        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
                    }],
                    "deployments": [{
                        "name": f"{pkg}-manager",
                        "spec": {
                            "replicas": 1,
                            "selector": {"matchLabels": {"app": pkg}},
                            "template": {
                                "metadata": {"labels": {"app": pkg}},
                                "spec": {
                                    "serviceAccountName": f"{pkg}-manager",
                                    "containers": [{"name": "manager", "image": f"example.com/{pkg}:v{version}"}],
                                },
                            },
                        },
                    }],
                },
            },
        },
    }
    write_yaml(d / "manifests" / "csv.yaml", csv)
    write_yaml(d / "manifests" / "config.yaml", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{pkg}-config"},
        "data": {"version": version}})
    write_yaml(d / "metadata" / "annotations.yaml", {"annotations": {
        "operators.operatorframework.io.bundle.package.v1": pkg,
        "operators.operatorframework.io.bundle.channels.v1": "stable",
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
    }})
    return d


def write_catalog(root, pkg, images):
    d = root / "catalog"
    d.mkdir(parents=True, exist_ok=True)
    entries = []
    for v in VERSIONS:
        e = {"name": f"{pkg}.v{v}"}
        if v in REPLACES:
            e["replaces"] = f"{pkg}.v{REPLACES[v]}"
        entries.append(e)
    blobs = [{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"},
             {"schema": "olm.channel", "name": "stable", "package": pkg, "entries": entries}]
    for v in VERSIONS:
        blobs.append({"schema": "olm.bundle", "name": f"{pkg}.v{v}", "package": pkg, "image": images[v],
                      "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": v}}]})
    (d / "catalog.json").write_text("\n".join(json.dumps(b) for b in blobs) + "\n")
    return d


class Controller:
    """One operator-controller process."""

    def __init__(self, workdir, system_ns):
        self.workdir = Path(workdir)
        self.system_ns = system_ns
        self.port = free_port()
        self.proc = None
        self.log_path = self.workdir / "operator-controller.log"

    def start(self):
        cmd = [OPCTL, "--system-namespace", self.system_ns, "--cache-path", str(self.workdir / "cache"),
               "--health-addr", f"127.0.0.1:{self.port}", "--drift-repair-interval", "2s"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
        wait_for(lambda: http(f"http://127.0.0.1:{self.port}/readyz", timeout=2)[0] == 200,
                 "operator-controller to be ready", self)

    def stop(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"operator-controller did not stop on SIGTERM\n{self.log_tail()}")
        finally:
            self.proc = None
        assert rc == 0, f"operator-controller exited {rc}\n{self.log_tail()}"

    def log_tail(self, n=40):
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "---- operator-controller log (tail)\n" + "\n".join(lines[-n:])


def wait_for(fn, what, ctl=None, timeout=WAIT):
    deadline = time.time() + timeout
    last = None
    while True:
        try:
            last = fn()
            if last:
                return last
        except (OSError, AssertionError, KeyError, IndexError, TypeError, ValueError) as e:
            last = e
        if ctl is not None and ctl.proc is not None and ctl.proc.poll() is not None:
            raise AssertionError(f"operator-controller exited {ctl.proc.returncode} while waiting for {what}\n"
                                 f"{ctl.log_tail()}")
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what} (last: {last!r})\n"
                                 f"{ctl.log_tail() if ctl else ''}")
        time.sleep(0.3)


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    for b in (OPCTL, CATALOGD):
        if not os.access(b, os.X_OK):
            pytest.fail(f"{b} is not built (make build)")
    registry = os.environ.get("OLMV1_REGISTRY")
    if not registry:
        pytest.fail("OLMV1_REGISTRY is not set; run through e2e/run-tests.sh")
    work = tmp_path_factory.mktemp("opctl")
    pkg = unique("opk")
    images = {}
    for v in VERSIONS:
        d = write_bundle(work, pkg, v)
        images[v] = olmv1("bundle", "push", "-q", str(d), f"{registry}/e2e/{pkg}-bundle:v{v}")
    cat_ref = olmv1("catalog", "push", "-q", str(write_catalog(work, pkg, images)),
                    f"{registry}/e2e/{pkg}-catalog:latest")
    system_ns = unique("olmv1-sys")
    kubectl("create", "namespace", system_ns)
    catalogd = Catalogd(work / "catalogd")
    catalogd.workdir.mkdir()
    catalogd.start()
    catalog = unique("opcat")
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": catalog, "labels": {"e2e-opctl": pkg}},
        "spec": {"source": {"type": "Image", "image": {"ref": cat_ref}}}})
    kubectl("wait", f"clustercatalog/{catalog}", "--for=condition=Serving=True", f"--timeout={WAIT}s")
    ctl = Controller(work, system_ns)
    try:
        ctl.start()
        yield {"pkg": pkg, "images": images, "catalog": catalog, "ctl": ctl, "system_ns": system_ns}
    finally:
        # Extensions of failed tests first, while the controller can still uninstall them.
        for ce in kubectl_json("get", "clusterextensions").get("items", []):
            if ce["spec"]["source"]["catalog"]["packageName"] == pkg:
                kubectl("delete", "clusterextension", ce["metadata"]["name"], "--wait=true", "--timeout=60s",
                        check=False)
        ctl.stop()
        kubectl("delete", "clustercatalog", catalog, "--wait=false", "--ignore-not-found", check=False)
        catalogd.stop()
        kubectl("delete", "namespace", system_ns, "--wait=false", "--ignore-not-found", check=False)


SA_RULES_FULL = [
    {"apiGroups": [""], "resources": ["configmaps", "serviceaccounts", "services"], "verbs": ["*"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]},
    {"apiGroups": ["rbac.authorization.k8s.io"],
     "resources": ["clusterroles", "clusterrolebindings", "roles", "rolebindings"],
     "verbs": ["*"]},
]


def setup_namespace(ns, rules):
    """Namespace + ServiceAccount "installer" bound to a ClusterRole with `rules`."""
    kubectl("create", "namespace", ns)
    kubectl("create", "serviceaccount", "installer", "-n", ns)
    set_rules(ns, rules)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{ns}-installer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{ns}-installer"},
        "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": ns}]})


def set_rules(ns, rules):
    kubectl("apply", "-f", "-", input={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": f"{ns}-installer"}, "rules": rules})


@pytest.fixture
def ns(world, name):
    n = name[:50]
    setup_namespace(n, SA_RULES_FULL)
    yield n
    kubectl("delete", "namespace", n, "--wait=false", "--ignore-not-found", check=False)
    kubectl("delete", "clusterrolebinding", f"{n}-installer", "--ignore-not-found", check=False)
    kubectl("delete", "clusterrole", f"{n}-installer", "--ignore-not-found", check=False)


def apply_ce(world, ce_name, ns, version=None, policy=None):
    catalog = {"packageName": world["pkg"], "selector": {"matchLabels": {"e2e-opctl": world["pkg"]}}}
    if version:
        catalog["version"] = version
    if policy:
        catalog["upgradeConstraintPolicy"] = policy
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": ce_name},
        "spec": {"namespace": ns, "serviceAccount": {"name": "installer"},
                 "source": {"sourceType": "Catalog", "catalog": catalog}}})


def conditions(ce_name):
    obj = kubectl_json("get", "clusterextension", ce_name)
    return obj, {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}


def wait_installed(world, ce_name, version):
    """Installed=True with bundle <version>, Progressing Succeeded, observedGeneration current."""
    def check():
        obj, c = conditions(ce_name)
        inst = obj.get("status", {}).get("install", {}).get("bundle", {})
        gen = obj["metadata"]["generation"]
        return (inst.get("version") == version
                and c.get("Installed", {}).get("status") == "True"
                and c.get("Progressing", {}).get("reason") == "Succeeded"
                and c["Progressing"].get("observedGeneration") == gen and obj)
    obj = wait_for(check, f"{ce_name} to install {version}", world["ctl"])
    _, c = conditions(ce_name)
    assert c["Installed"]["message"] == f"Installed bundle {world['images'][version]} successfully"
    assert c["Installed"]["reason"] == "Succeeded"
    assert c["Progressing"]["message"] == "Desired state reached"
    assert obj["status"]["install"]["bundle"]["name"] == f"{world['pkg']}.v{version}"
    for t in ("Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated"):
        assert c[t]["status"] == "False", c[t]
    return obj


def wait_progressing(world, ce_name, reason, contains):
    def check():
        _, c = conditions(ce_name)
        p = c.get("Progressing", {})
        return p.get("reason") == reason and contains in p.get("message", "") and c
    return wait_for(check, f"{ce_name} Progressing {reason} with {contains!r}", world["ctl"])


def configmap_version(world, ns):
    return kubectl_json("get", "configmap", f"{world['pkg']}-config", "-n", ns)["data"]["version"]


def delete_ce(world, ce_name):
    kubectl("delete", "clusterextension", ce_name, "--wait=true", f"--timeout={WAIT}s")


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
        kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found", check=False)
        kubectl("delete", "clusterrolebinding", f"{ns}-installer", "--ignore-not-found", check=False)
        kubectl("delete", "clusterrole", f"{ns}-installer", "--ignore-not-found", check=False)


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
