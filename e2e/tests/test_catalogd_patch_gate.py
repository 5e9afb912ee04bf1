"""catalogd stores nothing before its finalizer is on the ClusterCatalog.

A new catalog's label + finalizer PATCH runs beside its pull (catalogd/clustercatalog_reconcile.c,
label_patch), and the store waits for it: a store without our finalizer on the object would
outlive a delete.  This module runs its own catalogd as a ServiceAccount whose ClusterRole is
changed mid-test, and no other catalogd: two would both reconcile the catalog (test_catalogd.py's
module catalogd runs as admin).
"""

from conftest import kubectl, unique
from olmv1_e2e import Catalogd, daemon_identity, http
from test_catalogd import (FINALIZER, apply_catalog, assert_served, cond, get, push_catalog, render, subset,
                           wait_serving)
from test_image_push import olmv1, registry  # noqa: F401  (fixtures by name)


def test_nothing_is_stored_before_the_finalizer_patch_succeeds(crds, olmv1, registry, name, tmp_path):
    """A new catalog's label + finalizer PATCH runs beside its pull (clustercatalog_reconcile.c,
    label_patch), but nothing may be stored before it succeeded: a store without our finalizer on
    the object would outlive a delete.  catalogd runs here as a ServiceAccount that may update
    ClusterCatalogs and their status but not patch them, so the PATCH is refused (403) after the
    pull; once `patch` is granted, the retry stores and serves the catalog."""
    ns_name, role = unique("cc-nopatch"), unique("cc-nopatch")
    kubectl("create", "namespace", ns_name)
    kubectl("create", "serviceaccount", "catalogd", "-n", ns_name)
    rules = [{"apiGroups": ["olm.operatorframework.io"], "resources": ["clustercatalogs"],
              "verbs": ["get", "list", "watch", "update"]},
             {"apiGroups": ["olm.operatorframework.io"], "resources": ["clustercatalogs/status"],
              "verbs": ["get", "update"]},
             {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}]
    role_doc = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role},
                "rules": rules}
    kubectl("apply", "-f", "-", input=role_doc)
    kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}", f"--serviceaccount={ns_name}:catalogd")
    (tmp_path / "catalogd").mkdir()
    d = Catalogd(tmp_path / "catalogd", identity=daemon_identity(tmp_path, ns_name, "catalogd"))
    d.created = []
    try:
        d.start()
        src = subset(tmp_path, "c", ["habana-ai-operator"])
        digest_ref = push_catalog(olmv1, src, f"{registry}/e2e/{name}:v1")
        apply_catalog(d, name, f"{registry}/e2e/{name}:v1", poll=False)

        def refused_twice():
            return d.log_path.read_text().count("patching the name label or finalizer") >= 2
        d.wait_for(refused_twice, "the PATCH refused, and refused again on the retry")
        log = d.log_path.read_text()
        assert "unpacking" in log, d.log_tail()  # pulled and loaded beside the PATCH; the store waited
        catalogs = d.cache / "catalogs"
        assert not catalogs.exists() or not any(catalogs.iterdir()), list(catalogs.iterdir())
        assert "serving new content" not in log, d.log_tail()
        assert d.all(name)[0] == 404
        # Nothing failed to unpack: the catalog was not to be stored yet.
        status, text = http(f"{d.base}/metrics")
        assert status == 200 and f'catalogd_unpack_failures_total{{catalog="{name}"}}'.encode() not in text, text
        obj = get(name)
        assert cond(obj, "Serving") is None and FINALIZER not in obj["metadata"].get("finalizers", []), obj

        rules[0]["verbs"].append("patch")
        kubectl("apply", "-f", "-", input=role_doc)
        obj = wait_serving(d, name)
        assert_served(obj, d, name, digest_ref)
        assert d.all(name) == (200, render(olmv1, src))
    finally:
        for n in d.created:
            kubectl("delete", "clustercatalog", n, "--ignore-not-found", "--wait=false", check=False)
        for n in d.created:
            kubectl("wait", "--for=delete", f"clustercatalog/{n}", "--timeout=60s", check=False)
        d.stop()
        kubectl("delete", "clusterrolebinding", role, "--ignore-not-found", check=False)
        kubectl("delete", "clusterrole", role, "--ignore-not-found", check=False)
        kubectl("delete", "namespace", ns_name, "--wait=false", "--ignore-not-found", check=False)
