#!/usr/bin/env python3
"""The catalogd binary: start-up and clients that hang up mid-response (issue 12, items 1, 10).

    daemon_test.py CATALOGD CATALOGD_SERVE

catalogd-serve stores the sample20 catalog (about 10 MB of /api/v1/all) in a fresh cache
dir; catalogd then serves that store over TLS, with a kubeconfig whose API server does not
answer (it serves stored catalogs before its first reconcile, so no cluster is needed).
Two TLS clients read 1,000 bytes of /api/v1/all and close; so do two plain-HTTP clients.
catalogd must still answer /healthz, and its access log must say aborted=true for the
requests that were cut off.  Before the fix the first TLS hang-up killed it with SIGPIPE
(exit 141, no log line).  Everything listens on 127.0.0.1; processes are stopped by PID.

At start catalogd removes the temp dirs of pulls killed with a previous process
(<cache>/unpack/<catalog>/.<digest>.pull-XXXXXX/), which nothing else ever removed.
"""
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

CATALOGD, SERVE = sys.argv[1], sys.argv[2]
SHARED = os.environ.get("OLMV1_SHARED") or os.path.join(os.path.dirname(__file__), "../../../shared")
SAMPLE = os.path.join(SHARED, "data/catalogs-small/sample20")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def store_sample(cache):
    out = os.path.join(os.path.dirname(cache), "serve.out")
    with open(out, "w") as o:
        p = subprocess.Popen([SERVE, "--cache-dir", cache, "--addr", "127.0.0.1:0", "--no-access-log",
                              "--load", f"sample20={SAMPLE}"], stdout=o, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "serving on" in open(out).read() or p.poll() is not None, "catalogd-serve")
        if "(1 catalogs)" not in open(out).read():
            raise SystemExit("catalogd-serve did not store sample20:\n" + open(out).read())
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


def hang_up(port, tls_ctx):
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock = tls_ctx.wrap_socket(raw, server_hostname="localhost") if tls_ctx else raw
    sock.sendall(b"GET /catalogs/sample20/api/v1/all HTTP/1.1\r\nHost: localhost\r\n\r\n")
    got = b""
    while len(got) < 1000:
        chunk = sock.recv(1000 - len(got))
        if not chunk:
            raise SystemExit("catalogd closed the connection before sending 1000 bytes")
        got += chunk
    # Unread data in the receive buffer makes close() send a RST: the server's next
    # write fails with EPIPE/ECONNRESET, as with a client that timed out.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


def healthz(port, tls_ctx):
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock = tls_ctx.wrap_socket(raw, server_hostname="localhost") if tls_ctx else raw
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    sock.close()
    return data.startswith(b"HTTP/1.1 200")


def main():
    with tempfile.TemporaryDirectory(prefix="catalogd-hangup-") as work:
        cache = os.path.join(work, "cache")
        store_sample(cache)
        cert, key = os.path.join(work, "tls.crt"), os.path.join(work, "tls.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
        kubeconfig = os.path.join(work, "kubeconfig")
        with open(kubeconfig, "w") as k:
            k.write("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                    "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]\n"
                    "users: [{name: u, user: {token: t}}]\n"
                    "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
        stale = os.path.join(cache, "unpack", "sample20", ".sha256:0123.pull-AbC123", "rootfs", "configs")
        os.makedirs(stale)
        open(os.path.join(stale, "catalog.json"), "w").close()
        kept = os.path.join(cache, "unpack", "sample20", "sha256:0123")
        os.makedirs(kept)
        port = free_port()
        log = os.path.join(work, "catalogd.log")
        logf = open(log, "w")
        d = subprocess.Popen([CATALOGD, "--kubeconfig", kubeconfig, "--cache-dir", cache,
                              "--catalogs-server-addr", f"127.0.0.1:{port}", "--tls-cert", cert, "--tls-key", key],
                             stdout=logf, stderr=subprocess.STDOUT)
        tls = ssl.create_default_context(cafile=cert)
        try:
            wait_for(lambda: "serving the stored catalog" in open(log).read() or d.poll() is not None,
                     "catalogd to serve the stored catalog")
            if os.path.exists(os.path.dirname(os.path.dirname(stale))):
                raise SystemExit("the temp dir of an interrupted pull survived catalogd's start")
            if not os.path.isdir(kept) or "removed 1 temp dir of interrupted pulls" not in open(log).read():
                raise SystemExit("start-up sweep: cache entry lost or no log line\n" + open(log).read())
            for _ in range(2):
                if d.poll() is not None:
                    break
                hang_up(port, tls)
                time.sleep(0.3)
            if d.poll() is not None:
                raise SystemExit(f"catalogd died after TLS clients hung up: exit {d.returncode} "
                                 f"(-13 is SIGPIPE)\n" + open(log).read()[-2000:])
            if not healthz(port, tls):
                raise SystemExit("catalogd does not answer /healthz after the hang-ups")
            wait_for(lambda: open(log).read().count("aborted=true") >= 2, "two access-log lines with aborted=true",
                     timeout=10)
            lines = [l for l in open(log).read().splitlines() if "aborted=true" in l]
            for l in lines:
                if "uri=/catalogs/sample20/api/v1/all" not in l or "status=200" not in l:
                    raise SystemExit("unexpected aborted line: " + l)
            if any("uri=/healthz" in l for l in lines):
                raise SystemExit("a complete response was logged as aborted")
        finally:
            if d.poll() is None:
                d.send_signal(signal.SIGTERM)
                d.wait(timeout=30)
            logf.close()

        # Plain HTTP (catalogd-serve: the same server code without TLS).
        out = os.path.join(work, "plain.log")
        with open(out, "w") as o:
            # Port 0, read back from its "serving on" line: a port picked earlier could be taken
            # by another test (ctest -j) while catalogd ran above.
            p = subprocess.Popen([SERVE, "--cache-dir", cache, "--addr", "127.0.0.1:0"],
                                 stdout=o, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: "serving on" in open(out).read() or p.poll() is not None, "catalogd-serve")
            m = re.search(r"serving on http://127\.0\.0\.1:(\d+)", open(out).read())
            if not m:
                raise SystemExit("catalogd-serve did not start:\n" + open(out).read())
            plain_port = int(m.group(1))
            for _ in range(2):
                hang_up(plain_port, None)
            time.sleep(0.3)
            if p.poll() is not None or not healthz(plain_port, None):
                raise SystemExit(f"catalogd-serve died after plain-HTTP clients hung up: {p.returncode}")
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=30)
    print("ok: catalogd sweeps interrupted pulls at start, survives clients hanging up mid-response, logs them")


if __name__ == "__main__":
    main()
