"""operator-controller end to end (spec §2, §3): version range forms and channels through real
ClusterExtensions, an unpullable bundle image (registry unreachable; a missing tag that is pushed
later), an operator-controller killed with SIGKILL and started again, catalogd unreachable while an
extension must resolve, and a kube-apiserver restart (e2e/cluster/restart-apiserver.sh; the last
test of the module, so the tests of later modules run against the restarted apiserver).

Uses the bundle writer, daemons, RBAC and push/catalog/extension helpers of olmv1_bundles.py and
olmv1_e2e.py.  This module runs its own
catalogd and operator-controller (so it may kill and restart the controller without disturbing other
modules).  Every test uses its own package, catalogs (labelled for the extension's selector) and
namespace.  Every wait polls with a generous deadline; nothing asserts timing.
"""

import os
import signal
import subprocess

import pytest

import olmv1_bundles
import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import (RECORD_PREFIX, apply_ce as apply_ce_full, assert_nothing_installed,  # noqa: F401
                       conditions, configmap_version, create_catalog, delete_ce, free_port, http,
                       installed_objects, ns, olmv1, push_bundles, push_catalog, snapshot, wait_for, wait_installed,
                       wait_progressing)

LABEL = "e2e-opctl-cat"  # ClusterCatalog label key; its value is the package name

# Versions of the range package; channel "stable" holds all of them in this order (each replacing
# the one before), channel "legacy" only the 0.x and 1.0.x ones.
RANGE_VERSIONS = ("0.9.0", "1.0.0", "1.0.1", "1.1.0", "1.2.3", "2.0.0", "2.1.0")
LEGACY = ("0.9.0", "1.0.0", "1.0.1")


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("opctl-faults"), LABEL) as e:
        yield e


def apply_ce(env, pkg, ce_name, ns, version=None, selector=None):
    apply_ce_full(env, pkg, ce_name, ns, version=version, selector=selector)


def apply_ce_channels(env, pkg, ce_name, ns, channels, version=None):
    apply_ce_full(env, pkg, ce_name, ns, version=version, channels=channels)


# Masterminds semantics, worked out by hand over RANGE_VERSIONS (highest in range wins).
RANGE_CASES = (
    ("1.1.0", "1.1.0"),             # exact
    (">=1.0.0, <1.2.0", "1.1.0"),   # AND of two comparisons
    ("~1.0", "1.0.1"),              # tilde: >=1.0.0, <1.1.0
    ("1.x", "1.2.3"),               # wildcard: >=1.0.0, <2.0.0
    (">1.2.3", "2.1.0"),            # strictly greater
    ("^0.9", "0.9.0"),              # caret below 1.0: >=0.9.0, <0.10.0
)


def test_version_range_forms_and_channels(env, ns, name):
    pkg = unique("opkr")
    images = push_bundles(env, pkg, RANGE_VERSIONS)
    legacy = {"schema": "olm.channel", "name": "legacy", "package": pkg,
              "entries": [{"name": f"{pkg}.v{v}", **({"replaces": f"{pkg}.v{LEGACY[i - 1]}"} if i else {})}
                          for i, v in enumerate(LEGACY)]}
    ref = push_catalog(env, pkg, images, list(RANGE_VERSIONS), "latest", extra_blobs=[legacy])
    create_catalog(env, pkg, ref)

    # A fresh extension (nothing installed) per case, in the same namespace one after the other.
    for i, (rng, want) in enumerate(RANGE_CASES):
        ce = f"{name[:55]}-{i}"
        apply_ce(env, pkg, ce, ns, version=rng)
        wait_installed(env, ce, f"{pkg}.v{want}", want)
        assert configmap_version(pkg, ns) == want, rng
        delete_ce(ce)

    # Channel "legacy" tops out at 1.0.1; with a range that 2.1.0 of "stable" would also satisfy.
    ce = f"{name[:55]}-ch"
    apply_ce_channels(env, pkg, ce, ns, ["legacy"], version=">=1.0.0")
    wait_installed(env, ce, f"{pkg}.v1.0.1", "1.0.1")
    assert configmap_version(pkg, ns) == "1.0.1"
    delete_ce(ce)

    # Nothing in channel "legacy" satisfies ">=2.0.0": a resolution error, nothing installed.
    ce = f"{name[:55]}-chx"
    apply_ce_channels(env, pkg, ce, ns, ["legacy"], version=">=2.0.0")
    c = wait_progressing(env, ce, "True", "Retrying", f'no bundles found for package "{pkg}" matching version ">=2.0.0"')
    assert c["Installed"]["status"] == "False", c["Installed"]
    assert_nothing_installed(pkg, ns, ce, env["system_ns"])
    delete_ce(ce)


# A privileged port nothing listens on here (tcpmux), so connecting is refused at once.
CLOSED_PORT = 1


def test_bundle_registry_unreachable(env, ns, name):
    pkg = unique("opku")
    images = {"1.0.0": f"127.0.0.1:{CLOSED_PORT}/e2e/{pkg}-bundle:v1.0.0"}
    ref = push_catalog(env, pkg, images, ["1.0.0"], "latest")
    create_catalog(env, pkg, ref)
    apply_ce(env, pkg, name, ns)
    prefix = f'error for resolved bundle "{pkg}.v1.0.0" with version "1.0.0": '
    c = wait_progressing(env, name, "True", "Retrying", prefix)
    assert c["Progressing"]["message"].startswith(prefix), c["Progressing"]
    assert f"127.0.0.1:{CLOSED_PORT}" in c["Progressing"]["message"], c["Progressing"]
    assert c["Installed"]["status"] == "False", c["Installed"]
    obj = kubectl_json("get", "clusterextension", name)
    assert not obj.get("status", {}).get("install"), obj["status"]
    assert_nothing_installed(pkg, ns, name, env["system_ns"])
    delete_ce(name)


def test_bundle_tag_missing_then_pushed(env, ns, name):
    pkg = unique("opkm")
    tag_ref = f"{env['registry']}/e2e/{pkg}-bundle:v1.0.0"
    ref = push_catalog(env, pkg, {"1.0.0": tag_ref}, ["1.0.0"], "latest")
    create_catalog(env, pkg, ref)
    apply_ce(env, pkg, name, ns)
    prefix = f'error for resolved bundle "{pkg}.v1.0.0" with version "1.0.0": '
    c = wait_progressing(env, name, "True", "Retrying", prefix)
    assert c["Installed"]["status"] == "False", c["Installed"]
    assert_nothing_installed(pkg, ns, name, env["system_ns"])

    # The bundle appears under that tag; a later retry pulls and installs it without any edit.
    olmv1("bundle", "push", "-q", str(olmv1_bundles.write_bundle(env["work"] / pkg, pkg, "1.0.0")), tag_ref)
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert configmap_version(pkg, ns) == "1.0.0"
    delete_ce(name)


def test_controller_sigkill_and_restart(env, ns, name):
    pkg = unique("opkk")
    images = push_bundles(env, pkg, ("1.0.0", "1.0.1"))
    ref = push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "latest")
    create_catalog(env, pkg, ref)
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    uids, owned, rec = installed_objects(pkg, ns, name, env["system_ns"])
    assert owned, "no cluster-scoped objects owned by the extension"

    ctl = env["ctl"]
    ctl.proc.send_signal(signal.SIGKILL)
    assert ctl.proc.wait(timeout=60) == -signal.SIGKILL
    ctl.proc = None
    # Same flags, except a fresh health port (the old one may still be in TIME_WAIT).
    ctl.port = free_port()
    ctl.start()

    # A while after the restart (the controller has re-listed and reconciled): still installed,
    # same objects, same install record.
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    c = wait_for(lambda: (lambda obj_c: obj_c[1].get("Installed", {}).get("status") == "True" and obj_c)(
        conditions(name)), f"{name} Installed=True after restart", ctl)[1]
    assert c["Installed"]["reason"] == "Succeeded", c["Installed"]
    uids2, owned2, rec2 = installed_objects(pkg, ns, name, env["system_ns"])
    assert uids2 == uids
    assert owned2 == owned
    assert rec2["metadata"]["uid"] == rec["metadata"]["uid"]
    assert rec2["data"] == rec["data"]
    assert configmap_version(pkg, ns) == "1.0.0"

    # The restarted controller still reconciles spec changes (1.0.1 replaces 1.0.0).
    apply_ce(env, pkg, name, ns, version="1.0.1")
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    wait_for(lambda: configmap_version(pkg, ns) == "1.0.1", "the ConfigMap of 1.0.1", ctl)
    delete_ce(name)
    assert_nothing_installed(pkg, ns, name, env["system_ns"])


def test_catalogd_unreachable_keeps_installed_and_recovers(env, ns, name):
    """catalogd stops while the extension is moved to a catalog operator-controller has not fetched
    yet: Progressing Retrying names the catalog fetch failure, the installed bundle and its objects
    stay; catalogd starts again (same port) and the extension converges by itself."""
    pkg = unique("opkd")
    images = push_bundles(env, pkg, ("1.0.0", "1.0.1"))
    create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0"], "old"))
    # A second catalog with the successor, under a label the extension does not select yet: nothing
    # has fetched its content (operator-controller caches a package per catalog and resolved digest,
    # so a catalog it already read would resolve without catalogd).
    next_label = {"e2e-opctl-next": pkg}
    new_cat = create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "new"),
                             labels=next_label)
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    before = snapshot(pkg, ns, name, env["system_ns"])

    catalogd = env["catalogd"]
    catalogd.stop()  # SIGTERM by PID, exit 0
    try:
        apply_ce(env, pkg, name, ns, version="1.0.1", selector={"matchLabels": next_label})
        want = (f'error walking catalogs: error getting package "{pkg}" from catalog "{new_cat}": '
                f'error retrieving cache for catalog "{new_cat}": Get "{catalogd.base}/catalogs/{new_cat}/api/v1/metas?')
        c = wait_progressing(env, name, "True", "Retrying", want)
        msg = c["Progressing"]["message"]
        assert msg.startswith(want), msg
        assert c["Installed"]["status"] == "True" and c["Installed"]["reason"] == "Succeeded", c["Installed"]
        obj = kubectl_json("get", "clusterextension", name)
        assert obj["status"]["install"]["bundle"] == {"name": f"{pkg}.v1.0.0", "version": "1.0.0"}, obj["status"]
        assert snapshot(pkg, ns, name, env["system_ns"]) == before
        assert configmap_version(pkg, ns) == "1.0.0"
    finally:
        if catalogd.proc is None:
            catalogd.start()  # the same cache dir and port, so status.urls.base is right again

    # Retries back off; the next one finds catalogd back and moves to the successor.
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    wait_for(lambda: configmap_version(pkg, ns) == "1.0.1", "the ConfigMap of 1.0.1", env["ctl"])
    delete_ce(name)
    assert_nothing_installed(pkg, ns, name, env["system_ns"])


RESTART_APISERVER = olmv1_e2e.REPO / "e2e" / "cluster" / "restart-apiserver.sh"


def test_apiserver_restart(env, ns, name):
    """The kube-apiserver is stopped and started again (same arguments and port, by PID): the
    operator-controller process survives, re-establishes its watches, keeps what is installed, and
    reconciles a ClusterExtension (and a ClusterCatalog) created after the restart, and an edit of one
    created before."""
    state_dir = os.environ.get("OLMV1_STATE_DIR")
    if not state_dir:
        pytest.fail("OLMV1_STATE_DIR is not set; run through e2e/run-tests.sh")
    pkg = unique("opka")
    images = push_bundles(env, pkg, ("1.0.0", "1.0.1"))
    create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "latest"))
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    before = snapshot(pkg, ns, name, env["system_ns"])

    ctl = env["ctl"]
    pid = ctl.proc.pid
    proc = subprocess.run(["bash", str(RESTART_APISERVER), "--state-dir", state_dir], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"restart-apiserver.sh exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert ctl.proc.poll() is None and ctl.proc.pid == pid, f"operator-controller died\n{ctl.log_tail()}"
    assert env["catalogd"].proc.poll() is None, f"catalogd died\n{env['catalogd'].log_tail()}"
    wait_for(lambda: http(f"http://127.0.0.1:{ctl.port}/readyz", timeout=5)[0] == 200,
             "operator-controller ready after the restart", ctl)

    # A new package, catalog and extension, all created after the restart: catalogd's and
    # operator-controller's watches must be live again.
    pkg2 = unique("opka")
    images2 = push_bundles(env, pkg2, ("1.0.0",))
    create_catalog(env, pkg2, push_catalog(env, pkg2, images2, ["1.0.0"], "latest"))
    second = f"{name[:55]}-2"
    apply_ce(env, pkg2, second, ns)
    wait_installed(env, second, f"{pkg2}.v1.0.0", "1.0.0")
    assert configmap_version(pkg2, ns) == "1.0.0"

    # The first extension is untouched by the restart, and an edit of it is reconciled.
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert snapshot(pkg, ns, name, env["system_ns"]) == before
    apply_ce(env, pkg, name, ns, version="1.0.1")
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    wait_for(lambda: configmap_version(pkg, ns) == "1.0.1", "the ConfigMap of 1.0.1", ctl)
    assert ctl.proc.poll() is None and ctl.proc.pid == pid
    delete_ce(second)
    delete_ce(name)
    assert_nothing_installed(pkg, ns, name, env["system_ns"])
