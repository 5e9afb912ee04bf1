"""Shared helpers for the end-to-end tests (run through e2e/run-tests.sh).

The tests talk to a real kube-apiserver through kubectl, with the KUBECONFIG that
e2e/cluster/up.sh wrote. Nothing here is mocked. Only the Python stdlib, PyYAML and
pytest are used.

Environment (exported by run-tests.sh):
  KUBECONFIG       admin kubeconfig of the test cluster (required)
  OLMV1_REPO       repo root (default: two levels above this file)
  OLMV1_BIN        absolute path of the built olmv1 CLI
  OLMV1_REGISTRY   host:port of the test OCI registry
  KUBECTL          kubectl binary to use (default: kubectl on PATH)
"""

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

REPO = Path(os.environ.get("OLMV1_REPO") or Path(__file__).resolve().parents[2])
CONFIG = REPO / "config"
KUBECTL = os.environ.get("KUBECTL", "kubectl")

OLM_CRDS = (
    "clusterextensions.olm.operatorframework.io",
    "clustercatalogs.olm.operatorframework.io",
    "clusterobjectsets.olm.operatorframework.io",
)
OPENSHIFT_CRDS = (
    "clusterversions.config.openshift.io",
    "clusteroperators.config.openshift.io",
)


class KubectlError(AssertionError):
    """kubectl exited non-zero while the caller expected success."""


def kubectl(*args, input=None, check=True, timeout=120):
    """Run kubectl with the test cluster's KUBECONFIG.

    input: str, or a dict/list (sent as JSON, which kubectl reads as YAML).
    Returns the CompletedProcess (text mode; .stdout, .stderr, .returncode).
    With check=True a non-zero exit raises KubectlError showing the command and stderr.
    """
    if "KUBECONFIG" not in os.environ:
        raise RuntimeError("KUBECONFIG is not set; run the suite through e2e/run-tests.sh")
    if input is not None and not isinstance(input, str):
        input = json.dumps(input)
    cmd = [KUBECTL, *[str(a) for a in args]]
    proc = subprocess.run(cmd, input=input, capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy())
    if check and proc.returncode != 0:
        raise KubectlError(
            f"{' '.join(cmd)} exited {proc.returncode}\n"
            f"stdout: {proc.stdout.strip()}\nstderr: {proc.stderr.strip()}")
    return proc


def kubectl_json(*args):
    """kubectl ... -o json, parsed."""
    return json.loads(kubectl(*args, "-o", "json").stdout)


def load_yaml_docs(path):
    """All non-empty YAML documents of a file."""
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def unique(prefix="e2e"):
    """A DNS1123-label name unique to this call: '<prefix>-<8 hex>'."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def crds():
    """Install the OLM and OpenShift CRDs once per session and wait until they are Established."""
    kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=olmv1-e2e",
            "-f", CONFIG / "crd", "-f", CONFIG / "openshift")
    kubectl("wait", "--for=condition=Established", "--timeout=60s",
            *[f"crd/{n}" for n in OLM_CRDS + OPENSHIFT_CRDS])
    # Established is set before discovery and the CEL compiler have caught up everywhere; an
    # empty list through each resource shows the apiserver serves it.
    for res in ("clusterextensions", "clustercatalogs", "clusterobjectsets", "clusterversions", "clusteroperators"):
        kubectl("get", res)
    return OLM_CRDS + OPENSHIFT_CRDS


@pytest.fixture
def name(request):
    """A unique DNS1123-label object name for this test."""
    base = request.node.name.split("[")[0].lower().replace("_", "-").removeprefix("test-")
    return unique(base[:40].strip("-") or "e2e")


@pytest.fixture
def cleanup():
    """Register objects to delete after the test: cleanup(kind, name[, namespace]).

    Deletion does not wait (finalizers of controllers that are not running must not block)."""
    objs = []

    def register(kind, obj_name, namespace=None):
        objs.append((kind, obj_name, namespace))
        return obj_name

    yield register
    for kind, obj_name, namespace in reversed(objs):
        args = ["delete", kind, obj_name, "--ignore-not-found", "--wait=false"]
        if namespace:
            args += ["-n", namespace]
        kubectl(*args, check=False)
