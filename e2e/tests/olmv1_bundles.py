"""registry+v1 bundle and File-Based Catalog writers, shared by the e2e tests and scripts/demo-package.py.

Stdlib only (scripts/demo-package.py runs without PyYAML or pytest): every manifest is written as
JSON, which is YAML, so the bundle parser reads it as it reads any YAML file.

A bundle is a ClusterServiceVersion with one Deployment "<pkg>-manager" (whose pod runs as the
ServiceAccount the renderer creates for it), optional clusterPermissions and permissions, plus a
ConfigMap "<pkg>-config" whose data.version is the bundle version.  A catalog holds one package with
channel "stable" whose entries form a linear chain, each replacing the one before.
"""

import json
import subprocess
from pathlib import Path

INSTALL_MODES = ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")
# The clusterPermissions the e2e bundles ask for by default.
READ_CONFIGMAPS = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]


def write_json(path, doc):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def write_bundle(root, pkg, version, *, supported=("AllNamespaces",), cluster_rules=READ_CONFIGMAPS,
                 rules=None, pod_service_account=None, image=None, display_name=None, default_channel=None,
                 csv_hook=None):
    """Writes the bundle dir <root>/bundle-<version> of <pkg> at <version> and returns its Path.

    supported: the install modes marked supported (the others are listed as unsupported).
    cluster_rules / rules: the rules of the clusterPermissions / permissions of the Deployment's
    ServiceAccount "<pkg>-manager" (None: no such entry).  pod_service_account: the pod's
    serviceAccountName (default "<pkg>-manager").  image: the container image (default
    example.com/<pkg>:v<version>).  csv_hook(csv): may edit the CSV dict before it is written.
    """
    d = Path(root) / f"bundle-{version}"
    sa = f"{pkg}-manager"
    spec = {}
    if cluster_rules is not None:
        spec["clusterPermissions"] = [{"serviceAccountName": sa, "rules": cluster_rules}]
    if rules is not None:
        spec["permissions"] = [{"serviceAccountName": sa, "rules": rules}]
    spec["deployments"] = [{
        "name": sa,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": pkg}},
            "template": {
                "metadata": {"labels": {"app": pkg}},
                "spec": {
                    "serviceAccountName": pod_service_account or sa,
                    "containers": [{"name": "manager", "image": image or f"example.com/{pkg}:v{version}"}],
                },
            },
        },
    }]
    csv_spec = {}
    if display_name:
        csv_spec["displayName"] = display_name
    csv_spec["version"] = version
    csv_spec["installModes"] = [{"type": m, "supported": m in supported} for m in INSTALL_MODES]
    csv_spec["install"] = {"strategy": "deployment", "spec": spec}
    csv = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
           "metadata": {"name": f"{pkg}.v{version}"}, "spec": csv_spec}
    if csv_hook:
        csv_hook(csv)
    write_json(d / "manifests" / "csv.yaml", csv)
    write_json(d / "manifests" / "config.yaml", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{pkg}-config"},
        "data": {"version": version}})
    annotations = {
        "operators.operatorframework.io.bundle.package.v1": pkg,
        "operators.operatorframework.io.bundle.channels.v1": "stable",
    }
    if default_channel:
        annotations["operators.operatorframework.io.bundle.channel.default.v1"] = default_channel
    annotations.update({
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
    })
    write_json(d / "metadata" / "annotations.yaml", {"annotations": annotations})
    return d


def channel_entries(pkg, chain):
    """olm.channel entries for the versions of `chain` in order, each replacing the one before."""
    entries = []
    for i, v in enumerate(chain):
        e = {"name": f"{pkg}.v{v}"}
        if i:
            e["replaces"] = f"{pkg}.v{chain[i - 1]}"
        entries.append(e)
    return entries


def write_catalog(d, pkg, images, chain, extra_blobs=()):
    """Writes <d>/catalog.json: package <pkg>, channel "stable" over `chain`, one olm.bundle per version
    with images[version] as its image, then extra_blobs.  Returns d as a Path."""
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)
    blobs = [{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"},
             {"schema": "olm.channel", "name": "stable", "package": pkg, "entries": channel_entries(pkg, chain)}]
    for v in chain:
        blobs.append({"schema": "olm.bundle", "name": f"{pkg}.v{v}", "package": pkg, "image": images[v],
                      "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": v}}]})
    blobs.extend(extra_blobs)
    (d / "catalog.json").write_text("\n".join(json.dumps(b) for b in blobs) + "\n")
    return d


def run_olmv1(binary, *args, timeout=300):
    """Runs the olmv1 CLI; returns (returncode, stdout stripped, stderr)."""
    proc = subprocess.run([str(binary), *[str(a) for a in args]], capture_output=True, text=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout.strip(), proc.stderr
