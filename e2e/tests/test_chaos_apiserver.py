"""Chaos: the kube-apiserver answers 429 Too Many Requests for a while.  A real apiserver cannot be
told to, so both daemons talk to it through an in-process TLS front on 127.0.0.1
(olmv1_chaos.tls_front_for_apiserver: the apiserver's own serving certificate, bytes passed
through untouched) that is switched to answer every request with a 429 Status and Retry-After,
closing the connections (watches included) that were open, and then back.  The test itself talks
to the apiserver directly.

Asserts, while the daemons are refused: the front did answer them with 429s, both daemons' logs
name the throttling (the Status message and the code, for REST calls and watches alike), both
processes survive, a ClusterExtension created meanwhile is not installed, and catalogd keeps
serving.
Afterwards, by themselves: the new extension is installed, the one from before was not
reinstalled or repaired (same UIDs and install record, one "installed bundle" line, no "drift
repaired"), and an upgrade of it is reconciled.

Runs its own catalogd and operator-controller (olm_env) as their ServiceAccounts.
"""

import os
import time

import pytest

import olmv1_chaos
import olmv1_e2e
from conftest import kubectl_json, unique
from olmv1_e2e import (apply_ce, configmap_version, create_catalog, delete_ce, http, ns,  # noqa: F401
                       push_bundles, push_catalog, snapshot, wait_for, wait_installed)

LABEL = "e2e-chaos-apiserver"
THROTTLED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": "chaos: the apiserver is throttling", "reason": "TooManyRequests",
             "details": {"retryAfterSeconds": 1}, "code": 429}
THROTTLED_TEXT = "chaos: the apiserver is throttling (HTTP 429 Too Many Requests)"
REFUSED_SECONDS = 10  # long enough for retries and watch restarts of both daemons to be refused


@pytest.fixture(scope="module")
def front():
    port = os.environ.get("OLMV1_APISERVER_PORT")
    if not port:
        pytest.fail("OLMV1_APISERVER_PORT is not set; run through e2e/run-tests.sh")
    f = olmv1_chaos.tls_front_for_apiserver(olmv1_chaos.state_dir(), port)
    f.apiserver = f"https://127.0.0.1:{port}"
    yield f
    f.stop()


@pytest.fixture(scope="module")
def env(crds, front, tmp_path_factory):
    def through_front(kubeconfig):
        text = kubeconfig.read_text()
        assert f"server: {front.apiserver}" in text, text
        kubeconfig.write_text(text.replace(f"server: {front.apiserver}", f"server: https://{front.address}"))
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("chaos-apiserver"), LABEL, kubeconfig_hook=through_front) as e:
        yield e


def log_lines(daemon, ce_name, text):
    return [ln for ln in daemon.log_path.read_text(errors="replace").splitlines()
            if f"clusterExtension={ce_name} {text}" in ln]


def test_apiserver_answering_429_for_a_while(env, front, ns, name):
    ctl, catalogd = env["ctl"], env["catalogd"]
    pkg, pkg2 = unique("chapi"), unique("chapi")
    images = push_bundles(env, pkg, ("1.0.0", "1.0.1"))
    cat = create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "latest"))
    images2 = push_bundles(env, pkg2, ("1.0.0",))
    create_catalog(env, pkg2, push_catalog(env, pkg2, images2, ["1.0.0"], "latest"))
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")  # so the front passes everything through
    assert front.forwarded > 0
    before = snapshot(pkg, ns, name, env["system_ns"])
    served = catalogd.all(cat)
    assert served[0] == 200

    front.fail(429, "Too Many Requests", THROTTLED, headers=["Retry-After: 1"])
    second = f"{name[:55]}-2"
    try:
        apply_ce(env, pkg2, second, ns)  # the test's own kubeconfig: straight to the apiserver
        deadline = time.time() + REFUSED_SECONDS
        while time.time() < deadline:
            assert catalogd.all(cat) == served
            time.sleep(1)
        assert front.answered > 0, "nobody was refused: are the daemons really behind the front?"
        # Conditions cannot be written while the apiserver refuses: the logs say why.
        for d in (ctl, catalogd):
            assert THROTTLED_TEXT in d.log_path.read_text(errors="replace"), d.log_tail()
        assert ctl.proc.poll() is None, f"operator-controller died\n{ctl.log_tail()}"
        assert catalogd.proc.poll() is None, f"catalogd died\n{catalogd.log_tail()}"
        obj = kubectl_json("get", "clusterextension", second)
        assert not obj.get("status", {}).get("install"), obj.get("status")
    finally:
        front.pass_through()

    wait_installed(env, second, f"{pkg2}.v1.0.0", "1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert snapshot(pkg, ns, name, env["system_ns"]) == before
    assert len(log_lines(ctl, name, "installed bundle")) == 1, ctl.log_tail()
    assert not log_lines(ctl, name, "drift repaired"), ctl.log_tail()
    wait_for(lambda: http(f"http://127.0.0.1:{ctl.port}/readyz", timeout=5)[0] == 200, "operator-controller ready", ctl)
    apply_ce(env, pkg, name, ns, version="1.0.1")
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    wait_for(lambda: configmap_version(pkg, ns) == "1.0.1", "the ConfigMap of 1.0.1", ctl)
    delete_ce(second)
    delete_ce(name)
