"""The two-way door with upstream OLM v1 (issue 28): an administrator switches a live cluster from
upstream's operator-controller to ours and back, and nothing is reinstalled.

Upstream's own binary (../shared/upstream/bin, operator-controller at df2c201) runs as a host
process against this module's cluster, with cluster-admin as upstream's install gives it; ours
runs with its least-privilege identity plus the opt-in config/rbac-upstream-rights, since the
extensions upstream installed have no spec.serviceAccount.  This is the one place a test runs
upstream's binaries; without them (or without root, which the bind mount of its ServiceAccount
token needs) the module is skipped.

  upstream installs 1.0.0 -> ours adopts it: status kept, no installed object written (their
  resourceVersions stay, no managedFields of ours), our record written; ours upgrades to
  1.0.1 (the adopted objects updated, not recreated) and mirrors the Helm release.
  -> upstream takes it back: same bundle, same objects (uids), no Deployment rollout; it
  upgrades to 2.0.0.  -> ours again: our older record gives way to what upstream installed;
  the deletion uninstalls everything, upstream's finalizers included.

With --feature-gates=BoxcutterRuntime=true on both sides the install record is the
ClusterObjectSet revisions (issue 26, item 4):

  upstream installs 1.0.0 (revision <ce>-1) -> ours takes it over: Installed, no new revision, the
  Deployment neither recreated nor rolled; ours upgrades to 1.0.1 (revision <ce>-2, <ce>-1 archived)
  -> upstream takes it back: our revision 2 is its current one (no <ce>-3, its own ClusterObjectSet
  controller rolls it out without collisions nor Blocked), nothing recreated; it upgrades to 2.0.0
  (<ce>-3) -> ours again: nothing new.
"""

import base64
import contextlib
import gzip
import json
import lzma
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

import olmv1_bundles
import olmv1_e2e
from conftest import REPO, kubectl, kubectl_json, unique
from olmv1_e2e import WAIT, Daemon, conditions, free_port, http, wait_for
from test_boxcutter_revisions import large_crd

VERSIONS = ("1.0.0", "1.0.1", "2.0.0")
LABEL = "e2e-door"
UPSTREAM_BIN = Path(os.environ.get("OLMV1_UPSTREAM_BIN", REPO.parent / "shared" / "upstream" / "bin"))
OPT_IN = REPO / "config" / "rbac-upstream-rights" / "cluster-admin.yaml"
OUR_MANAGER = "olm.operatorframework.io"


def upstream_binary(name):
    """Upstream's binary, unpacked once into the cache; skips the module when it is absent."""
    src = UPSTREAM_BIN / f"{name}.xz"
    if not src.exists():
        pytest.skip(f"upstream's binaries are not in {UPSTREAM_BIN}: the two-way door is not tested")
    if os.geteuid() != 0:
        pytest.skip("upstream's operator-controller needs its ServiceAccount token bind-mounted: root only")
    dst = Path.home() / ".cache" / "olmv1" / "upstream-bin" / name
    if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_suffix(".tmp")
        with lzma.open(src) as i, open(tmp, "wb") as o:
            shutil.copyfileobj(i, o)
        tmp.chmod(0o755)
        tmp.rename(dst)
    return dst


class UpstreamController(Daemon):
    """Upstream's operator-controller: cluster-admin (the test's kubeconfig), its ServiceAccount's
    token where it looks for it (/run/secrets, bind-mounted in a mount namespace of its own), the
    local registry insecure in a registries.conf, metrics on a free port with a throwaway cert."""

    label = "upstream operator-controller"

    def __init__(self, workdir, system_ns, binary):
        super().__init__(workdir)
        self.extra = []  # flags of every start (the feature gates)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.system_ns, self.binary = system_ns, binary
        self.port = free_port()
        self.log_path = self.workdir / "upstream-operator-controller.log"

    def start(self):
        sa_dir = self.workdir / "secrets" / "kubernetes.io" / "serviceaccount"
        sa_dir.mkdir(parents=True, exist_ok=True)
        token = kubectl("create", "token", "operator-controller-controller-manager", "-n", self.system_ns,
                        "--duration=24h").stdout.strip()
        (sa_dir / "token").write_text(token)
        (sa_dir / "namespace").write_text(self.system_ns)
        conf = self.workdir / "registries.conf"
        conf.write_text(f'[[registry]]\nlocation = "{os.environ["OLMV1_REGISTRY"]}"\ninsecure = true\n')
        cert, key = self.workdir / "tls.crt", self.workdir / "tls.key"
        if not cert.exists():
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                           check=True, capture_output=True)
        env = os.environ.copy()
        env["CONTAINERS_REGISTRIES_CONF"] = str(conf)
        cmd = ["unshare", "-m", "/bin/bash", "-c", 'mkdir -p /run/secrets && mount --bind "$0" /run/secrets && exec "$@"',
               str(self.workdir / "secrets"), str(self.binary), "--kubeconfig", os.environ["KUBECONFIG"],
               "--cache-path", str(self.workdir / "cache"), "--system-namespace", self.system_ns,
               "--health-probe-bind-address", f"127.0.0.1:{self.port}", "--metrics-bind-address",
               f"127.0.0.1:{free_port()}", "--tls-cert", str(cert), "--tls-key", str(key), "--pprof-bind-address", "0", *self.extra]
        self.spawn(cmd, "ab", env)
        wait_for(lambda: http(f"http://127.0.0.1:{self.port}/readyz", timeout=2)[0] == 200,
                 "upstream's operator-controller to be ready", self)

    def stop(self):
        try:
            super().stop()
        except AssertionError as e:
            if "exited" not in str(e):  # how Go's manager ends on SIGTERM is not ours to judge
                raise


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    binary = upstream_binary("operator-controller")
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("door"), LABEL) as env:
        binding = yaml.safe_load(OPT_IN.read_text())
        binding["metadata"]["name"] = f"{env['system_ns']}-upstream-rights"
        binding["subjects"][0]["namespace"] = env["system_ns"]
        kubectl("apply", "-f", "-", input=binding)
        pkg = unique("door")
        images = olmv1_e2e.push_bundles(env, pkg, VERSIONS)
        ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS, "latest")
        env.update(pkg=pkg, images=images, catalog=olmv1_e2e.create_catalog(env, pkg, ref),
                   upstream=UpstreamController(env["work"] / "upstream", env["system_ns"], binary))
        env["ctl"].stop()  # each test starts the side it needs
        try:
            yield env
        finally:
            env["upstream"].stop()
            if env["ctl"].proc is None:
                env["ctl"].start()  # so that olm_env's cleanup can uninstall what is left
            kubectl("delete", "clusterrolebinding", binding["metadata"]["name"], "--ignore-not-found", check=False)


def apply_ce(world, name, ns, version):
    """A ClusterExtension as upstream's users write it: no serviceAccount."""
    olmv1_e2e.apply_ce(world, world["pkg"], name, ns, version=version, service_account=None)


def installed(name, bundle, observed=True):
    obj, c = conditions(name)
    inst = obj.get("status", {}).get("install", {}).get("bundle", {}).get("name")
    p = c.get("Progressing", {})
    return (inst == bundle and c.get("Installed", {}).get("status") == "True" and p.get("reason") == "Succeeded"
            and (not observed or p.get("observedGeneration") == obj["metadata"]["generation"]))


def release_objects(system_ns, name):
    """The objects of the deployed Helm release (what upstream installed, as its e2e reads them)."""
    items = kubectl_json("get", "secrets", "-n", system_ns, "-l", f"name={name},status=deployed",
                         "--field-selector", "type=operatorframework.io/index.v1")["items"]
    assert len(items) == 1, [i["metadata"]["name"] for i in items]
    rel = json.loads(gzip.decompress(base64.b64decode(items[0]["data"]["chunk"])))
    objs = []
    for line in rel["manifest"].splitlines():
        if line.strip().startswith("{"):
            objs.append(json.loads(line))
    return items[0], objs


def live(objs):
    """{(kind, ns, name): (uid, resourceVersion, generation, managers)} of the live objects."""
    out = {}
    for o in objs:
        md = o["metadata"]
        where = ["-n", md["namespace"]] if md.get("namespace") else []
        cur = kubectl_json("get", o["kind"], md["name"], *where, "--show-managed-fields")["metadata"]
        out[(o["kind"], md.get("namespace", ""), md["name"])] = (
            cur["uid"], cur["resourceVersion"], cur.get("generation"),
            sorted({f["manager"] for f in cur.get("managedFields", [])}))
    return out


def test_upstream_to_ours_and_back(world, name):
    pkg, system_ns, ctl, up = world["pkg"], world["system_ns"], world["ctl"], world["upstream"]
    ns = name[:50]
    kubectl("create", "namespace", ns)
    try:
        # Upstream installs 1.0.0.
        up.start()
        apply_ce(world, name, ns, "1.0.0")
        wait_for(lambda: installed(name, f"{pkg}.v1.0.0"), "upstream to install 1.0.0", up)
        _, objs = release_objects(system_ns, name)
        before = live(objs)
        assert len(before) >= 5, before
        assert not any(OUR_MANAGER in v[3] for v in before.values())
        up.stop()

        # Ours adopts it: nothing installed is written.
        ctl.start()
        record = f"{olmv1_e2e.RECORD_PREFIX}{name}"
        wait_for(lambda: kubectl("get", "secret", record, "-n", system_ns, check=False).returncode == 0,
                 "our record of the adopted install", ctl)
        wait_for(lambda: f"clusterExtension={name} adopting bundle {pkg}.v1.0.0" in ctl.log_text(),
                 "the adoption logged", ctl)
        time.sleep(5)  # a few drift-repair passes (2 s apart here): none may write
        after = live(objs)
        assert after == before, {k: (before[k], after.get(k)) for k in before if before[k] != after.get(k)}
        assert installed(name, f"{pkg}.v1.0.0", observed=False)
        assert olmv1_e2e.configmap_version(pkg, ns) == "1.0.0"

        # Ours upgrades the adopted install: the same objects, updated.
        kubectl("patch", "clusterextension", name, "--type=merge", "-p",
                '{"spec":{"source":{"catalog":{"version":"1.0.1"}}}}')
        wait_for(lambda: installed(name, f"{pkg}.v1.0.1"), "ours to upgrade to 1.0.1", ctl)
        assert olmv1_e2e.configmap_version(pkg, ns) == "1.0.1"
        secret, objs = release_objects(system_ns, name)
        assert secret["metadata"]["labels"]["status"] == "deployed"
        mid = live(objs)
        for k, v in mid.items():
            if k in before:
                assert v[0] == before[k][0], f"{k} was recreated"
        deployment = next(k for k in mid if k[0] == "Deployment")
        ctl.stop()

        # Upstream takes it back from the release we wrote: nothing recreated, no rollout.
        up.start()
        wait_for(lambda: "olm.operatorframework.io/cleanup-unpack-cache" in
                 kubectl_json("get", "clusterextension", name)["metadata"].get("finalizers", []),
                 "upstream to reconcile the extension", up)
        wait_for(lambda: len(kubectl_json("get", "secrets", "-n", system_ns, "-l", f"name={name}")["items"]) >= 2,
                 "upstream's own release on top of ours", up)
        assert installed(name, f"{pkg}.v1.0.1", observed=False)
        back = live(objs)
        for k, v in back.items():
            assert v[0] == mid[k][0], f"{k} was recreated by upstream"
        assert back[deployment][2] == mid[deployment][2], "upstream rolled the Deployment"
        kubectl("patch", "clusterextension", name, "--type=merge", "-p",
                '{"spec":{"source":{"catalog":{"version":"2.0.0"}}}}')
        wait_for(lambda: installed(name, f"{pkg}.v2.0.0"), "upstream to upgrade to 2.0.0", up)
        up.stop()

        # Ours again: our record (1.0.1) gives way to what upstream installed since.
        ctl.start()
        wait_for(lambda: installed(name, f"{pkg}.v2.0.0") and
                 f"adopting bundle {pkg}.v2.0.0" in ctl.log_text(), "ours to take 2.0.0 over", ctl)
        _, objs = release_objects(system_ns, name)
        # The deletion uninstalls it all; upstream's finalizers do not keep it.
        kubectl("delete", "clusterextension", name, f"--timeout={WAIT}s")
        for o in objs:
            md = o["metadata"]
            where = ["-n", md["namespace"]] if md.get("namespace") else []
            out = kubectl("get", o["kind"], md["name"], *where, "--ignore-not-found", "-o", "name").stdout.strip()
            assert out == "", f"{out} left behind"
        assert kubectl_json("get", "secrets", "-n", system_ns, "-l", f"name={name}")["items"] == []
        assert kubectl("get", "secret", record, "-n", system_ns, "--ignore-not-found", "-o", "name").stdout == ""
    finally:
        if world["upstream"].proc is not None:
            world["upstream"].stop()
        if ctl.proc is None:
            ctl.start()
        kubectl("delete", "clusterextension", name, "--ignore-not-found", f"--timeout={WAIT}s", check=False)
        kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false", check=False)


# ---------------------------------------------------------------- BoxcutterRuntime on both sides

GATE = "--feature-gates=BoxcutterRuntime=true"


def revisions(name):
    """{revision name: (spec.revision, lifecycleState, {condition type: (status, reason)}, uid)}."""
    items = kubectl_json("get", "clusterobjectsets", "-l", f"olm.operatorframework.io/owner-name={name}")["items"]
    return {i["metadata"]["name"]: (i["spec"]["revision"], i["spec"]["lifecycleState"],
                                    {c["type"]: (c["status"], c["reason"]) for c in i.get("status", {}).get("conditions", [])},
                                    i["metadata"]["uid"])
            for i in items}


def revision_objects(rev_name):
    """The objects of a revision: inline, or read from its Secrets (gzip'd or not)."""
    cos = kubectl_json("get", "clusterobjectset", rev_name)
    secrets, objs = {}, []
    for phase in cos["spec"]["phases"]:
        for o in phase["objects"]:
            if "object" in o:
                objs.append(o["object"])
                continue
            ref = o["ref"]
            key = (ref["namespace"], ref["name"])
            if key not in secrets:
                secrets[key] = kubectl_json("get", "secret", ref["name"], "-n", ref["namespace"])
            raw = base64.b64decode(secrets[key]["data"][ref["key"]])
            objs.append(json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw))
    return objs


def dump_revisions(world, name):
    """Every revision's objects, decoded, in the module's work directory (for a failing assertion)."""
    out = world["work"] / f"revisions-{name}.json"
    out.write_text(json.dumps({r: revision_objects(r) for r in sorted(revisions(name))}, indent=1, sort_keys=True))
    return out


def active_installed(name, bundle, rev_name):
    """Installed with `bundle` from revision `rev_name`, the only active one, its rollout done."""
    obj, c = conditions(name)
    st = obj.get("status", {})
    return (installed(name, bundle, observed=False) and st.get("activeRevisions") == [{"name": rev_name}]
            and c.get("Available", {}).get("status") == "True")


def log_since(daemon, mark):
    return daemon.log_text()[mark:]


@contextlib.contextmanager
def gate_on(world, name):
    """Both sides with the gate (ours with debug logs: a line per reconcile), neither running when
    the test starts, in a namespace of its own; afterwards the extension deleted (by ours) and
    neither running again, the flags as they were."""
    ctl, up = world["ctl"], world["upstream"]
    for side in (ctl, up):
        if side.proc is not None:
            side.stop()  # an earlier test's cleanup left it running
    ns = name[:50]
    kubectl("create", "namespace", ns)
    ctl_extra, up.extra = list(ctl.extra), [GATE]
    ctl.extra += [GATE, "--log-level", "debug"]
    try:
        yield ns
    finally:
        try:
            if up.proc is not None:
                up.stop()
            if ctl.proc is None:
                ctl.start()
            kubectl("delete", "clusterextension", name, "--ignore-not-found", f"--timeout={WAIT}s", check=False)
            kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false", check=False)
            ctl.stop()
        finally:
            up.extra, ctl.extra = [], ctl_extra


def ours_reconciled(ctl, name, mark):
    return f"clusterExtension={name} reconcile took" in log_since(ctl, mark)


def test_boxcutter_upstream_to_ours_and_back(world, name):
    pkg, system_ns, ctl, up = world["pkg"], world["system_ns"], world["ctl"], world["upstream"]
    with gate_on(world, name) as ns:
        # Upstream installs 1.0.0: revision 1.
        up.start()
        apply_ce(world, name, ns, "1.0.0")
        wait_for(lambda: active_installed(name, f"{pkg}.v1.0.0", f"{name}-1"), "upstream to install 1.0.0", up)
        revs = revisions(name)
        assert list(revs) == [f"{name}-1"], revs
        objs = revision_objects(f"{name}-1")
        before = live(objs)
        assert len(before) >= 5, before
        deployment = next(k for k in before if k[0] == "Deployment")
        up.stop()

        # Ours takes it over: no new revision, nothing reinstalled.
        mark = len(ctl.log_text()) if ctl.log_path.exists() else 0
        ctl.start()
        wait_for(lambda: ours_reconciled(ctl, name, mark),
                 "ours to reconcile the extension", ctl)
        time.sleep(5)  # a few more passes (drift repair 2 s apart here): none may make a revision
        assert revisions(name) == revs, (revisions(name), dump_revisions(world, name))
        assert active_installed(name, f"{pkg}.v1.0.0", f"{name}-1")
        after = live(objs)
        assert after[deployment][:3] == before[deployment][:3], "the Deployment was recreated or rolled"
        for k, v in after.items():
            assert v[0] == before[k][0], f"{k} was recreated"

        # Ours upgrades: revision 2 replaces 1, the objects updated in place.
        kubectl("patch", "clusterextension", name, "--type=merge", "-p",
                '{"spec":{"source":{"catalog":{"version":"1.0.1"}}}}')
        wait_for(lambda: active_installed(name, f"{pkg}.v1.0.1", f"{name}-2"), "ours to upgrade to 1.0.1", ctl)
        assert olmv1_e2e.configmap_version(pkg, ns) == "1.0.1"
        revs = revisions(name)
        assert sorted(revs) == [f"{name}-1", f"{name}-2"], revs
        assert revs[f"{name}-1"][1] == "Archived"
        objs = revision_objects(f"{name}-2")
        mid = live(objs)
        for k, v in mid.items():
            if k in before:
                assert v[0] == before[k][0], f"{k} was recreated"
        ctl.stop()

        # Upstream takes revision 2 as its current one: no revision 3, no collision, nothing recreated.
        mark = len(up.log_text())
        up.start()
        wait_for(lambda: any("applying bundle contents" in line and name in line
                             for line in log_since(up, mark).splitlines()),
                 "upstream to reconcile the extension", up)
        wait_for(lambda: any("reconcile ending" in line and f"{name}-2" in line
                             for line in log_since(up, mark).splitlines()),
                 "upstream's ClusterObjectSet controller to reconcile our revision", up)
        time.sleep(5)
        errors = [line for line in log_since(up, mark).splitlines()  # not a catalog cache still filling,
                  if "Reconciler error" in line and name in line  # nor an update conflict (retried)
                  and "cache for catalog" not in line and "the object has been modified" not in line]
        assert not errors, errors
        now = revisions(name)
        assert sorted(now) == [f"{name}-1", f"{name}-2"], (now, dump_revisions(world, name))
        assert now[f"{name}-2"][2].get("Progressing") == ("True", "Succeeded"), now
        assert now[f"{name}-2"][2].get("Available") == ("True", "ProbesSucceeded"), now
        assert active_installed(name, f"{pkg}.v1.0.1", f"{name}-2")
        back = live(objs)
        for k, v in back.items():
            assert v[0] == mid[k][0], f"{k} was recreated by upstream"
        assert back[deployment][2] == mid[deployment][2], "upstream rolled the Deployment"

        # Upstream upgrades on top of our revision.
        kubectl("patch", "clusterextension", name, "--type=merge", "-p",
                '{"spec":{"source":{"catalog":{"version":"2.0.0"}}}}')
        wait_for(lambda: active_installed(name, f"{pkg}.v2.0.0", f"{name}-3"), "upstream to upgrade to 2.0.0", up)
        assert revisions(name)[f"{name}-2"][1] == "Archived"
        up.stop()

        # Ours again: revision 3 is current, nothing new.
        mark = len(ctl.log_text())
        ctl.start()
        wait_for(lambda: ours_reconciled(ctl, name, mark),
                 "ours to reconcile the extension", ctl)
        time.sleep(5)
        assert sorted(revisions(name)) == [f"{name}-1", f"{name}-2", f"{name}-3"], revisions(name)
        assert active_installed(name, f"{pkg}.v2.0.0", f"{name}-3")


def test_boxcutter_large_crd_taken_over(world, name):
    """A CRD of about 1 MB is stored gzip'd, and Go's gzip and zlib write other bytes for the same
    object.  Ours finds upstream's revision to hold the bundle by reading it back, and makes none.
    Upstream compares the stored bytes: over our revision of such a bundle it writes one of its own
    (a known difference, kept visible here), which takes the objects over without recreating them."""
    ctl, up = world["ctl"], world["upstream"]
    big = unique("doorbig")
    images = {}
    for v in ("1.0.0", "1.0.1"):
        d = olmv1_bundles.write_bundle(world["work"] / big, big, v)
        (d / "manifests" / "crd.yaml").write_text(json.dumps(large_crd(big)))
        images[v] = olmv1_e2e.olmv1("bundle", "push", "-q", str(d), f"{world['registry']}/e2e/{big}-bundle:v{v}")
    world["packages"].append(big)
    ref = olmv1_e2e.push_catalog(world, big, images, ["1.0.0", "1.0.1"], "latest")
    olmv1_e2e.create_catalog(world, big, ref)
    crd_name = f"larges.{big}.example.com"
    with gate_on(world, name) as ns:
        up.start()
        olmv1_e2e.apply_ce(world, big, name, ns, version="1.0.0", service_account=None)
        wait_for(lambda: active_installed(name, f"{big}.v1.0.0", f"{name}-1"), "upstream to install the large CRD", up)
        cos = kubectl_json("get", "clusterobjectset", f"{name}-1")
        refs = [o["ref"] for p in cos["spec"]["phases"] for o in p["objects"] if p["name"] == "crds"]
        secret = kubectl_json("get", "secret", refs[0]["name"], "-n", refs[0]["namespace"])
        assert base64.b64decode(secret["data"][refs[0]["key"]])[:2] == b"\x1f\x8b", "upstream did not gzip the CRD"
        crd = kubectl_json("get", "crd", crd_name)["metadata"]
        up.stop()

        # Ours: upstream's revision is the current one.
        mark = len(ctl.log_text())
        ctl.start()
        wait_for(lambda: f"revision {name}-1 holds bundle {big}.v1.0.0 already" in log_since(ctl, mark),
                 "ours to read upstream's revision back and keep it", ctl)
        wait_for(lambda: ours_reconciled(ctl, name, mark), "ours to finish the reconcile", ctl)
        time.sleep(5)  # more passes: none may make a revision (nor read the Secrets again)
        assert sorted(revisions(name)) == [f"{name}-1"], revisions(name)
        assert active_installed(name, f"{big}.v1.0.0", f"{name}-1")
        after = kubectl_json("get", "crd", crd_name)["metadata"]
        assert (after["uid"], after["generation"]) == (crd["uid"], crd["generation"])
        assert log_since(ctl, mark).count(f"revision {name}-1 holds bundle") == 1

        # Ours upgrades (revision 2, gzip'd by zlib); upstream, back, writes revision 3 of the same
        # bundle over it, and the CRD stays the one object it was.
        kubectl("patch", "clusterextension", name, "--type=merge", "-p",
                '{"spec":{"source":{"catalog":{"version":"1.0.1"}}}}')
        wait_for(lambda: active_installed(name, f"{big}.v1.0.1", f"{name}-2"), "ours to upgrade to 1.0.1", ctl)
        ctl.stop()
        up.start()
        wait_for(lambda: active_installed(name, f"{big}.v1.0.1", f"{name}-3"), "upstream to take revision 2 over", up)
        revs = revisions(name)
        assert sorted(revs) == [f"{name}-1", f"{name}-2", f"{name}-3"], revs
        assert revs[f"{name}-2"][1] == "Archived"
        after = kubectl_json("get", "crd", crd_name)["metadata"]
        assert (after["uid"], after["generation"]) == (crd["uid"], crd["generation"])
