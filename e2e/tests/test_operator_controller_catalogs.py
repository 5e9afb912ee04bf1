"""operator-controller and its catalogs (spec §2, §3): new catalog content, ambiguity across catalogs
of equal priority, deprecations, and the watchNamespace configuration of OwnNamespace bundles.

Uses the bundle writer, daemons and RBAC helpers of olmv1_bundles.py and olmv1_e2e.py.  This
module runs its own catalogd (with its test-only --poll-interval-override-seconds 1, so a catalog
that sets pollIntervalMinutes notices a re-pushed tag within about a second) and its own
operator-controller.  Every test uses its own package, catalogs (labelled for the extension's
selector) and namespace.  Every wait polls with a generous deadline; nothing asserts timing.
"""

import pytest

import olmv1_e2e
from conftest import kubectl, kubectl_json, unique  # noqa: F401
from olmv1_e2e import (WAIT, conditions, configmap_version, create_catalog, delete_ce, ns,  # noqa: F401
                       push_catalog, wait_for, wait_installed, wait_progressing)

LABEL = "e2e-opctl-cat"  # ClusterCatalog label key; its value is the package name


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("opctl-cat"), LABEL) as e:
        yield e


def push_bundles(env, pkg, versions, own_namespace_only=False):
    """Pushes a bundle per version; returns {version: digest ref}."""
    supported = ("OwnNamespace",) if own_namespace_only else ("AllNamespaces",)
    return olmv1_e2e.push_bundles(env, pkg, versions, supported=supported)


def apply_ce(env, pkg, ce_name, ns, version=None, config=None):
    olmv1_e2e.apply_ce(env, pkg, ce_name, ns, version=version, config=config)


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
