"""`olmv1 install extension` on the test cluster, with operator-controller and catalogd running
as their least-privilege ServiceAccounts (issue 14, part 3).

catalogd serves plain http on 127.0.0.1 here (operator-controller must reach it, and the host has no
cluster DNS), so olmv1 reads it with OLMV1_CATALOGD_URL; test_cli_search covers the service proxy.
The heart: `--create-rbac` derives the installer ServiceAccount's RBAC from the rendered bundle,
and operator-controller then installs the bundle as that ServiceAccount with nothing else: the
install succeeding proves the rules suffice; `kubectl auth can-i` shows they are no wider (named
objects only, no wildcard, no cluster-admin).  Also: --dry-run -o yaml for review (nothing
created), installing with an existing ServiceAccount, a SingleNamespace bundle whose Roles go to
the watched namespace, and each class of bad input with its exit code."""

import json

import pytest
import yaml

import olmv1_cli as cli
import olmv1_e2e
from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import SA_RULES_FULL, delete_namespace, setup_namespace

LABEL = "e2e-cli-install"
RBAC_LABEL = "olmv1.operatorframework.io/installer-rbac-for"
RULES = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("cli-install"), LABEL) as env:
        pkg = unique("inst")
        images = olmv1_e2e.push_bundles(env, pkg, ("1.0.0", "1.1.0"), rules=RULES)
        cat = olmv1_e2e.create_catalog(env, pkg, olmv1_e2e.push_catalog(env, pkg, images, ("1.0.0", "1.1.0"), "latest"))
        # A SingleNamespace/OwnNamespace package: its permissions become Roles in the watched namespace.
        spkg = unique("insts")
        simages = olmv1_e2e.push_bundles(env, spkg, ("1.0.0",), supported=("SingleNamespace", "OwnNamespace"),
                                         rules=RULES, cluster_rules=None)
        scat = olmv1_e2e.create_catalog(env, spkg, olmv1_e2e.push_catalog(env, spkg, simages, ("1.0.0",), "latest"))
        # A package whose only bundle has an image reference nobody can parse: the controller gives
        # up on it (Progressing False/Blocked), which the waiting install reports as exit 11.
        bpkg = unique("instb")
        bcat = olmv1_e2e.create_catalog(env, bpkg, olmv1_e2e.push_catalog(
            env, bpkg, {"1.0.0": "registry.invalid/Not:A::Ref"}, ("1.0.0",), "latest"))
        env.update(pkg=pkg, images=images, cat=cat, spkg=spkg, scat=scat, bpkg=bpkg, bcat=bcat)
        yield env


@pytest.fixture
def ext(world, name):
    """A ClusterExtension name and namespace for the test; removes both and the RBAC afterwards."""
    ns = name[:50]
    world["ces"].append(name)
    yield name, ns
    kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False)
    for kind in ("clusterrolebinding", "clusterrole"):
        kubectl("delete", kind, "-l", f"{RBAC_LABEL}={name}", "--ignore-not-found", check=False)
    delete_namespace(ns)


def install(world, name, ns, *args, pkg=None, env=None):
    return cli.run("install", "extension", name, "--package", pkg or world["pkg"], "--namespace", ns, *args,
                   env=env if env is not None else cli.direct_env(world))


def docs_by_kind(text):
    out = {}
    for d in yaml.safe_load_all(text):
        if d:
            out.setdefault(d["kind"], []).append(d)
    return out


def rendered(world, version, ns):
    d = olmv1_e2e.olmv1_bundles.write_bundle(world["work"] / "render" / ns, world["pkg"], version, rules=RULES)
    out = cli.ok("bundle", "render", d, "--install-namespace", ns, "-o", "json")
    return json.loads(out)["items"]


def test_dry_run_prints_least_rbac_and_creates_nothing(world, ext):
    name, ns = ext
    rc, out, err = install(world, name, ns, "--create-rbac", "--dry-run", "-o", "yaml")
    assert rc == 0, err
    assert err == f"{name} resolves to {world['pkg']}.v1.1.0 (1.1.0) from catalog {world['cat']}\n"
    docs = docs_by_kind(out)
    assert [d["metadata"]["name"] for d in docs["Namespace"]] == [ns]
    assert docs["ServiceAccount"][0]["metadata"] == {
        "name": f"{name}-installer", "namespace": ns, "labels": {RBAC_LABEL: name},
        "annotations": {"olmv1.operatorframework.io/derived-from-bundle": f"{world['pkg']}.v1.1.0"}}
    (ce,) = docs["ClusterExtension"]
    assert ce["spec"] == {"namespace": ns, "serviceAccount": {"name": f"{name}-installer"},
                          "source": {"sourceType": "Catalog", "catalog": {"packageName": world["pkg"]}}}
    assert "*" not in out and "cluster-admin" not in out
    # Every rendered object is named in a rule; the bundle's ClusterRoles get escalate + bind by name.
    (cr,) = docs["ClusterRole"]
    (role,) = docs["Role"]
    named = {n for r in cr["rules"] + role["rules"] for n in r.get("resourceNames", [])}
    objs = rendered(world, "1.1.0", ns)
    assert {o["metadata"]["name"] for o in objs} <= named
    bundle_crs = [o["metadata"]["name"] for o in objs if o["kind"] == "ClusterRole"]
    assert bundle_crs
    esc = [r for r in cr["rules"] if "escalate" in r["verbs"]]
    assert {n for r in esc for n in r["resourceNames"]} == set(bundle_crs)
    assert all("bind" in r["verbs"] for r in esc)
    for r in cr["rules"] + role["rules"]:
        assert r.get("resourceNames") or sorted(r["verbs"]) == ["list", "watch"], r
    # Nothing was created.
    assert kubectl("get", "namespace", ns, "--ignore-not-found", "-o", "name").stdout.strip() == ""
    assert kubectl("get", "clusterextension", name, "--ignore-not-found", "-o", "name").stdout.strip() == ""
    # JSON: one v1 List.
    rc, out, _ = install(world, name, ns, "--create-rbac", "--dry-run", "-o", "json")
    assert rc == 0 and json.loads(out)["kind"] == "List"


def test_create_rbac_installs_as_the_derived_service_account(world, ext):
    name, ns = ext
    # Waiting is the default: exit 0 means operator-controller has installed it.
    rc, out, err = install(world, name, ns, "--create-rbac", "--timeout", "3m")
    assert rc == 0, f"{out}\n{err}"
    lines = out.splitlines()
    assert lines[0] == f"namespace {ns} created"
    assert f"serviceaccount {ns}/{name}-installer created" in lines
    assert f"clusterrole {name}-installer created" in lines and f"role {ns}/{name}-installer created" in lines
    assert lines[-1] == f"clusterextension {name} created"
    assert f"clusterextension {name}: installed {world['pkg']}.v1.1.0 (1.1.0)" in err
    # Installed by operator-controller as the ServiceAccount holding exactly the derived RBAC.
    obj = kubectl_json("get", "clusterextension", name)
    assert obj["status"]["install"]["bundle"]["version"] == "1.1.0"
    assert obj["spec"]["serviceAccount"]["name"] == f"{name}-installer"
    assert olmv1_e2e.configmap_version(world["pkg"], ns) == "1.1.0"
    (row,) = cli.table(cli.ok("get", "extension", name))
    assert (row["INSTALLED"], row["PROGRESSING"], row["MESSAGE"]) == ("True", "True", "")
    # No wider than that: other names, other kinds, other namespaces are refused.
    sa = f"system:serviceaccount:{ns}:{name}-installer"

    def can(*args):
        return kubectl("auth", "can-i", *args, f"--as={sa}", check=False).stdout.strip() == "yes"

    pkg = world["pkg"]
    assert can("patch", f"deployment/{pkg}-manager", "-n", ns)
    assert can("delete", f"configmap/{pkg}-config", "-n", ns)
    assert not can("patch", "deployment/other", "-n", ns)
    assert not can("create", "deployments", "-n", "default")
    assert not can("get", "secrets", "-n", ns)
    assert not can("create", "clusterroles")
    assert not can("escalate", "clusterrole/cluster-admin")
    assert not can("bind", "clusterrole/cluster-admin")
    assert not can("*", "*")
    assert can("list", "deployments", "-n", ns) and not can("list", "deployments", "-A")
    # The same again: the extension exists.
    line = cli.fails(cli.EXIT_CONFLICT, "install", "extension", name, "--package", pkg, "--namespace", ns,
                     env=cli.direct_env(world))
    assert "already exists" in line


def test_existing_service_account_and_pinned_version(world, ext):
    name, ns = ext
    setup_namespace(ns, SA_RULES_FULL)
    try:
        rc, out, err = install(world, name, ns, "--service-account", "installer", "--version", "1.0.0",
                               "--catalog", world["cat"], "--wait", env=cli.direct_env(world))
        assert rc == 0, err
        assert out == f"clusterextension {name} created\n"
        ce = kubectl_json("get", "clusterextension", name)
        assert ce["spec"]["source"]["catalog"]["version"] == "1.0.0"
        assert ce["spec"]["source"]["catalog"]["selector"] == {
            "matchLabels": {"olm.operatorframework.io/metadata.name": world["cat"]}}
        assert ce["status"]["install"]["bundle"]["version"] == "1.0.0"
    finally:
        kubectl("delete", "clusterextension", name, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False)
        delete_namespace(ns)


def test_blocked_install_exits_11_with_the_reason(world, ext):
    name, ns = ext
    setup_namespace(ns, SA_RULES_FULL)
    rc, out, err = install(world, name, ns, "--service-account", "installer", "--timeout", "2m", pkg=world["bpkg"])
    assert rc == cli.EXIT_BLOCKED, err
    assert out == f"clusterextension {name} created\n"
    assert err.splitlines()[-1].startswith(
        f"olmv1 install extension: clusterextension {name}: Progressing Blocked: error for resolved bundle "
        f'"{world["bpkg"]}.v1.0.0" with version "1.0.0": error parsing image reference '
        f'"registry.invalid/Not:A::Ref": '), err


def test_single_namespace_roles_go_to_the_watched_namespace(world, ext, cleanup):
    name, ns = ext
    watched = cleanup("namespace", unique("watched"))
    rc, out, err = install(world, name, ns, "--create-rbac", "--dry-run", "--watch-namespace", watched,
                           pkg=world["spkg"])
    assert rc == 3 and f'namespace "{watched}" does not exist' in err, err
    kubectl("create", "namespace", watched)
    rc, out, err = install(world, name, ns, "--create-rbac", "--watch-namespace", watched, "--wait",
                           pkg=world["spkg"])
    assert rc == 0, err
    assert f"role {watched}/{name}-installer created" in out
    ce = kubectl_json("get", "clusterextension", name)
    assert ce["spec"]["config"] == {"configType": "Inline", "inline": {"watchNamespace": watched}}
    roles = kubectl_json("get", "roles", "-n", watched, "-l", f"olm.operatorframework.io/owner-name={name}")["items"]
    assert roles, "the bundle's Role was not created in the watched namespace"
    kubectl("delete", "role", f"{name}-installer", "-n", watched, check=False)
    kubectl("delete", "rolebinding", f"{name}-installer", "-n", watched, check=False)


def test_bad_input(world, ext, cleanup, tmp_path):
    name, ns = ext
    p = world["pkg"]
    line = cli.fails(cli.EXIT_NO_MATCH, "install", "extension", name, "--package", p, "--namespace", ns,
                     "--version", ">=9.0.0", env=cli.direct_env(world))
    assert line == (f'olmv1 install extension: no bundles found for package "{p}" matching version ">=9.0.0"')
    line = cli.fails(cli.EXIT_NOT_FOUND, "install", "extension", name, "--package", "no-such-pkg", "--namespace", ns,
                     env=cli.direct_env(world))
    assert line == 'olmv1 install extension: no package "no-such-pkg" in the selected catalogs'
    line = cli.fails(cli.EXIT_NO_CATALOGS, "install", "extension", name, "--package", p, "--namespace", ns,
                     "--catalog", "no-such-catalog", env=cli.direct_env(world))
    assert line == "olmv1 install extension: no ClusterCatalog matches the catalog selector"
    cli.fails(cli.EXIT_USAGE, "install", "extension", "Bad_Name", "--package", p, "--namespace", ns)
    cli.fails(cli.EXIT_USAGE, "install", "extension", name, "--package", p)
    cli.fails(cli.EXIT_USAGE, "install", "extension", name, "--package", p, "--namespace", ns, "--version", "x.y")
    cli.fails(cli.EXIT_USAGE, "install", "extension", name, "--package", p, "--namespace", ns,
              "--catalog-selector", "a in b")
    # Nobody: forbidden.
    other = cleanup("namespace", unique("nobody"))
    kubectl("create", "namespace", other)
    kc = cli.identity(tmp_path, other, "nobody")
    line = cli.fails(cli.EXIT_FORBIDDEN, "install", "extension", name, "--package", p, "--namespace", ns,
                     "--kubeconfig", kc)
    assert "forbidden" in line
    assert kubectl("get", "clusterextension", name, "--ignore-not-found", "-o", "name").stdout.strip() == ""


def test_warns_when_the_identity_is_missing(world, ext):
    name, ns = ext
    rc, out, err = install(world, name, ns, "--dry-run")
    assert rc == 0, err
    assert err.splitlines()[-1] == (f"warning: namespace {ns} does not exist: the extension waits for it and for "
                                    f"ServiceAccount {name}-installer with RBAC (or use --create-rbac)")
    (ce,) = [d for d in yaml.safe_load_all(out) if d]
    assert ce["kind"] == "ClusterExtension"
