"""ClusterObjectSets under the least-privilege config/rbac (issue 25): operator-controller may not
list+watch ConfigMaps cluster-wide, so its own watch of them is refused; the type is then watched
with the credential of the revision's ServiceAccount (annotations
olm.operatorframework.io/service-account-name/-namespace), which a ClusterRoleBinding lets list and
watch them.  A ConfigMap deleted by hand from a rolled-out revision comes back from that watch's
event: --drift-repair-interval is 1h (the resync of a watched revision), and the test waits out the
30 s re-apply that a pass made before the watch had listed may have queued before it deletes.
An installer bound by a RoleBinding in its namespace only is refused cluster-wide too: its
revisions' ConfigMaps are then watched in that namespace with its credential.
"""

import time

import pytest

import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import wait_for
from test_clusterobjectset import apply_cos, configmap, wait_cond

SELECTOR = "labelSelector=app.kubernetes.io/managed-by=olm.operatorframework.io"


@pytest.fixture
def ctl(crds, tmp_path_factory):
    """Each test its own operator-controller: what one test's watches learned (a type watched as
    a ServiceAccount cluster-wide) would hide what the next one tests."""
    with olmv1_e2e.controller_env(tmp_path_factory.mktemp("cos-watch-as"), drift_repair_interval="1h",
                                  extra=["--feature-gates=BoxcutterRuntime=true"]) as c:
        yield c


@pytest.fixture
def installer():
    """A namespace with ServiceAccount "installer", bound cluster-wide to a ClusterRole that may
    manage and watch ConfigMaps."""
    ns = unique("cos-as")
    role = f"cos-cm-{ns}"
    kubectl("create", "namespace", ns)
    kubectl("create", "serviceaccount", "installer", "-n", ns)
    kubectl("create", "clusterrole", role, "--verb=get,list,watch,create,update,patch,delete",
            "--resource=configmaps")
    kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}", f"--serviceaccount={ns}:installer")
    yield ns
    kubectl("delete", "clusterrolebinding", role, "--ignore-not-found", check=False)
    kubectl("delete", "clusterrole", role, "--ignore-not-found", check=False)
    kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found", check=False)


@pytest.fixture
def ns_installer():
    """A namespace with ServiceAccount "installer" that may manage and watch ConfigMaps in that
    namespace only (a Role and a RoleBinding)."""
    ns = unique("cos-in")
    kubectl("create", "namespace", ns)
    kubectl("create", "serviceaccount", "installer", "-n", ns)
    kubectl("create", "role", "cm", "-n", ns, "--verb=get,list,watch,create,update,patch,delete",
            "--resource=configmaps")
    kubectl("create", "rolebinding", "cm", "-n", ns, "--role=cm", f"--serviceaccount={ns}:installer")
    yield ns
    kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found", check=False)


def test_type_refused_to_operator_controller_is_watched_as_the_service_account(ctl, installer):
    ns = installer
    line = f"watching /api/v1/configmaps?{SELECTOR} as ServiceAccount {ns}/installer (listed)"
    deleted_configmap_comes_back(ctl, ns, line)
    assert f"ServiceAccount {ns}/installer may not list+watch" not in ctl.log_text()


def test_type_refused_cluster_wide_is_watched_in_the_installers_namespace(ctl, ns_installer):
    ns = ns_installer
    line = f"watching /api/v1/namespaces/{ns}/configmaps?{SELECTOR} as ServiceAccount {ns}/installer (listed)"
    deleted_configmap_comes_back(ctl, ns, line)
    assert f"ServiceAccount {ns}/installer may not list+watch /api/v1/configmaps either" in ctl.log_text()
    assert f"may not list+watch /api/v1/namespaces/{ns}/configmaps" not in ctl.log_text()


def deleted_configmap_comes_back(ctl, ns, watch_line):
    """A revision acting as ns/installer applies ConfigMap "kept"; once `watch_line` is logged (its
    watch has listed) and any polling pass queued before has run, the ConfigMap deleted by hand
    comes back within 20 s: only the watch's event can bring that pass (the resync is 1h)."""
    name = unique("cos-as")
    try:
        apply_cos([], name, [{"name": "resources", "objects": [{"object": configmap(ns, "kept", {"k": "v"})}]}],
                  annotations={"olm.operatorframework.io/service-account-name": "installer",
                               "olm.operatorframework.io/service-account-namespace": ns})
        wait_cond(ctl, name, "Progressing", "True", "Succeeded")
        # operator-controller's own watch is refused; one as the revision's ServiceAccount is not.
        wait_for(lambda: "may not list+watch /api/v1/configmaps" in ctl.log_text(),
                 "operator-controller's own ConfigMap watch to be refused", ctl)
        wait_for(lambda: watch_line in ctl.log_text(), "the ConfigMap watch as the revision's ServiceAccount", ctl)
        # A pass made before the watch had listed polled: it queued the set again within 30 s.
        # Past that, only the watch's event (or the 1h resync) brings a pass.
        time.sleep(31)

        uid = kubectl_json("get", "configmap", "kept", "-n", ns)["metadata"]["uid"]
        kubectl("delete", "configmap", "kept", "-n", ns)
        def recreated():
            out = kubectl("get", "configmap", "kept", "-n", ns, "--ignore-not-found", "-o",
                          "jsonpath={.metadata.uid}").stdout.strip()
            return out if out and out != uid else None

        wait_for(recreated, "the ConfigMap to be re-created by the watch's event", ctl, timeout=20)
    finally:
        kubectl("delete", "clusterobjectset", name, "--ignore-not-found", "--wait=false", check=False)
