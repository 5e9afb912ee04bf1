"""olmv1 image push | catalog push | bundle push against a real registry.

Environment (run-tests.sh exports both):
  OLMV1_REGISTRY  host:port of a plain-HTTP registry on 127.0.0.1 (Debian's docker-registry).
                  When unset, this module starts its own docker-registry on a free port and
                  stops it (by PID) at the end, so the file also runs on its own.
  OLMV1_BIN       the olmv1 binary (default: <repo>/build/cli/olmv1).
  OLMV1_SHARED    the shared data folder (default: <repo>/../shared).

Everything pushed is read back with urllib (manifest, config, layer) and the layer is listed
with tarfile, so the check does not depend on our own pull code.  Registry authentication is
exercised through a small in-process front (Bearer token service, or Basic) that forwards to
the real registry.  Stdlib and pytest only.
"""

import base64
import gzip
import hashlib
import http.client
import http.server
import io
import json
import os
import re
import shutil
import socket
import subprocess
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(os.environ.get("OLMV1_REPO") or Path(__file__).resolve().parents[2])
SHARED = Path(os.environ.get("OLMV1_SHARED") or REPO.parent / "shared")
SAMPLE20 = SHARED / "data" / "catalogs-small" / "sample20"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"
DIGEST_REF = re.compile(r"^(?P<name>[^@\s]+)@(?P<digest>sha256:[0-9a-f]{64})$")


# ---------------------------------------------------------------- fixtures


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url, timeout=15):
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers: good enough
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture(scope="module")
def registry():
    """host:port of a plain-HTTP registry."""
    env = os.environ.get("OLMV1_REGISTRY")
    if env:
        yield env
        return
    binary = shutil.which("docker-registry") or "/usr/bin/docker-registry"
    if not os.access(binary, os.X_OK):
        pytest.skip("OLMV1_REGISTRY is not set and docker-registry is not installed "
                    "(apt-get install docker-registry, or run through e2e/run-tests.sh)")
    root = tempfile.mkdtemp(prefix="olmv1-registry-")
    port = _free_port()
    cfg = Path(root) / "config.yml"
    cfg.write_text(
        "version: 0.1\n"
        "log:\n  level: warn\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root}/data\n"
        f"http:\n  addr: 127.0.0.1:{port}\n")
    log = open(Path(root) / "registry.log", "wb")
    proc = subprocess.Popen([binary, "serve", str(cfg)], stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for(f"http://127.0.0.1:{port}/v2/")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()  # our own child, by PID
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def olmv1():
    path = os.environ.get("OLMV1_BIN")
    if path:
        assert os.access(path, os.X_OK), f"OLMV1_BIN={path} is not an executable"
        return path
    path = REPO / "build" / "cli" / "olmv1"
    if not os.access(path, os.X_OK):
        pytest.skip(f"OLMV1_BIN is not set and {path} is not built (make build)")
    return str(path)


def run(olmv1, *args, check=True, env=None):
    full_env = os.environ.copy()
    full_env.update(env or {})
    proc = subprocess.run([olmv1, *[str(a) for a in args]], capture_output=True, text=True,
                          timeout=300, env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(f"olmv1 {' '.join(map(str, args))} exited {proc.returncode}\n"
                             f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc


def push(olmv1, kind, src, ref, *extra, **kw):
    """Runs `olmv1 <kind> push`, checks the printed digest reference and returns the digest."""
    proc = run(olmv1, kind, "push", src, ref, *extra, **kw)
    line = proc.stdout.strip()
    m = DIGEST_REF.match(line)
    assert m, f"unexpected output {line!r}"
    assert m.group("name") == ref.rsplit(":", 1)[0], line
    return m.group("digest")


# ---------------------------------------------------------------- reading images back


def http_get(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.read(), dict(resp.headers)


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Pulled:
    """Manifest, config and the single layer of an image, checked for integrity."""

    def __init__(self, registry, repo, reference):
        base = f"http://{registry}/v2/{repo}"
        self.manifest_bytes, headers = http_get(f"{base}/manifests/{reference}", OCI_MANIFEST)
        self.digest = sha256(self.manifest_bytes)
        assert headers.get("Docker-Content-Digest", self.digest) == self.digest
        self.manifest = json.loads(self.manifest_bytes)
        config_bytes, _ = http_get(f"{base}/blobs/{self.manifest['config']['digest']}")
        assert sha256(config_bytes) == self.manifest["config"]["digest"]
        assert len(config_bytes) == self.manifest["config"]["size"]
        self.config = json.loads(config_bytes)
        assert len(self.manifest["layers"]) == 1
        desc = self.manifest["layers"][0]
        self.layer_gz, _ = http_get(f"{base}/blobs/{desc['digest']}")
        assert sha256(self.layer_gz) == desc["digest"]
        assert len(self.layer_gz) == desc["size"]
        self.layer_tar = gzip.decompress(self.layer_gz)
        assert sha256(self.layer_tar) == self.config["rootfs"]["diff_ids"][0]
        with tarfile.open(fileobj=io.BytesIO(self.layer_tar), mode="r:") as tf:
            self.members = tf.getmembers()
            self.files = {m.name: tf.extractfile(m).read() for m in self.members if m.isfile()}

    @property
    def labels(self):
        return self.config["config"].get("Labels") or {}

    @property
    def names(self):
        return [m.name for m in self.members]


# ---------------------------------------------------------------- content


@pytest.fixture
def small_dir(tmp_path):
    d = tmp_path / "small"
    (d / "sub" / "deeper").mkdir(parents=True)
    (d / "hello.txt").write_text("hello\n")
    (d / "sub" / "data.json").write_text('{"a": 1}\n')
    run_sh = d / "sub" / "deeper" / "run.sh"
    run_sh.write_text("#!/bin/sh\necho hi\n")
    run_sh.chmod(0o700)
    (d / "link").symlink_to("hello.txt")
    return d


@pytest.fixture
def bundle_dir(tmp_path):
    d = tmp_path / "bundle"
    (d / "manifests").mkdir(parents=True)
    (d / "metadata").mkdir()
    (d / "manifests" / "example.clusterserviceversion.yaml").write_text(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n"
        "metadata:\n  name: example.v0.1.0\nspec:\n  version: 0.1.0\n")
    (d / "manifests" / "example.crd.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata:\n  name: widgets.example.com\n")
    (d / "metadata" / "annotations.yaml").write_text(
        "annotations:\n"
        "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"
        "  operators.operatorframework.io.bundle.manifests.v1: manifests/\n"
        "  operators.operatorframework.io.bundle.metadata.v1: metadata/\n"
        "  operators.operatorframework.io.bundle.package.v1: example\n"
        "  operators.operatorframework.io.bundle.channels.v1: stable,fast\n"
        "  operators.operatorframework.io.bundle.channel.default.v1: stable\n")
    return d


# ---------------------------------------------------------------- tests: push and read back


def test_image_push_round_trip(olmv1, registry, small_dir):
    ref = f"{registry}/e2e/image:v1"
    digest = push(olmv1, "image", small_dir, ref, "--label", "org.example.team=olm",
                  "--label=org.example.empty=")
    img = Pulled(registry, "e2e/image", "v1")
    assert img.digest == digest
    assert img.manifest["schemaVersion"] == 2
    assert img.manifest["mediaType"] == OCI_MANIFEST
    assert img.manifest["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json"
    assert img.manifest["layers"][0]["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
    assert img.config["architecture"] == "amd64"
    assert img.config["os"] == "linux"
    assert img.config["rootfs"]["type"] == "layers"
    assert img.labels == {"org.example.team": "olm", "org.example.empty": ""}
    # the content at the root, parents before children, in byte order
    assert img.names == ["hello.txt", "link", "sub", "sub/data.json", "sub/deeper",
                         "sub/deeper/run.sh"]
    by_name = {m.name: m for m in img.members}
    for m in img.members:
        assert (m.uid, m.gid, m.mtime) == (0, 0, 0), m.name
    assert by_name["sub"].isdir() and by_name["sub"].mode == 0o755
    assert by_name["hello.txt"].mode == 0o644
    assert by_name["sub/deeper/run.sh"].mode == 0o755
    assert by_name["link"].issym() and by_name["link"].linkname == "hello.txt"
    assert img.files["hello.txt"] == b"hello\n"
    # pulling by the printed digest gives the same manifest
    assert Pulled(registry, "e2e/image", digest).manifest_bytes == img.manifest_bytes


def test_push_is_reproducible(olmv1, registry, small_dir):
    first = push(olmv1, "image", small_dir, f"{registry}/e2e/repro:a")
    proc = run(olmv1, "image", "push", small_dir, f"{registry}/e2e/repro:b")
    assert DIGEST_REF.match(proc.stdout.strip()).group("digest") == first
    # the second push finds both blobs and uploads nothing
    assert proc.stderr.count("already exists") == 2, proc.stderr
    # -q silences progress
    proc = run(olmv1, "image", "push", "-q", small_dir, f"{registry}/e2e/repro:c")
    assert proc.stderr == ""


def test_catalog_push(olmv1, registry):
    if not SAMPLE20.is_dir():
        pytest.skip(f"{SAMPLE20} not found (set OLMV1_SHARED)")
    digest = push(olmv1, "catalog", SAMPLE20, f"{registry}/e2e/catalog:latest")
    img = Pulled(registry, "e2e/catalog", "latest")
    assert img.digest == digest
    assert img.labels[CONFIGS_LABEL] == "/configs"
    assert img.names[0] == "configs"
    assert all(n == "configs" or n.startswith("configs/") for n in img.names)
    expected = sorted(str(p.relative_to(SAMPLE20)) for p in SAMPLE20.rglob("*") if p.is_file())
    got = sorted(n[len("configs/"):] for n in img.files)
    assert got == expected
    some = expected[0]
    assert img.files["configs/" + some] == (SAMPLE20 / some).read_bytes()


def test_catalog_push_chunked_upload(olmv1, registry, tmp_path):
    """Blobs over --chunk-size go up as PATCH chunks; the result must be identical."""
    d = tmp_path / "cat"
    (d / "pkg").mkdir(parents=True)
    (d / "pkg" / "catalog.json").write_bytes(os.urandom(50_000))  # incompressible
    whole = push(olmv1, "catalog", d, f"{registry}/e2e/chunk-whole:v1")
    chunked = push(olmv1, "catalog", d, f"{registry}/e2e/chunk-parts:v1", "--chunk-size", "4096")
    assert whole == chunked
    img = Pulled(registry, "e2e/chunk-parts", "v1")
    assert img.files["configs/pkg/catalog.json"] == (d / "pkg" / "catalog.json").read_bytes()


def test_bundle_push(olmv1, registry, bundle_dir):
    digest = push(olmv1, "bundle", bundle_dir, f"{registry}/e2e/bundle:v0.1.0",
                  "--label", "org.example.build=1")
    img = Pulled(registry, "e2e/bundle", "v0.1.0")
    assert img.digest == digest
    labels = img.labels
    assert labels["operators.operatorframework.io.bundle.mediatype.v1"] == "registry+v1"
    assert labels["operators.operatorframework.io.bundle.manifests.v1"] == "manifests/"
    assert labels["operators.operatorframework.io.bundle.metadata.v1"] == "metadata/"
    assert labels["operators.operatorframework.io.bundle.package.v1"] == "example"
    assert labels["operators.operatorframework.io.bundle.channels.v1"] == "stable,fast"
    assert labels["operators.operatorframework.io.bundle.channel.default.v1"] == "stable"
    assert labels["org.example.build"] == "1"
    assert CONFIGS_LABEL not in labels
    assert img.names == ["manifests", "manifests/example.clusterserviceversion.yaml",
                         "manifests/example.crd.yaml", "metadata", "metadata/annotations.yaml"]


def test_skopeo_sees_a_valid_image(olmv1, registry, bundle_dir):
    skopeo = shutil.which("skopeo")
    if not skopeo:
        pytest.skip("skopeo is not installed; it is only an independent cross-check")
    digest = push(olmv1, "bundle", bundle_dir, f"{registry}/e2e/skopeo:v1")
    proc = subprocess.run([skopeo, "inspect", "--tls-verify=false",
                           f"docker://{registry}/e2e/skopeo:v1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["Digest"] == digest
    assert info["Architecture"] == "amd64" and info["Os"] == "linux"
    assert info["Labels"]["operators.operatorframework.io.bundle.package.v1"] == "example"
    assert len(info["Layers"]) == 1


# ---------------------------------------------------------------- tests: errors


def test_usage_and_input_errors(olmv1, registry, small_dir, tmp_path):
    for kind in ("image", "catalog", "bundle"):
        proc = run(olmv1, kind, "push", "--help")
        assert proc.returncode == 0 and "Usage: olmv1 " + kind + " push" in proc.stdout
        proc = run(olmv1, kind, "push", check=False)
        assert proc.returncode == 1 and "expected DIR and REF" in proc.stderr
    proc = run(olmv1, "image", "push", small_dir, "Not/Valid:ref", check=False)
    assert proc.returncode == 1 and "must be lowercase" in proc.stderr
    proc = run(olmv1, "image", "push", tmp_path / "missing", f"{registry}/e2e/x", check=False)
    assert proc.returncode == 1 and "is not a directory" in proc.stderr
    proc = run(olmv1, "image", "push", small_dir, f"{registry}/e2e/x", "--label", "novalue",
               check=False)
    assert proc.returncode == 1 and "KEY=VALUE" in proc.stderr
    proc = run(olmv1, "bundle", "push", small_dir, f"{registry}/e2e/x", check=False)
    assert proc.returncode == 1 and "manifests/" in proc.stderr
    proc = run(olmv1, "catalog", "push", small_dir, f"{registry}/e2e/x", "--label",
               f"{CONFIGS_LABEL}=/other", check=False)
    assert proc.returncode == 1 and "set by catalog push" in proc.stderr
    proc = run(olmv1, "image", "push", small_dir, f"127.0.0.1:{_free_port()}/e2e/x", check=False)
    assert proc.returncode == 1 and "connect" in proc.stderr.lower()
    assert proc.stdout == ""


# ---------------------------------------------------------------- an auth front for the registry


class Front(http.server.ThreadingHTTPServer):
    """Forwards /v2/ to the real registry after checking Authorization.

    mode "bearer": a token service at /token (Basic-authenticated when `user` is set);
    mode "basic": Basic credentials on every request;
    mode "name-unknown": every upload POST gets the registry error NAME_UNKNOWN.
    """

    daemon_threads = True

    def __init__(self, upstream, mode, user=None, password=None):
        super().__init__(("127.0.0.1", 0), FrontHandler)
        self.upstream, self.mode, self.user, self.password = upstream, mode, user, password
        self.token_requests = []  # (scopes, basic user or None)
        self.unauthorized = 0

    @property
    def host(self):
        return f"127.0.0.1:{self.server_address[1]}"


class FrontHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _basic_user(self):
        h = self.headers.get("Authorization", "")
        if not h.startswith("Basic "):
            return None
        user, _, password = base64.b64decode(h[6:]).decode().partition(":")
        return user if (user, password) == (self.server.user, self.server.password) else "!bad"

    def _send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status, code, message, headers=()):
        body = json.dumps({"errors": [{"code": code, "message": message}]}).encode()
        self._send(status, body, [("Content-Type", "application/json"), *headers])

    def _handle(self):
        srv = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path
        if path.startswith("/token"):
            from urllib.parse import parse_qs, urlparse
            q = parse_qs(urlparse(path).query)
            user = self._basic_user()
            srv.token_requests.append((q.get("scope", []), user))
            if user == "!bad" or (srv.user and user is None):
                return self._error(401, "UNAUTHORIZED", "bad credentials")
            scopes = " ".join(q.get("scope", []))
            token = base64.urlsafe_b64encode(scopes.encode()).decode()
            return self._send(200, json.dumps({"token": token, "expires_in": 300}).encode(),
                              [("Content-Type", "application/json")])
        repo = re.match(r"^/v2/(.+?)/(blobs|manifests)/", path)
        repo = repo.group(1) if repo else ""
        if srv.mode == "bearer":
            h = self.headers.get("Authorization", "")
            scopes = base64.urlsafe_b64decode(h[7:]).decode() if h.startswith("Bearer ") else ""
            need = "pull" if self.command in ("GET", "HEAD") else "push"
            if not re.search(rf"repository:{re.escape(repo)}:[a-z,]*\b{need}\b", scopes):
                srv.unauthorized += 1
                challenge = (f'Bearer realm="http://{srv.host}/token",service="front",'
                             f'scope="repository:{repo}:{need}"')
                return self._error(401, "UNAUTHORIZED", "authentication required",
                                   [("WWW-Authenticate", challenge)])
        elif srv.mode == "basic":
            if self._basic_user() in (None, "!bad"):
                srv.unauthorized += 1
                return self._error(401, "UNAUTHORIZED", "authentication required",
                                   [("WWW-Authenticate", 'Basic realm="front"')])
        elif srv.mode == "name-unknown" and self.command == "POST":
            return self._error(404, "NAME_UNKNOWN", "repository name not known to registry")
        # forward to the real registry
        conn = http.client.HTTPConnection(srv.upstream, timeout=60)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "authorization", "connection")}
        conn.request(self.command, path, body=body if self.command not in ("GET", "HEAD") else None,
                     headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        out = []
        for k, v in resp.getheaders():
            if k.lower() in ("connection", "transfer-encoding", "content-length"):
                continue
            if k.lower() == "location":
                v = v.replace(f"http://{srv.upstream}", f"http://{srv.host}")
            out.append((k, v))
        conn.close()
        self._send(resp.status, data, out)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = _handle


@pytest.fixture
def front(registry):
    servers = []

    def start(mode, user=None, password=None):
        srv = Front(registry, mode, user, password)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def auth_file(tmp_path, host, user, password):
    p = tmp_path / "auth.json"
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    p.write_text(json.dumps({"auths": {f"http://{host}": {"auth": token}}}))
    return p


def test_bearer_token_auth_anonymous(olmv1, registry, front, small_dir):
    srv = front("bearer")
    digest = push(olmv1, "image", small_dir, f"{srv.host}/e2e/bearer-anon:v1")
    assert srv.unauthorized == 1  # one challenge, then the token is reused
    scopes, user = srv.token_requests[0]
    assert user is None
    assert "repository:e2e/bearer-anon:pull,push" in scopes
    assert Pulled(registry, "e2e/bearer-anon", "v1").digest == digest


def test_bearer_token_auth_with_credentials(olmv1, registry, front, small_dir, tmp_path):
    srv = front("bearer", "alice", "s3cret:with-colon")
    af = auth_file(tmp_path, srv.host, "alice", "s3cret:with-colon")
    digest = push(olmv1, "image", small_dir, f"{srv.host}/e2e/bearer-auth:v1", "--authfile", af)
    assert all(user == "alice" for _, user in srv.token_requests)
    assert Pulled(registry, "e2e/bearer-auth", "v1").digest == digest
    # the same through REGISTRY_AUTH_FILE
    push(olmv1, "image", small_dir, f"{srv.host}/e2e/bearer-auth:v2",
         env={"REGISTRY_AUTH_FILE": str(af)})
    # without credentials the token service refuses, and the message says what to do
    proc = run(olmv1, "image", "push", small_dir, f"{srv.host}/e2e/bearer-auth:v3", check=False,
               env={"REGISTRY_AUTH_FILE": ""})
    assert proc.returncode == 1
    assert "401 UNAUTHORIZED: bad credentials" in proc.stderr
    assert "--authfile" in proc.stderr


def test_basic_auth(olmv1, registry, front, small_dir, tmp_path):
    srv = front("basic", "bob", "pw")
    af = auth_file(tmp_path, srv.host, "bob", "pw")
    digest = push(olmv1, "image", small_dir, f"{srv.host}/e2e/basic:v1", "--authfile", af)
    assert Pulled(registry, "e2e/basic", "v1").digest == digest
    bad = auth_file(tmp_path, srv.host, "bob", "wrong")
    proc = run(olmv1, "image", "push", small_dir, f"{srv.host}/e2e/basic:v2", "--authfile", bad,
               check=False)
    # the first request is a HEAD, so the 401 has no error body to quote
    assert proc.returncode == 1 and ": 401 " in proc.stderr and "--authfile" in proc.stderr
    proc = run(olmv1, "image", "push", small_dir, f"{srv.host}/e2e/basic:v3", check=False,
               env={"REGISTRY_AUTH_FILE": ""})
    assert proc.returncode == 1 and "requires a login" in proc.stderr


def test_registry_error_is_reported(olmv1, front, small_dir):
    srv = front("name-unknown")
    proc = run(olmv1, "image", "push", small_dir, f"{srv.host}/e2e/unknown:v1", check=False)
    assert proc.returncode == 1
    assert re.search(rf"push sha256:[0-9a-f]{{64}} to {re.escape(srv.host)}/e2e/unknown: "
                     r"404 NAME_UNKNOWN: repository name not known to registry", proc.stderr), \
        proc.stderr
