"""Private and mirrored registries (issue 13): registries.conf v2 and --global-pull-secret, applied
by both daemons to every pull.

The module runs its own catalogd and operator-controller (as their ServiceAccounts, with the RBAC of
config/rbac: the pull secret is readable only by its name) with
  --registries-conf <work>/registries.conf   mirrors "registry A" (a loopback port nothing listens
                                             on) to the test registry, and blocks one repository;
  --global-pull-secret <system ns>/olmv1-global-pull-secret
and a second docker-registry of its own that wants a login (htpasswd, bcrypt entries), started and
stopped by PID.  Every wait polls with a generous deadline; nothing asserts timing.
"""

import base64
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import olmv1_bundles
import olmv1_cli as cli
import olmv1_e2e
from conftest import kubectl, kubectl_json, unique  # noqa: F401
from olmv1_e2e import (CATALOGD_WAIT, configmap_version, create_catalog, delete_ce, free_port, ns,  # noqa: F401
                       olmv1, push_catalog, wait_for, wait_installed)

LABEL = "e2e-registries"
SECRET = "olmv1-global-pull-secret"  # the name config/rbac lets the daemons read
USER = "olmv1"


class AuthRegistry:
    """A docker-registry on 127.0.0.1 that wants Basic auth (htpasswd); restartable with another
    password over the same storage and port.  Stopped by PID."""

    def __init__(self, root):
        self.root = Path(root)
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.proc = None
        self.password = None
        self.log = None

    def start(self, password):
        binary = shutil.which("docker-registry") or "/usr/bin/docker-registry"
        htpasswd = shutil.which("htpasswd")
        if not htpasswd:
            pytest.fail("htpasswd is not installed (apt-get install apache2-utils)")
        hp = self.root / "htpasswd"
        out = subprocess.run([htpasswd, "-Bbn", USER, password], capture_output=True, text=True, check=True)
        hp.write_text(out.stdout)
        cfg = self.root / "config.yml"
        cfg.write_text("version: 0.1\nlog:\n  level: warn\n"
                       f"storage:\n  filesystem:\n    rootdirectory: {self.root}/data\n"
                       f"http:\n  addr: {self.host}\n  secret: e2e-registries\n"
                       f"auth:\n  htpasswd:\n    realm: olmv1-e2e\n    path: {hp}\n")
        self.log = open(self.root / "registry.log", "ab")
        self.proc = subprocess.Popen([binary, "serve", str(cfg)], stdout=self.log, stderr=subprocess.STDOUT)
        self.password = password

        def up():
            try:
                urllib.request.urlopen(f"http://{self.host}/v2/", timeout=2)
            except urllib.error.HTTPError as e:
                return e.code == 401  # answering, and wanting a login
            except OSError:
                return False
            return False
        deadline = time.monotonic() + 30
        while not up():
            assert self.proc.poll() is None, (self.root / "registry.log").read_text(errors="replace")
            assert time.monotonic() < deadline, "the auth registry did not start"
            time.sleep(0.1)

    def stop(self):
        if self.proc is None:
            return
        self.proc.terminate()  # our own child, by PID
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.log.close()

    def dockerconfig(self, password=None):
        auth = base64.b64encode(f"{USER}:{password or self.password}".encode()).decode()
        return {"auths": {self.host: {"auth": auth}}}

    def authfile(self, work):
        p = Path(work) / f"auth-{self.password}.json"
        p.write_text(json.dumps(self.dockerconfig()))
        return p


def closed_port():
    """A loopback port nothing listens on: "registry A", unreachable."""
    return free_port()


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    work = tmp_path_factory.mktemp("registries")
    registry = olmv1_e2e.require_binaries()
    a_host = f"127.0.0.1:{closed_port()}"
    dead_mirror = f"127.0.0.1:{closed_port()}"
    conf = work / "registries.conf"
    # A's "mirrored" repositories come from the test registry's "mirror-of-a" ones; a digest-only mirror
    # that is down comes first (bundle pulls, by digest, try it and move on; the catalog's tag skips it).
    conf.write_text(f"""# e2e: registry A is reachable only through its mirror
[[registry]]
prefix = "{a_host}/mirrored"
location = "{a_host}/mirrored"

[[registry.mirror]]
location = "{dead_mirror}/nothing"
pull-from-mirror = "digest-only"

[[registry.mirror]]
location = "{registry}/mirror-of-a"
""")
    dropins = work / "registries.conf.d"
    dropins.mkdir()
    (dropins / "50-blocked.conf").write_text(f'[[registry]]\nlocation = "{registry}/blocked"\nblocked = true\n')
    auth = AuthRegistry(work / "auth-registry")
    auth.root.mkdir()
    auth.start("first-password")
    system_ns = unique("olmv1-sys")
    flags = ["--registries-conf", str(conf), "--global-pull-secret", f"{system_ns}/{SECRET}"]
    try:
        with olmv1_e2e.olm_env(work, LABEL, catalogd_extra=flags, ctl_extra=flags, system_ns=system_ns) as e:
            e.update({"a_host": a_host, "auth": auth, "conf": conf, "dropins": dropins})
            yield e
    finally:
        auth.stop()


def catalog_conditions(name):
    obj = kubectl_json("get", "clustercatalog", name)
    return {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}


def wait_catalog_message(env, name, contains):
    """Progressing (Retrying) with a message containing `contains`; returns the conditions."""
    def check():
        c = catalog_conditions(name)
        p = c.get("Progressing", {})
        return contains in p.get("message", "") and p.get("reason") == "Retrying" and c
    return env["catalogd"].wait_for(check, f"ClusterCatalog {name} to say {contains!r}", timeout=CATALOGD_WAIT)


def apply_catalog(env, pkg, ref, poll=False):
    """A ClusterCatalog of `ref` (not waited for)."""
    name = unique("regcat")
    image = {"ref": ref}
    if poll:
        image["pollIntervalMinutes"] = 1  # every second here (catalogd's test override)
    env["catalogs"].append(name)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": name, "labels": {env["label"]: pkg}},
        "spec": {"source": {"type": "Image", "image": image}}})
    return name


def set_pull_secret(env, config):
    kubectl("apply", "-f", "-", input={
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": SECRET, "namespace": env["system_ns"]},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()}})


def test_catalog_and_bundles_only_through_a_mirror(env, ns, name):
    """The ClusterCatalog and its bundles name registry A, which nothing serves; registries.conf
    mirrors A to the test registry: catalogd serves the catalog and operator-controller installs."""
    pkg = unique("regm")
    env["packages"].append(pkg)
    reg, a = env["registry"], env["a_host"]
    images = {}
    for v in ("1.0.0",):
        d = olmv1_bundles.write_bundle(env["work"] / pkg, pkg, v)
        pushed = olmv1("bundle", "push", "-q", str(d), f"{reg}/mirror-of-a/{pkg}-bundle:v{v}")
        digest = pushed.split("@", 1)[1]
        images[v] = f"{a}/mirrored/{pkg}-bundle@{digest}"  # what the catalog says: registry A
    d = olmv1_bundles.write_catalog(env["work"] / pkg / "catalog", pkg, images, ["1.0.0"])
    olmv1("catalog", "push", "-q", str(d), f"{reg}/mirror-of-a/{pkg}-catalog:v1")
    cat = create_catalog(env, pkg, f"{a}/mirrored/{pkg}-catalog:v1")
    # the status names the image as asked for, at the digest the mirror served
    status = kubectl_json("get", "clustercatalog", cat)["status"]
    assert status["resolvedSource"]["image"]["ref"].startswith(f"{a}/mirrored/{pkg}-catalog@sha256:")

    olmv1_e2e.apply_ce(env, pkg, name, ns)
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")
    assert configmap_version(pkg, ns) == "1.0.0"
    delete_ce(name)

    # the CLI honours the same file
    out = env["work"] / "cli-pull"
    got = olmv1("image", "pull", "-q", "--registries-conf", str(env["conf"]), "--catalog",
                f"{a}/mirrored/{pkg}-catalog:v1", str(out))
    assert got.splitlines()[0].startswith(f"{a}/mirrored/{pkg}-catalog@sha256:")

    # ... and so do the commands that render from the cluster, through $CONTAINERS_REGISTRIES_CONF
    # as podman and skopeo read it: the RBAC preview pulls the bundle from the mirror.
    args = ("install", "extension", unique("regcli"), "--package", pkg, "--namespace", ns, "--create-rbac",
            "--dry-run", "-o", "yaml")
    preview = cli.ok(*args, env={**cli.direct_env(env), "CONTAINERS_REGISTRIES_CONF": env["conf"]})
    assert "kind: ClusterExtension" in preview
    for conf, code, says in ((None, cli.EXIT_UNREACHABLE, f"pulling bundle image {images['1.0.0']}: "),
                             (env["work"] / "missing.conf", cli.EXIT_FAILED, "missing.conf: No such file or directory")):
        rc, _, err = cli.run(*args, env={**cli.direct_env(env), "CONTAINERS_REGISTRIES_CONF": conf})
        assert rc == code and says in err.splitlines()[-1], (rc, err)


def test_blocked_registry_is_a_clear_condition(env):
    pkg = unique("regb")
    cat = apply_catalog(env, pkg, f"{env['registry']}/blocked/{pkg}-catalog:v1")
    c = wait_catalog_message(env, cat, "is blocked")
    msg = c["Progressing"]["message"]
    assert f'registry "{env["registry"]}/blocked" is blocked' in msg
    assert str(env["dropins"] / "50-blocked.conf") in msg, msg  # names the drop-in that blocks it
    assert c.get("Serving", {}).get("status") != "True"


def test_registries_conf_changes_apply_without_a_restart(env):
    """registries.conf is re-read when it changes: a drop-in written while catalogd runs blocks
    the next pull; a malformed edit is one log line and changes nothing; once the drop-ins are
    gone the same ClusterCatalog is pulled and served, all without a restart."""
    pkg = unique("regr")
    ref = olmv1_e2e.push_catalog(env, pkg, {"1.0.0": f"{env['registry']}/e2e/{pkg}-bundle:v1.0.0"},
                                 ("1.0.0",), "v1")
    repo = ref.rsplit("/", 1)[0]  # <registry>/e2e
    block = env["dropins"] / "60-later.conf"
    bad = env["dropins"] / "70-bad.conf"
    try:
        block.write_text(f'[[registry]]\nprefix = "{repo}/{pkg}-catalog"\nlocation = "{repo}/{pkg}-catalog"\n'
                         "blocked = true\n")
        cat = apply_catalog(env, pkg, ref)
        c = wait_catalog_message(env, cat, "is blocked")
        assert str(block) in c["Progressing"]["message"]
        started = env["catalogd"].starts

        bad.write_text("[[registry]]\nlocation = nope\n")
        env["catalogd"].wait_for(lambda: "70-bad.conf: line 2" in env["catalogd"].log_text(),
                                 "catalogd to log the malformed drop-in", timeout=CATALOGD_WAIT)
        lines = [ln for ln in env["catalogd"].log_text().splitlines() if "70-bad.conf: line 2" in ln]
        assert len(lines) == 1 and "pulls go on with the configuration read before" in lines[0], lines
        assert str(block) in catalog_conditions(cat)["Progressing"]["message"]  # still blocked

        block.unlink()
        bad.unlink()
        env["catalogd"].wait_for(lambda: catalog_conditions(cat).get("Serving", {}).get("status") == "True",
                                 f"ClusterCatalog {cat} to serve once unblocked", timeout=CATALOGD_WAIT)
        assert env["catalogd"].starts == started  # no restart
        env["catalogd"].wait_for(lambda: "read again" in env["catalogd"].log_text(), "registries.conf read again")
    finally:
        for f in (block, bad):
            f.unlink(missing_ok=True)


def test_registry_with_a_login_through_the_global_pull_secret(env, ns, name):
    auth = env["auth"]
    pkg = unique("rega")
    env["packages"].append(pkg)
    af = auth.authfile(env["work"])
    images = {}
    for v in ("1.0.0", "1.0.1"):
        d = olmv1_bundles.write_bundle(env["work"] / pkg, pkg, v)
        images[v] = olmv1("bundle", "push", "-q", "--authfile", str(af), str(d), f"{auth.host}/e2e/{pkg}-bundle:v{v}")
    ref = f"{auth.host}/e2e/{pkg}-catalog:latest"

    def push(chain, authfile):
        d = olmv1_bundles.write_catalog(env["work"] / pkg / f"catalog-{len(chain)}", pkg, images, chain)
        olmv1("catalog", "push", "-q", "--authfile", str(authfile), str(d), ref)

    push(["1.0.0"], af)
    # No Secret yet: anonymous pulls, and the status says what is missing.
    cat = apply_catalog(env, pkg, ref, poll=True)
    c = wait_catalog_message(env, cat, "requires a login")
    assert "global pull secret" in c["Progressing"]["message"]
    assert "not found: pulling anonymously" in env["catalogd"].log_path.read_text()

    # The Secret appears: catalogd serves without a restart, operator-controller pulls the bundle.
    set_pull_secret(env, auth.dockerconfig())
    kubectl("wait", f"clustercatalog/{cat}", "--for=condition=Serving=True", f"--timeout={CATALOGD_WAIT}s")
    assert env["catalogd"].starts == 1
    olmv1_e2e.apply_ce(env, pkg, name, ns)
    wait_installed(env, name, f"{pkg}.v1.0.0", "1.0.0")

    # Rotation: the registry now wants another password, the Secret is updated; a new catalog
    # version under the same tag is polled and its bundle installed with the new credentials.
    auth.stop()
    auth.start("second-password")
    set_pull_secret(env, auth.dockerconfig())
    push(["1.0.0", "1.0.1"], auth.authfile(env["work"]))
    wait_installed(env, name, f"{pkg}.v1.0.1", "1.0.1")
    assert configmap_version(pkg, ns) == "1.0.1"
    assert env["catalogd"].starts == 1
    env["ctl"].wait_for(lambda: "global pull secret" in env["ctl"].log_text(), "the global pull secret to be logged")
    delete_ce(name)

    # Deleted: pulls go anonymous again; the catalog keeps serving what it has.
    kubectl("delete", "secret", SECRET, "-n", env["system_ns"])
    c = wait_catalog_message(env, cat, "requires a login")
    assert c["Serving"]["status"] == "True"
    assert "was deleted: pulling anonymously" in env["catalogd"].log_path.read_text()


def test_malformed_registries_conf_stops_the_start_with_one_line(env):
    bad = env["work"] / "bad.conf"
    bad.write_text('[[registry]]\nlocation = "a.example"\ninsecure = yes\n')
    for binary in (olmv1_e2e.CATALOGD, olmv1_e2e.OPCTL):
        proc = subprocess.run([binary, "--registries-conf", str(bad), "--kubeconfig", "/nonexistent"],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 1
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert f"{bad}: line 3:" in lines[0]
