"""Chaos: etcd is killed (SIGKILL, by the PID in the cluster's env file), stays down for a while and
is started again with the same command line and data dir (e2e/cluster/restart.sh).  Meanwhile the
kube-apiserver answers errors or hangs, and every watch of both daemons breaks.

Asserts: both daemon processes survive; catalogd keeps serving its stored catalog while etcd is
down; afterwards nothing was reinstalled or lost (the installed extension's objects and install
record keep their UIDs and data, no second "installed bundle" and no "drift repaired" log line,
the catalog keeps its resolved digest and lastUnpacked); and both daemons work again: a catalog
and an extension created after the restart are served and installed, and an edit of the
extension from before is reconciled.

Runs its own catalogd and operator-controller (olm_env) as their ServiceAccounts.
"""

import threading

import pytest

import olmv1_chaos
import olmv1_e2e
from conftest import kubectl_json, unique
from olmv1_e2e import (apply_ce, configmap_version, create_catalog, delete_ce, http, ns,  # noqa: F401
                       push_bundles, push_catalog, snapshot, wait_for, wait_installed)

LABEL = "e2e-chaos-etcd"
DOWN_SECONDS = 10  # long enough for both daemons to hit failed requests and broken watches


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("chaos-etcd"), LABEL) as e:
        yield e


def log_lines(ctl, ce_name, text):
    return [ln for ln in ctl.log_text().splitlines() if f"clusterExtension={ce_name} {text}" in ln]


def test_etcd_killed_and_restarted(env, ns, name):
    ctl, catalogd = env["ctl"], env["catalogd"]
    pkg = unique("chetcd")
    images = push_bundles(env, pkg, ("1.0.0", "1.0.1"))
    cat = create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "latest"))
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    before = snapshot(pkg, ns, name, env["system_ns"])
    cat_status = kubectl_json("get", "clustercatalog", cat)["status"]
    served = catalogd.all(cat)
    assert served[0] == 200
    pids = (ctl.proc.pid, catalogd.proc.pid)

    # restart.sh blocks until the apiserver is ready again; catalogd is checked from a thread
    # while etcd is down (its store does not need the API server).
    seen = []
    stop = threading.Event()

    def probe():
        while not stop.wait(1):
            seen.append(catalogd.all(cat) == served)
    t = threading.Thread(target=probe, daemon=True)
    t.start()
    try:
        olmv1_chaos.restart("etcd", kill=True, down=DOWN_SECONDS)
    finally:
        stop.set()
        t.join(10)
    assert seen and all(seen), f"catalogd did not serve its catalog throughout: {seen}"
    assert (ctl.proc.pid, catalogd.proc.pid) == pids
    assert ctl.proc.poll() is None, f"operator-controller died\n{ctl.log_tail()}"
    assert catalogd.proc.poll() is None, f"catalogd died\n{catalogd.log_tail()}"
    wait_for(lambda: http(f"http://127.0.0.1:{ctl.port}/readyz", timeout=5)[0] == 200,
             "operator-controller ready after the restart", ctl)

    # Nothing reinstalled, repaired or lost.
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert snapshot(pkg, ns, name, env["system_ns"]) == before
    assert len(log_lines(ctl, name, "installed bundle")) == 1, ctl.log_tail()
    assert not log_lines(ctl, name, "drift repaired"), ctl.log_tail()
    after = kubectl_json("get", "clustercatalog", cat)["status"]
    assert after["resolvedSource"] == cat_status["resolvedSource"]
    assert after["lastUnpacked"] == cat_status["lastUnpacked"]
    assert catalogd.all(cat) == served

    # Both daemons' watches are live again: a new catalog and extension, and an edit.
    pkg2 = unique("chetcd")
    images2 = push_bundles(env, pkg2, ("1.0.0",))
    create_catalog(env, pkg2, push_catalog(env, pkg2, images2, ["1.0.0"], "latest"))
    second = f"{name[:55]}-2"
    apply_ce(env, pkg2, second, ns)
    wait_installed(env, second, f"{pkg2}.v1.0.0", "1.0.0")
    apply_ce(env, pkg, name, ns, version="1.0.1")
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    wait_for(lambda: configmap_version(pkg, ns) == "1.0.1", "the ConfigMap of 1.0.1", ctl)
    delete_ce(second)
    delete_ce(name)
