"""catalogd's HTTPS listeners (issue 13, item 2): a rotated --tls-cert/--tls-key is served to
new connections without a restart (a half-rotated pair is refused with one log line and the
previous certificate stays), and --tls-profile / --tls-custom-* decide the versions, ciphers and
curves that are negotiated (the @TLSProfile scenarios of upstream's tls.feature, on the catalog
server, which speaks the same TLS as the metrics listener).

The daemon needs no API server here (its kubeconfig points at a closed port, so it touches no
ClusterCatalog of the other tests): the checks are on the TLS handshake and /healthz.
"""

import os
import shutil
import ssl
import socket
import subprocess
import time

import pytest

from conftest import REPO
from olmv1_e2e import CATALOGD, free_port, poll

TLS = REPO / "util" / "tests" / "fixtures" / "tls"


class TlsCatalogd:
    def __init__(self, tmp_path, *flags):
        self.dir = tmp_path
        self.cert, self.key = tmp_path / "tls.crt", tmp_path / "tls.key"
        self.rotate("server")
        self.port = free_port()
        self.log = tmp_path / "catalogd.log"
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text('apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]\n'
                              'users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n'
                              'current-context: c\n')
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [CATALOGD, "--cache-dir", str(tmp_path / "cache"), "--catalogs-server-addr", f"127.0.0.1:{self.port}",
                 "--tls-cert", str(self.cert), "--tls-key", str(self.key), "--no-access-log", *flags],
                stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, KUBECONFIG=str(kubeconfig)))
        poll(lambda: self.handshake("server")[0] == "ok" or self.proc.poll() is not None, "catalogd over https")
        assert self.proc.poll() is None, self.log.read_text()

    def rotate(self, cert, key=None):
        """What the kubelet does to a Secret volume: new files swapped in (new inodes)."""
        for src, dst in ((TLS / f"{cert}.crt", self.cert), (TLS / f"{key or cert}.key", self.key)):
            shutil.copy(src, f"{dst}.tmp")
            os.replace(f"{dst}.tmp", dst)

    def handshake(self, trusted, **ctx_args):
        """("ok", negotiated version, cipher) or ("refused", why) for a client trusting <trusted>.crt."""
        ctx = ssl.create_default_context(cafile=str(TLS / f"{trusted}.crt"))
        for k, v in ctx_args.items():
            if k == "ciphers":
                ctx.set_ciphers(v)
            else:
                setattr(ctx, k, v)
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw:
                with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    body = s.recv(4096)
                    assert body.startswith(b"HTTP/1.1 200"), body
                    return "ok", s.version(), s.cipher()[0]
        except (ssl.SSLError, ConnectionError) as e:
            return "refused", str(e)

    def stop(self):
        self.proc.terminate()
        assert self.proc.wait(timeout=30) == 0, self.log.read_text()


@pytest.fixture
def make(tmp_path):
    started = []

    def start(*flags):
        d = TlsCatalogd(tmp_path, *flags)
        started.append(d)
        return d
    yield start
    for d in started:
        d.stop()


def test_rotated_certificate_is_served_to_new_connections(make):
    d = make()
    d.rotate("rotated")
    poll(lambda: d.handshake("rotated")[0] == "ok", "the rotated certificate", interval=0.2, timeout=30)
    assert d.handshake("server")[0] == "refused"
    assert "TLS certificate" in d.log.read_text() and "reloaded" in d.log.read_text()
    # Half a rotation (new certificate, old key): one error line, the rotated pair stays.
    d.rotate("server", key="rotated")
    time.sleep(1.2)
    for _ in range(3):
        assert d.handshake("rotated")[0] == "ok"
    assert d.log.read_text().count("new TLS certificate not used") == 1, d.log.read_text()
    d.rotate("server")
    poll(lambda: d.handshake("server")[0] == "ok", "the original certificate again", interval=0.2, timeout=30)


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
def test_default_profile_is_intermediate(make):
    d = make()
    status, version, _ = d.handshake("server")
    assert (status, version) == ("ok", "TLSv1.3")
    assert d.handshake("server", maximum_version=ssl.TLSVersion.TLSv1_2)[:2] == ("ok", "TLSv1.2")
    assert d.handshake("server", maximum_version=ssl.TLSVersion.TLSv1_1)[0] == "refused"
    # CBC suites are not in intermediate.
    assert d.handshake("server", maximum_version=ssl.TLSVersion.TLSv1_2, ciphers="ECDHE-ECDSA-AES128-SHA")[0] == "refused"


def test_custom_minimum_version(make):
    d = make("--tls-profile", "custom", "--tls-custom-version", "TLSv1.3")
    assert d.handshake("server")[:2] == ("ok", "TLSv1.3")
    assert d.handshake("server", maximum_version=ssl.TLSVersion.TLSv1_2)[0] == "refused"


def test_custom_cipher_is_negotiated_and_enforced(make):
    d = make("--tls-profile", "custom", "--tls-custom-version", "TLSv1.2",
             "--tls-custom-ciphers", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384")
    ok = d.handshake("server", maximum_version=ssl.TLSVersion.TLSv1_2)
    assert ok[0] == "ok" and ok[2] == "ECDHE-ECDSA-AES256-GCM-SHA384", ok
    assert d.handshake("server", maximum_version=ssl.TLSVersion.TLSv1_2,
                       ciphers="ECDHE-ECDSA-AES128-GCM-SHA256")[0] == "refused"


def test_custom_curves_are_enforced(make):
    d = make("--tls-profile", "custom", "--tls-custom-curves", "secp384r1")
    assert d.handshake("server")[0] == "ok"
    # A client offering only X25519 cannot agree on a group (TLS 1.2 keeps the curve list in
    # the cipher negotiation, so ask with an ECDHE suite only).
    c = ssl.create_default_context(cafile=str(TLS / "server.crt"))
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    c.set_ecdh_curve("prime256v1")
    with pytest.raises((ssl.SSLError, ConnectionError)):
        with socket.create_connection(("127.0.0.1", d.port), timeout=5) as raw:
            with c.wrap_socket(raw, server_hostname="127.0.0.1"):
                pass
