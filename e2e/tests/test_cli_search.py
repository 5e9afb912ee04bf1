"""`olmv1 search` against catalogd on the test cluster (issue 14, part 2).

catalogd serves HTTPS with status.urls.base https://catalogd-service.<system ns>.svc/catalogs/<name>,
as on a real cluster; a kwok Pod and the Service catalogd-service stand for its Deployment, and the
egress proxy (egress_proxy.py) carries the apiserver's service-proxy connections to it on 127.0.0.1.
So `olmv1 search` takes the real path: ClusterCatalog -> status.urls.base -> the apiserver's
.../services/https:catalogd-service:443/proxy/catalogs/<name>/api/v1/... -> catalogd.  The same
searches go straight to catalogd with OLMV1_CATALOGD_URL.

Package P: channel stable 1.0.0 -> 1.1.0 -> 2.0.0, channel fast 1.1.0 -> 2.0.0; bundle 1.0.0 and
channel fast deprecated.  Package Q (one version) in a second catalog."""

import json

import pytest
import yaml

import olmv1_cli as cli
import olmv1_e2e
from conftest import kubectl, unique
from egress_proxy import EgressProxy

LABEL = "e2e-cli-search"


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("cli-search"), LABEL) as env:
        cli.restart_catalogd_tls(env)
        cli.catalogd_service(env)
        proxy = EgressProxy()
        try:
            pkg, pkg2 = unique("srch"), unique("srchq")
            images = olmv1_e2e.push_bundles(env, pkg, ("1.0.0", "1.1.0", "2.0.0"))
            extra = [
                {"schema": "olm.channel", "name": "fast", "package": pkg,
                 "entries": [{"name": f"{pkg}.v1.1.0"}, {"name": f"{pkg}.v2.0.0", "replaces": f"{pkg}.v1.1.0"}]},
                {"schema": "olm.deprecations", "package": pkg, "entries": [
                    {"reference": {"schema": "olm.bundle", "name": f"{pkg}.v1.0.0"}, "message": "1.0.0 has a CVE"},
                    {"reference": {"schema": "olm.channel", "name": "fast"}, "message": "fast is going away"}]},
            ]
            ref = olmv1_e2e.push_catalog(env, pkg, images, ("1.0.0", "1.1.0", "2.0.0"), "latest", extra)
            cat = olmv1_e2e.create_catalog(env, pkg, ref)
            images2 = olmv1_e2e.push_bundles(env, pkg2, ("0.1.0",))
            cat2 = olmv1_e2e.create_catalog(env, pkg2, olmv1_e2e.push_catalog(env, pkg2, images2, ("0.1.0",), "latest"))
            env.update(pkg=pkg, pkg2=pkg2, cat=cat, cat2=cat2, proxy=proxy)
            yield env
        finally:
            proxy.stop()


def search(*args, env=None):
    return cli.ok("search", *args, env=env if env is not None else cli.proxy_env())


def test_package_through_the_service_proxy(world):
    before = world["proxy"].forwarded
    (row,) = cli.table(search("--package", world["pkg"], "--catalog", world["cat"]))
    assert world["proxy"].forwarded > before  # the apiserver dialled catalogd through the egress proxy
    assert row == {"PACKAGE": world["pkg"], "CATALOG": world["cat"], "DEFAULT CHANNEL": "stable",
                   "CHANNELS (HEAD VERSION)": "fast (2.0.0), stable (2.0.0)",
                   "DEPRECATED": "channel fast: fast is going away"}


def test_list_versions(world):
    rows = cli.table(search("--package", world["pkg"], "--list-versions"))
    p = world["pkg"]
    assert [(r["VERSION"], r["BUNDLE"], r["CHANNELS"], r["DEPRECATED"]) for r in rows] == [
        ("2.0.0", f"{p}.v2.0.0", "fast,stable", ""),
        ("1.1.0", f"{p}.v1.1.0", "fast,stable", ""),
        ("1.0.0", f"{p}.v1.0.0", "stable", "1.0.0 has a CVE")]
    assert {r["CATALOG"] for r in rows} == {world["cat"]}


def test_channel_filter_and_json(world):
    rows = cli.table(search("--package", world["pkg"], "--channel", "fast", "--list-versions"))
    assert [(r["VERSION"], r["CHANNELS"]) for r in rows] == [("2.0.0", "fast"), ("1.1.0", "fast")]
    (s,) = json.loads(search("--package", world["pkg"], "-o", "json"))
    assert s["package"] == world["pkg"] and s["catalog"] == world["cat"] and s["deprecation"] is None
    assert s["channels"] == [
        {"name": "fast", "head": f"{world['pkg']}.v2.0.0", "headVersion": "2.0.0", "deprecation": "fast is going away"},
        {"name": "stable", "head": f"{world['pkg']}.v2.0.0", "headVersion": "2.0.0", "deprecation": None}]
    assert [b["version"] for b in s["bundles"]] == ["2.0.0", "1.1.0", "1.0.0"]
    assert s["bundles"][0]["image"].startswith(world["registry"])
    y = yaml.safe_load(search("--package", world["pkg2"], "-o", "yaml"))
    assert y[0]["bundles"][0]["version"] == "0.1.0"


def test_direct_catalogd_url(world):
    before = world["proxy"].forwarded
    direct = search("--package", world["pkg"], "--list-versions", env=cli.direct_env(world))
    assert world["proxy"].forwarded == before
    assert direct == search("--package", world["pkg"], "--list-versions")
    out = cli.ok("search", "--package", world["pkg"], "--catalogd-url", f"https://127.0.0.1:{world['catalogd'].port}",
                 env={"OLMV1_CATALOGD_CA_FILE": cli.TLS_DIR / "server.crt", "OLMV1_CATALOGD_URL": None})
    assert out == search("--package", world["pkg"])


def test_keyword_across_catalogs(world):
    # Both packages start with "srch"; other modules' catalogs may be around, and unreadable.
    rc, out, err = cli.run("search", "srch", env=cli.proxy_env())
    assert rc == 0, err
    names = {(r["PACKAGE"], r["CATALOG"]) for r in cli.table(out)}
    assert {(world["pkg"], world["cat"]), (world["pkg2"], world["cat2"])} <= names
    assert all(ln.startswith("olmv1 search: warning: skipped ") for ln in err.splitlines())
    (row,) = cli.table(search(world["pkg2"][-8:], "--catalog", world["cat2"], "--catalog", world["cat"]))
    assert row["PACKAGE"] == world["pkg2"]


def test_not_found(world):
    p = world["pkg"]
    assert cli.fails(cli.EXIT_NOT_FOUND, "search", "--package", "no-such-package", "--catalog", world["cat"]) == \
        'olmv1 search: no package "no-such-package" in the catalogs'
    assert "no-such-catalog" in cli.fails(cli.EXIT_NOT_FOUND, "search", "--catalog", "no-such-catalog")
    assert cli.fails(cli.EXIT_NOT_FOUND, "search", "--package", p, "--channel", "beta") == \
        f'olmv1 search: no package "{p}" with channel "beta" in the catalogs'
    cli.fails(cli.EXIT_NOT_FOUND, "search", "zzz-nothing-like-this", "--catalog", world["cat"])


def test_catalog_problems(world, cleanup):
    # Not serving (its image does not exist): exit 6 when it is the only one asked for.
    broken = cleanup("clustercatalog", unique("srch-broken"))
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog", "metadata": {"name": broken},
        "spec": {"source": {"type": "Image", "image": {"ref": f"{world['registry']}/e2e/no-such-catalog:v1"}}}})
    assert cli.fails(cli.EXIT_NO_CATALOGS, "search", "--catalog", broken) == \
        f'olmv1 search: catalog "{broken}" is not being served'
    # With a good one besides: a warning, and the good one's packages.
    rc, out, err = cli.run("search", "--catalog", broken, "--catalog", world["cat"], env=cli.proxy_env())
    assert rc == 0 and world["pkg"] in out
    assert err == f'olmv1 search: warning: skipped catalog "{broken}" is not being served\n'
    # Unavailable by choice.
    off = cleanup("clustercatalog", unique("srch-off"))
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog", "metadata": {"name": off},
        "spec": {"availabilityMode": "Unavailable",
                 "source": {"type": "Image", "image": {"ref": f"{world['registry']}/e2e/no-such-catalog:v1"}}}})
    assert "availabilityMode Unavailable" in cli.fails(cli.EXIT_NO_CATALOGS, "search", "--catalog", off)


def test_unreachable_and_forbidden(world, cleanup, tmp_path):
    line = cli.fails(cli.EXIT_UNREACHABLE, "search", "--catalog", world["cat"],
                     env={"OLMV1_CATALOGD_URL": "https://127.0.0.1:1"})
    assert line.startswith(f'olmv1 search: catalog "{world["cat"]}": ') and "127.0.0.1:1" in line
    # May list catalogs but not use the service proxy: forbidden, with the apiserver's reason.
    ns = cleanup("namespace", unique("srch-user"))
    kubectl("create", "namespace", ns)
    role = cleanup("clusterrole", unique("srch-reader"))
    kubectl("create", "clusterrole", role, "--verb=get,list", "--resource=clustercatalogs.olm.operatorframework.io")
    cleanup("clusterrolebinding", role)
    kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}", f"--serviceaccount={ns}:reader")
    kc = cli.identity(tmp_path, ns, "reader")
    line = cli.fails(cli.EXIT_FORBIDDEN, "search", "--catalog", world["cat"], "--kubeconfig", kc, env=cli.proxy_env())
    assert 'services "https:catalogd-service:443" is forbidden' in line and '"services/proxy"' in line
    # Granted get on services/proxy of that one Service: works.
    kubectl("create", "role", "catalogd-proxy", "-n", world["system_ns"], "--verb=get",
            "--resource=services/proxy", "--resource-name=https:catalogd-service:443")
    kubectl("create", "rolebinding", "catalogd-proxy", "-n", world["system_ns"], "--role=catalogd-proxy",
            f"--serviceaccount={ns}:reader")
    assert world["pkg"] in cli.ok("search", "--catalog", world["cat"], "--kubeconfig", kc, env=cli.proxy_env())


def test_usage(world):
    cli.fails(cli.EXIT_USAGE, "search", "a", "b")
    cli.fails(cli.EXIT_USAGE, "search", "-o", "wide")
    cli.fails(cli.EXIT_USAGE, "search", "kw", "--package", "p")
    cli.fails(cli.EXIT_USAGE, "search", "--catalogd-url", "ftp://x")
