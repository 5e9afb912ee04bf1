"""Object names that cannot become label values are refused at admission.

A ClusterExtension's name is the value of the olm.operatorframework.io/owner-name label on
every object it installs, and a ClusterCatalog's name the value of the
olm.operatorframework.io/metadata.name label catalogd puts on it.  Label values are limited to
63 characters, so the CRDs refuse longer names with a message that says why, instead of every
apply failing later.  Exactly 63 characters is accepted.
"""

import copy
import time

import pytest

from conftest import CONFIG, kubectl, load_yaml_docs
from test_crds import assert_created, assert_rejected, cluster_catalog, cluster_extension


def long_name(name, length):
    return (name + "-" + "x" * length)[:length]


CASES = [(cluster_extension, "clusterextension", "olm.operatorframework.io/owner-name"),
         (cluster_catalog, "clustercatalog", "olm.operatorframework.io/metadata.name")]


@pytest.mark.parametrize("make,kind,label", CASES)
def test_name_over_63_characters_rejected(crds, cleanup, name, make, kind, label):
    assert_rejected(make(long_name(name, 64)), cleanup, "metadata.name must be no more than 63 characters", label)


@pytest.mark.parametrize("make,kind,label", CASES)
def test_name_of_63_characters_accepted(crds, cleanup, name, make, kind, label):
    assert_created(make(long_name(name, 63)), cleanup)


def test_older_long_named_extension_can_still_be_updated_and_deleted(crds, cleanup, name):
    """Objects named longer before the rule existed (an upgrade of the CRDs) are not locked: the
    rule applies on create only, so their finalizer can still be removed and they can go."""
    crd_path = CONFIG / "crd" / "olm.operatorframework.io_clusterextensions.yaml"
    with_rule = load_yaml_docs(crd_path)[0]
    without_rule = copy.deepcopy(with_rule)
    del without_rule["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"]
    old_name, probe = long_name(name, 64), long_name(name + "-probe", 64)
    cleanup("clusterextension", old_name)
    cleanup("clusterextension", probe)
    obj = cluster_extension(old_name)
    obj["metadata"]["finalizers"] = ["e2e.olmv1.io/hold"]

    def apply_crd(doc):
        kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=olmv1-e2e", "-f", "-", input=doc)

    def until(fn, what):
        deadline = time.time() + 60
        while not fn():
            assert time.time() < deadline, f"timed out waiting for {what}"
            time.sleep(0.5)

    try:
        apply_crd(without_rule)
        until(lambda: kubectl("create", "-f", "-", input=obj, check=False).returncode == 0,
              "a 64-character name to be accepted without the rule")
    finally:
        apply_crd(with_rule)
    until(lambda: kubectl("create", "-f", "-", input=cluster_extension(probe), check=False).returncode != 0,
          "the rule to be back")
    # The old object: an update (here, removing its finalizer) and the deletion still work.
    kubectl("patch", "clusterextension", old_name, "--type=json",
            "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    kubectl("delete", "clusterextension", old_name, "--wait=true", "--timeout=60s")
    assert kubectl("get", "clusterextension", old_name, check=False).returncode != 0
