"""--feature-gates=BoxcutterRuntime=true, the ClusterExtension side (issue 26), with the
ClusterObjectSet controller (controller/objectset) rolling the revisions out.

Every install and upgrade is recorded as a ClusterObjectSet revision "<name>-<n>" with upstream's
labels, annotations and owner reference, its objects in immutable Secrets of type
olm.operatorframework.io/object-data in the system namespace (owned by the revision); the
ClusterExtension controller applies nothing itself: the revision's controller does, as the
extension's ServiceAccount (named on the revision), and the extension's status follows the
revisions (Installed, Progressing, Available mirrored, status.activeRevisions).  A changed
spec.config makes a new revision of the same bundle, which replaces the first (archived);
deletion takes the revisions and their Secrets; switching the gate on over an install made with
it off makes revision 1 of that install without reinstalling anything (upstream's Helm-release
migration), which the next revision then takes over, and switching it off again takes the revisions back into
an install record, again without reinstalling; a 1 MB CRD is stored gzip'd.
"""

import base64
import json
import random
import string
import time

import pytest

import olmv1_e2e
import olmv1_bundles
from conftest import kubectl, kubectl_json, unique  # noqa: F401
from olmv1_e2e import SA_RULES_FULL, ns, wait_for  # noqa: F401
from test_operator_controller import LABEL, VERSIONS

GATE = "--feature-gates=BoxcutterRuntime=true"
OWNER_NAME = "olm.operatorframework.io/owner-name"
PROPERTY = {"type": "olm.test-property", "value": "some-value"}


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    kubectl("wait", "--for=condition=Established", "--timeout=60s",
            "crd/clusterobjectsets.olm.operatorframework.io")
    kubectl("get", "clusterobjectsets")
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("boxcutter"), LABEL, ctl_extra=[GATE]) as env:
        pkg = unique("bxc")
        env["packages"].append(pkg)
        images = {}
        for v in VERSIONS[:2]:
            d = olmv1_bundles.write_bundle(env["work"] / pkg, pkg, v)
            (d / "metadata" / "properties.yaml").write_text(json.dumps({"properties": [PROPERTY]}))
            images[v] = olmv1_e2e.olmv1("bundle", "push", "-q", str(d), f"{env['registry']}/e2e/{pkg}-bundle:v{v}")
        ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS[:2], "latest")
        olmv1_e2e.create_catalog(env, pkg, ref)
        # A second package whose bundle holds a CRD of about 1 MB.
        big = unique("bxcbig")
        d = olmv1_bundles.write_bundle(env["work"] / big, big, "1.0.0")
        (d / "manifests" / "crd.yaml").write_text(json.dumps(large_crd(big)))
        env["packages"].append(big)
        big_image = olmv1_e2e.olmv1("bundle", "push", "-q", str(d), f"{env['registry']}/e2e/{big}-bundle:v1.0.0")
        big_ref = olmv1_e2e.push_catalog(env, big, {"1.0.0": big_image}, ["1.0.0"], "latest")
        olmv1_e2e.create_catalog(env, big, big_ref)
        env.update(pkg=pkg, images=images, big=big)
        yield env


def large_crd(pkg, nprops=250, desc=4000):
    """A CRD of about nprops * desc bytes: one version whose schema has `nprops` string
    properties, each with a description of `desc` random letters (upstream's LargeCRD(250))."""
    rnd = random.Random(7)
    props = {f"field{i:04d}": {"type": "string",
                               "description": "".join(rnd.choice(string.ascii_letters + " ") for _ in range(desc))}
             for i in range(nprops)}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"larges.{pkg}.example.com"},
            "spec": {"group": f"{pkg}.example.com", "scope": "Namespaced",
                     "names": {"plural": "larges", "singular": "large", "kind": "Large", "listKind": "LargeList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": {"type": "object", "properties": props}}}}}]}}


def revision(name, n):
    out = kubectl("get", "clusterobjectset", f"{name}-{n}", "--ignore-not-found", "-o", "json").stdout
    return json.loads(out) if out.strip() else None


def revisions(name):
    items = kubectl_json("get", "clusterobjectsets", "-l", f"{OWNER_NAME}={name}")["items"]
    return sorted(i["metadata"]["name"] for i in items)


def ref_secrets(cos, system_ns):
    names = {o["ref"]["name"] for p in cos["spec"]["phases"] for o in p["objects"]}
    return [kubectl_json("get", "secret", n, "-n", system_ns) for n in sorted(names)]


def test_install_is_a_revision(world, ns, name):
    env = world
    pkg = env["pkg"]
    olmv1_e2e.apply_ce(env, pkg, name, ns, version=VERSIONS[0])
    cos = wait_for(lambda: revision(name, 1), f"ClusterObjectSet {name}-1", env["ctl"])
    ce = kubectl_json("get", "clusterextension", name)
    md = cos["metadata"]
    assert md["labels"]["olm.operatorframework.io/owner-kind"] == "ClusterExtension"
    assert md["labels"][OWNER_NAME] == name
    ann = md["annotations"]
    assert ann["olm.operatorframework.io/bundle-name"] == f"{pkg}.v{VERSIONS[0]}"
    assert ann["olm.operatorframework.io/bundle-version"] == VERSIONS[0]
    assert ann["olm.operatorframework.io/package-name"] == pkg
    assert ann["olm.operatorframework.io/bundle-reference"] == env["images"][VERSIONS[0]]
    # upstream's install.feature "ClusterObjectSet is annotated with bundle properties"
    assert ann["olm.properties"] == '[{"type":"olm.test-property","value":"some-value"}]'

    owner = md["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == \
        ("ClusterExtension", name, ce["metadata"]["uid"], True)
    spec = cos["spec"]
    assert (spec["revision"], spec["lifecycleState"], spec["collisionProtection"]) == (1, "Active", "Prevent")
    phases = [p["name"] for p in spec["phases"]]
    assert phases == sorted(phases, key=["namespaces", "policies", "identity", "configuration", "storage", "crds",
                                         "roles", "bindings", "infrastructure", "deploy", "scaling", "publish",
                                         "admission"].index), phases
    assert "deploy" in phases and "identity" in phases
    # Every object is a reference to an immutable Secret the revision owns.
    assert all("ref" in o and "object" not in o for p in spec["phases"] for o in p["objects"])
    secrets = ref_secrets(cos, env["system_ns"])
    assert secrets
    for s in secrets:
        assert s["type"] == "olm.operatorframework.io/object-data"
        assert s["immutable"] is True
        assert s["metadata"]["labels"] == {"olm.operatorframework.io/revision-name": f"{name}-1",
                                           OWNER_NAME: name}
        so = s["metadata"]["ownerReferences"][0]
        assert (so["kind"], so["name"], so["uid"], so["controller"]) == \
            ("ClusterObjectSet", f"{name}-1", md["uid"], True)
    # The Deployment is in one of them, with the owner labels and the bundle annotations.
    objs = [json.loads(base64.b64decode(v)) for s in secrets for v in s["data"].values()]
    dep = next(o for o in objs if o["kind"] == "Deployment")
    assert dep["metadata"]["labels"][OWNER_NAME] == name
    assert dep["metadata"]["annotations"]["olm.operatorframework.io/bundle-version"] == VERSIONS[0]
    assert "status" not in dep
    # Immutable indeed.
    r = kubectl("patch", "secret", secrets[0]["metadata"]["name"], "-n", env["system_ns"], "--type=merge",
                "-p", '{"data":{"x":"eA=="}}', check=False)
    assert r.returncode != 0
    # The revision rolls out (its controller applies the objects, as the ServiceAccount it names);
    # the extension reports it installed, available, with one active revision.
    assert ann["olm.operatorframework.io/service-account-name"] == "installer"
    assert ann["olm.operatorframework.io/service-account-namespace"] == ns

    def installed():
        obj, c = olmv1_e2e.conditions(name)
        active = [a["name"] for a in obj.get("status", {}).get("activeRevisions", [])]
        return (active == [f"{name}-1"] and c.get("Installed", {}).get("status") == "True"
                and c.get("Available", {}).get("status") == "True" and (obj, c))
    obj, c = wait_for(installed, f"{name} installed and available from {name}-1", env["ctl"])
    assert obj["status"]["install"]["bundle"] == {"name": f"{pkg}.v{VERSIONS[0]}", "version": VERSIONS[0]}
    assert (c["Progressing"]["status"], c["Progressing"]["reason"]) == ("True", "Succeeded")
    assert c["Progressing"]["message"] == f"Revision {VERSIONS[0]} has rolled out."
    assert c["Available"]["reason"] == "ProbesSucceeded"
    assert c["Installed"]["message"] == f"Installed bundle {env['images'][VERSIONS[0]]} successfully"
    deployment = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)
    ctrl = [o for o in deployment["metadata"].get("ownerReferences", []) if o.get("controller")]
    assert [(o["kind"], o["name"]) for o in ctrl] == [("ClusterObjectSet", f"{name}-1")]
    # No install record in this mode.
    out = kubectl("get", "secret", f"olmv1-install-{name}", "-n", env["system_ns"], "--ignore-not-found",
                  "-o", "name").stdout
    assert out.strip() == ""
    assert revisions(name) == [f"{name}-1"]
    olmv1_e2e.delete_ce(name)


def test_config_change_is_a_new_revision_and_deletion_takes_them(world, ns, name):
    env = world
    olmv1_e2e.apply_ce(env, env["pkg"], name, ns, version=VERSIONS[0])
    wait_for(lambda: revision(name, 1), f"ClusterObjectSet {name}-1", env["ctl"])
    secrets1 = [s["metadata"]["name"] for s in ref_secrets(revision(name, 1), env["system_ns"])]
    # A new spec.config renders other objects: revision 2, of the same bundle, beside 1.
    olmv1_e2e.apply_ce(env, env["pkg"], name, ns, version=VERSIONS[0],
                       config={"configType": "Inline",
                               "inline": {"deploymentConfig": {"env": [{"name": "MY_VAR", "value": "v"}]}}})
    cos2 = wait_for(lambda: revision(name, 2), f"ClusterObjectSet {name}-2", env["ctl"])
    assert cos2["metadata"]["annotations"]["olm.operatorframework.io/bundle-version"] == VERSIONS[0]
    # 2 rolls out and succeeds, 1 is archived: only 2 is active, and the workload has the variable.
    def replaced():
        obj, c = olmv1_e2e.conditions(name)
        active = [a["name"] for a in obj.get("status", {}).get("activeRevisions", [])]
        return active == [f"{name}-2"] and c.get("Installed", {}).get("status") == "True" and c
    wait_for(replaced, f"{name}-2 to replace {name}-1", env["ctl"])
    assert revision(name, 1)["spec"]["lifecycleState"] == "Archived"
    env_vars = kubectl_json("get", "deployment", f"{env['pkg']}-manager", "-n", ns)[
        "spec"]["template"]["spec"]["containers"][0].get("env", [])
    assert {"name": "MY_VAR", "value": "v"} in env_vars
    secrets2 = [s["metadata"]["name"] for s in ref_secrets(cos2, env["system_ns"])]
    # Deleting the extension deletes its revisions, then their Secrets.
    olmv1_e2e.delete_ce(name)
    assert revisions(name) == []
    for s in secrets1 + secrets2:
        out = kubectl("get", "secret", s, "-n", env["system_ns"], "--ignore-not-found", "-o", "name").stdout
        assert out.strip() == "", f"{s} left behind"


def test_switching_the_gate_on_migrates_without_reinstalling(world, ns, name):
    env = world
    pkg = env["pkg"]
    ctl = env["ctl"]
    ctl.stop()
    ctl.extra.remove(GATE)
    ctl.start()
    try:
        olmv1_e2e.apply_ce(env, pkg, name, ns, version=VERSIONS[0])
        olmv1_e2e.wait_installed(env, name, f"{pkg}.v{VERSIONS[0]}", VERSIONS[0])
        assert revisions(name) == []
        dep = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)
    finally:
        ctl.stop()
        ctl.extra.append(GATE)
        ctl.start()
    cos = wait_for(lambda: revision(name, 1), f"ClusterObjectSet {name}-1 from the install", ctl)
    assert cos["metadata"]["labels"]["olm.operatorframework.io/migrated-from-helm"] == "true"
    assert cos["spec"]["collisionProtection"] == "None"
    succ = {c["type"]: c for c in cos.get("status", {}).get("conditions", [])}["Succeeded"]
    # Written at creation; the ClusterObjectSet controller, as upstream's, rewrites the message
    # once it has rolled the revision out itself (which may come first: a race to read).
    assert succ["status"] == "True", succ
    assert succ["message"] in ("Revision succeeded - migrated from Helm release", "Revision succeeded rolling out."), succ
    # Still installed, from the revision now; as upstream, the next revision (collisionProtection
    # Prevent) takes over from it; the objects stay the same ones throughout.
    _, c = olmv1_e2e.conditions(name)
    assert c["Installed"]["status"] == "True", c["Installed"]
    cos2 = wait_for(lambda: revision(name, 2), f"ClusterObjectSet {name}-2", ctl)
    assert cos2["spec"]["collisionProtection"] == "Prevent"

    def taken_over():
        obj, c = olmv1_e2e.conditions(name)
        active = [a["name"] for a in obj.get("status", {}).get("activeRevisions", [])]
        return active == [f"{name}-2"] and c.get("Available", {}).get("status") == "True" and c
    wait_for(taken_over, f"{name}-2 to take over", ctl)
    now = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)
    assert now["metadata"]["uid"] == dep["metadata"]["uid"]
    ctrl = [o for o in now["metadata"].get("ownerReferences", []) if o.get("controller")]
    assert [(o["kind"], o["name"]) for o in ctrl] == [("ClusterObjectSet", f"{name}-2")]
    olmv1_e2e.delete_ce(name)


def test_switching_the_gate_off_takes_the_install_over(world, ns, name):
    """The way back: installed with the gate on, the gate switched off on the live cluster.  The
    installed revision becomes the install record, nothing is re-created (the same Deployment
    uid), the objects lose the revisions' ownerReferences, the revisions and their Secrets go
    (deleted with propagationPolicy Orphan, so the garbage collector, which runs here, takes
    nothing), and the uninstall still removes the objects."""
    env = world
    pkg = env["pkg"]
    ctl = env["ctl"]
    bundle = f"{pkg}.v{VERSIONS[0]}"
    olmv1_e2e.apply_ce(env, pkg, name, ns, version=VERSIONS[0])

    def installed():
        obj, c = olmv1_e2e.conditions(name)
        active = [a["name"] for a in obj.get("status", {}).get("activeRevisions", [])]
        return (active == [f"{name}-1"] and c.get("Installed", {}).get("status") == "True"
                and c.get("Available", {}).get("status") == "True" and (obj, c))
    wait_for(installed, f"{name} installed from {name}-1", ctl)
    dep = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)
    ctrl = [o for o in dep["metadata"].get("ownerReferences", []) if o.get("controller")]
    assert [(o["kind"], o["name"]) for o in ctrl] == [("ClusterObjectSet", f"{name}-1")]
    secrets = [s["metadata"]["name"] for s in ref_secrets(revision(name, 1), env["system_ns"])]
    ctl.stop()
    ctl.extra.remove(GATE)
    ctl.start()
    try:
        def taken_over():
            rec = kubectl("get", "secret", f"olmv1-install-{name}", "-n", env["system_ns"], "--ignore-not-found",
                          "-o", "json").stdout
            return rec.strip() and revisions(name) == [] and json.loads(rec)
        rec = wait_for(taken_over, f"the install record of {name} and its revisions gone", ctl)
        record = json.loads(base64.b64decode(rec["data"]["record.json"]))
        assert record["bundle"]["name"] == bundle
        assert "pending" not in record
        assert ("Deployment", f"{pkg}-manager") in [(o["kind"], o["name"]) for o in record["objects"]]
        c = olmv1_e2e.wait_installed(env, name, bundle, VERSIONS[0])
        assert c["Installed"]["message"] == f"Installed bundle {env['images'][VERSIONS[0]]} successfully"
        obj, _ = olmv1_e2e.conditions(name)
        assert "activeRevisions" not in obj["status"]
        # The same objects, none with an ownerReference to a ClusterObjectSet any more (the
        # revisions are gone: the garbage collector has processed their deletion).
        now = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)
        assert now["metadata"]["uid"] == dep["metadata"]["uid"]
        for kind, n in (("deployment", f"{pkg}-manager"), ("configmap", f"{pkg}-config"),
                        ("serviceaccount", f"{pkg}-manager")):
            o = kubectl_json("get", kind, n, "-n", ns)
            refs = [r["kind"] for r in o["metadata"].get("ownerReferences", [])]
            assert "ClusterObjectSet" not in refs, (kind, n, refs)
        for s in secrets:
            out = kubectl("get", "secret", s, "-n", env["system_ns"], "--ignore-not-found", "-o", "name").stdout
            assert out.strip() == "", f"{s} left behind"
        assert f"took over the install of bundle {bundle} from revision {name}-1" in ctl.log_text()
        # The uninstall removes what the revisions had installed.
        olmv1_e2e.delete_ce(name)
        olmv1_e2e.assert_nothing_installed(pkg, ns, name, env["system_ns"])
    finally:
        ctl.stop()
        ctl.extra.append(GATE)
        ctl.start()


def test_a_1mb_crd_is_stored_compressed(world, ns, name):
    """Larger than the 900 KiB gzip threshold as encoding/json writes it: stored gzip'd, and no
    Secret holds more than upstream's 900 KiB of data."""
    env = world
    # The CRD upgrade-safety preflight reads the installed CRD as the extension's ServiceAccount,
    # which the revision's controller also applies it with.
    olmv1_e2e.set_rules(ns, SA_RULES_FULL + [{"apiGroups": ["apiextensions.k8s.io"],
                                              "resources": ["customresourcedefinitions"], "verbs": ["*"]}])
    t0 = time.monotonic()
    olmv1_e2e.apply_ce(env, env["big"], name, ns)
    cos = wait_for(lambda: revision(name, 1), f"ClusterObjectSet {name}-1", env["ctl"])
    took = time.monotonic() - t0
    crds = next(p for p in cos["spec"]["phases"] if p["name"] == "crds")
    ref = crds["objects"][0]["ref"]
    secret = kubectl_json("get", "secret", ref["name"], "-n", env["system_ns"])
    raw = base64.b64decode(secret["data"][ref["key"]])
    assert raw[:2] == b"\x1f\x8b", "not gzip"
    assert len(raw) <= 900 * 1024
    for s in ref_secrets(cos, env["system_ns"]):
        assert sum(len(base64.b64decode(v)) for v in s["data"].values()) <= 900 * 1024
    print(f"\n1 MB CRD bundle: revision {name}-1 and its Secrets {took:.1f} s after the apply")
    olmv1_e2e.delete_ce(name)
