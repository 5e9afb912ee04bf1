"""ClusterExtensions written for upstream OLM v1, which have no spec.serviceAccount (deprecated and
ignored upstream): their bundle is applied with operator-controller's own identity, as upstream
does.  Our install is least-privilege, so that needs the opt-in config/rbac-upstream-rights; without
it the extension says which permission is missing and how to opt in.  Upstream's suite deletes an
extension together with its namespace: the uninstall must still finish."""

import base64
import gzip
import json
import time

import pytest
import yaml

import olmv1_e2e
from conftest import REPO, kubectl, kubectl_json, unique
from olmv1_e2e import OWNER_LABEL, WAIT, conditions, ns, wait_for  # noqa: F401  (ns: a fixture)

VERSIONS = ("1.0.0",)
LABEL = "e2e-upstream-ce"
OPT_IN = REPO / "config" / "rbac-upstream-rights" / "cluster-admin.yaml"


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("upstream-ce"), LABEL) as env:
        pkg = unique("upk")
        images = olmv1_e2e.push_bundles(env, pkg, VERSIONS)
        ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS, "latest")
        env.update(pkg=pkg, images=images, catalog=olmv1_e2e.create_catalog(env, pkg, ref))
        yield env


def opt_in(system_ns):
    """config/rbac-upstream-rights, for this module's system namespace (and a name of its own)."""
    binding = yaml.safe_load(OPT_IN.read_text())
    binding["metadata"]["name"] = f"{system_ns}-upstream-rights"
    binding["subjects"][0]["namespace"] = system_ns
    kubectl("apply", "-f", "-", input=binding)
    return binding["metadata"]["name"]


def helm_release(system_ns, ce_name):
    """What upstream's e2e suite reads to learn what an extension installed (steps.go
    listHelmReleaseResources): the one deployed index Secret, gunzip of its chunk, the objects
    of the release's manifest."""
    items = kubectl_json("get", "secrets", "-n", system_ns, "-l", f"name={ce_name},status=deployed",
                         "--field-selector", "type=operatorframework.io/index.v1")["items"]
    assert len(items) == 1, [i["metadata"]["name"] for i in items]
    rel = json.loads(gzip.decompress(base64.b64decode(items[0]["data"]["chunk"])))
    # One object's JSON a line, as upstream's post-renderer writes it (its suite reads it with
    # the apimachinery stream decoder, which takes JSON values back to back).
    objects = [json.loads(line) for line in rel["manifest"].splitlines() if line.strip()]
    return items[0], rel, objects


def owned_cluster_objects(ce_name):
    return kubectl("get", "clusterroles,clusterrolebindings", "-l", f"{OWNER_LABEL}={ce_name}",
                   "-o", "name").stdout.split()


def test_without_service_account(world, name):
    pkg, system_ns = world["pkg"], world["system_ns"]
    ns = name[:50]
    kubectl("create", "namespace", ns)  # no ServiceAccount in it
    binding = None
    try:
        olmv1_e2e.apply_ce(world, pkg, name, ns, service_account=None)
        assert "serviceAccount" not in kubectl_json("get", "clusterextension", name)["spec"]

        # Least privilege by default: the refusal names operator-controller and the way out.
        c = olmv1_e2e.wait_progressing(world, name, "True", "Retrying", "config/rbac-upstream-rights")
        msg = c["Progressing"]["message"]
        assert " is forbidden: " in msg, msg
        assert f"system:serviceaccount:{system_ns}:operator-controller-controller-manager" in msg, msg
        assert "spec.serviceAccount is not set" in msg, msg
        assert c["Installed"]["status"] == "False", c["Installed"]

        # Opted in: installed with operator-controller's own identity.
        binding = opt_in(system_ns)
        olmv1_e2e.wait_installed(world, name, f"{pkg}.v1.0.0", "1.0.0")
        assert olmv1_e2e.configmap_version(pkg, ns) == "1.0.0"
        owned = owned_cluster_objects(name)
        assert owned, "the bundle's cluster-scoped RBAC was not installed"

        # The Helm release upstream's tools and e2e suite read: the installed objects, all there.
        secret, rel, objects = helm_release(system_ns, name)
        assert rel["name"] == name and rel["namespace"] == ns and rel["info"]["status"] == "deployed", rel["info"]
        assert secret["metadata"]["labels"]["olm.operatorframework.io/bundle-name"] == f"{pkg}.v1.0.0"
        assert secret["metadata"]["ownerReferences"][0]["kind"] == "ClusterExtension"
        kinds = sorted(o["kind"] for o in objects)
        assert "Deployment" in kinds and "ConfigMap" in kinds and "ClusterRole" in kinds, kinds
        for o in objects:
            md = o["metadata"]
            where = ["-n", md["namespace"]] if md.get("namespace") else []
            kubectl("get", o["kind"], md["name"], *where, "-o", "name")

        # A removed object comes back (the periodic repair, 2 s here, covers it without a token
        # of an installer to watch with).
        kubectl("delete", "configmap", f"{pkg}-config", "-n", ns)
        wait_for(lambda: olmv1_e2e.configmap_version(pkg, ns) == "1.0.0", "the ConfigMap back", world["ctl"])

        # Upstream's suite deletes the extension and its namespace at once.
        kubectl("delete", "clusterextension", name, "--wait=false")
        kubectl("delete", "namespace", ns, "--wait=false")
        kubectl("wait", "--for=delete", f"clusterextension/{name}", f"--timeout={WAIT}s")
        assert owned_cluster_objects(name) == []
        rec = kubectl("get", "secret", "-n", system_ns, f"{olmv1_e2e.RECORD_PREFIX}{name}", "--ignore-not-found",
                      "-o", "name").stdout.strip()
        assert rec == "", rec
        assert kubectl_json("get", "secrets", "-n", system_ns, "-l", f"name={name}")["items"] == []
    finally:
        kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=false", check=False)
        kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false", check=False)
        if binding:
            kubectl("delete", "clusterrolebinding", binding, "--ignore-not-found", check=False)


def test_release_of_a_first_install_is_owned_by_the_extension(world, ns):
    """A first reconcile adds our finalizer (a new copy of the object) and installs at once: the
    Helm release must still name the extension's uid (a stale one would let the garbage collector
    take the Secret, and upstream's e2e suite then finds no release)."""
    pkg, system_ns = world["pkg"], world["system_ns"]
    name = unique("rel")  # the release's Secret name is a label too: at most 63 characters
    olmv1_e2e.apply_ce(world, pkg, name, ns)  # ServiceAccount "installer" of the `ns` fixture
    olmv1_e2e.wait_installed(world, name, f"{pkg}.v1.0.0", "1.0.0")
    uid = kubectl_json("get", "clusterextension", name)["metadata"]["uid"]
    secret, rel, _ = helm_release(system_ns, name)
    assert secret["metadata"]["ownerReferences"][0]["uid"] == uid
    assert rel["info"]["status"] == "deployed"
    time.sleep(3)  # the garbage collector would have taken a Secret whose owner is not there
    secret, _, _ = helm_release(system_ns, name)
    olmv1_e2e.delete_ce(name)
    assert kubectl_json("get", "secrets", "-n", system_ns, "-l", f"name={name}")["items"] == []


def test_ignore_service_account(world):
    """--ignore-service-account (upstream mode): a named ServiceAccount means nothing, as upstream
    (one that does not even exist: upstream's suite names "some-sa"); the bundle is applied with
    the controller's own identity, which then has upstream's rights."""
    pkg, system_ns, ctl = world["pkg"], world["system_ns"], world["ctl"]
    ns, name = unique("ign"), unique("ign")
    kubectl("create", "namespace", ns)
    binding = opt_in(system_ns)
    ctl.stop()
    ctl.extra.append("--ignore-service-account")
    try:
        ctl.start()
        olmv1_e2e.apply_ce(world, pkg, name, ns, service_account="some-sa")
        olmv1_e2e.wait_installed(world, name, f"{pkg}.v1.0.0", "1.0.0")
        assert olmv1_e2e.configmap_version(pkg, ns) == "1.0.0"
        olmv1_e2e.delete_ce(name)
    finally:
        kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=false", check=False)
        ctl.stop()
        ctl.extra.remove("--ignore-service-account")
        ctl.start()
        kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false", check=False)
        kubectl("delete", "clusterrolebinding", binding, "--ignore-not-found", check=False)
