"""operator-controller end to end (spec §2, §3): version range forms and channels through real
ClusterExtensions, an unpullable bundle image (registry unreachable; a missing tag that is pushed
later), and an operator-controller killed with SIGKILL and started again.

Uses the bundle writer, daemons, RBAC and push/catalog/extension helpers of olmv1_bundles.py and
olmv1_e2e.py.  This module runs its own
catalogd and operator-controller (so it may kill and restart the controller without disturbing other
modules).  Every test uses its own package, catalogs (labelled for the extension's selector) and
namespace.  Every wait polls with a generous deadline; nothing asserts timing.
"""

import signal

import pytest

import olmv1_bundles
import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import (RECORD_PREFIX, apply_ce as apply_ce_full, assert_nothing_installed,  # noqa: F401
                       conditions, configmap_version, create_catalog, delete_ce, free_port, ns, olmv1,
                       push_bundles, push_catalog, wait_for, wait_installed, wait_progressing)

LABEL = "e2e-opctl-cat"  # ClusterCatalog label key; its value is the package name

# Versions of the range package; channel "stable" holds all of them in this order (each replacing
# the one before), channel "legacy" only the 0.x and 1.0.x ones.
RANGE_VERSIONS = ("0.9.0", "1.0.0", "1.0.1", "1.1.0", "1.2.3", "2.0.0", "2.1.0")
LEGACY = ("0.9.0", "1.0.0", "1.0.1")


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("opctl-faults"), LABEL) as e:
        yield e


def apply_ce(env, pkg, ce_name, ns, version=None):
    apply_ce_full(env, pkg, ce_name, ns, version=version)


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


def installed_objects(pkg, ns, ce_name, system_ns):
    names = {}
    for args in (("deployment", f"{pkg}-manager", "-n", ns), ("configmap", f"{pkg}-config", "-n", ns),
                 ("serviceaccount", f"{pkg}-manager", "-n", ns)):
        obj = kubectl_json("get", *args)
        names[args[0]] = obj["metadata"]["uid"]
    owned = kubectl("get", "clusterroles,clusterrolebindings", "-l",
                    f"olm.operatorframework.io/owner-name={ce_name}", "-o", "name").stdout.split()
    rec = kubectl_json("get", "secret", f"{RECORD_PREFIX}{ce_name}", "-n", system_ns)
    return names, sorted(owned), rec


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
