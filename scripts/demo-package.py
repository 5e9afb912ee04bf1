#!/usr/bin/env python3
"""Builds and pushes the demo package used by `make run` (scripts/run-local.sh).

Package "olmv1-demo-operator", channel "stable": 0.1.0 <- 0.2.0 (replaces 0.1.0) <- 1.0.0
(replaces 0.2.0).  Each version is a tiny registry+v1 bundle: a ClusterServiceVersion with one
Deployment (image HOST:PORT/olmv1/demo-operator: images/demo-operator/demo-operator.c compiled
static, which prints its version, given as its argument, and sleeps; the kwok node never pulls it,
the real node of OLMV1_NODE=real runs it), a ServiceAccount,
clusterPermissions (read ConfigMaps) and permissions (manage ConfigMaps in the install
namespace), plus a ConfigMap "olmv1-demo-operator-config" whose data.version is the bundle version.
Install mode AllNamespaces, so no configuration is needed.

Usage: demo-package.py --olmv1 BIN --registry HOST:PORT --out DIR [--bench]
Pushes the image, the bundles to HOST:PORT/olmv1/demo-operator-bundle:vX.Y.Z and a catalog holding only this
package to HOST:PORT/olmv1/demo-operators:latest; prints the catalog's digest reference.  Stdlib only.

--bench (bench/operator_controller_bench.sh): package "olmv1-bench-operator" without permissions or
clusterPermissions (the Deployment runs as "default"), so many extensions can install it side by
side in different namespaces: the ClusterRoles generated from a CSV's permissions are named after
the CSV and its rules, so two installs of the same bundle with them would collide.  Pushed to
olmv1/bench-operator-bundle and olmv1/bench-operators.

The bundle and catalog writers are e2e/tests/olmv1_bundles.py, shared with the e2e tests.
"""

import argparse
import subprocess
import sys
from pathlib import Path

# The bundle and catalog writers are shared with the e2e tests (stdlib only).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e" / "tests"))
import olmv1_bundles  # noqa: E402

VERSIONS = ("0.1.0", "0.2.0", "1.0.0")


REPO = Path(__file__).resolve().parents[1]


def push_demo_image(olmv1, root, registry):
    """Compiles images/demo-operator/demo-operator.c (static) and pushes it as a one-layer image
    running as 65532; returns its digest reference."""
    d = Path(root) / "demo-operator-image"
    d.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cc", "-std=c11", "-O2", "-s", "-static", "-o", str(d / "demo-operator"),
                    str(REPO / "images" / "demo-operator" / "demo-operator.c")], check=True)
    return push(olmv1, "image", "push", "-q", str(d), f"{registry}/olmv1/demo-operator:v1",
                "--entrypoint", "/demo-operator", "--user", "65532:65532")


def write_bundle(root, pkg, version, bench=False, image="registry.k8s.io/pause:3.10"):
    if bench:
        return olmv1_bundles.write_bundle(root, pkg, version, cluster_rules=None, pod_service_account="default",
                                          image="registry.k8s.io/pause:3.10",
                                          display_name="OLM v1 demo operator", default_channel="stable")

    def version_arg(csv):  # the container prints the bundle version it belongs to
        csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"][0]["args"] = [version]

    return olmv1_bundles.write_bundle(
        root, pkg, version, image=image, display_name="OLM v1 demo operator", csv_hook=version_arg,
        default_channel="stable",
        cluster_rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
        rules=[{"apiGroups": [""], "resources": ["configmaps"],
                "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}])


def push(olmv1, *args):
    rc, out, err = olmv1_bundles.run_olmv1(olmv1, *args)
    if rc != 0:
        raise SystemExit(f"olmv1 {' '.join(args)} exited {rc}\n{err}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--olmv1", required=True)
    ap.add_argument("--registry", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bench", action="store_true")
    a = ap.parse_args()
    pkg, kind = ("olmv1-bench-operator", "bench") if a.bench else ("olmv1-demo-operator", "demo")
    root = Path(a.out)
    images = {}
    image = None if a.bench else push_demo_image(a.olmv1, root, a.registry)
    for v in VERSIONS:
        images[v] = push(a.olmv1, "bundle", "push", "-q", str(write_bundle(root, pkg, v, a.bench, image)),
                         f"{a.registry}/olmv1/{kind}-operator-bundle:v{v}")
    catalog = olmv1_bundles.write_catalog(root / "catalog", pkg, images, VERSIONS)
    print(push(a.olmv1, "catalog", "push", "-q", str(catalog), f"{a.registry}/olmv1/{kind}-operators:latest"))


if __name__ == "__main__":
    main()
