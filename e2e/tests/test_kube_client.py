"""The C Kubernetes REST client (kube/) against the real test apiserver.

kube/tests/live_check.c is built as build/kube/tests/kube_live_check (or the path in
$OLMV1_KUBE_LIVE_CHECK). It reads KUBECONFIG, works in its own namespace, and checks
get/list (label selector, limit/continue), create (AlreadyExists), update (409 on a
stale resourceVersion), server-side apply (field-manager conflict, force), merge and
JSON patch, PUT .../status, discovery, TokenRequest, acting as a ServiceAccount
(403 naming verb and resource), a bad token (401) and delete with preconditions.
"""

import os
import re
import subprocess
from pathlib import Path

from conftest import REPO, kubectl


def live_check_binary():
    env = os.environ.get("OLMV1_KUBE_LIVE_CHECK")
    candidates = [Path(env)] if env else [
        REPO / "build" / "kube" / "tests" / "kube_live_check",
        REPO / "build" / "kube" / "kube_live_check",
    ]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise AssertionError(
        f"kube_live_check is not built (looked at {', '.join(map(str, candidates))}); "
        "run 'make build' (kube/CMakeLists.txt builds it from kube/tests/live_check.c)")


def test_kube_client_against_apiserver():
    binary = live_check_binary()
    proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=300,
                          env=os.environ.copy())
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{binary} exited {proc.returncode}:\n{out}"
    assert "kube_live_check: all checks passed" in proc.stdout, out
    # The Forbidden message is the API server's own sentence plus the HTTP status.
    assert re.search(r'User "system:serviceaccount:olmv1-live-\d+:installer" cannot patch resource '
                     r'"deployments" in API group "apps" in the namespace "olmv1-live-\d+" '
                     r'\(HTTP 403 Forbidden\)', proc.stdout), out

    # Cross-check with kubectl: the program's namespace is gone or being deleted.
    ns = re.search(r"olmv1-live-\d+", proc.stdout).group(0)
    got = kubectl("get", "namespace", ns, "-o", "jsonpath={.status.phase}", check=False)
    assert got.returncode != 0 or got.stdout == "Terminating", got.stdout + got.stderr
