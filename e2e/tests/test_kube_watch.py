"""kube/ async half against the real apiserver: list+watch (namespaces, ConfigMaps),
ADDED/DELETED seen through the watch stream, Lease acquire and release.

Runs the C program kube/tests/watch_live_check (built by CMake as
build/kube/tests/watch_live_check); it prints one "ok - ..." line per step and
exits non-zero at the first failure.
"""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(os.environ.get("OLMV1_REPO") or Path(__file__).resolve().parents[2])
BIN = REPO / "build" / "kube" / "tests" / "watch_live_check"


def test_watch_and_lease_live():
    if "KUBECONFIG" not in os.environ:
        pytest.fail("KUBECONFIG is not set; run the suite through e2e/run-tests.sh")
    if not BIN.exists():
        pytest.fail(f"{BIN} is missing; build it (make build)")
    proc = subprocess.run([str(BIN)], capture_output=True, text=True, timeout=180,
                          env=os.environ.copy())
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for step in ("both watches listed", "namespace ADDED", "ConfigMap ADDED",
                 "ConfigMap DELETED", "Lease acquired", "Lease released",
                 "all watch/lease checks passed"):
        assert f"ok - " in out and step in out, f"missing step {step!r}:\n{out}"
