"""operator-controller and its catalogs (spec §2, §3): new catalog content, ambiguity across catalogs
of equal priority, deprecations, and the watchNamespace configuration of OwnNamespace bundles.

Reuses the bundle writer, controller runner and RBAC helpers of test_operator_controller.py.  This
module runs its own catalogd (with its test-only --poll-interval-override-seconds 1, so a catalog
that sets pollIntervalMinutes notices a re-pushed tag within about a second) and its own
operator-controller.  Every test uses its own package, catalogs (labelled for the extension's
selector) and namespace.  Every wait polls with a generous deadline; nothing asserts timing.
"""

import json
import os

import pytest
import yaml

from conftest import kubectl, kubectl_json, unique
from test_catalogd import Catalogd
from test_operator_controller import (CATALOGD, OPCTL, SA_RULES_FULL, WAIT, Controller, conditions, olmv1,
                                      setup_namespace, wait_for, write_bundle)


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    for b in (OPCTL, CATALOGD):
        if not os.access(b, os.X_OK):
            pytest.fail(f"{b} is not built (make build)")
    registry = os.environ.get("OLMV1_REGISTRY")
    if not registry:
        pytest.fail("OLMV1_REGISTRY is not set; run through e2e/run-tests.sh")
    work = tmp_path_factory.mktemp("opctl-cat")
    system_ns = unique("olmv1-sys")
    kubectl("create", "namespace", system_ns)
    catalogd = Catalogd(work / "catalogd")
    catalogd.workdir.mkdir()
    catalogd.start()
    ctl = Controller(work, system_ns)
    state = {"registry": registry, "work": work, "ctl": ctl, "catalogs": [], "ces": []}
    try:
        ctl.start()
        yield state
    finally:
        for ce in state["ces"]:
            kubectl("delete", "clusterextension", ce, "--ignore-not-found", "--wait=true", "--timeout=60s",
                    check=False)
        ctl.stop()
        for cat in state["catalogs"]:
            kubectl("delete", "clustercatalog", cat, "--wait=false", "--ignore-not-found", check=False)
        catalogd.stop()
        kubectl("delete", "namespace", system_ns, "--wait=false", "--ignore-not-found", check=False)


@pytest.fixture
def ns(env, name):
    n = name[:50]
    setup_namespace(n, SA_RULES_FULL)
    yield n
    kubectl("delete", "namespace", n, "--wait=false", "--ignore-not-found", check=False)
    kubectl("delete", "clusterrolebinding", f"{n}-installer", "--ignore-not-found", check=False)
    kubectl("delete", "clusterrole", f"{n}-installer", "--ignore-not-found", check=False)


def push_bundles(env, pkg, versions, own_namespace_only=False):
    """Pushes a bundle per version; returns {version: digest ref}."""
    images = {}
    for v in versions:
        d = write_bundle(env["work"] / pkg, pkg, v)
        if own_namespace_only:
            csv_path = d / "manifests" / "csv.yaml"
            csv = yaml.safe_load(csv_path.read_text())
            csv["spec"]["installModes"] = [
                {"type": "OwnNamespace", "supported": True},
                {"type": "SingleNamespace", "supported": False},
                {"type": "MultiNamespace", "supported": False},
                {"type": "AllNamespaces", "supported": False},
            ]
            csv_path.write_text(yaml.safe_dump(csv, sort_keys=False))
        images[v] = olmv1("bundle", "push", "-q", str(d), f"{env['registry']}/e2e/{pkg}-bundle:v{v}")
    return images


def push_catalog(env, pkg, images, chain, tag, extra_blobs=()):
    """Pushes a catalog of <pkg>, channel "stable" with the versions of `chain` in order, each
    replacing the one before; returns the tag reference."""
    d = env["work"] / pkg / f"catalog-{tag}-{len(chain)}"
    d.mkdir(parents=True, exist_ok=True)
    entries = []
    for i, v in enumerate(chain):
        e = {"name": f"{pkg}.v{v}"}
        if i:
            e["replaces"] = f"{pkg}.v{chain[i - 1]}"
        entries.append(e)
    blobs = [{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"},
             {"schema": "olm.channel", "name": "stable", "package": pkg, "entries": entries}]
    for v in chain:
        blobs.append({"schema": "olm.bundle", "name": f"{pkg}.v{v}", "package": pkg, "image": images[v],
                      "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": v}}]})
    blobs.extend(extra_blobs)
    (d / "catalog.json").write_text("\n".join(json.dumps(b) for b in blobs) + "\n")
    ref = f"{env['registry']}/e2e/{pkg}-catalog:{tag}"
    olmv1("catalog", "push", "-q", str(d), ref)
    return ref


def create_catalog(env, pkg, ref, priority=0, poll=False):
    name = unique("opcat")
    image = {"ref": ref}
    if poll:
        image["pollIntervalMinutes"] = 1  # catalogd polls every second here (override)
    spec = {"source": {"type": "Image", "image": image}}
    if priority:
        spec["priority"] = priority
    env["catalogs"].append(name)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": name, "labels": {"e2e-opctl-cat": pkg}}, "spec": spec})
    kubectl("wait", f"clustercatalog/{name}", "--for=condition=Serving=True", f"--timeout={WAIT}s")
    return name


def apply_ce(env, pkg, ce_name, ns, version=None, config=None):
    catalog = {"packageName": pkg, "selector": {"matchLabels": {"e2e-opctl-cat": pkg}}}
    if version:
        catalog["version"] = version
    spec = {"namespace": ns, "serviceAccount": {"name": "installer"},
            "source": {"sourceType": "Catalog", "catalog": catalog}}
    if config is not None:
        spec["config"] = config
    if ce_name not in env["ces"]:
        env["ces"].append(ce_name)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": ce_name}, "spec": spec})


def wait_installed(env, ce_name, bundle_name, version):
    def check():
        obj, c = conditions(ce_name)
        inst = obj.get("status", {}).get("install", {}).get("bundle", {})
        return (inst.get("version") == version and inst.get("name") == bundle_name
                and c.get("Installed", {}).get("status") == "True"
                and c.get("Progressing", {}).get("reason") == "Succeeded"
                and c["Progressing"].get("observedGeneration") == obj["metadata"]["generation"] and c)
    return wait_for(check, f"{ce_name} to install {bundle_name}", env["ctl"])


def wait_progressing(env, ce_name, status, reason, contains):
    def check():
        _, c = conditions(ce_name)
        p = c.get("Progressing", {})
        return (p.get("status") == status and p.get("reason") == reason and contains in p.get("message", "")
                and c)
    return wait_for(check, f"{ce_name} Progressing {status}/{reason} with {contains!r}", env["ctl"])


def configmap_version(pkg, ns):
    return kubectl_json("get", "configmap", f"{pkg}-config", "-n", ns)["data"]["version"]


def delete_ce(ce_name):
    kubectl("delete", "clusterextension", ce_name, "--wait=true", f"--timeout={WAIT}s")


def test_new_catalog_version_upgrades_automatically(env, ns, name):
    pkg = unique("opkc")
    images = push_bundles(env, pkg, ("1.0.0", "1.0.1"))
    ref = push_catalog(env, pkg, images, ["1.0.0"], "latest")
    create_catalog(env, pkg, ref, poll=True)
    apply_ce(env, pkg, name, ns)
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert configmap_version(pkg, ns) == "1.0.0"

    # The catalog publishes 1.0.1 (replaces 1.0.0) under the same tag; catalogd polls it, serves the
    # new content, and the unpinned extension moves to it without any edit.
    push_catalog(env, pkg, images, ["1.0.0", "1.0.1"], "latest")
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    wait_for(lambda: configmap_version(pkg, ns) == "1.0.1", "the ConfigMap of 1.0.1", env["ctl"])
    delete_ce(name)


def test_equal_priority_catalogs_are_ambiguous_until_one_is_preferred(env, ns, name):
    pkg = unique("opkc")
    images = push_bundles(env, pkg, ("1.0.0",))
    ref_a = push_catalog(env, pkg, images, ["1.0.0"], "a")
    ref_b = push_catalog(env, pkg, images, ["1.0.0"], "b")
    cat_a = create_catalog(env, pkg, ref_a)
    cat_b = create_catalog(env, pkg, ref_b)
    apply_ce(env, pkg, name, ns)
    first, second = sorted((cat_a, cat_b))
    want = f'found bundles for package "{pkg}" in multiple catalogs with the same priority [{first} {second}]'
    c = wait_progressing(env, name, "True", "Retrying", want)
    assert c["Progressing"]["message"] == want
    assert c["Installed"]["status"] == "False"

    kubectl("patch", "clustercatalog", cat_b, "--type=merge", "-p", '{"spec":{"priority":10}}')
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert configmap_version(pkg, ns) == "1.0.0"
    delete_ce(name)


def test_deprecations(env, ns, name):
    pkg = unique("opkc")
    images = push_bundles(env, pkg, ("1.0.0",))
    msgs = {"package": f"package {pkg} is deprecated; use something else",
            "channel": "channel stable is deprecated",
            "bundle": f"bundle {pkg}.v1.0.0 has a known bug"}
    dep = {"schema": "olm.deprecations", "package": pkg, "entries": [
        {"reference": {"schema": "olm.package"}, "message": msgs["package"]},
        {"reference": {"schema": "olm.channel", "name": "stable"}, "message": msgs["channel"]},
        {"reference": {"schema": "olm.bundle", "name": f"{pkg}.v1.0.0"}, "message": msgs["bundle"]},
    ]}
    ref = push_catalog(env, pkg, images, ["1.0.0"], "latest", extra_blobs=[dep])
    create_catalog(env, pkg, ref)
    apply_ce(env, pkg, name, ns, version="1.0.0")
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    c = wait_for(lambda: (lambda c: c.get("BundleDeprecated", {}).get("status") == "True" and c)(conditions(name)[1]),
                 f"{name} BundleDeprecated=True", env["ctl"])
    for t, key in (("PackageDeprecated", "package"), ("ChannelDeprecated", "channel"),
                   ("BundleDeprecated", "bundle")):
        assert c[t]["status"] == "True", c[t]
        assert c[t]["reason"] == "Deprecated", c[t]
        assert c[t]["message"] == msgs[key], c[t]
    assert c["Deprecated"]["status"] == "True" and c["Deprecated"]["reason"] == "Deprecated"
    assert c["Deprecated"]["message"] == "\n".join((msgs["package"], msgs["channel"], msgs["bundle"]))
    assert c["Installed"]["status"] == "True"
    delete_ce(name)


def test_own_namespace_bundle_needs_watch_namespace(env, ns, name):
    pkg = unique("opkc")
    images = push_bundles(env, pkg, ("1.0.0",), own_namespace_only=True)
    ref = push_catalog(env, pkg, images, ["1.0.0"], "latest")
    create_catalog(env, pkg, ref)
    apply_ce(env, pkg, name, ns)
    want = ('invalid ClusterExtension configuration: invalid configuration: '
            'required field "watchNamespace" is missing')
    c = wait_progressing(env, name, "False", "InvalidConfiguration", want)
    assert c["Progressing"]["message"] == f'error for resolved bundle "{pkg}.v1.0.0" with version "1.0.0": {want}'
    assert c["Installed"]["status"] == "False"

    apply_ce(env, pkg, name, ns, config={"configType": "Inline", "inline": {"watchNamespace": ns}})
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert configmap_version(pkg, ns) == "1.0.0"
    delete_ce(name)
