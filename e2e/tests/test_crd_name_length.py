"""Object names that cannot become label values are refused at admission.

A ClusterExtension's name is the value of the olm.operatorframework.io/owner-name label on
every object it installs, and a ClusterCatalog's name the value of the
olm.operatorframework.io/metadata.name label catalogd puts on it.  Label values are limited to
63 characters, so the CRDs refuse longer names with a message that says why, instead of every
apply failing later.  Exactly 63 characters is accepted.
"""

import pytest

from conftest import kubectl


def cluster_extension(name):
    return {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
            "metadata": {"name": name},
            "spec": {"namespace": "default", "serviceAccount": {"name": "installer"},
                     "source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd"}}}}


def cluster_catalog(name):
    return {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
            "metadata": {"name": name},
            "spec": {"source": {"type": "Image",
                                "image": {"ref": "quay.io/operatorhubio/catalog:latest"}}}}


def long_name(name, length):
    return (name + "-" + "x" * length)[:length]


CASES = [(cluster_extension, "clusterextension", "olm.operatorframework.io/owner-name"),
         (cluster_catalog, "clustercatalog", "olm.operatorframework.io/metadata.name")]


@pytest.mark.parametrize("make,kind,label", CASES)
def test_name_over_63_characters_rejected(crds, cleanup, name, make, kind, label):
    obj_name = long_name(name, 64)
    cleanup(kind, obj_name)
    proc = kubectl("create", "-f", "-", input=make(obj_name), check=False)
    assert proc.returncode != 0, f"apiserver accepted a 64-character {kind} name"
    assert "metadata.name must be no more than 63 characters" in proc.stderr, proc.stderr
    assert label in proc.stderr, proc.stderr
    assert kubectl("get", kind, obj_name, check=False).returncode != 0


@pytest.mark.parametrize("make,kind,label", CASES)
def test_name_of_63_characters_accepted(crds, cleanup, name, make, kind, label):
    obj_name = long_name(name, 63)
    cleanup(kind, obj_name)
    kubectl("create", "-f", "-", input=make(obj_name))
    assert kubectl("get", kind, obj_name, "-o", "name").stdout.strip().endswith(obj_name)
