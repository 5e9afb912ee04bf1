"""Upstream OLM v1's own install manifest with our images (issue 28 item 2), on a real node.

../shared/upstream/manifests/standard.yaml is applied as upstream ships it, with only what an
offline cluster without cert-manager needs changed:
  * the two image references are ours (`make images`);
  * cert-manager's Issuers and Certificates are left out, and the Secrets they would create
    (catalogd-service-cert-git-version, operator-controller-cert) are made with scripts/certs.sh's
    openssl CA, as `make certs` does; the CA goes into the mutating webhook's caBundle, as
    cert-manager's cainjector would put it;
  * the Deployments get OLMV1_INSECURE_REGISTRIES for the node's plain-HTTP registry (what
    scripts/deploy.sh does for our own install file);
  * the real node is labelled as a control-plane node, where upstream's nodeSelector puts both
    daemons (kind's single node is one).
Everything else is upstream's: the commands (`./catalogd`, `/operator-controller`), every
argument (feature gates, TLS, metrics, --pull-cas-dir), probes on :8081, the Services, RBAC
(cluster-admin for operator-controller), NetworkPolicies, and the ClusterCatalog webhook with
failurePolicy Fail.  Then both Deployments become Available, a ClusterCatalog is admitted
through catalogd's webhook and served, and a ClusterExtension written for upstream (no
serviceAccount) installs and uninstalls.  Skipped in one line without the manifest or a real node.
"""

import base64
import os
import subprocess

import pytest
import yaml

from conftest import REPO
from olmv1_e2e import poll
from test_real_node import OLMV1, real_node_cluster

MANIFEST = REPO.parent / "shared" / "upstream" / "manifests" / "standard.yaml"
NS = "olmv1-system"
NAME_LABEL = "olm.operatorframework.io/metadata.name"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not MANIFEST.exists():
        pytest.skip(f"upstream's install manifest is not at {MANIFEST}")
    yield from real_node_cluster(tmp_path_factory, "upstream-manifests")


def upstream_install(cluster, work):
    """upstream's standard.yaml as described above; returns the objects applied."""
    reg, node_reg = cluster.env["OLMV1_REGISTRY"], cluster.env["OLMV1_NODE_REGISTRY"]
    env = dict(os.environ, KUBECONFIG=cluster.kubeconfig, IMAGE_REGISTRY=reg, VERSION="e2e",
               OLMV1_DIST_DIR=str(work / "dist"), OLMV1_IMAGES_WORK=str(work / "roots"))
    proc = subprocess.run(["bash", str(REPO / "scripts" / "images.sh")], env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    refs = dict(line.split("=", 1) for line in (work / "dist" / "images.env").read_text().split())
    image = {name: ref.replace(reg, node_reg, 1) for name, ref in
             (("catalogd", refs["CATALOGD_IMAGE"]), ("operator-controller", refs["OPERATOR_CONTROLLER_IMAGE"]))}
    certs = work / "certs"
    proc = subprocess.run(["bash", str(REPO / "scripts" / "certs.sh"), "--files-only"],
                          env=dict(os.environ, OLMV1_CERTS_DIR=str(certs)), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    ca = (certs / "ca.crt").read_bytes()
    docs = []
    for d in yaml.safe_load_all(MANIFEST.read_text()):
        if not d or d["kind"] in ("Certificate", "Issuer", "ClusterIssuer"):
            continue
        if d["kind"] == "Deployment":
            c = d["spec"]["template"]["spec"]["containers"][0]
            daemon = "catalogd" if "catalogd" in d["metadata"]["name"] else "operator-controller"
            c["image"] = image[daemon]
            c.setdefault("env", []).append({"name": "OLMV1_INSECURE_REGISTRIES", "value": node_reg})
        if d["kind"] == "MutatingWebhookConfiguration":
            for w in d["webhooks"]:
                w["clientConfig"]["caBundle"] = base64.b64encode(ca).decode()
        docs.append(d)
    secrets = []
    for secret, files in (("catalogd-service-cert-git-version", "catalogd-service-cert"),
                          ("operator-controller-cert", "operator-controller-cert")):
        secrets.append({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                        "metadata": {"name": secret, "namespace": NS},
                        "data": {"tls.crt": base64.b64encode((certs / f"{files}.crt").read_bytes()).decode(),
                                 "tls.key": base64.b64encode((certs / f"{files}.key").read_bytes()).decode(),
                                 "ca.crt": base64.b64encode(ca).decode()}})
    # Upstream schedules both daemons on control-plane nodes (nodeSelector), as on kind; the
    # real node plays that part here.
    cluster.kubectl("label", "--overwrite", "node", cluster.env["OLMV1_NODE_NAME"], "node-role.kubernetes.io/control-plane=")
    namespace = [d for d in docs if d["kind"] == "Namespace"]
    cluster.kubectl("apply", "--server-side", "-f", "-", input={"apiVersion": "v1", "kind": "List", "items": namespace})
    cluster.kubectl("apply", "--server-side", "-f", "-", input={"apiVersion": "v1", "kind": "List", "items": secrets})
    crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    cluster.kubectl("apply", "--server-side", "-f", "-", input={"apiVersion": "v1", "kind": "List", "items": crds})
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
    rest = [d for d in docs if d["kind"] not in ("Namespace", "CustomResourceDefinition")]
    cluster.kubectl("apply", "--server-side", "-f", "-", input={"apiVersion": "v1", "kind": "List", "items": rest})
    return docs


def test_upstream_manifest_runs_our_images(cluster, tmp_path):
    docs = upstream_install(cluster, tmp_path)
    for d in docs:
        if d["kind"] == "Deployment":
            proc = cluster.kubectl("-n", NS, "wait", "--for=condition=Available", "--timeout=300s",
                                   f"deployment/{d['metadata']['name']}", check=False, timeout=330)
            assert proc.returncode == 0, cluster.kubectl("-n", NS, "describe", "pods", check=False).stdout[-4000:]
            c = d["spec"]["template"]["spec"]["containers"][0]
            daemon = "catalogd" if "catalogd" in d["metadata"]["name"] else "operator-controller"
            pods = cluster.json("-n", NS, "get", "pods", "-l", f"app.kubernetes.io/name={daemon}")
            assert pods["items"]
            for p in pods["items"]:
                got = p["spec"]["containers"][0]
                assert got["command"] == c["command"] and got["args"] == c["args"]  # upstream's, unchanged

    # The demo package, a catalog admitted through catalogd's webhook (failurePolicy Fail).
    reg = cluster.env["OLMV1_NODE_REGISTRY"]
    proc = subprocess.run(["python3", str(REPO / "scripts" / "demo-package.py"), "--olmv1", OLMV1, "--registry", reg,
                           "--out", str(tmp_path / "demo")], env=dict(os.environ, OLMV1_INSECURE_REGISTRIES=reg),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = cluster.kubectl("create", "-o", "json", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog", "metadata": {"name": "demo"},
        "spec": {"source": {"type": "Image", "image": {"ref": f"{reg}/olmv1/demo-operators:latest"}}}}).stdout
    created = yaml.safe_load(out)
    assert created["metadata"]["labels"][NAME_LABEL] == "demo"  # set at admission by the webhook
    cluster.kubectl("wait", "--for=condition=Serving", "--timeout=180s", "clustercatalog/demo")

    # A ClusterExtension as upstream's users write it.
    cluster.kubectl("create", "namespace", "demo-ns")
    cluster.kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension", "metadata": {"name": "demo"},
        "spec": {"namespace": "demo-ns", "source": {"sourceType": "Catalog",
                                                    "catalog": {"packageName": "olmv1-demo-operator"}}}})
    proc = cluster.kubectl("wait", "--for=condition=Installed", "--timeout=240s", "clusterextension/demo",
                           check=False, timeout=260)
    assert proc.returncode == 0, cluster.json("get", "clusterextension", "demo").get("status")
    assert cluster.json("get", "clusterextension", "demo")["status"]["install"]["bundle"]["version"] == "1.0.0"
    releases = cluster.json("-n", NS, "get", "secrets", "-l", "name=demo,status=deployed")["items"]
    assert len(releases) == 1 and releases[0]["type"] == "operatorframework.io/index.v1"
    cluster.kubectl("delete", "clusterextension", "demo", "--timeout=120s")
    poll(lambda: cluster.kubectl("-n", "demo-ns", "get", "configmap", "olmv1-demo-operator-config",
                                 "--ignore-not-found", "-o", "name").stdout.strip() == "",
         "the extension's objects to be gone")
