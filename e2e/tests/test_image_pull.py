"""olmv1 image pull against a real registry.

Environment (run-tests.sh exports both): OLMV1_REGISTRY (host:port of a plain-HTTP registry on
127.0.0.1; when unset the `registry` fixture of test_image_push.py starts its own docker-registry
and stops it by PID) and OLMV1_BIN (the olmv1 binary).

Images are pushed with `olmv1 image|catalog|bundle push` (or, for hostile and multi-arch images,
uploaded here with urllib) and pulled back with `olmv1 image pull`; the unpacked trees are
compared with the source directories.  A small front that corrupts blobs checks that nothing
unverified is used.  Stdlib and pytest only.
"""

import hashlib
import io
import json
import os
import stat
import tarfile
import threading
import urllib.request
from pathlib import Path

import pytest

# The registry/olmv1 fixtures and helpers live with the push tests; sharing them keeps one way
# of starting (and stopping, by PID) a registry.
from test_image_push import (  # noqa: F401  (fixtures are used by name)
    CONFIGS_LABEL, DIGEST_REF, SAMPLE20, Front, FrontHandler, auth_file, bundle_dir, front, olmv1,
    push, registry, run, small_dir)

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


@pytest.fixture(autouse=True)
def _needs_image_pull(olmv1):
    """Until cli/main.c registers cli/cmd_pull.c the binary has no `image pull`: say so."""
    proc = run(olmv1, "image", "pull", "--help", check=False)
    if proc.returncode != 0 or "Usage: olmv1 image pull" not in proc.stdout:
        pytest.skip(f"{olmv1} has no 'image pull' command (cli/cmd_pull.c is not wired into "
                    "cli/main.c, cli/commands.h and cli/CMakeLists.txt yet)")


# ---------------------------------------------------------------- helpers


def tree(root):
    """{relative path: ("dir"|"file"|"link", content or target, mode bits)} of a directory."""
    root = Path(root)
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            out[rel] = ("link", os.readlink(p), None)
        elif stat.S_ISDIR(st.st_mode):
            out[rel] = ("dir", None, None)
        else:
            out[rel] = ("file", p.read_bytes(), stat.S_IMODE(st.st_mode))
    return out


def contents(root):
    """tree() without modes: what must survive a push/pull round trip exactly."""
    return {k: (kind, data) for k, (kind, data, _) in tree(root).items()}


def pull(olmv1, ref, dest, *extra, check=True):
    proc = run(olmv1, "image", "pull", ref, dest, *extra, check=check)
    return proc


def leftovers(parent):
    """Temp dirs a pull left beside its destination (there must be none)."""
    return [p.name for p in Path(parent).iterdir() if ".pull-" in p.name]


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def upload_blob(registry, repo, data):
    req = urllib.request.Request(f"http://{registry}/v2/{repo}/blobs/uploads/", method="POST",
                                 data=b"")
    with urllib.request.urlopen(req, timeout=30) as resp:
        loc = resp.headers["Location"]
    if loc.startswith("/"):
        loc = f"http://{registry}{loc}"
    digest = sha256(data)
    sep = "&" if "?" in loc else "?"
    req = urllib.request.Request(f"{loc}{sep}digest={digest}", method="PUT", data=data,
                                 headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req, timeout=30).close()
    return {"digest": digest, "size": len(data)}


def put_manifest(registry, repo, tag, doc, media_type):
    body = json.dumps(doc).encode()
    req = urllib.request.Request(f"http://{registry}/v2/{repo}/manifests/{tag}", method="PUT",
                                 data=body, headers={"Content-Type": media_type})
    urllib.request.urlopen(req, timeout=30).close()
    return sha256(body), len(body)


def push_raw_image(registry, repo, tag, layers, labels=None):
    """Uploads an image whose layers are the given tar bytes (uncompressed)."""
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "config": {"Labels": labels or {}},
                         "rootfs": {"type": "layers",
                                    "diff_ids": [sha256(layer) for layer in layers]}}).encode()
    cdesc = upload_blob(registry, repo, config)
    ldescs = [upload_blob(registry, repo, layer) for layer in layers]
    manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **cdesc},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **d}
                           for d in ldescs]}
    return put_manifest(registry, repo, tag, manifest, OCI_MANIFEST)


def tar_bytes(entries):
    """entries: (name, kind, data) with kind "file", "dir", "symlink" (data = target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tf.addfile(info)
            elif kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = data
                tf.addfile(info)
            else:
                info.size = len(data)
                info.mode = 0o644
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


# ---------------------------------------------------------------- round trips


def test_image_pull_round_trip(olmv1, registry, small_dir, tmp_path):
    ref = f"{registry}/e2e-pull/image:v1"
    digest = push(olmv1, "image", small_dir, ref)
    dest = tmp_path / "out"
    proc = pull(olmv1, ref, dest)
    assert proc.stdout == f"{registry}/e2e-pull/image@{digest}\n"
    assert "pulling layer 1/1" in proc.stderr
    assert contents(dest) == contents(small_dir)
    got = tree(dest)
    # push normalises modes (0755 for executables, 0644 otherwise); pull keeps them
    assert got["sub/deeper/run.sh"][2] == 0o755
    assert got["hello.txt"][2] == 0o644
    assert all(p.lstat().st_uid == os.getuid() for p in dest.rglob("*"))
    assert leftovers(tmp_path) == []
    # by digest, into an existing empty dir, quietly
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = pull(olmv1, f"{registry}/e2e-pull/image@{digest}", empty, "-q")
    assert proc.stderr == ""
    assert contents(empty) == contents(small_dir)


def test_catalog_pull(olmv1, registry, tmp_path):
    if not SAMPLE20.is_dir():
        pytest.skip(f"{SAMPLE20} not found (set OLMV1_SHARED)")
    ref = f"{registry}/e2e-pull/catalog:latest"
    digest = push(olmv1, "catalog", SAMPLE20, ref)
    dest = tmp_path / "cat"
    proc = pull(olmv1, ref, dest, "--catalog")
    lines = proc.stdout.splitlines()
    assert lines == [f"{registry}/e2e-pull/catalog@{digest}", str(dest / "configs")]
    assert contents(dest / "configs") == contents(SAMPLE20)
    assert [p.name for p in dest.iterdir()] == ["configs"]
    # the FBC the pull produced is a valid catalog for our own loader
    run(olmv1, "catalog", "validate", dest / "configs")


def test_catalog_pull_extracts_only_the_labelled_dir(olmv1, registry, tmp_path):
    layer = tar_bytes([("README", "file", b"not part of the catalog\n"),
                       ("fbc", "dir", None),
                       ("fbc/pkg", "dir", None),
                       ("fbc/pkg/catalog.json", "file", b'{"schema":"olm.package","name":"p"}\n'),
                       ("bin/tool", "file", b"#!/bin/sh\n"),
                       ("etc/localtime", "symlink", "/usr/share/zoneinfo/UTC")])
    push_raw_image(registry, "e2e-pull/labelled", "v1", [layer], {CONFIGS_LABEL: "/fbc/"})
    dest = tmp_path / "cat"
    proc = pull(olmv1, f"{registry}/e2e-pull/labelled:v1", dest, "--catalog")
    assert proc.stdout.splitlines()[1] == str(dest / "fbc")
    assert sorted(tree(dest)) == ["fbc", "fbc/pkg", "fbc/pkg/catalog.json"]
    # the same image pulled whole refuses the absolute symlink
    proc = pull(olmv1, f"{registry}/e2e-pull/labelled:v1", tmp_path / "whole", check=False)
    assert proc.returncode == 1
    assert 'entry "etc/localtime": symlink target is absolute' in proc.stderr
    assert not (tmp_path / "whole").exists() and leftovers(tmp_path) == []


def test_bundle_pull(olmv1, registry, bundle_dir, tmp_path):
    ref = f"{registry}/e2e-pull/bundle:v0.1.0"
    digest = push(olmv1, "bundle", bundle_dir, ref)
    dest = tmp_path / "pulled"
    proc = pull(olmv1, ref, dest)
    assert DIGEST_REF.match(proc.stdout.strip()).group("digest") == digest
    assert contents(dest) == contents(bundle_dir)


def test_retagged_image_gives_a_new_digest(olmv1, registry, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "version").write_text("one\n")
    (b / "version").write_text("two\n")
    ref = f"{registry}/e2e-pull/moving:latest"
    first = push(olmv1, "image", a, ref)
    proc = pull(olmv1, ref, tmp_path / "p1", "-q")
    assert proc.stdout.strip().endswith(first)
    second = push(olmv1, "image", b, ref)
    assert second != first
    # the tag is resolved again on every pull
    proc = pull(olmv1, ref, tmp_path / "p2", "-q")
    assert proc.stdout.strip().endswith(second)
    assert (tmp_path / "p2" / "version").read_text() == "two\n"
    # the old digest still pulls the old content
    pull(olmv1, f"{registry}/e2e-pull/moving@{first}", tmp_path / "p3", "-q")
    assert (tmp_path / "p3" / "version").read_text() == "one\n"


def test_multi_arch_index(olmv1, registry, tmp_path):
    dirs = {}
    digests = {}
    for arch in ("amd64", "arm64"):
        d = tmp_path / f"src-{arch}"
        d.mkdir()
        (d / "arch").write_text(arch + "\n")
        dirs[arch] = d
        digests[arch] = push(olmv1, "image", d, f"{registry}/e2e-pull/multi:{arch}")
    entries = []
    for arch, variant in (("amd64", None), ("arm64", "v8")):
        body = urllib.request.urlopen(urllib.request.Request(
            f"http://{registry}/v2/e2e-pull/multi/manifests/{digests[arch]}",
            headers={"Accept": OCI_MANIFEST}), timeout=30).read()
        platform = {"architecture": arch, "os": "linux"}
        if variant:
            platform["variant"] = variant
        entries.append({"mediaType": OCI_MANIFEST, "digest": digests[arch], "size": len(body),
                        "platform": platform})
    index_digest, _ = put_manifest(registry, "e2e-pull/multi", "all",
                                   {"schemaVersion": 2, "mediaType": OCI_INDEX,
                                    "manifests": entries}, OCI_INDEX)
    ref = f"{registry}/e2e-pull/multi:all"
    host = "arm64" if os.uname().machine in ("aarch64", "arm64") else "amd64"
    proc = pull(olmv1, ref, tmp_path / "host", "-q")
    # the canonical ref names the index; the content is this machine's
    assert proc.stdout.strip() == f"{registry}/e2e-pull/multi@{index_digest}"
    assert (tmp_path / "host" / "arch").read_text() == host + "\n"
    pull(olmv1, ref, tmp_path / "arm", "-q", "--platform", "linux/arm64")
    assert (tmp_path / "arm" / "arch").read_text() == "arm64\n"
    proc = pull(olmv1, ref, tmp_path / "none", "--platform", "linux/s390x", check=False)
    assert proc.returncode == 1
    assert "no image for platform linux/s390x in the index; available: linux/amd64, " \
           "linux/arm64/v8" in proc.stderr


# ---------------------------------------------------------------- errors


def test_catalog_without_label(olmv1, registry, small_dir, tmp_path):
    ref = f"{registry}/e2e-pull/not-a-catalog:v1"
    push(olmv1, "image", small_dir, ref)
    dest = tmp_path / "cat"
    proc = pull(olmv1, ref, dest, "--catalog", check=False)
    assert proc.returncode == 1
    assert ("catalog image is missing the required label "
            "operators.operatorframework.io.index.configs.v1") in proc.stderr
    assert proc.stdout == ""
    assert not dest.exists() and leftovers(tmp_path) == []


def test_hostile_layer_from_registry(olmv1, registry, tmp_path):
    layer = tar_bytes([("ok", "file", b"fine\n"), ("../escaped", "file", b"evil\n")])
    push_raw_image(registry, "e2e-pull/hostile", "v1", [layer])
    parent = tmp_path / "parent"
    parent.mkdir()
    proc = pull(olmv1, f"{registry}/e2e-pull/hostile:v1", parent / "out", check=False)
    assert proc.returncode == 1
    assert 'entry "../escaped": path escapes the unpack root' in proc.stderr
    assert list(parent.iterdir()) == []
    assert not (tmp_path / "escaped").exists()


def test_whiteouts_across_pushed_layers(olmv1, registry, tmp_path):
    lower = tar_bytes([("keep", "file", b"k\n"), ("gone", "file", b"g\n"),
                       ("d", "dir", None), ("d/old", "file", b"o\n")])
    upper = tar_bytes([(".wh.gone", "file", b""), ("d/.wh..wh..opq", "file", b""),
                       ("d/new", "file", b"n\n")])
    push_raw_image(registry, "e2e-pull/layers", "v1", [lower, upper])
    dest = tmp_path / "out"
    pull(olmv1, f"{registry}/e2e-pull/layers:v1", dest, "-q")
    assert sorted(tree(dest)) == ["d", "d/new", "keep"]


def test_pull_errors(olmv1, registry, small_dir, tmp_path):
    proc = run(olmv1, "image", "pull", "--help")
    assert proc.returncode == 0 and "Usage: olmv1 image pull REF DIR" in proc.stdout
    proc = run(olmv1, "image", "pull", check=False)
    assert proc.returncode == 1 and "expected REF and DIR" in proc.stderr
    proc = pull(olmv1, f"{registry}/e2e-pull/never-pushed:v1", tmp_path / "x", check=False)
    assert proc.returncode == 1 and "404" in proc.stderr
    ref = f"{registry}/e2e-pull/full:v1"
    push(olmv1, "image", small_dir, ref)
    full = tmp_path / "full"
    full.mkdir()
    (full / "mine").write_text("do not touch\n")
    proc = pull(olmv1, ref, full, check=False)
    assert proc.returncode == 1 and "exists and is not empty" in proc.stderr
    assert [p.name for p in full.iterdir()] == ["mine"] and leftovers(tmp_path) == []
    # the limit bounds the download of each (compressed) layer ...
    proc = pull(olmv1, ref, tmp_path / "limited", "--max-bytes", "5", check=False)
    assert proc.returncode == 1 and "exceeds the limit of 5 bytes" in proc.stderr
    # ... and the unpacked files: 100 kB of zeros compress to almost nothing
    bomb = tmp_path / "bomb"
    bomb.mkdir()
    (bomb / "zeros").write_bytes(bytes(100_000))
    push(olmv1, "image", bomb, f"{registry}/e2e-pull/bomb:v1")
    proc = pull(olmv1, f"{registry}/e2e-pull/bomb:v1", tmp_path / "limited", "--max-bytes",
                "10000", check=False)
    assert proc.returncode == 1
    assert 'entry "zeros": size 100000 bytes exceeds the unpack limit of 10000 bytes' in proc.stderr
    assert not (tmp_path / "limited").exists() and leftovers(tmp_path) == []


def test_pull_through_bearer_auth(olmv1, registry, front, small_dir, tmp_path):
    srv = front("bearer", "alice", "pw")
    af = auth_file(tmp_path, srv.host, "alice", "pw")
    ref = f"{srv.host}/e2e-pull/auth:v1"
    digest = push(olmv1, "image", small_dir, ref, "--authfile", af)
    srv.token_requests.clear()
    proc = pull(olmv1, ref, tmp_path / "out", "--authfile", af)
    assert proc.stdout.strip() == f"{srv.host}/e2e-pull/auth@{digest}"
    assert contents(tmp_path / "out") == contents(small_dir)
    # a pull asks only for pull rights, with the credentials
    scopes = [s for ss, _ in srv.token_requests for s in ss]
    assert "repository:e2e-pull/auth:pull" in scopes
    assert all(user == "alice" for _, user in srv.token_requests)
    proc = run(olmv1, "image", "pull", ref, tmp_path / "anon", check=False,
               env={"REGISTRY_AUTH_FILE": ""})
    assert proc.returncode == 1 and "401" in proc.stderr
    assert not (tmp_path / "anon").exists() and leftovers(tmp_path) == []


class TamperHandler(FrontHandler):
    """Forwards to the registry but flips one byte of every blob body."""

    def _send(self, status, body=b"", headers=()):
        if self.command == "GET" and "/blobs/" in self.path and status == 200 and body:
            body = bytes([body[0] ^ 1]) + body[1:]
        super()._send(status, body, headers)


def test_tampered_blob_is_refused(olmv1, registry, small_dir, tmp_path):
    push(olmv1, "image", small_dir, f"{registry}/e2e-pull/tamper:v1")
    srv = Front(registry, "plain")
    srv.RequestHandlerClass = TamperHandler
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        dest = tmp_path / "out"
        proc = pull(olmv1, f"{srv.host}/e2e-pull/tamper:v1", dest, check=False)
    finally:
        srv.shutdown()
        srv.server_close()
    assert proc.returncode == 1
    assert "digest mismatch" in proc.stderr
    assert not dest.exists() and leftovers(tmp_path) == []
