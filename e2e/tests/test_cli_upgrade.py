"""`olmv1 upgrade extension` and `olmv1 uninstall extension` on the test cluster (issue 14, part 4).

Package: channel stable 1.0.0 -> 1.0.1 -> 2.0.0 (each replacing the one before; 2.0.0 is no
successor of 1.0.0).  The generated ClusterRoles are named after the CSV and a hash of their
rules, and 1.0.1 asks for more than 1.0.0, so it has new role names: the installer RBAC of
`install --create-rbac` fits one version, and `upgrade` extends it to the next by itself when it
made the ServiceAccount (keeping the old names, whose objects are pruned).  install and upgrade
wait until the extension has the bundle (exit 0 means done), or say it was only requested
(--no-wait).  catalogd serves plain http on 127.0.0.1 (operator-controller reads it), so olmv1
reads it directly."""

import pytest
import yaml

import olmv1_cli as cli
import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import delete_namespace

LABEL = "e2e-cli-upgrade"
RBAC_LABEL = "olmv1.operatorframework.io/installer-rbac-for"
MORE_RULES = olmv1_e2e.olmv1_bundles.READ_CONFIGMAPS + [{"apiGroups": [""], "resources": ["services"], "verbs": ["get"]}]


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("cli-upgrade"), LABEL) as env:
        pkg = unique("upg")
        images = olmv1_e2e.push_bundles(env, pkg, ("1.0.0",))
        # From 1.0.1 on the operator also reads Services: new rules, so new generated role names.
        images.update(olmv1_e2e.push_bundles(env, pkg, ("1.0.1", "2.0.0"), cluster_rules=MORE_RULES))
        cat = olmv1_e2e.create_catalog(env, pkg, olmv1_e2e.push_catalog(env, pkg, images, ("1.0.0", "1.0.1", "2.0.0"),
                                                                        "latest"))
        env.update(pkg=pkg, images=images, cat=cat)
        yield env


@pytest.fixture
def ext(world, name):
    ns = name[:50]
    world["ces"].append(name)
    yield name, ns
    kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False)
    for kind in ("clusterrolebinding", "clusterrole"):
        kubectl("delete", kind, "-l", f"{RBAC_LABEL}={name}", "--ignore-not-found", check=False)
    delete_namespace(ns)


def olmv1(world, *args):
    return cli.run(*args, env=cli.direct_env(world))


def installed(name):
    return kubectl_json("get", "clusterextension", name)["status"]["install"]["bundle"]["version"]


def wide_row(world, name):
    (row,) = cli.table(cli.ok("get", "extension", name, "-o", "wide", env=cli.direct_env(world)))
    return row


def test_upgrade_edges_rbac_and_self_certified(world, ext):
    """The user story of issue 27: installed in a range, upgraded past it to a bundle that needs
    more RBAC; the upgrade extends the RBAC, waits, and exits 0 only at the new version."""
    name, ns = ext
    p = world["pkg"]
    rc, out, err = olmv1(world, "install", "extension", name, "--package", p, "--namespace", ns, "--version",
                         ">=1.0.0, <1.0.1", "--create-rbac")
    assert rc == 0, err
    assert err.splitlines()[-1] == f"clusterextension {name}: installed {p}.v1.0.0 (1.0.0)"
    assert installed(name) == "1.0.0"
    # The range holds it at 1.0.0; the edges lead on to 2.0.0.
    row = wide_row(world, name)
    assert (row["VERSION"], row["NEXT"], row["REACHABLE"]) == ("1.0.0", "-", "2.0.0")

    # 2.0.0 is no successor of 1.0.0: refused here with the controller's words, nothing changed.
    rc, out, err = olmv1(world, "upgrade", "extension", name, "--version", "2.0.0")
    assert rc == cli.EXIT_NO_MATCH, err
    assert err == (f'olmv1 upgrade extension: error upgrading from currently installed version "1.0.0": '
                   f'no bundles found for package "{p}" matching version "2.0.0"\n')
    assert kubectl_json("get", "clusterextension", name)["spec"]["source"]["catalog"]["version"] == ">=1.0.0, <1.0.1"

    # 1.0.1 is, and its generated ClusterRoles have new names the installer may not escalate
    # yet: the ServiceAccount is the CLI's (install --create-rbac), so upgrade extends its RBAC
    # without being asked (keeping the old bundle's for pruning), says so, and waits.
    before = kubectl_json("get", "clusterrole", f"{name}-installer")["rules"]
    rc, out, err = olmv1(world, "upgrade", "extension", name, "--version", "1.0.1")
    assert rc == 0, err
    lines = err.splitlines()
    assert lines[0] == f"{name}: {p}.v1.0.0 1.0.0 -> {p}.v1.0.1 (1.0.1) from catalog {world['cat']}"
    assert lines[1] == (f"serviceaccount {ns}/{name}-installer was made by olmv1 install --create-rbac: "
                        f"extending its RBAC for {p}.v1.0.1 (1.0.1)")
    assert lines[-1] == f"clusterextension {name}: installed {p}.v1.0.1 (1.0.1)"
    assert f"clusterrole {name}-installer configured" in out
    assert out.splitlines()[-1] == f"clusterextension {name} configured"
    assert installed(name) == "1.0.1"
    after = kubectl_json("get", "clusterrole", f"{name}-installer")["rules"]
    names = lambda rules: {n for r in rules for n in r.get("resourceNames", [])}  # noqa: E731
    assert names(before) < names(after)
    assert olmv1_e2e.configmap_version(p, ns) == "1.0.1"
    row = wide_row(world, name)
    assert (row["VERSION"], row["NEXT"], row["REACHABLE"]) == ("1.0.1", "-", "2.0.0")
    # explain says the same in words and in JSON.
    rc, out, err = olmv1(world, "explain", "extension", name, "--system-namespace", world["system_ns"])
    assert rc == 0, err
    assert 'Upgrade: stays at 1.0.1: the newest your version range "1.0.1" allows\n' in out
    assert (f'Highest reachable by upgrade edges: 2.0.0 ({p}.v2.0.0, outside the version range "1.0.1": widen it '
            f"with olmv1 upgrade extension {name} --version '>=1.0.1, <=2.0.0')\n") in out
    rc, out, err = olmv1(world, "explain", "extension", name, "-o", "json", "--system-namespace", world["system_ns"])
    assert rc == 0, err
    up = __import__("json").loads(out)["upgrade"]
    assert up["installed"] == "1.0.1" and up["next"] is None
    assert up["highestReachable"] == {"bundle": f"{p}.v2.0.0", "version": "2.0.0", "catalog": world["cat"],
                                      "inRange": False}

    # Downgrade: only self-certified; --dry-run shows it and changes nothing.
    rc, out, err = olmv1(world, "upgrade", "extension", name, "--version", "1.0.0", "--self-certified",
                         "--create-rbac", "--dry-run")
    assert rc == 0, err
    docs = [d for d in yaml.safe_load_all(out) if d]
    ce = docs[-1]
    assert ce["kind"] == "ClusterExtension"
    assert ce["spec"]["source"]["catalog"]["version"] == "1.0.0"
    assert ce["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] == "SelfCertified"
    assert {d["kind"] for d in docs[:-1]} >= {"ServiceAccount", "ClusterRole", "Role"}
    assert kubectl_json("get", "clusterextension", name)["spec"]["source"]["catalog"]["version"] == "1.0.1"
    rc, out, err = olmv1(world, "upgrade", "extension", name, "--version", "1.0.0", "--self-certified",
                         "--create-rbac", "--wait")
    assert rc == 0, err
    assert installed(name) == "1.0.0"

    # Nothing newer in range: says so and exits 0.
    rc, out, err = olmv1(world, "upgrade", "extension", name)
    assert rc == 0 and f"{name} stays at {p}.v1.0.0 (1.0.0)" in err, err


def test_upgrade_that_cannot_happen_says_so(world, ext):
    """A ServiceAccount the CLI did not make is never touched: the upgrade is only requested
    with --no-wait (and says so), and waiting for it ends in exit 10 with the controller's
    reason."""
    name, ns = ext
    p = world["pkg"]
    rc, out, err = olmv1(world, "install", "extension", name, "--package", p, "--namespace", ns, "--version", "1.0.0",
                         "--create-rbac")
    assert rc == 0, err
    kubectl("label", "serviceaccount", f"{name}-installer", "-n", ns, f"{RBAC_LABEL}-")
    rules = kubectl_json("get", "clusterrole", f"{name}-installer")["rules"]

    rc, out, err = olmv1(world, "upgrade", "extension", name, "--version", "1.0.1", "--no-wait")
    assert rc == 0, err
    assert out == f"clusterextension {name} configured\n"
    assert err.splitlines() == [
        f"{name}: {p}.v1.0.0 1.0.0 -> {p}.v1.0.1 (1.0.1) from catalog {world['cat']}",
        f"clusterextension {name}: requested version 1.0.1, not waited for (--no-wait); watch with olmv1 get "
        f"extension {name}"]
    assert kubectl_json("get", "clusterextension", name)["spec"]["source"]["catalog"]["version"] == "1.0.1"
    assert kubectl_json("get", "clusterrole", f"{name}-installer")["rules"] == rules
    # Requested, not done: the resolver's next pick is 1.0.1, and explain says by which edge.
    row = wide_row(world, name)
    assert (row["VERSION"], row["NEXT"], row["REACHABLE"]) == ("1.0.0", "1.0.1", "2.0.0")
    rc, out, err = olmv1(world, "explain", "extension", name, "--system-namespace", world["system_ns"])
    assert rc == 0, err
    assert (f"Upgrade: would upgrade to 1.0.1 (catalog {world['cat']}, channel stable, replaces {p}.v1.0.0)\n"
            in out), out

    # Waiting for it: the installer may not create 1.0.1's roles, so the controller retries until
    # the timeout, and the exit code says it did not happen.
    rc, out, err = olmv1(world, "upgrade", "extension", name, "--timeout", "20s")
    assert rc == cli.EXIT_TIMEOUT, err
    last = err.splitlines()[-1]
    assert last.startswith(f"olmv1 upgrade extension: clusterextension {name}: not at 1.0.1 after 20s "
                           f"(installed: {p}.v1.0.0 1.0.0); Progressing Retrying: "), last
    assert "forbidden" in last
    assert "extending its RBAC" not in err
    assert installed(name) == "1.0.0"
    assert kubectl_json("get", "clusterrole", f"{name}-installer")["rules"] == rules


def test_uninstall_delete_rbac(world, ext):
    name, ns = ext
    p = world["pkg"]
    rc, _, err = olmv1(world, "install", "extension", name, "--package", p, "--namespace", ns, "--create-rbac", "--wait")
    assert rc == 0, err
    assert installed(name) == "2.0.0"
    rc, out, err = olmv1(world, "uninstall", "extension", name, "--delete-rbac")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == f"clusterextension {name} deleted"
    assert lines[1:] == [f"rolebinding {ns}/{name}-installer deleted", f"role {ns}/{name}-installer deleted",
                         f"clusterrolebinding {name}-installer deleted", f"clusterrole {name}-installer deleted",
                         f"serviceaccount {ns}/{name}-installer deleted", f"namespace {name[:50]} deleted"]
    # The uninstall itself ran (as the ServiceAccount) before its RBAC went.
    for args in (("clusterextension", name), ("clusterrole", f"{name}-installer")):
        assert kubectl("get", *args, "--ignore-not-found", "-o", "name").stdout.strip() == ""
    left = kubectl("get", "clusterroles,clusterrolebindings", "-l", f"olm.operatorframework.io/owner-name={name}",
                   "-o", "name").stdout.strip()
    assert left == ""


def test_uninstall_keeps_a_namespace_it_did_not_make(world, ext):
    name, ns = ext
    olmv1_e2e.setup_namespace(ns, olmv1_e2e.SA_RULES_FULL)
    rc, _, err = olmv1(world, "install", "extension", name, "--package", world["pkg"], "--namespace", ns,
                       "--service-account", "installer", "--wait")
    assert rc == 0, err
    rc, out, err = olmv1(world, "uninstall", "extension", name, "--wait")
    assert (rc, out) == (0, f"clusterextension {name} deleted\n"), err
    assert kubectl("get", "namespace", ns, "-o", "name").stdout.strip() == f"namespace/{ns}"
    assert kubectl("get", "serviceaccount", "installer", "-n", ns, "-o", "name").stdout.strip()


def test_bad_input(world):
    assert cli.fails(cli.EXIT_NOT_FOUND, "upgrade", "extension", "no-such-ext", "--version", "1.0.0") == \
        'olmv1 upgrade extension: clusterextensions.olm.operatorframework.io "no-such-ext" not found (HTTP 404 Not Found)'
    cli.fails(cli.EXIT_NOT_FOUND, "uninstall", "extension", "no-such-ext")
    cli.fails(cli.EXIT_USAGE, "upgrade", "extension")
    cli.fails(cli.EXIT_USAGE, "upgrade", "extension", "x", "--self-certified", "--catalog-provided")
    cli.fails(cli.EXIT_USAGE, "upgrade", "extension", "x", "--wait", "--no-wait")
    cli.fails(cli.EXIT_USAGE, "install", "extension", "x", "--package", "p", "--namespace", "n", "--dry-run", "--wait")
    cli.fails(cli.EXIT_USAGE, "uninstall", "extension", "a", "b")
    cli.fails(cli.EXIT_USAGE, "uninstall", "extension", "a", "--timeout", "soon")


# ---------------------------------------------------------------- explain (issue 14, part 5)


def test_explain_blocked_upgrade_and_what_resolves(world, ext):
    name, ns = ext
    p = world["pkg"]
    rc, _, err = olmv1(world, "install", "extension", name, "--package", p, "--namespace", ns, "--version", "1.0.0",
                       "--create-rbac", "--wait")
    assert rc == 0, err
    # Someone asks for 2.0.0 with kubectl: operator-controller refuses (no edge from 1.0.0).
    kubectl("patch", "clusterextension", name, "--type=merge", "-p",
            '{"spec":{"source":{"catalog":{"version":"2.0.0"}}}}')
    rc, out, err = olmv1(world, "explain", "extension", name, "--system-namespace", world["system_ns"])
    assert rc == cli.EXIT_NO_MATCH, err
    assert err == (f'olmv1 explain extension: error upgrading from currently installed version "1.0.0": '
                   f'no bundles found for package "{p}" matching version "2.0.0"\n')
    assert f"Installed: {p}.v1.0.0 (1.0.0)" in out
    assert "  version range: 2.0.0" in out
    rows = {r["VERSION"]: r for r in cli.table(out.split("Candidates (every bundle of the package in the selected "
                                                         "catalogs):\n")[1].split("\n\n")[0])}
    assert rows["2.0.0"]["VERDICT"] == f"no upgrade edge from {p}.v1.0.0"
    assert rows["2.0.0"]["EDGE FROM INSTALLED"] == "none"
    assert rows["1.0.1"]["EDGE FROM INSTALLED"] == f"replaces {p}.v1.0.0"
    assert rows["1.0.1"]["VERDICT"] == "not in range 2.0.0"
    assert rows["1.0.0"]["EDGE FROM INSTALLED"] == "same version"
    assert "what blocks: upgrade edges: no bundle in the channels and range is a successor of" in out
    assert "--self-certified" in out
    assert f'successors of installed "{p}.v1.0.0" (1.0.0)' in out  # the resolver's own reasoning

    # Any version: 1.0.1 is the successor the resolver picks (2.0.0 has no edge from 1.0.0).
    kubectl("patch", "clusterextension", name, "--type=json", "-p",
            '[{"op":"remove","path":"/spec/source/catalog/version"}]')
    rc, out, err = olmv1(world, "explain", "extension", name, "-o", "json", "--system-namespace", world["system_ns"])
    assert rc == 0, err
    report = __import__("json").loads(out)
    assert report["resolution"]["resolved"] is True
    assert (report["resolution"]["bundle"], report["resolution"]["version"]) == (f"{p}.v1.0.1", "1.0.1")
    assert report["installed"] == {"bundle": f"{p}.v1.0.0", "version": "1.0.0"}
    verdicts = {c["version"]: c["verdict"] for c in report["candidates"]}
    assert verdicts == {"2.0.0": f"no upgrade edge from {p}.v1.0.0", "1.0.1": "candidate", "1.0.0": "candidate"}
    # OpenShift's API is served in this cluster (the e2e CRDs): the verdict is there.
    assert "openshift" in report


def test_explain_openshift_verdict(world, ext, cleanup):
    name, ns = ext
    rc, _, err = olmv1(world, "install", "extension", name, "--package", world["pkg"], "--namespace", ns,
                       "--version", "1.0.0", "--create-rbac", "--wait")
    assert rc == 0, err
    kubectl("delete", "clusterversion", "version", "--ignore-not-found", "--wait=true")
    cleanup("clusterversion", "version")
    kubectl("create", "-f", "-", input={"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
                                        "metadata": {"name": "version"}, "spec": {"clusterID": "e2e"}})
    kubectl("patch", "clusterversion", "version", "--subresource=status", "--type=merge", "-p",
            '{"status":{"desired":{"version":"4.18.3"}}}')
    rc, out, err = olmv1(world, "explain", "extension", name, "--system-namespace", world["system_ns"])
    assert rc == 0, err
    assert "OpenShift 4.18.3 -> 4.19: ok: no olm.maxOpenShiftVersion (ClusterOperator olm Upgradeable=True)" in out
    assert f"Verdict: stays at {world['pkg']}.v1.0.0 (1.0.0)" in out


def test_explain_not_found(world):
    assert cli.fails(cli.EXIT_NOT_FOUND, "explain", "extension", "no-such-ext").startswith(
        'olmv1 explain extension: clusterextensions.olm.operatorframework.io "no-such-ext" not found')
    cli.fails(cli.EXIT_USAGE, "explain", "extension")
    cli.fails(cli.EXIT_USAGE, "explain", "extension", "x", "-o", "yaml")


def _dot_nodes(dot):
    """{version: the node's whole DOT line} of `explain --graph -o dot`."""
    import re
    return {m.group(1): m.group(0) for m in re.finditer(r"^  b\d+ \[label=<<B>([^<]+)</B>.*$", dot, re.M)}


def test_explain_graph(world, ext):
    """explain --graph draws what explain says: installed, why each bundle is out, the pick."""
    name, ns = ext
    p = world["pkg"]
    rc, _, err = olmv1(world, "install", "extension", name, "--package", p, "--namespace", ns, "--version", "1.0.0",
                       "--create-rbac", "--wait")
    assert rc == 0, err
    kubectl("patch", "clusterextension", name, "--type=merge", "-p",
            '{"spec":{"source":{"catalog":{"version":"2.0.0"}}}}')
    rc, dot, err = olmv1(world, "explain", "extension", name, "--graph", "-o", "dot")
    assert rc == cli.EXIT_NO_MATCH, err  # blocked: the picture is drawn all the same
    nodes = _dot_nodes(dot)
    assert set(nodes) == {"1.0.0", "1.0.1", "2.0.0"}
    assert "<I>installed</I>" in nodes["1.0.0"] and "peripheries=2" in nodes["1.0.0"]
    assert f"<I>out: no upgrade edge from {p}.v1.0.0</I>" in nodes["2.0.0"]
    assert "<I>out: not in range 2.0.0</I>" in nodes["1.0.1"]
    assert "reachable by upgrade edges" in nodes["2.0.0"]  # 1.0.0 -> 1.0.1 -> 2.0.0
    assert "the resolver picks this" not in dot
    assert "channel <B>stable</B> (default)" in dot

    kubectl("patch", "clusterextension", name, "--type=json", "-p",
            '[{"op":"remove","path":"/spec/source/catalog/version"}]')
    rc, dot, err = olmv1(world, "explain", "extension", name, "--graph", "-o", "dot")
    assert rc == 0, err
    nodes = _dot_nodes(dot)
    assert "<I>the resolver picks this</I>" in nodes["1.0.1"] and 'fillcolor="#86efac"' in nodes["1.0.1"]
    assert "<I>allowed</I>" in nodes["1.0.0"]
    rc, svg, err = olmv1(world, "explain", "extension", name, "--graph")
    assert rc == 0 and svg.lstrip().startswith("<?xml") and "<svg" in svg, err
    assert ">the resolver picks this</text>" in svg
    rc, mermaid, err = olmv1(world, "explain", "extension", name, "--graph", "-o", "mermaid")
    assert rc == 0 and mermaid.startswith("flowchart BT\n"), err
    assert " installed\n" in mermaid and " picked\n" in mermaid
    cli.fails(cli.EXIT_USAGE, "explain", "extension", name, "--graph", "-o", "json")
