"""`olmv1 get extensions|catalogs` against the real apiserver (issue 14, part 1).

No controller runs here: the objects are created with kubectl and their status is written
through the status subresource, so every column and every unhealthy condition is known.  Each
test labels its objects with a unique value and selects on it (other modules' objects may be
around).  Also: NAME not found, bad usage, a ServiceAccount without RBAC, a dead kubeconfig
context, --context, --kubeconfig and $KUBECONFIG."""

import json

import pytest
import yaml

import olmv1_cli as cli
from conftest import kubectl, unique

NOW = "2026-01-02T03:04:05Z"


def cond(type_, status, reason, message=""):
    return {"type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": NOW, "observedGeneration": 1}


def make_ce(name, label, pkg="pkg-a", ns="ns-a", status=None, channels=None, version=None):
    catalog = {"packageName": pkg}
    if channels:
        catalog["channels"] = channels
    if version:
        catalog["version"] = version
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": name, "labels": {"e2e-cli-get": label}},
        "spec": {"namespace": ns, "serviceAccount": {"name": "installer"},
                 "source": {"sourceType": "Catalog", "catalog": catalog}}})
    if status:
        kubectl("patch", "clusterextension", name, "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": status}))


def make_catalog(name, label, status=None, priority=None, mode=None):
    spec = {"source": {"type": "Image", "image": {"ref": "registry.example.com/cat:v1"}}}
    if priority is not None:
        spec["priority"] = priority
    if mode:
        spec["availabilityMode"] = mode
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": name, "labels": {"e2e-cli-get": label}}, "spec": spec})
    if status:
        kubectl("patch", "clustercatalog", name, "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": status}))


@pytest.fixture
def label():
    return unique("get")


@pytest.fixture
def objs(crds, cleanup, label):
    """A healthy extension, a retrying and deprecated one, one without status; a serving
    catalog and one that is not."""
    good, bad, new = (cleanup("clusterextension", unique(p)) for p in ("good", "bad", "new"))
    make_ce(good, label, status={
        "install": {"bundle": {"name": "pkg-a.v1.2.3", "version": "1.2.3"}},
        "conditions": [cond("Installed", "True", "Succeeded", "Installed bundle x successfully"),
                       cond("Progressing", "True", "Succeeded", "Desired state reached"),
                       cond("Deprecated", "False", "NotDeprecated"),
                       cond("BundleDeprecated", "False", "NotDeprecated")]},
        channels=["stable", "fast"], version=">=1.0.0")
    make_ce(bad, label, pkg="pkg-b", ns="ns-b", status={
        "install": {"bundle": {"name": "pkg-b.v0.1.0", "version": "0.1.0"}},
        "conditions": [cond("Installed", "True", "Succeeded", "Installed bundle y successfully"),
                       cond("Progressing", "True", "Retrying",
                            'error upgrading from currently installed version "0.1.0": no bundles found'),
                       cond("Deprecated", "True", "Deprecated", "bundle pkg-b.v0.1.0 is deprecated"),
                       cond("BundleDeprecated", "True", "Deprecated", "bundle pkg-b.v0.1.0 is deprecated")]})
    make_ce(new, label)
    serving, broken = (cleanup("clustercatalog", unique(p)) for p in ("serving", "broken"))
    make_catalog(serving, label, priority=5, status={
        "lastUnpacked": NOW, "urls": {"base": f"https://catalogd-service.olmv1-system.svc/catalogs/{serving}"},
        "resolvedSource": {"type": "Image", "image": {"ref": "registry.example.com/cat@sha256:" + "a" * 64}},
        "conditions": [cond("Serving", "True", "Available", "Serving desired content from resolved source"),
                       cond("Progressing", "True", "Succeeded", "Successfully unpacked and stored content")]})
    make_catalog(broken, label, mode="Unavailable", status={
        "conditions": [cond("Serving", "False", "UserSpecifiedUnavailable", "catalog is unavailable"),
                       cond("Progressing", "True", "Retrying", "pulling: manifest unknown")]})
    return {"good": good, "bad": bad, "new": new, "serving": serving, "broken": broken}


def test_extensions_table(objs, label):
    rows = {r["NAME"]: r for r in cli.table(cli.ok("get", "extensions", "-l", f"e2e-cli-get={label}"))}
    assert set(rows) == {objs["good"], objs["bad"], objs["new"]}
    good, bad, new = rows[objs["good"]], rows[objs["bad"]], rows[objs["new"]]
    assert (good["INSTALLED BUNDLE"], good["VERSION"], good["INSTALLED"], good["PROGRESSING"]) == \
        ("pkg-a.v1.2.3", "1.2.3", "True", "True")
    assert good["MESSAGE"] == ""
    assert good["AGE"].endswith("s") or good["AGE"].endswith("m")
    # Progressing Retrying and the specific deprecation (not the roll-up repeating it).
    assert bad["MESSAGE"] == ('Progressing Retrying: error upgrading from currently installed version "0.1.0": '
                              'no bundles found; BundleDeprecated Deprecated: bundle pkg-b.v0.1.0 is deprecated')
    assert (new["INSTALLED BUNDLE"], new["INSTALLED"], new["MESSAGE"]) == ("", "", "")


def test_extension_by_name_wide(objs):
    (row,) = cli.table(cli.ok("get", "extension", objs["good"], "-o", "wide"))
    assert (row["PACKAGE"], row["NAMESPACE"], row["SERVICE ACCOUNT"], row["CHANNELS"], row["VERSION RANGE"]) == \
        ("pkg-a", "ns-a", "installer", "stable,fast", ">=1.0.0")
    # NEXT and REACHABLE come from the catalogs it selects (all: no selector); no catalogd serves
    # the "serving" one here, so they cannot be known.  test_cli_upgrade asserts real values.
    assert (row["NEXT"], row["REACHABLE"]) == ("?", "?")
    assert list(row)[-3:] == ["NEXT", "REACHABLE", "MESSAGE"]


def test_extension_machine_output(objs, label):
    obj = json.loads(cli.ok("get", "clusterextension", objs["good"], "-o", "json"))
    assert obj["kind"] == "ClusterExtension" and obj["metadata"]["name"] == objs["good"]
    assert "managedFields" not in obj["metadata"]
    lst = yaml.safe_load(cli.ok("get", "ext", "-o", "yaml", "-l", f"e2e-cli-get={label}"))
    assert lst["kind"] == "List"
    assert sorted(i["metadata"]["name"] for i in lst["items"]) == sorted([objs["good"], objs["bad"], objs["new"]])
    assert all(i["kind"] == "ClusterExtension" and i["apiVersion"] == "olm.operatorframework.io/v1"
               for i in lst["items"])
    names = cli.ok("get", "extensions", "-o", "name", "-l", f"e2e-cli-get={label}").split()
    assert sorted(names) == sorted(f"clusterextension.olm.operatorframework.io/{objs[k]}"
                                   for k in ("good", "bad", "new"))


def test_catalogs_table_and_wide(objs, label):
    rows = {r["NAME"]: r for r in cli.table(cli.ok("get", "catalogs", "-l", f"e2e-cli-get={label}"))}
    assert set(rows) == {objs["serving"], objs["broken"]}
    s, b = rows[objs["serving"]], rows[objs["broken"]]
    assert (s["SERVING"], s["MESSAGE"]) == ("True", "")
    assert s["LASTUNPACKED"].endswith(("d", "y", "h"))  # NOW is long ago
    assert b["SERVING"] == "False"
    assert b["MESSAGE"] == ("Serving UserSpecifiedUnavailable: catalog is unavailable; "
                            "Progressing Retrying: pulling: manifest unknown")
    wide = {r["NAME"]: r for r in cli.table(cli.ok("get", "clustercatalogs", "-o", "wide",
                                                   "-l", f"e2e-cli-get={label}"))}
    assert (wide[objs["serving"]]["PRIORITY"], wide[objs["serving"]]["AVAILABILITY"]) == ("5", "Available")
    assert wide[objs["serving"]]["IMAGE"] == "registry.example.com/cat:v1"
    assert wide[objs["serving"]]["RESOLVED"] == "registry.example.com/cat@sha256:" + "a" * 64
    assert wide[objs["broken"]]["AVAILABILITY"] == "Unavailable"


def test_nothing_found(crds):
    rc, out, err = cli.run("get", "extensions", "-l", f"e2e-cli-get={unique('none')}")
    assert (rc, out, err) == (0, "", "No clusterextensions found.\n")
    assert cli.run("get", "catalogs", "-o", "json", "-l", "e2e-cli-get=none")[0] == 0


def test_not_found_and_usage(crds):
    line = cli.fails(cli.EXIT_NOT_FOUND, "get", "extension", "no-such-extension")
    assert 'clusterextensions.olm.operatorframework.io "no-such-extension" not found' in line
    assert "catalogs" in cli.fails(cli.EXIT_NOT_FOUND, "get", "catalog", "no-such-catalog")
    cli.fails(cli.EXIT_USAGE, "get", "pods")
    cli.fails(cli.EXIT_USAGE, "get", "extensions", "-o", "xml")
    cli.fails(cli.EXIT_USAGE, "get", "extensions", "a", "b")
    cli.fails(cli.EXIT_USAGE, "get")


def test_forbidden(crds, cleanup, tmp_path):
    ns = cleanup("namespace", unique("get-nobody"))
    kubectl("create", "namespace", ns)
    kc = cli.identity(tmp_path, ns, "nobody")
    line = cli.fails(cli.EXIT_FORBIDDEN, "get", "extensions", "--kubeconfig", kc)
    assert "forbidden" in line and f"system:serviceaccount:{ns}:nobody" in line
    cli.fails(cli.EXIT_FORBIDDEN, "get", "catalogs", env={"KUBECONFIG": kc})


def test_contexts_and_kubeconfig(objs, tmp_path):
    kc = cli.two_context_kubeconfig(tmp_path)
    line = cli.fails(cli.EXIT_UNREACHABLE, "get", "extension", objs["good"], "--kubeconfig", kc)
    assert "127.0.0.1:1" in line
    out = cli.ok("get", "extension", objs["good"], "--kubeconfig", kc, "--context", "real")
    assert objs["good"] in out
    out = cli.ok("get", "extension", objs["good"], "--context", "real", env={"KUBECONFIG": kc})
    assert objs["good"] in out
    assert 'no contexts entry named "nope"' in cli.fails(cli.EXIT_UNREACHABLE, "get", "extensions",
                                                         "--kubeconfig", kc, "--context", "nope")
    cli.fails(cli.EXIT_UNREACHABLE, "get", "extensions", "--kubeconfig", tmp_path / "missing")
