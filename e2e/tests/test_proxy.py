"""HTTP_PROXY / HTTPS_PROXY / NO_PROXY (issue 28 item 5), with the meaning upstream's Go gives
them, on catalogd's registry pulls, against a recording proxy on loopback.

The registry is named registry.olmv1.test, a name that resolves nowhere: only the proxy, which
maps *.olmv1.test to 127.0.0.1, can reach it, so a catalog that is Serving proves its pull went
through the proxy, and the proxy's log shows the requests.  NO_PROXY naming the registry sends
the pull around the proxy (and then it fails to resolve the name).  Loopback is never proxied:
catalogd's own API requests (127.0.0.1) do not appear in the log.
"""

import socket
import socketserver
import threading

import pytest

from conftest import kubectl, unique
from egress_proxy import _splice as splice
from olmv1_e2e import Catalogd, CATALOGD_WAIT, poll
from test_catalogd import apply_catalog, cond, get, push_catalog, subset
from test_image_push import olmv1, registry  # noqa: F401  (fixtures by name)

FAKE_DOMAIN = ".olmv1.test"


class RecordingProxy(socketserver.ThreadingTCPServer):
    """CONNECT host:port and absolute-URI requests; *.olmv1.test goes to 127.0.0.1, anything else
    is refused (502).  Records every target asked for."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.seen = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def record(self, what):
        with self.lock:
            self.seen.append(what)


class ProxyHandler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline(65536).decode("latin-1").strip()
        headers = []
        while True:
            h = self.rfile.readline(65536)
            if h in (b"\r\n", b"\n", b""):
                break
            headers.append(h)
        try:
            method, target, version = line.split(" ", 2)
        except ValueError:
            return
        connect = method == "CONNECT"
        hostport = target if connect else target.split("://", 1)[-1].split("/", 1)[0]
        host, _, port = hostport.rpartition(":")
        self.server.record(f"{method} {hostport}")
        if not host.endswith(FAKE_DOMAIN):
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        up = socket.create_connection(("127.0.0.1", int(port or 80)), timeout=10)
        if connect:
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            path = "/" + target.split("://", 1)[-1].split("/", 1)[1] if "/" in target.split("://", 1)[-1] else "/"
            up.sendall(f"{method} {path} {version}\r\n".encode("latin-1") + b"".join(headers) + b"\r\n")
        try:
            splice(self.connection, up)
        finally:
            up.close()


@pytest.fixture
def proxy():
    p = RecordingProxy()
    yield p
    p.shutdown()
    p.server_close()


def start_catalogd(tmp_path, registry_port, env):
    d = Catalogd(tmp_path / unique("cd"), extra=["--insecure-registries", f"registry{FAKE_DOMAIN}:{registry_port}"],
                 env=env)
    d.workdir.mkdir()
    d.start()
    d.created = []
    return d


def stop_catalogd(d):
    for n in d.created:
        kubectl("delete", "clustercatalog", n, "--ignore-not-found", "--wait=false", check=False)
    for n in d.created:
        kubectl("wait", "--for=delete", f"clustercatalog/{n}", "--timeout=60s", check=False)
    d.stop()


def test_registry_pulls_go_through_the_proxy(crds, olmv1, registry, proxy, tmp_path, name):
    port = registry.rsplit(":", 1)[1]
    push_catalog(olmv1, subset(tmp_path, "c", ["habana-ai-operator"]), f"{registry}/e2e/{name}:v1")
    d = start_catalogd(tmp_path, port, {"HTTP_PROXY": proxy.url, "HTTPS_PROXY": proxy.url, "NO_PROXY": ""})
    try:
        apply_catalog(d, name, f"registry{FAKE_DOMAIN}:{port}/e2e/{name}:v1", poll=False)
        kubectl("wait", "--for=condition=Serving", f"clustercatalog/{name}", f"--timeout={CATALOGD_WAIT}s")
        assert any(s.startswith(f"GET registry{FAKE_DOMAIN}:{port}") for s in proxy.seen), proxy.seen
        assert not any("127.0.0.1" in s or "localhost" in s for s in proxy.seen), proxy.seen  # loopback: never
    finally:
        stop_catalogd(d)


def test_no_proxy_sends_around_the_proxy(crds, olmv1, registry, proxy, tmp_path, name):
    port = registry.rsplit(":", 1)[1]
    push_catalog(olmv1, subset(tmp_path, "c", ["habana-ai-operator"]), f"{registry}/e2e/{name}:v1")
    d = start_catalogd(tmp_path, port, {"HTTP_PROXY": proxy.url, "NO_PROXY": "olmv1.test"})
    try:
        apply_catalog(d, name, f"registry{FAKE_DOMAIN}:{port}/e2e/{name}:v1", poll=False)

        def retrying():
            p = cond(get(name), "Progressing")
            return p if p and p["reason"] == "Retrying" else None
        p = poll(retrying, "the pull to fail without the proxy", d, CATALOGD_WAIT)
        assert f"registry{FAKE_DOMAIN}" in p["message"], p
        assert proxy.seen == [], proxy.seen
    finally:
        stop_catalogd(d)
