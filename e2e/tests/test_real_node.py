"""OLM v1 as an in-cluster component, on the real node of e2e/cluster/node.sh.

The module brings up a cluster of its own with OLMV1_NODE=real (kubelet, containerd, kube-proxy,
CoreDNS; the suite's cluster has only kwok's fake node) and installs OLM v1 on it exactly as
`make deploy` does: `make images`, the unchanged dist/olmv1-install.yaml, `make certs`. Both
daemons then run as Pods from those images, with ServiceAccount tokens, probes, volumes and
leader election, and talk HTTPS to each other through catalogd's Service. Then:

* a ClusterCatalog is served by the in-cluster catalogd through its Service
  (status.urls.base = https://catalogd-service.olmv1-system.svc/...), read back through the
  Service with the CA of catalogd's Secret, and Pods resolve that name with cluster DNS;
* operator-controller (a Pod) resolves through it, trusting catalogd by --catalogd-cas-dir; the
  demo package installs and its Deployment's Pod runs a real container (images/demo-operator,
  which logs its version), upgrades 0.1.0 -> 0.2.0 -> 1.0.0, and uninstalls;
* health (issue 26 item 5): an extension whose Deployment's container turns unready (a
  readinessProbe on a file the test removes with `kubectl exec`) reports Available
  False/ProbeFailure naming the Deployment, then True/ProbesSucceeded once it is ready again;
* /metrics of both daemons through their Services;
* faults: catalogd runs 2 replicas and both serve: its leader Pod deleted -> replaced, serves
  again, the install untouched; its leader force-deleted while a client polls the Service -> the
  follower takes the Lease, no request fails, nothing is pulled again (figures printed with -s);
  operator-controller runs 2 replicas as the install file says (one leads, the other stands by,
  the PodDisruptionBudget allows one eviction); its leader force-deleted mid-install -> the
  standby leads and finishes the install; its leader killed (SIGKILL: the Lease is not released)
  -> the standby leads once the Lease expires; in both, the replicas never reconcile at the same
  time (their logs) and the failover times are printed (run pytest with -s to see them); every
  operator-controller Pod deleted mid-install -> the install completes after they return.

Where a real node cannot run (not root, no containerd/runc/CNI plugins, no network namespaces or
iptables, no cgroup freezer) the module is skipped with one line saying why. Traffic goes only to
127.0.0.1 and to the node's own addresses (Pods, Services: from inside the node's namespace).
"""

import base64
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

import olmv1_bundles
from conftest import REPO
from olmv1_e2e import poll

KUBECTL = os.environ.get("KUBECTL", "kubectl")
OLMV1 = os.environ.get("OLMV1_BIN") or str(REPO / "build" / "cli" / "olmv1")
SYSTEM_NS = "olmv1-system"
CATALOGD = "catalogd-controller-manager"
OPCTL = "operator-controller-controller-manager"
PKG = "olmv1-demo-operator"
DEMO_NS = "olmv1-demo"  # config/samples/demo-installer-rbac.yaml: namespace, SA demo-installer, RBAC
WAIT = 240


def _why_no_real_node():
    """None when this machine can run the real node, else one line saying why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, cgroups, containerd)"
    for tool in ("containerd", "runc", "iptables", "nsenter", "unshare", "cc", "ip"):
        if not shutil.which(tool):
            return f"{tool} not found (make deps installs containerd, runc, iptables, ...)"
    for plugin in ("bridge", "host-local", "portmap", "loopback"):
        if not os.access(f"/usr/lib/cni/{plugin}", os.X_OK):
            return f"/usr/lib/cni/{plugin} missing (containernetworking-plugins)"
    if not (os.path.isdir("/sys/fs/cgroup/freezer") or os.path.exists("/sys/fs/cgroup/cgroup.freeze")
            or os.path.exists("/sys/fs/cgroup/cgroup.controllers")):
        return "no cgroup freezer (v1) and no cgroup v2"
    if "\toverlay\n" not in Path("/proc/filesystems").read_text():
        return "no overlay filesystem in this kernel (containerd's snapshotter)"
    if not os.path.exists("/proc/sys/net/bridge/bridge-nf-call-iptables"):
        return "no br_netfilter (/proc/sys/net/bridge): kube-proxy cannot see bridged Pod traffic"
    probe = subprocess.run(
        ["unshare", "--net", "--mount", "sh", "-c",
         "ip link add name probe0 type veth peer name probe1 && iptables -w -t nat -N OLMV1-PROBE"],
        capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return "cannot make a network namespace with a veth and iptables: " + \
            (probe.stderr.strip().splitlines() or ["?"])[-1]
    return None


def _env_file(path):
    env = {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            k, v = line[len("export "):].split("=", 1)
            env[k] = v.strip("'")
    return env


class Cluster:
    """The real-node cluster of this module: its env file, kubectl, and the node's netns."""

    def __init__(self, state):
        self.state = state
        self.env = _env_file(state / "env")
        self.kubeconfig = self.env["KUBECONFIG"]

    def kubectl(self, *args, input=None, check=True, timeout=120):
        if input is not None and not isinstance(input, str):
            input = json.dumps(input)
        proc = subprocess.run([KUBECTL, *map(str, args)], input=input, capture_output=True, text=True,
                              timeout=timeout, env=dict(os.environ, KUBECONFIG=self.kubeconfig))
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(map(str, args))} exited {proc.returncode}\n"
                                 f"stdout: {proc.stdout.strip()}\nstderr: {proc.stderr.strip()}")
        return proc

    def json(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def in_node(self, *cmd, timeout=30):
        """Runs cmd (a host binary) in the node's network namespace: Pod and Service IPs route there."""
        return subprocess.run(["nsenter", f"--net=/proc/{self.env['OLMV1_NODE_HOLDER_PID']}/ns/net", *cmd],
                              capture_output=True, text=True, timeout=timeout)

    def service_get(self, service, port, path, cafile, scheme="https", token=None):
        """GET through a Service's ClusterIP (kube-proxy) by its DNS name, from the node."""
        ip = self.json("-n", SYSTEM_NS, "get", "service", service)["spec"]["clusterIP"]
        host = f"{service}.{SYSTEM_NS}.svc"
        auth = ["-H", f"Authorization: Bearer {token}"] if token else []
        proc = self.in_node("curl", "-sS", "--fail-with-body", "--max-time", "20", "--cacert", str(cafile), *auth,
                            "--resolve", f"{host}:{port}:{ip}", f"{scheme}://{host}:{port}{path}")
        assert proc.returncode == 0, f"GET {host}:{port}{path} via {ip}: {proc.stderr}{proc.stdout[:300]}"
        return proc.stdout

    def pods(self, name):
        return self.json("-n", SYSTEM_NS, "get", "pods", "-l", f"control-plane={name}")["items"]

    def ready_pods(self, name):
        return [p for p in self.pods(name) if not p["metadata"].get("deletionTimestamp") and any(
            c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]


def real_node_cluster(tmp_path_factory, name, extra_env=None):
    """A cluster with a real node for one module (skipped in one line where it cannot run),
    torn down after it: a generator for a module-scoped fixture. extra_env goes to up.sh and
    down.sh besides OLMV1_NODE=real (e.g. OLMV1_REAL_NODES=2)."""
    why = _why_no_real_node()
    if why:
        pytest.skip(f"real node: {why}")
    state = tmp_path_factory.mktemp(name)
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "OLMV1_REGISTRY")}
    env["OLMV1_NODE"] = "real"
    env.update(extra_env or {})
    # The first run may build kubelet, kube-proxy and CoreDNS (about 5 minutes on 2 cores).
    up = subprocess.run(["bash", str(REPO / "e2e" / "cluster" / "up.sh"), "--state-dir", str(state)],
                        env=env, capture_output=True, text=True, timeout=3600)
    try:
        assert up.returncode == 0, f"up.sh with OLMV1_NODE=real failed:\n{up.stderr[-3000:]}"
        yield Cluster(state)
    finally:
        subprocess.run(["bash", str(REPO / "e2e" / "cluster" / "down.sh"), "--state-dir", str(state)],
                       env=env, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from real_node_cluster(tmp_path_factory, "realnode")


@pytest.fixture(scope="module")
def deployed(cluster, tmp_path_factory):
    """make deploy against the real-node cluster; returns (dist dir, certs dir)."""
    work = tmp_path_factory.mktemp("deploy")
    env = dict(os.environ, KUBECONFIG=cluster.kubeconfig, IMAGE_REGISTRY=cluster.env["OLMV1_REGISTRY"],
               OLMV1_NODE_REGISTRY=cluster.env["OLMV1_NODE_REGISTRY"], VERSION="e2e",
               OLMV1_DIST_DIR=str(work / "dist"), OLMV1_IMAGES_WORK=str(work / "roots"),
               OLMV1_CERTS_DIR=str(work / "certs"), OLMV1_LOCAL_STATE=str(cluster.state))
    proc = subprocess.run(["bash", str(REPO / "scripts" / "deploy.sh")], env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, f"make deploy failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return work / "dist", work / "certs"


@pytest.fixture(scope="module")
def demo_catalog(cluster, deployed, tmp_path_factory):
    """The demo package (its image, bundles, catalog) at the registry address Pods reach, a
    ClusterCatalog for it, and the installer RBAC of the samples; returns the catalog's name."""
    reg = cluster.env["OLMV1_NODE_REGISTRY"]
    env = dict(os.environ, OLMV1_INSECURE_REGISTRIES=reg)
    proc = subprocess.run(["python3", str(REPO / "scripts" / "demo-package.py"), "--olmv1", OLMV1, "--registry", reg,
                           "--out", str(tmp_path_factory.mktemp("demo"))], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    name = "demo-operators"
    cluster.kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog", "metadata": {"name": name},
        "spec": {"source": {"type": "Image", "image": {"ref": f"{reg}/olmv1/demo-operators:latest"}}}})
    cluster.kubectl("apply", "-f", REPO / "config" / "samples" / "demo-installer-rbac.yaml")
    cluster.kubectl("wait", "--for=condition=Serving", "--timeout=180s", f"clustercatalog/{name}")
    return name


def catalogd_ca(cluster, tmp_path):
    secret = cluster.json("-n", SYSTEM_NS, "get", "secret", "catalogd-service-cert")
    ca = tmp_path / "catalogd-ca.crt"
    ca.write_bytes(base64.b64decode(secret["data"]["ca.crt"]))
    return ca


def apply_extension(cluster, version):
    cluster.kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension", "metadata": {"name": "demo"},
        "spec": {"namespace": DEMO_NS, "serviceAccount": {"name": "demo-installer"},
                 "source": {"sourceType": "Catalog", "catalog": {"packageName": PKG, "version": version}}}})


def wait_running_version(cluster, version, timeout=WAIT):
    """The extension Installed at `version`, and its Deployment's Pod logging that version."""
    def installed():
        ce = cluster.json("get", "clusterextension", "demo")
        conds = {c["type"]: c for c in ce.get("status", {}).get("conditions", [])}
        bundle = ce.get("status", {}).get("install", {}).get("bundle", {})
        return conds.get("Installed", {}).get("status") == "True" and bundle.get("version") == version
    poll(installed, f"ClusterExtension demo Installed at {version}", timeout=timeout)

    def logged():
        pods = cluster.json("-n", DEMO_NS, "get", "pods", "-l", f"app={PKG}")["items"]
        for p in pods:
            if p["metadata"].get("deletionTimestamp") or p["status"].get("phase") != "Running":
                continue
            log = cluster.kubectl("-n", DEMO_NS, "logs", p["metadata"]["name"], check=False).stdout
            if f"olmv1-demo-operator {version} running as uid 65532 in namespace {DEMO_NS}" in log:
                return p
        return None
    return poll(logged, f"a Running demo Pod logging version {version}", timeout=timeout)


# ---------------------------------------------------------------- the daemons as Pods


def test_both_daemons_run_as_pods_from_the_install_file(cluster, deployed):
    dist, _ = deployed
    images = dict(line.split("=", 1) for line in (dist / "images.env").read_text().split())
    install = [d for d in yaml.safe_load_all((dist / "olmv1-install.yaml").read_text())
               if d and d.get("kind") == "Deployment"]
    assert {d["metadata"]["name"] for d in install} == {CATALOGD, OPCTL}
    # Both daemons are HA by default (catalogd's followers serve too).
    assert {d["metadata"]["name"]: d["spec"]["replicas"] for d in install} == {CATALOGD: 2, OPCTL: 2}
    for d in install:
        name = d["metadata"]["name"]
        want = d["spec"]["template"]["spec"]["containers"][0]
        assert want["image"] in images.values()
        replicas = d["spec"]["replicas"]
        pods = poll(lambda: (lambda p: p if len(p) == replicas else None)(cluster.ready_pods(name)),
                    f"{replicas} ready {name} Pods", timeout=WAIT)
        for pod in pods:
            # The one node runs them all: the spread across nodes is a preference only.
            assert pod["spec"]["nodeName"] == cluster.env["OLMV1_NODE_NAME"]
            assert pod["spec"]["affinity"] == d["spec"]["template"]["spec"]["affinity"]
            got = pod["spec"]["containers"][0]
            assert got["image"] == want["image"] and got["args"] == want["args"], \
                "the Pod does not run what the install file says"
            status = pod["status"]["containerStatuses"][0]
            assert status["containerID"].startswith("containerd://") and "running" in status["state"]
            assert status["restartCount"] == 0, f"{name} restarted: {status.get('lastState')}"
            assert status["imageID"].endswith(want["image"].split("@")[1])
            assert pod["status"]["podIP"].startswith(cluster.env["OLMV1_POD_CIDR"].rsplit(".", 2)[0])


def test_pods_resolve_the_catalogd_service_by_name(cluster, deployed, tmp_path):
    """A Pod (busybox, an image built here) resolves catalogd-service.olmv1-system.svc through the
    node's CoreDNS (search path of the kubelet's resolv.conf) and connects to it via kube-proxy."""
    busybox = shutil.which("busybox")
    if not busybox:
        pytest.skip("busybox (busybox-static) not installed: no toolbox image")
    root = tmp_path / "toolbox"
    (root / "bin").mkdir(parents=True)
    shutil.copy(busybox, root / "bin" / "busybox")
    for applet in ("sh", "nslookup", "nc", "sleep"):
        (root / "bin" / applet).symlink_to("busybox")
    ref = subprocess.run([OLMV1, "image", "push", "-q", str(root), f"{cluster.env['OLMV1_REGISTRY']}/e2e/toolbox:1",
                          "--entrypoint", "/bin/sh"], capture_output=True, text=True, timeout=120)
    assert ref.returncode == 0, ref.stderr
    cluster.kubectl("run", "toolbox", "--image", ref.stdout.strip(), "--restart=Never", "--command", "--",
                    "/bin/sleep", "600")
    cluster.kubectl("wait", "--for=condition=Ready", "--timeout=120s", "pod/toolbox")
    ip = cluster.json("-n", SYSTEM_NS, "get", "service", "catalogd-service")["spec"]["clusterIP"]
    out = cluster.kubectl("exec", "toolbox", "--", "nslookup", "catalogd-service.olmv1-system.svc.cluster.local").stdout
    assert f"Address: {ip}" in out, out
    # The short name as the daemons use it, through the resolver's search path (getaddrinfo).
    conn = cluster.kubectl("exec", "toolbox", "--", "sh", "-c",
                           "echo | nc -w 5 catalogd-service.olmv1-system.svc 443 && echo connected", check=False)
    assert "connected" in conn.stdout, conn.stderr
    cluster.kubectl("delete", "pod", "toolbox", "--wait=false")


def test_docker_io_busybox_runs_from_the_local_mirror(cluster, deployed):
    """Upstream's e2e test operators run `busybox:1.36` (docker.io). The node reads docker.io from
    the local registry, where the cluster pushed a stand-in built from busybox-static: a Pod
    naming the short name runs, and its httpd answers the way those operators' probes ask."""
    if not shutil.which("busybox"):
        pytest.skip("busybox (busybox-static) not installed: no stand-in image")
    cluster.kubectl("run", "dockerhub-busybox", "--image", "busybox:1.36", "--restart=Never", "--command", "--",
                    "sh", "-c", "mkdir -p /tmp/www && echo true > /tmp/www/ready && exec httpd -f -h /tmp/www -p 8080")
    cluster.kubectl("wait", "--for=condition=Ready", "--timeout=120s", "pod/dockerhub-busybox")
    pod = cluster.json("get", "pod", "dockerhub-busybox")
    assert pod["status"]["containerStatuses"][0]["image"] == "docker.io/library/busybox:1.36"
    out = cluster.kubectl("exec", "dockerhub-busybox", "--", "wget", "-q", "-O", "-", "http://127.0.0.1:8080/ready")
    assert out.stdout.strip() == "true", out
    cluster.kubectl("delete", "pod", "dockerhub-busybox", "--wait=false")


# ---------------------------------------------------------------- catalog, install, upgrade


def test_catalog_is_served_through_the_catalogd_service(cluster, demo_catalog, tmp_path):
    cc = cluster.json("get", "clustercatalog", demo_catalog)
    assert cc["status"]["urls"]["base"] == f"https://catalogd-service.{SYSTEM_NS}.svc/catalogs/{demo_catalog}"
    body = cluster.service_get("catalogd-service", 443, f"/catalogs/{demo_catalog}/api/v1/all",
                               catalogd_ca(cluster, tmp_path))
    metas = [json.loads(line) for line in body.splitlines() if line.strip()]
    assert {"schema": "olm.package", "name": PKG} in [{"schema": m["schema"], "name": m["name"]} for m in metas
                                                      if m["schema"] == "olm.package"]
    assert len([m for m in metas if m["schema"] == "olm.bundle"]) == 3


def test_extension_installs_and_runs_a_real_container(cluster, demo_catalog):
    apply_extension(cluster, "0.1.0")
    pod = wait_running_version(cluster, "0.1.0")
    assert pod["spec"]["nodeName"] == cluster.env["OLMV1_NODE_NAME"]
    status = pod["status"]["containerStatuses"][0]
    assert status["containerID"].startswith("containerd://") and status["ready"]


def test_extension_upgrades_along_the_channel(cluster, demo_catalog):
    for version in ("0.2.0", "1.0.0"):
        apply_extension(cluster, version)
        wait_running_version(cluster, version)
    cm = cluster.json("-n", DEMO_NS, "get", "configmap", f"{PKG}-config")
    assert cm["data"]["version"] == "1.0.0"


# ---------------------------------------------------------------- health: Available from the probes


HEALTH_PKG = "olmv1-health-probe"
HEALTH_NS = "olmv1-health"
HEALTH_CATALOG = "health-operators"
HEALTH_DEPLOYMENT = f"{HEALTH_PKG}-manager"  # olmv1_bundles names it so


@pytest.fixture(scope="module")
def health_catalog(cluster, deployed, tmp_path_factory):
    """A package whose Deployment runs busybox with a readinessProbe on /tmp/ready (made at start),
    as upstream's e2e operator does: `kubectl exec POD -- rm /tmp/ready` makes its one Pod unready,
    `touch` ready again.  Its image, bundle and catalog at the registry address Pods reach, a
    ClusterCatalog, the namespace and an installer ServiceAccount (bound to cluster-admin: RBAC is
    not what this tests)."""
    busybox = shutil.which("busybox")
    if not busybox:
        pytest.skip("busybox (busybox-static) not installed: no image with a shell for the readiness probe")
    reg = cluster.env["OLMV1_NODE_REGISTRY"]
    env = dict(os.environ, OLMV1_INSECURE_REGISTRIES=reg)
    root = tmp_path_factory.mktemp("health")

    def push(*args):
        proc = subprocess.run([OLMV1, *map(str, args)], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"olmv1 {' '.join(map(str, args))}: {proc.stderr}"
        return proc.stdout.strip()

    img = root / "image"
    (img / "bin").mkdir(parents=True)
    shutil.copy(busybox, img / "bin" / "busybox")
    for applet in ("sh", "sleep", "touch", "rm", "test", "mkdir"):
        (img / "bin" / applet).symlink_to("busybox")
    image = push("image", "push", "-q", img, f"{reg}/e2e/health-workload:1", "--entrypoint", "/bin/sh")

    def probe_on_a_file(csv):
        pod = csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]
        pod["containers"][0].update({
            "command": ["/bin/sh", "-c", "mkdir -p /tmp && touch /tmp/ready && exec sleep 100000"],
            "readinessProbe": {"exec": {"command": ["/bin/test", "-f", "/tmp/ready"]},
                               "periodSeconds": 1, "failureThreshold": 1},
        })
        pod["terminationGracePeriodSeconds"] = 1
    bundle = olmv1_bundles.write_bundle(root, HEALTH_PKG, "1.0.0", image=image, cluster_rules=None,
                                        pod_service_account="default", csv_hook=probe_on_a_file)
    images = {"1.0.0": push("bundle", "push", "-q", bundle, f"{reg}/e2e/health-bundle:v1.0.0")}
    catalog = olmv1_bundles.write_catalog(root / "catalog", HEALTH_PKG, images, ("1.0.0",))
    push("catalog", "push", "-q", catalog, f"{reg}/e2e/health-operators:latest")
    cluster.kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog", "metadata": {"name": HEALTH_CATALOG},
        "spec": {"source": {"type": "Image", "image": {"ref": f"{reg}/e2e/health-operators:latest"}}}})
    cluster.kubectl("create", "namespace", HEALTH_NS)
    cluster.kubectl("-n", HEALTH_NS, "create", "serviceaccount", "health-installer")
    cluster.kubectl("create", "clusterrolebinding", "health-installer", "--clusterrole=cluster-admin",
                    f"--serviceaccount={HEALTH_NS}:health-installer")
    cluster.kubectl("wait", "--for=condition=Serving", "--timeout=180s", f"clustercatalog/{HEALTH_CATALOG}")
    return HEALTH_CATALOG


def _reconciles(cluster, token, ca):
    """operator-controller's clusterextension reconciles so far (all results), from /metrics."""
    try:
        text = cluster.service_get("operator-controller-service", 8443, "/metrics", ca, token=token)
    except AssertionError:  # a new binding may take a moment (a denial is cached 30 s)
        return None
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("controller_runtime_reconcile_total{") and 'controller="clusterextension"' in line)


def test_available_follows_a_real_container_losing_and_regaining_readiness(cluster, health_catalog, tmp_path):
    """Issue 26 item 5: Available in the default mode, from the probes, re-evaluated when the
    workload's readiness changes (the drift watch sees the Deployment's status change what its
    probe says), not at the next periodic reconcile (5 minutes)."""
    ca = catalogd_ca(cluster, tmp_path)
    cluster.kubectl("apply", "-f", "-", input={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "e2e-health-scraper", "namespace": SYSTEM_NS}})
    cluster.kubectl("apply", "-f", "-", input={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "e2e-health-scraper"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "operator-controller-metrics-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "e2e-health-scraper", "namespace": SYSTEM_NS}]})
    token = cluster.kubectl("-n", SYSTEM_NS, "create", "token", "e2e-health-scraper").stdout.strip()
    poll(lambda: _reconciles(cluster, token, ca) is not None, "operator-controller /metrics with a token",
         timeout=WAIT)
    line = f"Object Deployment.apps/v1 {HEALTH_NS}/{HEALTH_DEPLOYMENT}: "
    try:
        t0 = time.time()
        cluster.kubectl("apply", "-f", "-", input={
            "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension", "metadata": {"name": "health"},
            "spec": {"namespace": HEALTH_NS, "serviceAccount": {"name": "health-installer"},
                     "source": {"sourceType": "Catalog", "catalog": {
                         "packageName": HEALTH_PKG,
                         "selector": {"matchLabels": {"olm.operatorframework.io/metadata.name": HEALTH_CATALOG}}}}}})

        def condition(ctype):
            ce = cluster.json("get", "clusterextension", "health")
            c = next((c for c in ce.get("status", {}).get("conditions", []) if c["type"] == ctype), None)
            return ce, c

        def available(status, reason):
            ce, c = condition("Available")
            if not c or (c["status"], c["reason"]) != (status, reason):
                pods = cluster.kubectl("-n", HEALTH_NS, "get", "pods", "-o", "wide", check=False).stdout
                raise AssertionError(f"Available is {c}; Pods:\n{pods}")
            assert c["observedGeneration"] == ce["metadata"]["generation"], c
            return c
        poll(lambda: (condition("Installed")[1] or {}).get("status") == "True", "the extension Installed",
             timeout=WAIT)
        installed = time.time() - t0
        c = poll(lambda: available("True", "ProbesSucceeded"), "Available True once the Pod is ready", timeout=WAIT)
        assert c["message"] == "Objects are available and pass all probes."
        ready = time.time() - t0

        pods = [p for p in cluster.json("-n", HEALTH_NS, "get", "pods", "-l", f"app={HEALTH_PKG}")["items"]
                if not p["metadata"].get("deletionTimestamp")]
        assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
        pod = pods[0]["metadata"]["name"]
        assert pods[0]["spec"]["nodeName"] == cluster.env["OLMV1_NODE_NAME"]
        before = poll(lambda: _reconciles(cluster, token, ca), "the reconcile count", timeout=60)

        t1 = time.time()
        cluster.kubectl("-n", HEALTH_NS, "exec", pod, "--", "rm", "/tmp/ready")
        c = poll(lambda: available("False", "ProbeFailure"), "Available False once the container is unready",
                 timeout=120)
        lost = time.time() - t1
        assert c["message"] == line + '.status.condition["Available"] is False', c["message"]
        _, inst = condition("Installed")
        _, prog = condition("Progressing")
        assert inst["status"] == "True" and (prog["status"], prog["reason"]) == ("True", "Succeeded"), (inst, prog)

        t2 = time.time()
        cluster.kubectl("-n", HEALTH_NS, "exec", pod, "--", "touch", "/tmp/ready")
        c = poll(lambda: available("True", "ProbesSucceeded"), "Available True again once it is ready", timeout=120)
        regained = time.time() - t2
        time.sleep(3)  # anything late would show in the count
        after = poll(lambda: _reconciles(cluster, token, ca), "the reconcile count", timeout=60)
        print(f"\nhealth: Installed {installed:.1f}s and Available {ready:.1f}s after the apply; Available False "
              f"{lost:.1f}s after the readiness file went, True {regained:.1f}s after it came back; "
              f"{after - before:.0f} ClusterExtension reconciles over the whole cycle")
        # The periodic repair is 5 minutes away: only the watch can have seen it this soon.
        assert lost < 60 and regained < 60
        # One reconcile per flip, a few more at most (our own status write, the other extension):
        # not one per status write of the Deployment or its Pod.
        assert after - before <= 8, after - before
    finally:
        cluster.kubectl("delete", "clusterextension", "health", "--ignore-not-found", "--timeout=180s", check=False)


def test_metrics_are_scraped_through_the_services(cluster, deployed, tmp_path):
    """/metrics is guarded (TokenReview, then SubjectAccessReview): a scraper needs the token of an
    identity bound to the shipped *-metrics-reader ClusterRoles, as a Prometheus would have."""
    ca = catalogd_ca(cluster, tmp_path)
    with pytest.raises(AssertionError, match="401"):
        cluster.service_get("operator-controller-service", 8443, "/metrics", ca)
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "e2e-scraper", "namespace": SYSTEM_NS}}
    cluster.kubectl("apply", "-f", "-", input=sa)
    for role in ("catalogd-metrics-reader", "operator-controller-metrics-reader"):
        crb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": f"e2e-scraper-{role}"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": [{"kind": "ServiceAccount", "name": "e2e-scraper", "namespace": SYSTEM_NS}]}
        cluster.kubectl("apply", "-f", "-", input=crb)
    token = cluster.kubectl("-n", SYSTEM_NS, "create", "token", "e2e-scraper").stdout.strip()

    def scrape(service, port):
        try:
            return cluster.service_get(service, port, "/metrics", ca, token=token)
        except AssertionError:  # the new bindings may take a moment (a denial is cached 30 s)
            return None
    opctl = poll(lambda: scrape("operator-controller-service", 8443), "operator-controller /metrics with a token",
                 timeout=WAIT)
    assert "operator_controller_reconcile_total" in opctl
    catalogd = poll(lambda: scrape("catalogd-service", 7443), "catalogd /metrics with a token", timeout=WAIT)
    assert "catalogd" in catalogd


# ---------------------------------------------------------------- faults


def catalogd_lease_holder(cluster):
    lease = cluster.json("-n", SYSTEM_NS, "get", "lease", "catalogd-operator-lock")
    return lease["spec"].get("holderIdentity") or ""


def test_deleted_catalogd_pod_is_replaced_and_serves_again(cluster, demo_catalog, tmp_path):
    old = cluster.ready_pods(CATALOGD)
    assert len(old) == 2
    # The Lease holder: its replacement starts as a follower, the other replica takes the Lease.
    gone = next(p["metadata"]["name"] for p in old
                if catalogd_lease_holder(cluster).startswith(p["metadata"]["name"] + "_"))
    cluster.kubectl("-n", SYSTEM_NS, "delete", "pod", gone, "--wait=false")
    new = poll(lambda: [p for p in cluster.ready_pods(CATALOGD) if p["metadata"]["name"] not in
                        {o["metadata"]["name"] for o in old}],
               "a new ready catalogd Pod", timeout=WAIT)
    assert new[0]["status"]["podIP"] != ""
    # Its cache is an emptyDir: it pulls and unpacks the catalog again (ready only then), then serves it.
    ca = catalogd_ca(cluster, tmp_path)

    def serves():
        try:
            return "olm.package" in cluster.service_get("catalogd-service", 443,
                                                        f"/catalogs/{demo_catalog}/api/v1/all", ca)
        except AssertionError:
            return False
    poll(serves, "the catalog served through the Service by the new catalogd", timeout=WAIT)
    cluster.kubectl("wait", "--for=condition=Serving", "--timeout=60s", f"clustercatalog/{demo_catalog}")
    # Nothing lost: the extension is still installed and still resolves through the new Pod.
    wait_running_version(cluster, "1.0.0", timeout=60)


# Polls catalogd's Service from inside the node, a new connection per request, as fast as it
# answers (no retry), until the stop file appears; prints "<ok> <failed>" and each failure.
_POLLER = r"""
ok=0; failed=0
while [ ! -e "$STOP" ]; do
  for path in "/catalogs/$CAT/api/v1/all" "/catalogs/$CAT/api/v1/metas?schema=olm.package"; do
    if out=$(curl -sS --fail-with-body --max-time 5 --cacert "$CA" --resolve "$HOST:443:$IP" \
             -o /dev/null -w '%{http_code}' "https://$HOST$path" 2>&1); then ok=$((ok+1))
    else failed=$((failed+1)); echo "failed: $path: $out" >&2; fi
  done
done
echo "$ok $failed"
"""


def test_two_catalogd_replicas_both_serve_and_fail_over_without_a_failed_request(cluster, demo_catalog, tmp_path):
    """Issue 25 item 1: a follower serves the digest the leader resolved (ready only then), and
    a force-deleted leader costs a client polling the Service no failed request."""
    ca = catalogd_ca(cluster, tmp_path)
    stop = tmp_path / "stop"
    poller = None
    cordoned = False
    try:
        pods = poll(lambda: (lambda p: p if len(p) == 2 else None)(cluster.ready_pods(CATALOGD)),
                    "two ready catalogd Pods (the new one ready only once it serves the current digest)",
                    timeout=WAIT)
        names = {p["metadata"]["name"] for p in pods}
        leader = poll(lambda: next((n for n in names if catalogd_lease_holder(cluster).startswith(n + "_")), None),
                      "one of the two holding catalogd's Lease", timeout=WAIT)
        follower = next(n for n in names if n != leader)
        digest = cluster.json("get", "clustercatalog", demo_catalog)["status"]["resolvedSource"]["image"]["ref"]
        flog = cluster.kubectl("-n", SYSTEM_NS, "logs", follower, check=False).stdout
        assert f"serving the leader's {digest}" in flog or "serving the stored catalog" in flog, flog[-2000:]
        # The follower itself answers with the catalog, straight to its Pod IP.
        fip = next(p["status"]["podIP"] for p in pods if p["metadata"]["name"] == follower)
        host = f"catalogd-service.{SYSTEM_NS}.svc"
        direct = cluster.in_node("curl", "-sS", "--fail-with-body", "--max-time", "20", "--cacert", str(ca),
                                 "--resolve", f"{host}:8443:{fip}", f"https://{host}:8443/catalogs/{demo_catalog}/api/v1/all")
        assert direct.returncode == 0 and PKG in direct.stdout, direct.stderr
        last_unpacked = cluster.json("get", "clustercatalog", demo_catalog)["status"]["lastUnpacked"]

        ip = cluster.json("-n", SYSTEM_NS, "get", "service", "catalogd-service")["spec"]["clusterIP"]
        env = dict(os.environ, STOP=str(stop), CA=str(ca), HOST=host, IP=ip, CAT=demo_catalog)
        poller = subprocess.Popen(["nsenter", f"--net=/proc/{cluster.env['OLMV1_NODE_HOLDER_PID']}/ns/net",
                                   "sh", "-c", _POLLER], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        time.sleep(3)
        # The Pod that replaces the deleted one must not race the follower for the Lease: it
        # stays Pending until the follower leads (with two nodes it would start elsewhere).
        cluster.kubectl("cordon", cluster.env["OLMV1_NODE_NAME"])
        cordoned = True
        t0 = time.time()
        cluster.kubectl("-n", SYSTEM_NS, "delete", "pod", leader, "--force", "--grace-period=0")
        poll(lambda: catalogd_lease_holder(cluster).startswith(follower + "_"),
             f"{follower} taking catalogd's Lease", timeout=200)
        took = time.time() - t0
        poll(lambda: "reconcile ending" in cluster.kubectl("-n", SYSTEM_NS, "logs", follower, check=False).stdout,
             f"{follower} reconciling as the new leader", timeout=60)
        reconciled = time.time() - t0
        cluster.kubectl("uncordon", cluster.env["OLMV1_NODE_NAME"])
        cordoned = False
        # Whatever replaces the deleted Pod must come up ready (serving) while the poller runs.
        poll(lambda: (lambda p: p if len(p) == 2 else None)(cluster.ready_pods(CATALOGD)),
             "two ready catalogd Pods again", timeout=WAIT)
        time.sleep(3)
        stop.touch()
        out, err = poller.communicate(timeout=60)
        ok, failed = (int(x) for x in out.split())
        print(f"\ncatalogd failover: Lease taken {took:.1f}s after the force-delete, first reconcile as leader "
              f"after {reconciled:.1f}s; client requests through the Service: {ok} ok, {failed} failed")
        assert ok > 0
        assert failed == 0, err[-2000:]
        # No re-pull: the new leader found the status current (its record is the leader's).
        nlog = cluster.kubectl("-n", SYSTEM_NS, "logs", follower, check=False).stdout
        after = nlog[nlog.index("became leader"):]
        assert "unpacking" not in after, after[-2000:]
        assert cluster.json("get", "clustercatalog", demo_catalog)["status"]["lastUnpacked"] == last_unpacked
    finally:
        if poller and poller.poll() is None:
            stop.touch()
            poller.communicate(timeout=60)
        if cordoned:
            cluster.kubectl("uncordon", cluster.env["OLMV1_NODE_NAME"])
    poll(lambda: len(cluster.pods(CATALOGD)) == 2 and len(cluster.ready_pods(CATALOGD)) == 2,
         "two catalogd Pods again", timeout=WAIT)


LEASE = "9c4404e7.operatorframework.io"


def lease_spec(cluster):
    return cluster.json("-n", SYSTEM_NS, "get", "lease", LEASE)["spec"]


def pod_holding(identity, names):
    """Which of `names` the Lease identity "<hostname = Pod name>_<pid>_<random>" is, or None."""
    return next((n for n in names if identity.startswith(n + "_")), None)


def epoch(stamp):
    """An RFC 3339 UTC time with fractional seconds (the Lease's MicroTime, our log lines)."""
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def settled_operator_controllers(cluster):
    """The two operator-controller Pods once nothing else runs (no Pod terminating or starting),
    both Ready, one holding the Lease: ({name: Pod}, the leader's name)."""
    def settled():
        pods = cluster.pods(OPCTL)
        ready = {p["metadata"]["name"]: p for p in cluster.ready_pods(OPCTL)}
        if len(pods) != 2 or len(ready) != 2:
            return None
        leader = pod_holding(lease_spec(cluster).get("holderIdentity") or "", ready)
        return (ready, leader) if leader else None
    return poll(settled, "two ready operator-controller Pods, one holding the Lease", timeout=WAIT)


LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z) ")
RECONCILE = re.compile(r" clusterExtension=(\S+) reconcile took ([0-9.]+) ms")


class ContainerLog:
    """The manager container's log file on the node (the kubelet's podLogsDir), opened when this
    is made: its lines can still be read once the Pod was force-deleted and the file removed."""

    def __init__(self, cluster, pod):
        meta = pod["metadata"]
        root = Path(cluster.env["OLMV1_NODE_DIR"]) / "pod-logs"
        pattern = f"{SYSTEM_NS}_{meta['name']}_{meta['uid']}/manager/*.log"
        files = poll(lambda: sorted(root.glob(pattern), key=lambda f: int(f.stem)),
                     f"the log file of {meta['name']} under {root}", timeout=60)
        self.name = meta["name"]
        self.file = open(files[-1], "rb")  # the current one: the highest restart number

    def lines(self):
        """The daemon's lines, [(epoch seconds, text)], from the CRI format "<time> <stream> P|F <text>"."""
        self.file.seek(0)
        out, partial = [], ""
        for raw in self.file.read().decode(errors="replace").splitlines():
            parts = raw.split(" ", 3)
            if len(parts) < 4:
                continue
            partial += parts[3]
            if parts[2] == "P":  # a long line continues in the next record
                continue
            text, partial = partial, ""
            m = LOG_LINE.match(text)
            if m:
                out.append((epoch(m.group(1)), text))
        return out

    def reconciles(self):
        """Each reconcile this replica ran, as (start, end, ClusterExtension) in epoch seconds: the
        debug line "reconcile took N ms" ends one (--log-level=debug, the opctl_debug fixture)."""
        return [(t - float(m.group(2)) / 1000, t, m.group(1)) for t, text in self.lines()
                for m in [RECONCILE.search(text)] if m]

    def became_leader(self):
        return next((t for t, text in self.lines() if "became leader" in text), None)

    def close(self):
        self.file.close()


def assert_one_reconciler_at_a_time(old, new, others):
    """The failover's safety, from the replicas' own logs (one clock: they share the node): the
    old leader's last reconcile ended before the new leader led, the new leader reconciled only
    once it led, and a replica that never led never reconciled.  Returns the new leader's first
    reconcile (start, end, name), when it led, and when the old leader's last reconcile ended.  5 ms of slack: the log's milliseconds and the
    reconcile's monotonic duration do not round alike."""
    led = new.became_leader()
    assert led is not None, f"{new.name} never logged that it leads"
    old_runs, new_runs = old.reconciles(), new.reconciles()
    assert old_runs, f"{old.name} (the old leader) logged no reconcile"
    assert new_runs, f"{new.name} (the new leader) logged no reconcile"
    late = [r for r in old_runs if r[1] > led + 0.005]
    assert not late, f"{old.name} still reconciled after {new.name} led at {led:.3f}: {late}"
    early = [r for r in new_runs if r[0] < led - 0.005]
    assert not early, f"{new.name} reconciled before it led at {led:.3f}: {early}"
    for log in others:
        assert not log.reconciles(), f"{log.name} reconciled, but never led"
    return min(new_runs), led, max(r[1] for r in old_runs)


@pytest.fixture(scope="module")
def opctl_debug(cluster, deployed):
    """operator-controller at --log-level=debug, so that each replica logs every reconcile with its
    duration: how the failover tests see which replica reconciled when.  A rollout of both
    replicas, as an administrator's edit of the Deployment is (the install file's other arguments
    stay; test_both_daemons_run_as_pods_from_the_install_file ran before)."""
    args = cluster.json("-n", SYSTEM_NS, "get", "deployment", OPCTL)["spec"]["template"]["spec"]["containers"][0]["args"]
    if "--log-level=debug" not in args:
        cluster.kubectl("-n", SYSTEM_NS, "patch", "deployment", OPCTL, "--type=json", "-p", json.dumps(
            [{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "--log-level=debug"}]))
    cluster.kubectl("-n", SYSTEM_NS, "rollout", "status", f"deployment/{OPCTL}", f"--timeout={WAIT}s",
                    timeout=WAIT + 30)


def test_the_install_file_runs_two_operator_controller_replicas_one_leads(cluster, demo_catalog):
    pods, leader = settled_operator_controllers(cluster)
    spec = lease_spec(cluster)
    assert spec["leaseDurationSeconds"] == 10, spec  # --leader-elect-lease-duration=10s of the install file
    leading = [n for n in pods
               if "became leader" in cluster.kubectl("-n", SYSTEM_NS, "logs", n, check=False).stdout]
    assert leading == [leader], f"leaders by their logs: {leading}, Lease holder {leader}"
    # Both are Ready (the standby too: it can do nothing more until it leads), so the budget lets
    # a drain evict one of them, and only one.
    def budget():
        pdb = cluster.json("-n", SYSTEM_NS, "get", "poddisruptionbudget", OPCTL)
        st = pdb.get("status", {})
        return pdb if st.get("currentHealthy") == 2 and st.get("observedGeneration") else None
    pdb = poll(budget, "the PodDisruptionBudget counting two healthy Pods", timeout=WAIT)
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["status"]["disruptionsAllowed"] == 1, pdb["status"]


def test_force_deleted_leader_is_replaced_and_finishes_the_install_in_flight(cluster, demo_catalog, opctl_debug):
    """The leader Pod force-deleted (kubectl delete --force --grace-period=0) while an install is
    in flight: held, resolved and pulled, retrying because the installer may not create
    Deployments yet.  The standby takes the Lease over and finishes the install once the
    permission is back; the two never reconcile at the same time.  Prints the failover times."""
    cluster.kubectl("delete", "clusterextension", "demo", "--ignore-not-found", "--timeout=180s")
    pods, leader = settled_operator_controllers(cluster)
    logs = {n: ContainerLog(cluster, p) for n, p in pods.items()}
    rules = cluster.json("get", "clusterrole", "olmv1-demo-installer")["rules"]

    def set_rules(value):
        cluster.kubectl("patch", "clusterrole", "olmv1-demo-installer", "--type=json", "-p",
                        json.dumps([{"op": "replace", "path": "/rules", "value": value}]))
    set_rules([r for r in rules if "deployments" not in r["resources"]])
    restored = False
    try:
        apply_extension(cluster, "0.2.0")

        def held():
            ce = cluster.json("get", "clusterextension", "demo")
            msg = next((c["message"] for c in ce.get("status", {}).get("conditions", [])
                        if c["type"] == "Progressing"), "")
            return "deployments" in msg and msg
        poll(held, "the install retrying on the missing deployments permission")
        before = lease_spec(cluster)
        t0 = time.time()
        cluster.kubectl("-n", SYSTEM_NS, "delete", "pod", leader, "--force", "--grace-period=0")

        def new_holder():
            spec = lease_spec(cluster)
            live = [p["metadata"]["name"] for p in cluster.pods(OPCTL) if p["metadata"]["name"] != leader]
            who = pod_holding(spec.get("holderIdentity") or "", live)
            return (who, spec) if who else None
        successor, after = poll(new_holder, "another operator-controller Pod holding the Lease", timeout=WAIT)
        set_rules(rules)  # only now: the install is finished by the new leader
        restored = True
    finally:
        if not restored:
            set_rules(rules)
    wait_running_version(cluster, "0.2.0")
    installed = time.time()
    if successor not in logs:  # the Pod that replaced the deleted one won the race
        logs[successor] = ContainerLog(cluster, cluster.json("-n", SYSTEM_NS, "get", "pod", successor))
    first, led, old_last = assert_one_reconciler_at_a_time(
        logs[leader], logs[successor], [log for n, log in logs.items() if n not in (leader, successor)])
    assert after["leaseTransitions"] == before["leaseTransitions"] + 1, (before, after)
    released = any("current leader: (none)" in text for t, text in logs[successor].lines() if t >= t0)
    print(f"\nfailover, leader {leader} force-deleted ({'it released the Lease' if released else 'its Lease expired'}); "
          f"after the delete: Lease taken by {successor} "
          f"{'(the standby)' if successor in pods else '(the replacement Pod)'} at +{epoch(after['acquireTime']) - t0:.2f}s, "
          f"it logged leading at +{led - t0:.2f}s, first reconcile ({first[2]}) at +{first[0] - t0:.2f}s "
          f"(the old leader's last one ended at {old_last - t0:+.2f}s), install finished (demo 0.2.0 running) by +{installed - t0:.2f}s")
    for log in logs.values():
        log.close()


def leader_pid(pod):
    """The host PID of the Pod's operator-controller process: the one whose cgroup is its container's."""
    cid = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if cid in (d / "cgroup").read_text() and "operator-controller" in _cmdline(d.name):
                return int(d.name)
        except OSError:
            continue
    raise AssertionError(f"no operator-controller process in container {cid}")


def test_killed_leader_is_replaced_when_its_lease_expires(cluster, demo_catalog, opctl_debug):
    """The worst case: a leader that dies without a word (SIGKILL here; a lost node is the same to
    the others) never releases the Lease, and the standby takes it over only once it expired:
    within lease duration + retry period (10 s + 2 s) of the last renewal.  The Pod is then
    force-deleted so that the kubelet does not start it again.  An upgrade asked for right after
    the kill is done by the new leader; the two never reconcile at the same time."""
    pods, leader = settled_operator_controllers(cluster)
    logs = {n: ContainerLog(cluster, p) for n, p in pods.items()}
    pid = leader_pid(pods[leader])
    before = lease_spec(cluster)
    os.kill(pid, signal.SIGKILL)
    t0 = time.time()
    last_renewal = epoch(lease_spec(cluster)["renewTime"])  # nothing renews it any more
    cluster.kubectl("-n", SYSTEM_NS, "delete", "pod", leader, "--force", "--grace-period=0")
    apply_extension(cluster, "1.0.0")

    def new_holder():
        spec = lease_spec(cluster)
        live = [p["metadata"]["name"] for p in cluster.pods(OPCTL) if p["metadata"]["name"] != leader]
        who = pod_holding(spec.get("holderIdentity") or "", live)
        return (who, spec) if who else None
    successor, after = poll(new_holder, "another operator-controller Pod holding the Lease", timeout=WAIT)
    wait_running_version(cluster, "1.0.0")
    installed = time.time()
    if successor not in logs:
        logs[successor] = ContainerLog(cluster, cluster.json("-n", SYSTEM_NS, "get", "pod", successor))
    first, led, old_last = assert_one_reconciler_at_a_time(
        logs[leader], logs[successor], [log for n, log in logs.items() if n not in (leader, successor)])
    assert after["leaseTransitions"] == before["leaseTransitions"] + 1, (before, after)
    assert not any("current leader: (none)" in text for t, text in logs[successor].lines() if t >= t0), \
        "a killed leader cannot release the Lease"
    taken = epoch(after["acquireTime"])
    print(f"\nfailover, leader {leader} killed (SIGKILL, the Lease not released): Lease taken by {successor} "
          f"{'(the standby)' if successor in pods else '(the replacement Pod)'} at +{taken - t0:.2f}s after the kill "
          f"({taken - last_renewal:.2f}s after the dead leader's last renewal; bound 10 s + 2 s), "
          f"it logged leading at +{led - t0:.2f}s, first reconcile ({first[2]}) at +{first[0] - t0:.2f}s "
          f"(the old leader's last one ended at {old_last - t0:+.2f}s), upgrade finished (demo 1.0.0 running) by +{installed - t0:.2f}s")
    for log in logs.values():
        log.close()


def test_extension_uninstalls(cluster, demo_catalog):
    cluster.kubectl("delete", "clusterextension", "demo", "--timeout=180s")
    poll(lambda: not cluster.json("-n", DEMO_NS, "get", "deployments,configmaps",
                                  "-l", "olm.operatorframework.io/owner-name=demo")["items"],
         "the extension's objects gone", timeout=WAIT)
    poll(lambda: not [p for p in cluster.json("-n", DEMO_NS, "get", "pods", "-l", f"app={PKG}")["items"]],
         "the demo Pod gone", timeout=WAIT)


def test_install_completes_after_operator_controller_pod_is_deleted_mid_install(cluster, demo_catalog):
    """The install is held in the middle: resolved through catalogd and its bundle pulled, it
    retries because the installer may not get/create Deployments yet. Both operator-controller
    Pods are deleted then, and their replacements finish the install once the permission is there."""
    cluster.kubectl("delete", "clusterextension", "demo", "--ignore-not-found", "--timeout=180s")
    role = cluster.json("get", "clusterrole", "olmv1-demo-installer")
    rules = role["rules"]
    cluster.kubectl("patch", "clusterrole", "olmv1-demo-installer", "--type=json", "-p", json.dumps(
        [{"op": "replace", "path": "/rules", "value": [r for r in rules if "deployments" not in r["resources"]]}]))
    try:
        apply_extension(cluster, "1.0.0")

        def held():
            ce = cluster.json("get", "clusterextension", "demo")
            msg = next((c["message"] for c in ce.get("status", {}).get("conditions", [])
                        if c["type"] == "Progressing"), "")
            return "deployments" in msg and msg
        poll(held, "the install retrying on the missing deployments permission")
        # Every replica: the whole of operator-controller restarts.
        # (the replica the previous test force-deleted may still be starting: wait for both)
        poll(lambda: len(cluster.ready_pods(OPCTL)) == 2, "both operator-controller replicas ready", timeout=WAIT)
        old = {p["metadata"]["name"] for p in cluster.ready_pods(OPCTL)}
        assert len(old) == 2
        cluster.kubectl("-n", SYSTEM_NS, "delete", "pod", *sorted(old), "--wait=false")
        poll(lambda: [p for p in cluster.ready_pods(OPCTL) if p["metadata"]["name"] not in old],
             "a new ready operator-controller Pod", timeout=WAIT)
    finally:
        cluster.kubectl("patch", "clusterrole", "olmv1-demo-installer", "--type=json", "-p",
                        json.dumps([{"op": "replace", "path": "/rules", "value": rules}]))
    wait_running_version(cluster, "1.0.0")
    cluster.kubectl("delete", "clusterextension", "demo", "--timeout=180s")


# ---------------------------------------------------------------- the node's life cycle


def _node_traces(env):
    """What of a real node exists on the host: its veth, chains, cgroup dirs, processes."""
    traces = []
    if subprocess.run(["ip", "link", "show", env["OLMV1_NODE_HOST_IF"]], capture_output=True).returncode == 0:
        traces.append("link " + env["OLMV1_NODE_HOST_IF"])
    for table in ("nat", "filter"):
        if subprocess.run(["iptables", "-w", "-t", table, "-S", env["OLMV1_NODE_CHAIN"]],
                          capture_output=True).returncode == 0:
            traces.append(f"chain {table}/{env['OLMV1_NODE_CHAIN']}")
    for d in Path("/sys/fs/cgroup").glob(f"*/{env['OLMV1_NODE_CGROUP']}"):
        traces.append(f"cgroup {d}")
    if Path("/sys/fs/cgroup", env["OLMV1_NODE_CGROUP"]).exists():
        traces.append("cgroup v2 " + env["OLMV1_NODE_CGROUP"])
    mounts = Path("/proc/self/mountinfo").read_text()
    if env["OLMV1_NODE_DIR"] in mounts:
        traces.append("mounts under " + env["OLMV1_NODE_DIR"])
    return traces


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_up_after_kill_9_of_everything_and_down_leaves_nothing(cluster, tmp_path):
    """A second real-node cluster (beside the module's, with its own number): kill -9 of every
    process of it, including containers, then up.sh starts it afresh; down.sh leaves no veth,
    chain, cgroup, mount or process behind."""
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "OLMV1_REGISTRY")}
    env["OLMV1_NODE"] = "real"
    up = ["bash", str(REPO / "e2e" / "cluster" / "up.sh"), "--state-dir", str(state)]
    down = ["bash", str(REPO / "e2e" / "cluster" / "down.sh"), "--state-dir", str(state)]
    try:
        proc = subprocess.run(up, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        first = _env_file(state / "env")
        assert first["OLMV1_NODE_INDEX"] != cluster.env["OLMV1_NODE_INDEX"]
        second = Cluster(state)
        second.kubectl("run", "p", "--image", first["OLMV1_PAUSE_IMAGE"], "--restart=Never")
        second.kubectl("wait", "--for=condition=Ready", "--timeout=120s", "pod/p")
        procs = [Path(p).read_text().split() for p in
                 Path("/sys/fs/cgroup").glob(f"*/{first['OLMV1_NODE_CGROUP']}/**/cgroup.procs")]
        pids = {int(p) for ps in procs for p in ps}
        pids |= {int(v) for k, v in first.items() if k.endswith("_PID")}
        assert len(pids) > 8, pids  # control plane, node daemons, shim, pause containers
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        proc = subprocess.run(up, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "stale state" in proc.stderr
        again = Cluster(state)
        assert again.env["OLMV1_NODE_INDEX"] == first["OLMV1_NODE_INDEX"]
        again.kubectl("run", "p", "--image", again.env["OLMV1_PAUSE_IMAGE"], "--restart=Never")
        again.kubectl("wait", "--for=condition=Ready", "--timeout=120s", "pod/p")
    finally:
        assert subprocess.run(down, env=env, capture_output=True, timeout=300).returncode == 0
    assert _node_traces(first) == []
    left = [p for p in pids if str(state) in _cmdline(p)]
    assert not left, f"processes still there: {left}"
    # The module's own node is untouched.
    assert cluster.kubectl("get", "node", cluster.env["OLMV1_NODE_NAME"]).returncode == 0
    assert "link " + cluster.env["OLMV1_NODE_HOST_IF"] in _node_traces(cluster.env)
