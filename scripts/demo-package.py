#!/usr/bin/env python3
"""Builds and pushes the demo package used by `make run` (scripts/run-local.sh).

Package "olmv1-demo-operator", channel "stable": 0.1.0 <- 0.2.0 (replaces 0.1.0) <- 1.0.0
(replaces 0.2.0).  Each version is a tiny registry+v1 bundle: a ClusterServiceVersion with one
Deployment (image registry.k8s.io/pause, never pulled by the local kwok node), a ServiceAccount,
clusterPermissions (read ConfigMaps) and permissions (manage ConfigMaps in the install
namespace), plus a ConfigMap "olmv1-demo-operator-config" whose data.version is the bundle version.
Install mode AllNamespaces, so no configuration is needed.

Usage: demo-package.py --olmv1 BIN --registry HOST:PORT --out DIR [--bench]
Pushes the bundles to HOST:PORT/olmv1/demo-operator-bundle:vX.Y.Z and a catalog holding only this
package to HOST:PORT/olmv1/demo-operators:latest; prints the catalog's digest reference.  Stdlib only.

--bench (bench/operator_controller_bench.sh): package "olmv1-bench-operator" without permissions or
clusterPermissions (the Deployment runs as "default"), so many extensions can install it side by
side in different namespaces: the ClusterRoles generated from a CSV's permissions are named after
the CSV and its rules, so two installs of the same bundle with them would collide.  Pushed to
olmv1/bench-operator-bundle and olmv1/bench-operators.
"""

import argparse
import json
import subprocess
from pathlib import Path

PKG = "olmv1-demo-operator"
VERSIONS = ("0.1.0", "0.2.0", "1.0.0")
REPLACES = {"0.2.0": "0.1.0", "1.0.0": "0.2.0"}


def write_json(path, doc):
    # JSON is YAML: the bundle parser reads either.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def write_bundle(root, version, bench=False):
    d = root / f"bundle-{version}"
    sa = f"{PKG}-manager"
    csv = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": f"{PKG}.v{version}"},
        "spec": {
            "displayName": "OLM v1 demo operator",
            "version": version,
            "installModes": [
                {"type": "OwnNamespace", "supported": False},
                {"type": "SingleNamespace", "supported": False},
                {"type": "MultiNamespace", "supported": False},
                {"type": "AllNamespaces", "supported": True},
            ],
            "install": {
                "strategy": "deployment",
                "spec": {
                    "clusterPermissions": [{
                        "serviceAccountName": sa,
                        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
                    }],
                    "permissions": [{
                        "serviceAccountName": sa,
                        "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                                   "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}],
                    }],
                    "deployments": [{
                        "name": sa,
                        "spec": {
                            "replicas": 1,
                            "selector": {"matchLabels": {"app": PKG}},
                            "template": {
                                "metadata": {"labels": {"app": PKG}},
                                "spec": {
                                    "serviceAccountName": sa,
                                    "containers": [{"name": "manager", "image": "registry.k8s.io/pause:3.10"}],
                                },
                            },
                        },
                    }],
                },
            },
        },
    }
    if bench:
        spec = csv["spec"]["install"]["spec"]
        del spec["clusterPermissions"], spec["permissions"]
        spec["deployments"][0]["spec"]["template"]["spec"]["serviceAccountName"] = "default"
    write_json(d / "manifests" / "csv.yaml", csv)
    write_json(d / "manifests" / "config.yaml", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{PKG}-config"},
        "data": {"version": version}})
    write_json(d / "metadata" / "annotations.yaml", {"annotations": {
        "operators.operatorframework.io.bundle.package.v1": PKG,
        "operators.operatorframework.io.bundle.channels.v1": "stable",
        "operators.operatorframework.io.bundle.channel.default.v1": "stable",
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
    }})
    return d


def write_catalog(root, images):
    d = root / "catalog"
    d.mkdir(parents=True, exist_ok=True)
    entries = []
    for v in VERSIONS:
        e = {"name": f"{PKG}.v{v}"}
        if v in REPLACES:
            e["replaces"] = f"{PKG}.v{REPLACES[v]}"
        entries.append(e)
    blobs = [{"schema": "olm.package", "name": PKG, "defaultChannel": "stable"},
             {"schema": "olm.channel", "name": "stable", "package": PKG, "entries": entries}]
    for v in VERSIONS:
        blobs.append({"schema": "olm.bundle", "name": f"{PKG}.v{v}", "package": PKG, "image": images[v],
                      "properties": [{"type": "olm.package", "value": {"packageName": PKG, "version": v}}]})
    (d / "catalog.json").write_text("\n".join(json.dumps(b) for b in blobs) + "\n")
    return d


def push(olmv1, *args):
    out = subprocess.run([olmv1, *args], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"olmv1 {' '.join(args)} exited {out.returncode}\n{out.stderr}")
    return out.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--olmv1", required=True)
    ap.add_argument("--registry", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bench", action="store_true")
    a = ap.parse_args()
    global PKG
    kind = "demo"
    if a.bench:
        PKG, kind = "olmv1-bench-operator", "bench"
    root = Path(a.out)
    images = {}
    for v in VERSIONS:
        images[v] = push(a.olmv1, "bundle", "push", "-q", str(write_bundle(root, v, a.bench)),
                         f"{a.registry}/olmv1/{kind}-operator-bundle:v{v}")
    print(push(a.olmv1, "catalog", "push", "-q", str(write_catalog(root, images)),
               f"{a.registry}/olmv1/{kind}-operators:latest"))


if __name__ == "__main__":
    main()
