"""operator-controller with bundles that bring a CRD (spec §2.2 fallback, §6.3 preflight).

* CRD upgrade safety: 1.0.0 defines widgets.<pkg>.e2e.olmv1.io with spec.size (enum S/M/L) and
  spec.color; 1.0.1 drops `color` and the enum value L.  The upgrade is refused (Progressing
  Retrying, the crdify-style message naming both changes), 1.0.0 and its CRD stay; with
  spec.install.preflight.crdUpgradeSafety.enforcement None the upgrade goes through.
* Catalog gone (the fallback of §2.2 step 4.5): once the only catalog is deleted, the installed
  bundle stays Installed, a deleted object is still repaired, and a spec change is reconciled.
* Uninstall removes the CRD too; when the install namespace (with the ServiceAccount) was deleted
  first, the namespaced objects go with it, and the cluster-scoped ones are removed at once while
  the apiserver still accepts the ServiceAccount's last token, or else wait, with a condition that
  says how to get unstuck, until the ServiceAccount is back.  Nothing is left behind either way.

The CRD is read by the preflight as the extension's ServiceAccount, and the daemons run with
config/rbac only (olm_env), so this also checks that the preflight needs no more than that.
Stdlib, PyYAML and pytest only; waits poll with generous deadlines, nothing asserts timing.
"""

import pytest

import olmv1_bundles
import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import (SA_RULES_FULL, WAIT, apply_ce, conditions, configmap_version, create_catalog,  # noqa: F401
                       delete_ce, ns, olmv1, push_catalog, wait_for, wait_installed, wait_progressing)

LABEL = "e2e.olmv1.io/crd-package"
CRD_RULES = SA_RULES_FULL + [
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["*"]},
]


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("opctl-crds"), LABEL) as e:
        yield e


def widget_crd(pkg, colors, sizes):
    """A namespaced CRD of <pkg>, v1 served and stored; spec.size is an enum of `sizes`, and
    spec.color exists only when `colors`."""
    spec_props = {"size": {"type": "string", "enum": list(sizes)}}
    if colors:
        spec_props["color"] = {"type": "string"}
    group = f"{pkg}.e2e.olmv1.io"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": spec_props}}}}}],
        },
    }


def push_crd_bundles(env, pkg, crds):
    """One bundle per version of `crds` ({version: CRD}), the CRD among its manifests and owned by
    the CSV; returns {version: digest ref}."""
    env["packages"].append(pkg)
    images = {}
    for version, crd in crds.items():
        def own(csv, crd=crd):
            csv["spec"]["customresourcedefinitions"] = {"owned": [{
                "name": crd["metadata"]["name"], "version": "v1", "kind": "Widget", "displayName": "Widget"}]}
        d = olmv1_bundles.write_bundle(env["work"] / pkg, pkg, version, csv_hook=own)
        olmv1_bundles.write_json(d / "manifests" / "widgets.crd.yaml", crd)
        images[version] = olmv1("bundle", "push", "-q", str(d), f"{env['registry']}/e2e/{pkg}-bundle:v{version}")
    return images


def exists(*args):
    return kubectl("get", *args, "--ignore-not-found", "-o", "name").stdout.strip() != ""


def crd_gone(env, crd):
    """The CRD is deleted (it may linger briefly while the apiserver removes its custom resources)."""
    wait_for(lambda: not exists("crd", crd), f"CustomResourceDefinition {crd} to be gone", env["ctl"])


def crd_schema_fields(pkg):
    crd = kubectl_json("get", "crd", f"widgets.{pkg}.e2e.olmv1.io")
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    return sorted(props), props["size"]["enum"]


def test_crd_upgrade_safety_blocks_then_enforcement_none_allows(env, ns, name):
    pkg = unique("crdsafe")
    images = push_crd_bundles(env, pkg, {
        "1.0.0": widget_crd(pkg, colors=True, sizes=("S", "M", "L")),
        "1.0.1": widget_crd(pkg, colors=False, sizes=("S", "M")),
    })
    olmv1_e2e.set_rules(ns, CRD_RULES)
    ref1 = push_catalog(env, pkg, images, ["1.0.0"], "v1")
    create_catalog(env, pkg, ref1)
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert crd_schema_fields(pkg) == (["color", "size"], ["S", "M", "L"])

    # Ask for 1.0.1 (a successor: it replaces 1.0.0 in the channel): the preflight refuses it.
    ref2 = push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "v2")
    create_catalog(env, pkg, ref2)
    apply_ce(env, pkg, name, ns, version="1.0.1")
    c = wait_progressing(env, name, "True", "Retrying",
                         f'validating upgrade for CRD "widgets.{pkg}.e2e.olmv1.io"')
    msg = c["Progressing"]["message"]
    assert "existingFieldRemoval: removed field : v1.^.spec.color" in msg, msg
    assert 'v1: ^.spec.size: enum: allowed enum values removed : ["L"]' in msg, msg
    obj, c = conditions(name)
    assert c["Installed"]["status"] == "True", c
    assert obj["status"]["install"]["bundle"]["version"] == "1.0.0"
    assert configmap_version(pkg, ns) == "1.0.0"
    assert crd_schema_fields(pkg) == (["color", "size"], ["S", "M", "L"])  # the old CRD is untouched

    # The administrator accepts the risk: the preflight is skipped and the upgrade goes through.
    kubectl("patch", "clusterextension", name, "--type=merge", "-p",
            '{"spec":{"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"None"}}}}}')
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    assert configmap_version(pkg, ns) == "1.0.1"
    assert crd_schema_fields(pkg) == (["size"], ["S", "M"])

    delete_ce(name)
    crd_gone(env, f"widgets.{pkg}.e2e.olmv1.io")
    assert not exists("deployment", f"{pkg}-manager", "-n", ns)


def test_installed_extension_survives_catalog_deletion(env, ns, name):
    pkg = unique("fallback")
    images = push_crd_bundles(env, pkg, {"1.0.0": widget_crd(pkg, colors=True, sizes=("S",))})
    olmv1_e2e.set_rules(ns, CRD_RULES)
    catalog = create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0"], "v1"))
    apply_ce(env, pkg, name, ns)
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")

    kubectl("delete", "clustercatalog", catalog, "--wait=true", "--timeout=120s")
    # With no catalog left for the package, the installed bundle is kept as the resolution.
    kubectl("delete", "configmap", f"{pkg}-config", "-n", ns)
    wait_for(lambda: kubectl("get", "configmap", f"{pkg}-config", "-n", ns, check=False).returncode == 0,
             "the deleted ConfigMap to be repaired without a catalog", env["ctl"])
    obj, c = conditions(name)
    assert c["Installed"]["status"] == "True", c
    assert obj["status"]["install"]["bundle"]["name"] == f"{pkg}.v1.0.0"

    # A spec change is still reconciled (observedGeneration moves, Succeeded, still installed).
    kubectl("patch", "clusterextension", name, "--type=merge", "-p",
            '{"spec":{"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"None"}}}}}')
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["labels"][
        "olm.operatorframework.io/owner-name"] == name
    delete_ce(name)
    crd_gone(env, f"widgets.{pkg}.e2e.olmv1.io")


def test_uninstall_after_the_install_namespace_is_gone(env, name):
    pkg = unique("nsgone")
    images = push_crd_bundles(env, pkg, {"1.0.0": widget_crd(pkg, colors=True, sizes=("S",))})
    install_ns = name[:50]
    olmv1_e2e.setup_namespace(install_ns, CRD_RULES)
    try:
        create_catalog(env, pkg, push_catalog(env, pkg, images, ["1.0.0"], "v1"))
        apply_ce(env, pkg, name, install_ns)
        wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
        crd = f"widgets.{pkg}.e2e.olmv1.io"
        cluster_role = kubectl_json("get", "clusterroles", "-l", f"olm.operatorframework.io/owner-name={name}")
        assert cluster_role["items"], "the bundle's clusterPermissions became no ClusterRole"

        # The administrator deletes the namespace, ServiceAccount included, before the extension.
        kubectl("delete", "namespace", install_ns, "--wait=true", "--timeout=110s")
        kubectl("delete", "clusterextension", name, "--wait=false")

        # The apiserver may still accept the ServiceAccount's last token for a few seconds (it
        # caches validated tokens), and then the uninstall simply finishes.  Otherwise it waits,
        # saying how to get unstuck, with the cluster-scoped objects still there, until the
        # ServiceAccount is back.
        def gone_or_stuck():
            if not exists("clusterextension", name):
                return "gone"
            _, c = conditions(name)
            msg = c.get("Progressing", {}).get("message", "")
            return "stuck" if "recreate the ServiceAccount with the RBAC it had" in msg else None
        outcome = wait_for(gone_or_stuck, "the uninstall to finish or to ask for the ServiceAccount", env["ctl"])
        print(f"\nuninstall after the namespace was deleted: {outcome}")
        if outcome == "stuck":
            _, c = conditions(name)
            assert c["Progressing"]["status"] == "True" and c["Progressing"]["reason"] == "Retrying", c
            assert "remove the finalizer olm.operatorframework.io/cleanup" in c["Progressing"]["message"]
            assert exists("crd", crd), "the CRD went although nobody may delete it"
            olmv1_e2e.delete_namespace(install_ns)
            olmv1_e2e.setup_namespace(install_ns, CRD_RULES)
            wait_for(lambda: not exists("clusterextension", name), "the extension to be uninstalled", env["ctl"])
        # Either way nothing is left behind.
        crd_gone(env, crd)
        assert not kubectl_json("get", "clusterroles", "-l", f"olm.operatorframework.io/owner-name={name}")["items"]
        assert not kubectl_json("get", "clusterrolebindings", "-l",
                                f"olm.operatorframework.io/owner-name={name}")["items"]
    finally:
        olmv1_e2e.delete_namespace(install_ns)
