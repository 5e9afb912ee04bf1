#!/usr/bin/env python3
"""The operator-controller binary: SIGPIPE and the start-up sweep (issue 12, items 1, 10).

    daemon_test.py OPERATOR_CONTROLLER

Starts operator-controller with a kubeconfig whose API server does not answer and its
health listener on 127.0.0.1:<free port>, waits for /healthz, and reads SigIgn in
/proc/<pid>/status: SIGPIPE must be ignored, so that a peer hanging up (a probe, catalogd,
the apiserver, a registry) is an EPIPE on that connection and never kills the process
without a log line.  Python starts the child with SIGPIPE at its default.  Stopped by PID.
Before that, the temp dir a bundle pull killed with a previous process left in
<cache>/bundles/<extension>/ must be gone, and the bundles beside it kept.
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = sys.argv[1]

with tempfile.TemporaryDirectory(prefix="opctl-sigpipe-") as work:
    kubeconfig = os.path.join(work, "kubeconfig")
    with open(kubeconfig, "w") as k:
        k.write("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]\n"
                "users: [{name: u, user: {token: t}}]\n"
                "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stale = os.path.join(work, "cache", "bundles", "ext1", ".sha256:4567.pull-x1Y2z3")
    os.makedirs(os.path.join(stale, "rootfs", "manifests"))
    kept = os.path.join(work, "cache", "bundles", "ext1", "sha256:4567")
    os.makedirs(kept)
    log = open(os.path.join(work, "log"), "w")
    p = subprocess.Popen([BIN, "--kubeconfig", kubeconfig, "--cache-path", os.path.join(work, "cache"),
                          "--health-addr", f"127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            if p.poll() is not None:
                sys.exit(f"operator-controller exited {p.returncode}:\n" + open(log.name).read())
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("operator-controller's health listener never answered")
                time.sleep(0.1)
        if os.path.exists(stale) or not os.path.isdir(kept):
            sys.exit("start-up sweep: the interrupted pull's temp dir survived, or a bundle was lost")
        mask = next(int(l.split()[1], 16) for l in open(f"/proc/{p.pid}/status") if l.startswith("SigIgn:"))
        if not mask & (1 << (signal.SIGPIPE - 1)):
            sys.exit(f"operator-controller does not ignore SIGPIPE (SigIgn {mask:#x})")
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()
print("ok: operator-controller ignores SIGPIPE and sweeps interrupted pulls at start")
