"""Fault injection for the chaos tests (test_chaos_*.py): an HTTP front that can be switched to
answer every request with an error, a small tmpfs, and restarts of control-plane processes.

Front: a TCP forwarder on 127.0.0.1 (optionally terminating TLS, and speaking TLS upstream) that
the daemons are pointed at instead of the real server.  While passing through it copies bytes both
ways untouched; fail(status) closes every open connection (so keep-alive connections and watches
cannot bypass it) and answers the first request of each new connection with `status` and
"Connection: close", counting them.  It never parses a request it forwards, so any HTTP/1.1
traffic works; over TLS it offers only http/1.1 (ALPN), so clients do not switch to HTTP/2.
The asyncio loop runs in a daemon thread of the test process; stop() ends it.

Stdlib and pytest only.
"""

import asyncio
import contextlib
import json
import os
import shutil
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import REPO

RESTART_SH = REPO / "e2e" / "cluster" / "restart.sh"


class Front:
    """Forwards 127.0.0.1:<port> to upstream_host:upstream_port (see the module docstring)."""

    def __init__(self, upstream_host, upstream_port, server_ssl=None, upstream_ssl=None):
        self.upstream = (upstream_host, upstream_port)
        self.server_ssl, self.upstream_ssl = server_ssl, upstream_ssl
        self.failing = None      # (status line, headers, body) while failing
        self.answered = 0        # error answers sent
        self.forwarded = 0       # connections passed through
        self._writers = set()    # open connections (both sides), closed by fail()
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self._thread.start()
        started.wait(10)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def _run(self, started):
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.server_ssl))
        started.set()
        self._loop.run_forever()

    def _call(self, fn):
        """Runs fn() on the loop thread and waits for it."""
        done = threading.Event()

        def wrapped():
            try:
                fn()
            finally:
                done.set()
        self._loop.call_soon_threadsafe(wrapped)
        done.wait(10)

    def fail(self, status, reason, body, headers=()):
        """From now on every new connection's first request gets this answer; open ones close."""
        payload = json.dumps(body).encode() if not isinstance(body, bytes) else body

        def switch():
            self.failing = (f"HTTP/1.1 {status} {reason}", list(headers), payload)
            for w in list(self._writers):
                w.transport.abort()
            self._writers.clear()
        self._call(switch)

    def pass_through(self):
        def switch():
            self.failing = None
        self._call(switch)

    def stop(self):
        def shutdown():
            self._server.close()
            for w in list(self._writers):
                w.transport.abort()
            self._loop.stop()
        self._call(shutdown)
        self._thread.join(10)

    async def _serve(self, reader, writer):
        self._writers.add(writer)
        try:
            if self.failing:
                await self._answer(reader, writer, self.failing)
                return
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_connection(*self.upstream, ssl=self.upstream_ssl), 10)
            except (OSError, asyncio.TimeoutError, ssl.SSLError):
                return
            self._writers.add(up_writer)
            self.forwarded += 1
            await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))
        finally:
            self._writers.discard(writer)
            writer.close()  # flushes what is buffered (an error answer), unlike abort()

    async def _answer(self, reader, writer, failing):
        status, headers, payload = failing
        try:
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError,
                ssl.SSLError):
            return
        head = [status, "Content-Type: application/json", f"Content-Length: {len(payload)}",
                "Connection: close", *headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        self.answered += 1
        with contextlib.suppress(OSError, ssl.SSLError):
            await writer.drain()

    async def _pump(self, reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        finally:  # one side is done: end the other too (HTTP clients do not half-close)
            self._writers.discard(writer)
            writer.close()


def tls_front_for_apiserver(state_dir, apiserver_port):
    """A Front for the kube-apiserver: it presents the apiserver's own serving certificate (valid
    for 127.0.0.1, signed by the cluster CA that every kubeconfig trusts) and verifies the real
    apiserver with that CA.  Bearer tokens pass through untouched."""
    pki = Path(state_dir) / "pki"
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pki / "apiserver.crt", pki / "apiserver.key")
    server.set_alpn_protocols(["http/1.1"])
    upstream = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    upstream.set_alpn_protocols(["http/1.1"])
    return Front("127.0.0.1", int(apiserver_port), server_ssl=server, upstream_ssl=upstream)


def state_dir():
    d = os.environ.get("OLMV1_STATE_DIR")
    if not d:
        pytest.fail("OLMV1_STATE_DIR is not set; run through e2e/run-tests.sh")
    return d


def cluster_env(name):
    """A value of the cluster's env file (the last one: restarts append new PIDs)."""
    value = None
    for line in (Path(state_dir()) / "env").read_text().splitlines():
        if line.startswith(f"export {name}="):
            value = line.split("=", 1)[1].strip("'")
    return value


def restart(component, kill=False, down=0):
    """e2e/cluster/restart.sh: stops etcd or the apiserver by PID and starts it again with the
    same command line; returns when the apiserver is ready again."""
    args = ["bash", str(RESTART_SH), "--component", component, "--down", str(down), "--state-dir", state_dir()]
    if kill:
        args.append("--kill")
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"restart.sh exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    # The cluster is still one up.sh knows as running (its env file names the new PID last),
    # not a crashed one it would wipe and start afresh.
    up = subprocess.run(["bash", str(RESTART_SH.parent / "up.sh"), "--state-dir", state_dir()],
                        capture_output=True, text=True, timeout=120)
    assert up.returncode == 0 and "cluster already running" in up.stdout, f"up.sh after the restart:\n{up.stdout}\n{up.stderr}"


@contextlib.contextmanager
def tmpfs(path, size):
    """A tmpfs of `size` (e.g. "4m") mounted on the empty directory `path` (needs root), always
    unmounted afterwards; skips the test where it cannot be mounted."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(directory, leave=0, name="filler"):
    """Writes `directory`/name until the file system is full, then gives `leave` bytes back
    (rounded by the file system to its pages); returns the file's path."""
    path = Path(directory) / name
    with open(path, "wb", buffering=0) as f:
        for size in (1 << 20, 64 << 10, 4096, 512, 1):  # down to the last partly used page
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * size)
        if leave:
            f.truncate(max(0, f.tell() - leave))
    return path
