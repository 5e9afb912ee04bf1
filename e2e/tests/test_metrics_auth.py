"""The metrics listeners (--metrics-bind-address) of catalogd and operator-controller, guarded as
controller-runtime's filter guards them upstream (issue 13, item 1).

Both daemons run as their ServiceAccounts with exactly config/rbac (which lets them create
TokenReviews and SubjectAccessReviews).  A caller's bearer token is reviewed, then whether its user
may `get` the non-resource URL /metrics: no token or a bad one is 401, a ServiceAccount without
the `*-metrics-reader` ClusterRole 403, one bound to it 200 with the metrics upstream's dashboards
use.  The module's listeners are plain HTTP; one test runs a catalogd whose listeners are HTTPS.
"""

import datetime
import json
import os
import re
import ssl
import urllib.error
import urllib.request

import pytest

import olmv1_e2e
from conftest import REPO, kubectl, unique  # noqa: F401
from olmv1_e2e import free_port, http, ns, wait_for  # noqa: F401
from test_operator_controller import LABEL, VERSIONS

TLS = REPO / "util" / "tests" / "fixtures" / "tls"


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    cport, oport = free_port(), free_port()
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("metrics-auth"), LABEL,
                           catalogd_extra=["--metrics-bind-address", f"127.0.0.1:{cport}"],
                           ctl_extra=["--metrics-bind-address", f"127.0.0.1:{oport}",
                                      "--log-level", "debug", "--log-format", "json"]) as env:
        env.update(catalogd_metrics=f"http://127.0.0.1:{cport}/metrics",
                   opctl_metrics=f"http://127.0.0.1:{oport}/metrics")
        scrapers = unique("scrapers")
        kubectl("create", "namespace", scrapers)
        kubectl("create", "serviceaccount", "reader", "-n", scrapers)
        kubectl("create", "serviceaccount", "nobody", "-n", scrapers)
        bindings = []
        for role in ("catalogd-metrics-reader", "operator-controller-metrics-reader"):
            b = f"{scrapers}-{role}"
            kubectl("create", "clusterrolebinding", b, f"--clusterrole={role}", f"--serviceaccount={scrapers}:reader")
            bindings.append(b)
        token = {sa: kubectl("create", "token", sa, "-n", scrapers).stdout.strip() for sa in ("reader", "nobody")}
        env.update(scrapers=scrapers, token=token)
        try:
            yield env
        finally:
            for b in bindings:
                kubectl("delete", "clusterrolebinding", b, "--ignore-not-found", check=False)
            kubectl("delete", "namespace", scrapers, "--wait=false", check=False)


def scrape(url, token=None, cafile=None):
    """(status, body text) of GET url with `Authorization: Bearer <token>` when given."""
    req = urllib.request.Request(url)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    ctx = ssl.create_default_context(cafile=str(cafile)) if cafile else None
    try:
        with urllib.request.urlopen(req, timeout=20, context=ctx) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.mark.parametrize("which", ["catalogd", "operator-controller"])
def test_401_403_200(world, which):
    url = world["catalogd_metrics" if which == "catalogd" else "opctl_metrics"]
    assert scrape(url) == (401, "Unauthorized\n")
    assert scrape(url, "not-a-token") == (401, "Unauthorized\n")
    user = f"system:serviceaccount:{world['scrapers']}:nobody"
    assert scrape(url, world["token"]["nobody"]) == (403, f"Authorization denied for user {user}\n")
    status, body = scrape(url, world["token"]["reader"])
    assert status == 200, body
    controller = "clustercatalog" if which == "catalogd" else "clusterextension"
    for want in (f'controller_runtime_reconcile_total{{controller="{controller}",result="success"}} ',
                 f'controller_runtime_reconcile_time_seconds_count{{controller="{controller}"}} ',
                 f'controller_runtime_max_concurrent_reconciles{{controller="{controller}"}} ',
                 f'workqueue_depth{{name="{controller}"}} ', f'workqueue_adds_total{{name="{controller}"}} ',
                 "\nprocess_cpu_seconds_total ", "\nprocess_resident_memory_bytes ", "\nprocess_open_fds ",
                 "\nprocess_start_time_seconds ", "_build_info{version=\""):
        assert want in body, f"{want!r} not in {which}'s metrics"
    # The reviews themselves are API requests: POSTs answered 201.
    assert re.search(r'rest_client_requests_total\{code="201",host="[^"]+",method="POST"\} [1-9]', body), body
    assert re.search(r'rest_client_requests_total\{code="200",host="[^"]+",method="GET"\} [1-9]', body), body
    # Answers are cached: the same token is allowed again without new reviews (reviews count).
    before = int(re.search(r'code="201",host="[^"]+",method="POST"\} (\d+)', body).group(1))
    status, body = scrape(url, world["token"]["reader"])
    assert status == 200
    assert int(re.search(r'code="201",host="[^"]+",method="POST"\} (\d+)', body).group(1)) == before


def test_metrics_are_served_only_on_the_metrics_listener(world):
    assert http(f"http://127.0.0.1:{world['ctl'].port}/metrics")[0] == 404
    assert http(f"{world['catalogd'].base}/metrics")[0] == 404
    assert http(f"{world['catalogd'].base}/healthz")[0] == 200


def test_https_metrics_listener(world, tmp_path):
    """A second catalogd with --tls-cert (its listeners are HTTPS) standing by for a Lease another
    replica holds: the HTTPS metrics listener is guarded the same way, and says it does not lead."""
    env = world
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    kubectl("apply", "-f", "-", input={
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "catalogd-operator-lock", "namespace": env["system_ns"]},
        "spec": {"holderIdentity": "another-replica", "leaseDurationSeconds": 3600, "acquireTime": now,
                 "renewTime": now}})
    port = free_port()
    d = olmv1_e2e.Catalogd(tmp_path)
    d.log_path = tmp_path / "catalogd.log"
    d.spawn([olmv1_e2e.CATALOGD, "--cache-dir", str(tmp_path / "cache"), "--catalogs-server-addr",
             f"127.0.0.1:{free_port()}", "--metrics-bind-address", f"127.0.0.1:{port}",
             "--tls-cert", str(TLS / "server.crt"), "--tls-key", str(TLS / "server.key"),
             "--leader-elect", "--system-namespace", env["system_ns"]],
            "wb", dict(os.environ, KUBECONFIG=str(env["catalogd"].identity)))
    try:
        url = f"https://127.0.0.1:{port}/metrics"
        d.wait_for(lambda: scrape(url, cafile=TLS / "server.crt")[0] == 401, "the HTTPS metrics listener")
        assert scrape(url, env["token"]["nobody"], TLS / "server.crt")[0] == 403
        status, body = scrape(url, env["token"]["reader"], TLS / "server.crt")
        assert status == 200 and "catalogd_catalogs_served" in body, body[:300]
        assert 'leader_election_master_status{name="catalogd-operator-lock"} 0\n' in body, body
    finally:
        d.stop()
        kubectl("delete", "lease", "catalogd-operator-lock", "-n", env["system_ns"], check=False)


def test_extension_info(world, ns, name):
    """olm_clusterextension_info{name,package,version,catalog} 1 for an installed extension."""
    env = world
    pkg = unique("mpk")
    images = olmv1_e2e.push_bundles(env, pkg, VERSIONS[:1])
    ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS[:1], "latest")
    catalog = olmv1_e2e.create_catalog(env, pkg, ref)
    olmv1_e2e.apply_ce(env, pkg, name, ns)
    olmv1_e2e.wait_installed(env, name, f"{pkg}.v{VERSIONS[0]}", VERSIONS[0])
    want = (f'olm_clusterextension_info{{name="{name}",package="{pkg}",version="{VERSIONS[0]}",'
            f'catalog="{catalog}"}} 1\n')
    wait_for(lambda: want in scrape(env["opctl_metrics"], env["token"]["reader"])[1], "the extension's info series",
             env["ctl"])
    olmv1_e2e.delete_ce(name)
    wait_for(lambda: f'name="{name}"' not in scrape(env["opctl_metrics"], env["token"]["reader"])[1],
             "the info series to go", env["ctl"])


def test_debug_json_log_lines(world, ns, name):
    """--log-level debug --log-format json (this module's operator-controller): one JSON object a
    line, and each reconcile step of an install with its duration."""
    env = world
    pkg = unique("lpk")
    images = olmv1_e2e.push_bundles(env, pkg, VERSIONS[:1])
    ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS[:1], "latest")
    olmv1_e2e.create_catalog(env, pkg, ref)
    olmv1_e2e.apply_ce(env, pkg, name, ns)
    olmv1_e2e.wait_installed(env, name, f"{pkg}.v{VERSIONS[0]}", VERSIONS[0])
    # Installed=True is written by the status step, whose "status took" and "reconcile took"
    # lines follow the write: wait for them instead of reading the log once.
    steps = ("resolve", "pull", "render", "preflight", "apply", "status", "reconcile")

    def parsed_lines():
        lines = [json.loads(line) for line in env["ctl"].log_text().splitlines() if line.strip()]
        mine = [o["msg"] for o in lines if o.get("clusterExtension") == name and o["level"] == "debug"]
        missing = [s for s in steps if not any(re.match(rf"{s} took [0-9.]+ ms", m) for m in mine)]
        return (lines, mine) if not missing else None

    lines, mine = olmv1_e2e.wait_for(parsed_lines, "a debug line per reconcile step", env["ctl"])
    assert all(set(o) >= {"ts", "level", "msg"} for o in lines)
    assert any(o["level"] == "info" and o.get("clusterExtension") == name and o["msg"].startswith("installed bundle")
               for o in lines)
    olmv1_e2e.delete_ce(name)
