"""catalogd against a real kube-apiserver and OCI registry (spec §4.1-§4.5).

catalogd ($OLMV1_REPO/build/catalogd/catalogd, or $OLMV1_CATALOGD) runs as a subprocess of
this module (olmv1_e2e.Catalogd) on free 127.0.0.1 ports with a temporary cache dir, and is stopped by PID.  It
is started with the test-only --poll-interval-override-seconds 1, so a catalog with
pollIntervalMinutes polls every second and re-tag scenarios take seconds, not minutes.

Catalog images are pushed with `olmv1 catalog push` (from sample20 of the shared data, or
small subsets of it) and the served content is compared byte for byte with
`olmv1 catalog render` of the same directory.  Every wait polls with a generous deadline;
nothing asserts timing.  Stdlib, PyYAML and pytest only.
"""

import gzip
import json
import os
import re
import shutil
import urllib.request

import pytest

from conftest import REPO, kubectl, kubectl_json, unique  # noqa: F401
# The daemon runner and HTTP helpers live in olmv1_e2e; other modules import them from here too.
from olmv1_e2e import CATALOGD, CATALOGD_WAIT, Catalogd, free_port, http  # noqa: F401
from test_image_push import SAMPLE20, olmv1, registry, run  # noqa: F401  (fixtures by name)

WAIT = CATALOGD_WAIT  # seconds; generous for a loaded 2-core machine
FINALIZER = "olm.operatorframework.io/delete-server-cache"
NAME_LABEL = "olm.operatorframework.io/metadata.name"
MSG_UNPACKED = "Successfully unpacked and stored content from resolved source"
MSG_SERVING = "Serving desired content from resolved source"
MSG_UNAVAILABLE = "Catalog availability mode is set to Unavailable"
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
DIGEST_RE = re.compile(r"@(sha256:[0-9a-f]{64})$")


@pytest.fixture(scope="module")
def catalogd(crds, tmp_path_factory):
    if not os.access(CATALOGD, os.X_OK):
        pytest.fail(f"{CATALOGD} is not built (make build)")
    d = Catalogd(tmp_path_factory.mktemp("catalogd"))
    d.start()
    d.created = []
    yield d
    # Delete our catalogs while catalogd still runs, so their finalizers are released.
    for n in d.created:
        kubectl("delete", "clustercatalog", n, "--ignore-not-found", "--wait=false", check=False)
    for n in d.created:
        kubectl("wait", "--for=delete", f"clustercatalog/{n}", "--timeout=60s", check=False)
    d.stop()


# ---------------------------------------------------------------- helpers


def render(olmv1, src):
    return run(olmv1, "catalog", "render", src).stdout.encode()


def push_catalog(olmv1, src, ref):
    """Pushes src as a catalog image; returns the digest ref printed by olmv1."""
    out = run(olmv1, "catalog", "push", "-q", src, ref).stdout.strip()
    assert DIGEST_RE.search(out), out
    return out


def subset(tmp_path, name, packages, extra=None):
    """A catalog dir made of some packages of sample20 (plus extra files {name: text})."""
    d = tmp_path / name
    d.mkdir()
    for p in packages:
        shutil.copytree(SAMPLE20 / p, d / p)
    for fname, text in (extra or {}).items():
        (d / fname).write_text(text)
    return d


def apply_catalog(catalogd, name, ref, poll=True, mode=None):
    spec = {"source": {"type": "Image", "image": {"ref": ref}}}
    if poll:
        spec["source"]["image"]["pollIntervalMinutes"] = 1
    if mode:
        spec["availabilityMode"] = mode
    catalogd.created.append(name)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": name}, "spec": spec})


def get(name):
    return kubectl_json("get", "clustercatalog", name)


def cond(obj, ctype):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c
    return None


def unreachable_kubeconfig(tmp_path):
    """A kubeconfig naming an API server nothing listens on (127.0.0.1:1)."""
    path = tmp_path / "unreachable.kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: x, context: {cluster: x, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\ncurrent-context: x\n")
    return path


def wait_serving(catalogd, name):
    proc = kubectl("wait", "--for=condition=Serving", f"clustercatalog/{name}", f"--timeout={WAIT}s",
                   check=False, timeout=WAIT + 30)
    assert proc.returncode == 0, f"{proc.stderr}\n{json.dumps(get(name).get('status'), indent=1)}\n" \
                                 f"{catalogd.log_tail()}"
    return get(name)


def assert_served(obj, catalogd, name, digest_ref):
    """The §4.1 step 7 status, exactly."""
    gen = obj["metadata"]["generation"]
    st = obj["status"]
    p, s = cond(obj, "Progressing"), cond(obj, "Serving")
    assert (p["status"], p["reason"], p["message"], p["observedGeneration"]) == \
        ("True", "Succeeded", MSG_UNPACKED, gen), p
    assert (s["status"], s["reason"], s["message"], s["observedGeneration"]) == \
        ("True", "Available", MSG_SERVING, gen), s
    assert st["resolvedSource"] == {"type": "Image", "image": {"ref": digest_ref}}
    assert st["urls"] == {"base": f"{catalogd.base}/catalogs/{name}"}
    assert TIME_RE.match(st["lastUnpacked"]), st["lastUnpacked"]
    assert FINALIZER in obj["metadata"]["finalizers"]
    assert obj["metadata"]["labels"][NAME_LABEL] == name


# ---------------------------------------------------------------- scenarios


def test_serves_catalog_with_exact_status(catalogd, olmv1, registry, name):
    if not SAMPLE20.is_dir():
        pytest.fail(f"{SAMPLE20} not found (set OLMV1_SHARED)")
    digest_ref = push_catalog(olmv1, SAMPLE20, f"{registry}/e2e/{name}:latest")
    apply_catalog(catalogd, name, f"{registry}/e2e/{name}:latest")
    obj = wait_serving(catalogd, name)
    assert_served(obj, catalogd, name, digest_ref)

    status, body = catalogd.all(name)
    assert status == 200
    expected = render(olmv1, SAMPLE20)
    assert body == expected, "/all differs from `olmv1 catalog render`"
    status, metas = http(f"{obj['status']['urls']['base']}/api/v1/metas?schema=olm.package")
    assert status == 200
    packages = [ln for ln in expected.splitlines(keepends=True) if json.loads(ln)["schema"] == "olm.package"]
    assert metas == b"".join(packages)
    assert len(packages) == 20

    # The gzip form is made once, just after Serving (plain until then); it is the same bytes.
    def gzipped():
        req = urllib.request.Request(f"{catalogd.base}/catalogs/{name}/api/v1/all",
                                     headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.headers.get("Content-Encoding") == "gzip" and r.read()
    assert gzip.decompress(catalogd.wait_for(gzipped, "the gzip form of /all")) == expected

    # A wrong label is put back (there is no mutating webhook in this setup).
    kubectl("label", "--overwrite", "clustercatalog", name, f"{NAME_LABEL}=wrong")
    catalogd.wait_for(lambda: get(name)["metadata"]["labels"][NAME_LABEL] == name, "the name label")

    status, text = http(f"http://127.0.0.1:{catalogd.health_port}/readyz")
    assert status == 200
    status, text = http(f"{catalogd.base}/metrics")
    assert status == 200 and f'catalogd_unpack_duration_seconds_count{{catalog="{name}"}}'.encode() in text


def test_poll_picks_up_retag_and_keeps_serving_through_a_broken_push(catalogd, olmv1, registry, name,
                                                                       tmp_path):
    ref = f"{registry}/e2e/{name}:latest"
    v1 = subset(tmp_path, "v1", ["cloud-native-postgresql", "habana-ai-operator"])
    v2 = subset(tmp_path, "v2", ["habana-ai-operator", "k8s-triliovault"])
    # What upstream's catalogd refuses too: a file that does not decode.  (A model problem such
    # as a duplicate package is served: test_model_problems_are_served.)
    broken = '{"schema":"olm.package","name":"habana-ai-operator",\n'
    bad = subset(tmp_path, "bad", ["habana-ai-operator", "k8s-triliovault"], {"broken.json": broken})

    d1 = push_catalog(olmv1, v1, ref)
    apply_catalog(catalogd, name, ref)
    obj = wait_serving(catalogd, name)
    assert_served(obj, catalogd, name, d1)
    assert catalogd.all(name) == (200, render(olmv1, v1))

    # Re-tag: polling resolves the tag again and serves the new digest.
    d2 = push_catalog(olmv1, v2, ref)
    assert d2 != d1
    catalogd.wait_for(lambda: get(name)["status"]["resolvedSource"]["image"]["ref"] == d2, "the new digest")
    assert_served(get(name), catalogd, name, d2)
    expected_v2 = render(olmv1, v2)
    catalogd.wait_for(lambda: catalogd.all(name) == (200, expected_v2), "the new content")

    # A broken catalog on the same tag: Progressing Retrying naming file and line; the v2
    # content stays served and Serving stays True.
    push_catalog(olmv1, bad, ref)

    def retrying():
        o = get(name)
        p = cond(o, "Progressing")
        return o if p["reason"] == "Retrying" else None
    obj = catalogd.wait_for(retrying, "Progressing Retrying")
    p, s = cond(obj, "Progressing"), cond(obj, "Serving")
    assert p["status"] == "True"
    assert p["message"].startswith("error storing fbc: "), p["message"]
    assert "broken.json:" in p["message"] and "invalid JSON" in p["message"], p["message"]
    assert (s["status"], s["reason"], s["message"]) == ("True", "Available", MSG_SERVING)
    assert obj["status"]["resolvedSource"]["image"]["ref"] == d2
    assert catalogd.all(name) == (200, expected_v2)

    # Fixed again: back to Succeeded with the fixed digest.
    d3 = push_catalog(olmv1, v1, ref)
    catalogd.wait_for(lambda: cond(get(name), "Progressing")["reason"] == "Succeeded", "recovery")
    assert_served(get(name), catalogd, name, d3)


MODEL_PROBLEMS_CATALOG = """---
schema: olm.package
name: PKG
---
schema: olm.channel
name: beta
package: PKG
entries:
  - name: PKG.v1.0.0
  - name: PKG.v1.2.0
    replaces: PKG.v1.0.0
  - name: PKG.v1.0.2
    replaces: PKG.v1.0.0
""" + "".join(f"""---
schema: olm.bundle
name: PKG.v{v}
package: PKG
image: example.com/PKG:v{v}
properties:
  - type: olm.package
    value: {{packageName: PKG, version: {v}}}
""" for v in ("1.0.0", "1.2.0", "1.0.2")) + """---
schema: olm.package
name: PKG
defaultChannel: beta
"""


def test_model_problems_are_served(catalogd, olmv1, registry, name, tmp_path):
    """Upstream's suite builds catalogs with no defaultChannel and two channel heads, and
    upstream's catalogd serves whatever decodes: so do we.  opm's invariants are an author's
    concern: one WARN line lists them, a gauge counts them, `olmv1 catalog validate` still fails."""
    pkg = unique("mp")
    src = tmp_path / "mp"
    src.mkdir()
    (src / "catalog.yaml").write_text(MODEL_PROBLEMS_CATALOG.replace("PKG", pkg))
    assert run(olmv1, "catalog", "validate", src, check=False).returncode == 1
    d = push_catalog(olmv1, src, f"{registry}/e2e/{name}:v1")
    apply_catalog(catalogd, name, f"{registry}/e2e/{name}:v1", poll=False)
    obj = wait_serving(catalogd, name)
    assert_served(obj, catalogd, name, d)
    assert cond(obj, "Progressing")["reason"] == "Succeeded"
    assert catalogd.all(name) == (200, render(olmv1, src))
    status, body = http(f"{catalogd.base}/catalogs/{name}/api/v1/metas?schema=olm.package")
    assert status == 200 and body.count(b'"schema":"olm.package"') == 2, body

    def warned():
        return [ln for ln in catalogd.log_text().splitlines() if f"catalog={name} " in ln and "model problem" in ln]
    lines = catalogd.wait_for(warned, "the model problems logged")
    assert len(lines) == 1 and " WARN " in lines[0], lines
    for rule in ("duplicate-package", "channel-head", f'has 2 heads: {pkg}.v1.0.2, {pkg}.v1.2.0'):
        assert rule in lines[0], lines[0]
    assert "served anyway" in lines[0]
    status, text = http(f"{catalogd.base}/metrics")
    assert status == 200 and re.search(rf'catalogd_catalog_model_problems{{catalog="{name}"}} [1-9]',
                                       text.decode()), text.decode()


def test_pull_error_is_retrying(catalogd, registry, name):
    apply_catalog(catalogd, name, f"{registry}/e2e/{name}-missing:latest", poll=False)

    def retrying():
        p = cond(get(name), "Progressing")
        return p if p and p["reason"] == "Retrying" else None
    p = catalogd.wait_for(retrying, "Progressing Retrying")
    assert p["status"] == "True" and p["message"].startswith("source catalog content: "), p
    # §4.1 step 5: the Serving condition is absent after the first failure.
    assert cond(get(name), "Serving") is None


def test_restart_serves_stored_content_at_once_and_collects_garbage(catalogd, olmv1, registry, name,
                                                                    tmp_path):
    src = subset(tmp_path, "c", ["habana-ai-operator"])
    digest_ref = push_catalog(olmv1, src, f"{registry}/e2e/{name}:v1")
    apply_catalog(catalogd, name, f"{registry}/e2e/{name}:v1", poll=False)
    wait_serving(catalogd, name)
    expected = render(olmv1, src)
    assert catalogd.all(name) == (200, expected)
    catalogd.stop()

    # Leftovers of catalogs deleted while catalogd was down.
    (catalogd.cache / "catalogs" / "ghost-catalog").mkdir()
    (catalogd.cache / "catalogs" / "stray-file").write_text("x")
    (catalogd.cache / "unpack" / "ghost-catalog").mkdir()

    # With an API server it cannot reach, catalogd still serves what it stored: the store is
    # opened before any reconcile could run.
    bogus = unreachable_kubeconfig(tmp_path)
    catalogd.start(kubeconfig=bogus)
    assert catalogd.all(name) == (200, expected)
    catalogd.stop()

    catalogd.start()
    assert catalogd.all(name) == (200, expected)
    catalogd.wait_for(lambda: not (catalogd.cache / "catalogs" / "ghost-catalog").exists()
                      and not (catalogd.cache / "catalogs" / "stray-file").exists()
                      and not (catalogd.cache / "unpack" / "ghost-catalog").exists(), "garbage collection")
    obj = wait_serving(catalogd, name)
    assert_served(obj, catalogd, name, digest_ref)
    assert catalogd.all(name) == (200, expected)

    # The store remembers the digest it came from: the restart's reconcile pulls (an image cache
    # hit), sees the same digest and neither loads nor rewrites the catalog.  The delete is
    # queued behind that reconcile, so once it is done the log tells.
    kubectl("delete", "clustercatalog", name, f"--timeout={WAIT}s")
    log = catalogd.log_path.read_text()
    assert "unpacking" not in log and "serving new content" not in log, catalogd.log_tail()
    assert "content removed" in log, catalogd.log_tail()


def test_restart_restores_a_store_that_no_longer_opens(catalogd, olmv1, registry, name, tmp_path):
    """A store damaged while catalogd was down (here its index.json) cannot be served at start.
    The restart's reconcile pulls the same digest the store names; it must not take the damaged
    store for current content (Serving True/Available while every request is a 404) but store
    the catalog again and serve it."""
    src = subset(tmp_path, "c", ["habana-ai-operator"])
    digest_ref = push_catalog(olmv1, src, f"{registry}/e2e/{name}:v1")
    apply_catalog(catalogd, name, f"{registry}/e2e/{name}:v1", poll=False)
    wait_serving(catalogd, name)
    expected = render(olmv1, src)
    assert catalogd.all(name) == (200, expected)
    catalogd.stop()
    (catalogd.cache / "catalogs" / name / "index.json").write_text("{not json")

    catalogd.start()
    catalogd.wait_for(lambda: catalogd.all(name) == (200, expected), "the damaged store stored again and served")
    obj = wait_serving(catalogd, name)
    assert_served(obj, catalogd, name, digest_ref)


def test_restart_stores_again_a_store_left_not_durable(catalogd, olmv1, registry, name, tmp_path):
    """A new store is served, and Serving written, before it is fsynced; until then it holds a
    not-durable marker (catalog_store.h).  A store a stopped run left with the marker may be
    torn by a power cut: the restart must not serve it, and its reconcile stores it again."""
    src = subset(tmp_path, "c", ["habana-ai-operator"])
    digest_ref = push_catalog(olmv1, src, f"{registry}/e2e/{name}:v1")
    apply_catalog(catalogd, name, f"{registry}/e2e/{name}:v1", poll=False)
    wait_serving(catalogd, name)
    expected = render(olmv1, src)
    marker = catalogd.store_dir(name) / "not-durable"
    catalogd.wait_for(lambda: not marker.exists(), "the store made durable after Serving")
    catalogd.stop()
    marker.write_text("")  # what a run stopped between the store and its sync leaves

    # Not served at start, even with no API server to reconcile against.
    bogus = unreachable_kubeconfig(tmp_path)
    catalogd.start(kubeconfig=bogus)
    assert catalogd.all(name)[0] == 404
    assert "not serving the stored catalog: the previous run stopped before it was all on disk" in \
        catalogd.log_path.read_text(), catalogd.log_tail()
    catalogd.stop()

    catalogd.start()
    catalogd.wait_for(lambda: catalogd.all(name) == (200, expected), "the store stored again and served")
    catalogd.wait_for(lambda: not marker.exists(), "the new store made durable")
    assert_served(wait_serving(catalogd, name), catalogd, name, digest_ref)
    assert "storing it again" in catalogd.log_path.read_text(), catalogd.log_tail()


def test_unavailable_mode_and_delete(catalogd, olmv1, registry, name, tmp_path):
    src = subset(tmp_path, "c", ["k8s-triliovault"])
    digest_ref = push_catalog(olmv1, src, f"{registry}/e2e/{name}:v1")
    apply_catalog(catalogd, name, f"{registry}/e2e/{name}:v1")
    wait_serving(catalogd, name)
    assert catalogd.store_dir(name).is_dir()

    kubectl("patch", "clustercatalog", name, "--type=merge", "-p", '{"spec":{"availabilityMode":"Unavailable"}}')

    def unavailable():
        o = get(name)
        s = cond(o, "Serving")
        return o if s and s["reason"] == "UserSpecifiedUnavailable" else None
    obj = catalogd.wait_for(unavailable, "Serving UserSpecifiedUnavailable")
    gen = obj["metadata"]["generation"]
    p, s = cond(obj, "Progressing"), cond(obj, "Serving")
    assert (s["status"], s["message"], s["observedGeneration"]) == ("False", MSG_UNAVAILABLE, gen)
    assert (p["status"], p["reason"], p["message"]) == ("True", "Succeeded", MSG_UNAVAILABLE)
    for field in ("resolvedSource", "urls", "lastUnpacked"):
        assert field not in obj["status"], obj["status"]
    catalogd.wait_for(lambda: FINALIZER not in get(name)["metadata"].get("finalizers", []), "finalizer removal")
    assert not catalogd.store_dir(name).exists()
    assert catalogd.all(name)[0] == 404

    kubectl("patch", "clustercatalog", name, "--type=merge", "-p", '{"spec":{"availabilityMode":"Available"}}')
    obj = wait_serving(catalogd, name)
    assert_served(obj, catalogd, name, digest_ref)
    assert catalogd.all(name) == (200, render(olmv1, src))

    # Deletion goes through the finalizer: the store is removed, then the object goes.
    kubectl("delete", "clustercatalog", name, "--wait=false")
    kubectl("wait", "--for=delete", f"clustercatalog/{name}", f"--timeout={WAIT}s", timeout=WAIT + 30)
    assert not catalogd.store_dir(name).exists()
    assert not (catalogd.cache / "unpack" / name).exists()
    assert catalogd.all(name)[0] == 404


def test_leader_election_takes_and_releases_the_lease(catalogd, tmp_path):
    """--leader-elect: the Lease catalogd-operator-lock is taken in --system-namespace (there is
    no --leader-election-namespace), and released on SIGTERM.  Meanwhile --metrics-bind-address
    serves the catalog server's metrics on a listener of its own, to callers with a token only."""
    # A second reconciler would fight the module's catalogd over the status of its catalogs
    # (each writes its own urls.base): delete them first, while the module's catalogd runs.
    for n in catalogd.created:
        kubectl("delete", "clustercatalog", n, "--ignore-not-found", "--wait=false")
    for n in catalogd.created:
        kubectl("wait", "--for=delete", f"clustercatalog/{n}", f"--timeout={WAIT}s", timeout=WAIT + 30)
    catalogd.created.clear()
    ns = unique("catalogd-le")
    kubectl("create", "namespace", ns)
    try:
        d = Catalogd(tmp_path)
        metrics = free_port()
        d.start(extra=["--leader-elect", "--system-namespace", ns, "--metrics-bind-address", f"127.0.0.1:{metrics}"])
        try:
            # Behind the metrics filter (test_metrics_auth.py): no bearer token, no metrics.
            status, body = http(f"http://127.0.0.1:{metrics}/metrics")
            assert (status, body) == (401, b"Unauthorized\n"), (status, body[:200])
            def holder():
                p = kubectl("get", "lease", "catalogd-operator-lock", "-n", ns,
                            "-o", "jsonpath={.spec.holderIdentity}", check=False)
                return p.stdout if p.returncode == 0 and p.stdout else None
            who = d.wait_for(holder, "the Lease to be taken")
            d.wait_for(lambda: "became leader" in d.log_path.read_text(), "the leader log line")
        finally:
            d.stop()
        assert kubectl("get", "lease", "catalogd-operator-lock", "-n", ns,
                       "-o", "jsonpath={.spec.holderIdentity}").stdout == "", f"{who} kept the Lease"
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", check=False)
