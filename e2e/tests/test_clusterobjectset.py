"""ClusterObjectSets on a real apiserver (issue 26, items 1-2): operator-controller started with
--feature-gates=BoxcutterRuntime=true reconciles them as upstream df2c201 does.

operator-controller runs as its own ServiceAccount (config/rbac) bound to cluster-admin, as
upstream's (config/rbac-upstream-rights), except in the test of the ServiceAccount annotations;
--progress-deadline-minute-seconds 1 makes the CRD's smallest deadline (10 minutes) 10 seconds.
The cluster runs kube-controller-manager (PersistentVolume binding, garbage collection) on kwok
nodes, so no Pod runs: PVC binding is the status that turns a probe from failing to passing.
"""

import base64
import gzip
import json

import pytest

import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import wait_for

GROUP_KIND_PVC = {"type": "GroupKind", "groupKind": {"group": "", "kind": "PersistentVolumeClaim"}}


@pytest.fixture(scope="module")
def ctl(crds, tmp_path_factory):
    with olmv1_e2e.controller_env(tmp_path_factory.mktemp("cos"), cluster_admin=True,
                                  extra=["--feature-gates=BoxcutterRuntime=true",
                                         "--progress-deadline-minute-seconds", "1"]) as c:
        yield c


@pytest.fixture
def ns():
    n = unique("cos")
    kubectl("create", "namespace", n)
    yield n
    kubectl("delete", "namespace", n, "--wait=false", "--ignore-not-found", check=False)


@pytest.fixture
def cos_names():
    names = []
    yield names
    for n in names:
        # Archive first so that nothing is left behind, then delete (the finalizer goes on delete).
        kubectl("delete", "clusterobjectset", n, "--ignore-not-found", "--wait=false", check=False)


def configmap(ns, name, data=None, labels=None):
    md = {"name": name, "namespace": ns}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data or {"k": "v"}}


def pvc(ns, pv):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "test-pvc", "namespace": ns},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": pv,
                     "resources": {"requests": {"storage": "1Mi"}}}}


def pv(ns, name):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Mi"},
                     "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "test-pvc",
                                  "namespace": ns},
                     "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "", "volumeMode": "Filesystem",
                     "local": {"path": "/tmp/persistent-volume"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["no-such-node"]}]}]}}}}


def apply_cos(names, name, phases, probes=None, extra_spec=None, annotations=None, labels=None):
    spec = {"lifecycleState": "Active", "collisionProtection": "Prevent", "revision": 1, "phases": phases}
    if probes:
        spec["progressionProbes"] = probes
    spec.update(extra_spec or {})
    md = {"name": name}
    if annotations:
        md["annotations"] = annotations
    if labels:
        md["labels"] = labels
    names.append(name)
    kubectl("apply", "-f", "-", input={"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterObjectSet",
                                       "metadata": md, "spec": spec})


def cond(name, type_):
    obj = kubectl_json("get", "clusterobjectset", name)
    return {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}.get(type_, {})


def wait_cond(ctl, name, type_, status, reason, message=None, contains=None):
    def check():
        c = cond(name, type_)
        if c.get("status") != status or c.get("reason") != reason:
            return None
        if message is not None and c.get("message") != message:
            return None
        if contains is not None and contains not in c.get("message", ""):
            return None
        return c
    return wait_for(check, f"{name} {type_}={status}/{reason} {message or contains or ''}", ctl)


def exists(kind, name, ns=None):
    args = ["get", kind, name] + (["-n", ns] if ns else []) + ["--ignore-not-found", "-o", "name"]
    return bool(kubectl(*args).stdout.strip())


def test_pvc_probe_gates_the_next_phase_until_bound(ctl, ns, cos_names):
    name = unique("cos-pvc")
    pv_name = f"{name}-pv"
    probes = [{"selector": GROUP_KIND_PVC,
               "assertions": [{"type": "FieldValue", "fieldValue": {"fieldPath": "status.phase", "value": "Bound"}}]}]
    apply_cos(cos_names, name, [{"name": "pvc", "objects": [{"object": pvc(ns, pv_name)}]},
                                {"name": "configmap", "objects": [{"object": configmap(ns, "test-configmap")}]}],
              probes)
    wait_cond(ctl, name, "Available", "False", "ProbeFailure",
              f'Object PersistentVolumeClaim.v1 {ns}/test-pvc: value at key "status.phase" != "Bound"; '
              'expected: "Bound" got: "Pending"')
    assert cond(name, "Progressing")["reason"] == "RollingOut"
    assert not exists("configmap", "test-configmap", ns)
    live = kubectl_json("get", "pvc", "test-pvc", "-n", ns, "--show-managed-fields")
    refs = live["metadata"]["ownerReferences"]
    assert [(r["kind"], r["name"], r.get("controller")) for r in refs] == [("ClusterObjectSet", name, True)]
    assert live["metadata"]["annotations"]["olm.operatorframework.io/revision"] == "1"
    assert live["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "olm.operatorframework.io"
    managers = {m["manager"] for m in live["metadata"]["managedFields"]}
    assert "olm.operatorframework.io" in managers, managers

    # The PersistentVolume the claim names appears: kube-controller-manager binds it, the probe
    # passes on a later pass, and the next phase rolls out.
    kubectl("apply", "-f", "-", input=pv(ns, pv_name))
    try:
        wait_cond(ctl, name, "Progressing", "True", "Succeeded", "Revision  has rolled out.")
        wait_cond(ctl, name, "Available", "True", "ProbesSucceeded", "Objects are available and pass all probes.")
        wait_cond(ctl, name, "Succeeded", "True", "Succeeded", "Revision succeeded rolling out.")
        assert exists("configmap", "test-configmap", ns)
        obj = kubectl_json("get", "clusterobjectset", name)
        assert "olm.operatorframework.io/teardown" in obj["metadata"]["finalizers"]
        assert [p["name"] for p in obj["status"]["observedPhases"]] == ["pvc", "configmap"]
        assert all(p["digest"].startswith("sha256:") for p in obj["status"]["observedPhases"])
    finally:
        kubectl("delete", "pv", pv_name, "--wait=false", "--ignore-not-found", check=False)


def test_user_probes_label_selector_and_fields_equal(ctl, ns, cos_names):
    """A Label selector with matchExpressions and FieldsEqual: the first phase fails its probe
    (upstream's message), so the second is never applied."""
    name = unique("cos-probes")
    probes = [{"selector": {"type": "Label", "label": {"matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["probed"]}]}},
        "assertions": [{"type": "FieldsEqual", "fieldsEqual": {"fieldA": "data.a", "fieldB": "data.b"}}]}]
    apply_cos(cos_names, name, [
        {"name": "one", "objects": [{"object": configmap(ns, "cm-1", {"a": "x", "b": "y"}, {"tier": "probed"})}]},
        {"name": "two", "objects": [{"object": configmap(ns, "cm-2")}]}], probes)
    wait_cond(ctl, name, "Available", "False", "ProbeFailure",
              f'Object ConfigMap.v1 {ns}/cm-1: "data.a" != "data.b" expected: "x" got: "y"')
    assert not exists("configmap", "cm-2", ns)


def secret(ns, name, objs, immutable=True, gz=False):
    data = {}
    for k, o in objs.items():
        raw = json.dumps(o).encode()
        data[k] = base64.b64encode(gzip.compress(raw) if gz else raw).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "olm.operatorframework.io/object-data",
            "metadata": {"name": name, "namespace": ns}, "immutable": immutable, "data": data}


def test_secret_refs_immutability_and_digest(ctl, ns, cos_names):
    mutable = unique("cos-mut")
    kubectl("apply", "-f", "-", input=secret(ns, "mutable", {"cm": configmap(ns, "cm-mut")}, immutable=False))
    apply_cos(cos_names, mutable, [{"name": "resources", "objects": [
        {"ref": {"name": "mutable", "namespace": ns, "key": "cm"}}]}])
    wait_cond(ctl, mutable, "Progressing", "False", "Blocked",
              "the following secrets are not immutable (referenced secrets must have immutable set to true): "
              f"{ns}/mutable")
    assert not exists("configmap", "cm-mut", ns)

    name = unique("cos-ref")
    kubectl("apply", "-f", "-", input=secret(ns, "objs", {"cm": configmap(ns, "cm-ref", {"v": "1"})}, gz=True))
    apply_cos(cos_names, name, [{"name": "resources", "objects": [
        {"ref": {"name": "objs", "namespace": ns, "key": "cm"}}]}])
    wait_cond(ctl, name, "Progressing", "True", "Succeeded")
    assert kubectl_json("get", "configmap", "cm-ref", "-n", ns)["data"] == {"v": "1"}
    digest = kubectl_json("get", "clusterobjectset", name)["status"]["observedPhases"][0]["digest"]

    # The Secret deleted and recreated with other content: Blocked, nothing applied.
    kubectl("delete", "secret", "objs", "-n", ns)
    kubectl("apply", "-f", "-", input=secret(ns, "objs", {"cm": configmap(ns, "cm-ref", {"v": "2"})}))
    kubectl("annotate", "clusterobjectset", name, "--overwrite", "e2e-trigger=1")
    wait_cond(ctl, name, "Progressing", "False", "Blocked",
              contains=f'resolved content of 1 phase(s) has changed: phase "resources" (expected digest {digest}, got')
    assert kubectl_json("get", "configmap", "cm-ref", "-n", ns)["data"] == {"v": "1"}
    # Back to the original content (plain this time, same object): Succeeded again.
    kubectl("delete", "secret", "objs", "-n", ns)
    kubectl("apply", "-f", "-", input=secret(ns, "objs", {"cm": configmap(ns, "cm-ref", {"v": "1"})}))
    kubectl("annotate", "clusterobjectset", name, "--overwrite", "e2e-trigger=2")
    wait_cond(ctl, name, "Progressing", "True", "Succeeded")


def test_archive_tears_down_after_deadline(ctl, ns, cos_names):
    name = unique("cos-arch")
    probes = [{"selector": GROUP_KIND_PVC,
               "assertions": [{"type": "FieldValue", "fieldValue": {"fieldPath": "status.phase", "value": "Bound"}}]}]
    apply_cos(cos_names, name, [{"name": "resources", "objects": [
        {"object": configmap(ns, "test-configmap")}, {"object": pvc(ns, f"{name}-never")}]}], probes,
        extra_spec={"progressDeadlineMinutes": 10})
    wait_cond(ctl, name, "Progressing", "False", "ProgressDeadlineExceeded",
              contains="Revision has not rolled out for 10 minute(s). Last status: ")
    assert exists("configmap", "test-configmap", ns)
    kubectl("patch", "clusterobjectset", name, "--type=merge", "-p", '{"spec":{"lifecycleState":"Archived"}}')
    wait_cond(ctl, name, "Progressing", "False", "Archived", "revision is archived")
    wait_cond(ctl, name, "Available", "Unknown", "Archived", "revision is archived")
    wait_for(lambda: not exists("configmap", "test-configmap", ns), "the ConfigMap to be deleted", ctl)
    wait_for(lambda: not exists("pvc", "test-pvc", ns), "the PVC to be deleted", ctl)
    wait_for(lambda: "olm.operatorframework.io/teardown" not in
             kubectl_json("get", "clusterobjectset", name)["metadata"].get("finalizers", []),
             "the teardown finalizer to go", ctl)


def test_collision_prevent_between_two_sets(ctl, ns, cos_names):
    first, second = unique("cos-a"), unique("cos-b")
    phases = [{"name": "resources", "objects": [{"object": configmap(ns, "shared", {"owner": "first"})}]}]
    apply_cos(cos_names, first, phases)
    wait_cond(ctl, first, "Progressing", "True", "Succeeded")
    phases2 = [{"name": "resources", "objects": [{"object": configmap(ns, "shared", {"owner": "second"})}]}]
    apply_cos(cos_names, second, phases2)
    c = wait_cond(ctl, second, "Progressing", "True", "Retrying", contains="revision object collisions in phase 0")
    assert f"Object ConfigMap.v1 {ns}/shared" in c["message"], c["message"]
    assert first in c["message"], c["message"]  # the conflicting owner is named
    live = kubectl_json("get", "configmap", "shared", "-n", ns)
    assert live["data"] == {"owner": "first"}
    assert [r["name"] for r in live["metadata"]["ownerReferences"]] == [first]


def test_service_account_annotations_are_the_identity(ctl, ns, cos_names):
    """With olm.operatorframework.io/service-account-name/-namespace the objects are applied with
    that ServiceAccount's token: one that may not create ConfigMaps makes the set retry, naming
    the ServiceAccount the apiserver refused."""
    kubectl("create", "serviceaccount", "installer", "-n", ns)
    name = unique("cos-sa")
    apply_cos(cos_names, name, [{"name": "resources", "objects": [{"object": configmap(ns, "by-sa")}]}],
              annotations={"olm.operatorframework.io/service-account-name": "installer",
                           "olm.operatorframework.io/service-account-namespace": ns})
    wait_cond(ctl, name, "Progressing", "True", "Retrying", contains=f"system:serviceaccount:{ns}:installer")
    assert not exists("configmap", "by-sa", ns)
    kubectl("create", "role", "cm", "-n", ns, "--verb=get,create,patch,update,list,watch", "--resource=configmaps")
    kubectl("create", "rolebinding", "cm", "-n", ns, "--role=cm", f"--serviceaccount={ns}:installer")
    wait_cond(ctl, name, "Progressing", "True", "Succeeded")
    assert exists("configmap", "by-sa", ns)


def test_deleted_object_is_restored(ctl, ns, cos_names):
    """A rolled-out set keeps its objects: one deleted by hand comes back (the watch of its type
    queues the set; the periodic re-apply would too)."""
    name = unique("cos-drift")
    apply_cos(cos_names, name, [{"name": "resources", "objects": [{"object": configmap(ns, "kept", {"k": "v"})}]}])
    wait_cond(ctl, name, "Progressing", "True", "Succeeded")
    uid = kubectl_json("get", "configmap", "kept", "-n", ns)["metadata"]["uid"]
    kubectl("delete", "configmap", "kept", "-n", ns)
    wait_for(lambda: (lambda o: o["metadata"]["uid"] != uid and o)(kubectl_json("get", "configmap", "kept", "-n", ns)),
             "the ConfigMap to be re-created", ctl)
    assert "may not list+watch" not in ctl.log_text()
    assert "watching /api/v1/configmaps?labelSelector=app.kubernetes.io/managed-by=olm.operatorframework.io" \
        in ctl.log_text()


def test_revision_handover_archives_the_previous(ctl, ns, cos_names):
    """Revision 2 of the same owner (label olm.operatorframework.io/owner-name) takes over the
    objects of revision 1, which it archives once rolled out; revision 1's teardown then leaves
    the objects revision 2 controls and deletes the one revision 2 dropped."""
    owner = unique("ext")
    labels = {"olm.operatorframework.io/owner-name": owner}
    rev1, rev2 = f"{owner}-1", f"{owner}-2"
    apply_cos(cos_names, rev1, [{"name": "resources", "objects": [
        {"object": configmap(ns, "kept", {"rev": "1"})}, {"object": configmap(ns, "dropped")}]}], labels=labels)
    wait_cond(ctl, rev1, "Succeeded", "True", "Succeeded")
    apply_cos(cos_names, rev2, [{"name": "resources", "objects": [{"object": configmap(ns, "kept", {"rev": "2"})}]}],
              labels=labels, extra_spec={"revision": 2})
    wait_cond(ctl, rev2, "Succeeded", "True", "Succeeded")
    wait_cond(ctl, rev1, "Progressing", "False", "Archived", "revision is archived")
    assert kubectl_json("get", "clusterobjectset", rev1)["spec"]["lifecycleState"] == "Archived"
    wait_for(lambda: not exists("configmap", "dropped", ns), "the dropped ConfigMap to be deleted", ctl)
    live = kubectl_json("get", "configmap", "kept", "-n", ns)
    assert live["data"] == {"rev": "2"}
    wait_for(lambda: [(r["name"], r.get("controller")) for r in
                      kubectl_json("get", "configmap", "kept", "-n", ns)["metadata"]["ownerReferences"]]
             == [(rev2, True)], "only revision 2 to own the kept ConfigMap", ctl)
    assert kubectl_json("get", "configmap", "kept", "-n", ns)["metadata"]["annotations"][
        "olm.operatorframework.io/revision"] == "2"
