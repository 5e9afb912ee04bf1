"""Chaos: the image registry answers 500 for a while.  The catalog and bundle images are pushed to
the test registry but referenced through a front (olmv1_chaos.Front, an in-process forwarder on
127.0.0.1), which is switched to answer every request with 500 and a registry error body, and then
back to passing through.

Asserts, while the registry fails: catalogd's polls fail with Progressing Retrying naming the 500,
Serving stays True and the stored content is still served; operator-controller, asked to upgrade to
a bundle it has not pulled, reports Progressing Retrying naming the 500 while the installed bundle
and its objects stay as they were.  Afterwards both recover by themselves: the catalog is
Succeeded again and the upgrade is installed.

Runs its own catalogd and operator-controller (olm_env) as their ServiceAccounts.
"""

import os

import pytest

import olmv1_chaos
import olmv1_e2e
from conftest import kubectl_json, unique
from olmv1_e2e import (apply_ce, configmap_version, create_catalog, delete_ce, ns,  # noqa: F401
                       push_bundles, push_catalog, snapshot, wait_for, wait_installed, wait_progressing)

LABEL = "e2e-chaos-registry"
MARK = "chaos: injected registry failure"
ERROR_BODY = {"errors": [{"code": "UNKNOWN", "message": MARK}]}


@pytest.fixture(scope="module")
def front():
    registry = os.environ.get("OLMV1_REGISTRY")
    if not registry:
        pytest.fail("OLMV1_REGISTRY is not set; run through e2e/run-tests.sh")
    host, port = registry.rsplit(":", 1)
    f = olmv1_chaos.Front(host, int(port))
    yield f
    f.stop()


@pytest.fixture(scope="module")
def env(crds, front, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("chaos-registry"), LABEL) as e:
        yield e


def catalog_condition(cat, ctype):
    for c in kubectl_json("get", "clustercatalog", cat).get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c
    return {}


def test_registry_answering_500_for_a_while(env, front, ns, name):
    catalogd, ctl = env["catalogd"], env["ctl"]
    pkg = unique("chreg")
    real = push_bundles(env, pkg, ("1.0.0", "1.0.1"))
    images = {v: ref.replace(env["registry"], front.address, 1) for v, ref in real.items()}
    pushed = push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "latest")
    cat = create_catalog(env, pkg, pushed.replace(env["registry"], front.address, 1), poll=True)
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    before = snapshot(pkg, ns, name, env["system_ns"])
    served = catalogd.all(cat)
    assert served[0] == 200

    front.fail(500, "Internal Server Error", ERROR_BODY)
    try:
        # catalogd polls every second: the next resolve of the tag fails.
        p = catalogd.wait_for(lambda: (lambda c: c.get("reason") == "Retrying" and MARK in c.get("message", "") and c)(
            catalog_condition(cat, "Progressing")), "ClusterCatalog Progressing Retrying with the 500")
        assert "500" in p["message"], p
        s = catalog_condition(cat, "Serving")
        assert (s["status"], s["reason"]) == ("True", "Available"), s
        assert catalogd.all(cat) == served

        # operator-controller resolves 1.0.1 from catalogd (still serving) but cannot pull it.
        apply_ce(env, pkg, name, ns, version="1.0.1")
        c = wait_progressing(env, name, "True", "Retrying", MARK)
        assert "500" in c["Progressing"]["message"], c["Progressing"]
        assert (c["Installed"]["status"], c["Installed"]["reason"]) == ("True", "Succeeded"), c["Installed"]
        assert snapshot(pkg, ns, name, env["system_ns"]) == before
        assert configmap_version(pkg, ns) == "1.0.0"
        assert front.answered > 0
        assert catalogd.proc.poll() is None and ctl.proc.poll() is None
    finally:
        front.pass_through()

    catalogd.wait_for(lambda: catalog_condition(cat, "Progressing").get("reason") == "Succeeded",
                      "ClusterCatalog Progressing Succeeded again")
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    wait_for(lambda: configmap_version(pkg, ns) == "1.0.1", "the ConfigMap of 1.0.1", ctl)
    assert catalogd.all(cat) == served
    delete_ce(name)
