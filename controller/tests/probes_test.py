#!/usr/bin/env python3
"""The operator-controller binary's probes, metrics, shutdown and start-up errors.

    probes_test.py OPERATOR_CONTROLLER

Each case starts operator-controller with its health listener on 127.0.0.1:<free port>
(--metrics-bind-address is off by default, so /metrics is served there too), stops it by
PID, and reads its exit code and log:

  unreachable   a kubeconfig whose API server does not answer: /healthz 200 "ok"; /readyz
                503 "informers not synced" (the controllers run, their caches cannot list);
                /metrics has operator_controller_build_info, the controller's series and its
                work queue's, and no leader election; an unknown path is Go's 404; SIGTERM
                exits 0 with "stopped (exit 0)".
  leader-elect  the same API server with --leader-elect: standing by without the Lease it is
                ready, and leader_election_master_status for its Lease is 0.
  synced        a tiny fake API server (empty ClusterExtension and ClusterCatalog lists,
                watches held open, 404 for anything else): /readyz turns 200 "ok" once both
                caches have synced; the lists are made with the kubeconfig's token.
  port in use   the health port taken: exit 1, one line naming the flag, no "stopped" line.
  bad flags     an unknown flag, a value out of range: exit 2, one line each.

Mutation checks: the test was seen to fail with each of these lines broken on purpose (the
production line edited, the binary rebuilt, the test run, the line restored):
  operator_controller_main.c:171  .metrics_name NULL (build_info named after the program) -> unreachable
  operator_controller_main.c:170  .leader_elect = false -> leader-elect
  operator_controller_main.c:272  no "stopped (exit N)" line -> unreachable
  operator_controller_main.c:66   the controller's series not written -> unreachable
  daemon_answers.c:28             default readiness never true -> synced
  daemon_run.c:77                 the start-up error not printed -> port in use
  daemon_run.c:30                 SIGTERM exits 1 -> unreachable
  daemon_flags.c:176              a bad command line exits 1 -> bad flags
"""
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BIN = sys.argv[1]
LEASE = "9c4404e7.operatorframework.io"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kubeconfig(work, server):
    path = os.path.join(work, "kubeconfig")
    with open(path, "w") as k:
        k.write("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                f"clusters: [{{name: c, cluster: {{server: '{server}', insecure-skip-tls-verify: true}}}}]\n"
                "users: [{name: u, user: {token: t}}]\n"
                "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
    return path


def get(port, path):
    """(status, body) of GET path on the health listener, or None while it is not up."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None


def wait_for(pred, what, p, log, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            sys.exit(f"operator-controller exited {p.returncode} while waiting for {what}:\n" + open(log).read())
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    sys.exit(f"timed out waiting for {what}:\n" + open(log).read())


class Daemon:
    """operator-controller on a free health port, its output in <work>/log."""

    def __init__(self, work, server, *flags):
        self.port = free_port()
        self.log = os.path.join(work, "log")
        self.out = open(self.log, "w")
        self.p = subprocess.Popen([BIN, "--kubeconfig", kubeconfig(work, server), "--cache-path",
                                   os.path.join(work, "cache"), "--health-probe-bind-address",
                                   f"127.0.0.1:{self.port}", *flags], stdout=self.out, stderr=subprocess.STDOUT)

    def get(self, path):
        return wait_for(lambda: get(self.port, path), f"an answer to {path}", self.p, self.log)

    def stop(self):
        """SIGTERM: exit 0 and the last line "stopped (exit 0)"."""
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            sys.exit("operator-controller did not stop within 30 s of SIGTERM")
        self.out.close()
        text = open(self.log).read()
        if rc != 0 or "signal 15: shutting down" not in text or not text.rstrip().endswith("stopped (exit 0)"):
            sys.exit(f"SIGTERM: exit {rc}, want 0 and a last line \"stopped (exit 0)\":\n{text}")

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.out.close()


def expect(got, status, body, what):
    if got[0] != status or (body is not None and got[1] != body):
        sys.exit(f"{what}: got {got[0]} {got[1]!r}, want {status} {body!r}")


def unreachable(work):
    d = Daemon(work, "https://127.0.0.1:1")
    try:
        expect(d.get("/healthz"), 200, "ok", "/healthz")
        expect(d.get("/readyz"), 503, "informers not synced", "/readyz before the caches sync")
        expect(d.get("/debug/pprof/"), 404, "404 page not found\n", "an unknown path")
        status, text = d.get("/metrics")
        for want in ("\noperator_controller_build_info{version=", "\noperator_controller_clusterextensions 0\n",
                     'controller="clusterextension"', "\nprocess_resident_memory_bytes "):
            if status != 200 or want not in text:
                sys.exit(f"/metrics: {status}, no {want!r} in:\n{text}")
        if "leader_election_master_status" in text:
            sys.exit("/metrics: leader_election_master_status without --leader-elect")
        d.stop()
    finally:
        d.kill()


def leader_elect(work):
    d = Daemon(work, "https://127.0.0.1:1", "--leader-elect")
    try:
        expect(d.get("/readyz"), 200, "ok", "/readyz standing by without the Lease")
        status, text = d.get("/metrics")
        want = f'\nleader_election_master_status{{name="{LEASE}"}} 0\n'
        if status != 200 or want not in text or "\noperator_controller_build_info{" not in text:
            sys.exit(f"/metrics with --leader-elect: {status}, no {want!r} in:\n{text}")
        d.stop()
        if "campaigning for Lease" not in open(d.log).read():
            sys.exit("--leader-elect: no \"campaigning for Lease\" line")
    finally:
        d.kill()


class FakeAPI(http.server.BaseHTTPRequestHandler):
    """Empty lists of the two kinds operator-controller caches, watches held open until the
    test ends, 404 for anything else.  Requests are kept in server.seen."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        path, _, query = self.path.partition("?")
        if path.endswith(("/clusterextensions", "/clustercatalogs")) and "watch=1" in query:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            self.server.done.wait()
            return
        if path.endswith(("/clusterextensions", "/clustercatalogs")):
            self.answer(200, {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": []})
        else:
            self.answer(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                              "code": 404, "message": "not found"})

    def answer(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def synced(work):
    api = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeAPI)
    api.daemon_threads = True
    api.seen, api.done = [], threading.Event()
    threading.Thread(target=api.serve_forever, daemon=True).start()
    d = Daemon(work, f"http://127.0.0.1:{api.server_address[1]}")
    try:
        wait_for(lambda: get(d.port, "/readyz") == (200, "ok"), "/readyz 200 once the caches synced", d.p, d.log)
        lists = [s for s in api.seen if "?limit=" in s[0]]
        for kind in ("clusterextensions", "clustercatalogs"):
            if not any(f"/apis/olm.operatorframework.io/v1/{kind}?" in p and auth == "Bearer t" for p, auth in lists):
                sys.exit(f"no LIST of {kind} with the kubeconfig's token: {api.seen}")
        d.stop()
    finally:
        d.kill()
        api.done.set()
        api.shutdown()


def port_in_use(work):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        addr = f"127.0.0.1:{busy.getsockname()[1]}"
        r = subprocess.run([BIN, "--kubeconfig", kubeconfig(work, "https://127.0.0.1:1"), "--cache-path",
                            os.path.join(work, "cache"), "--health-probe-bind-address", addr],
                           capture_output=True, text=True, timeout=60)
    want = f"operator-controller: --health-probe-bind-address {addr}: listen on {addr}: "
    lines = r.stderr.splitlines()
    if r.returncode != 1 or len(lines) != 1 or not lines[0].startswith(want) or "stopped" in r.stderr + r.stdout:
        sys.exit(f"health port in use: exit {r.returncode}, want 1 and one line {want!r}...:\n{r.stderr}{r.stdout}")


def bad_flags(work):
    for args, want in ((["--bogus"], "operator-controller: unknown flag --bogus"),
                       (["--max-concurrent-reconciles", "0"],
                        "operator-controller: --max-concurrent-reconciles must be 1..64, not 0")):
        r = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or r.stderr != want + "\n" or r.stdout:
            sys.exit(f"{args}: exit {r.returncode}, stderr {r.stderr!r}, stdout {r.stdout!r}; want 2 and {want!r}")


for case in (unreachable, leader_elect, synced, port_in_use, bad_flags):
    with tempfile.TemporaryDirectory(prefix="opctl-probes-") as work:
        case(work)
    print(f"ok: {case.__name__}")
