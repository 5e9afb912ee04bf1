"""operator-controller drift repair through watches (issue 5).

operator-controller runs here with `--drift-repair-interval 0`: nothing requeues an
installed extension periodically, so whatever is put back was put back because a watch on
the installed objects (opened with the extension's ServiceAccount token, filtered by the
owner labels) saw it deleted or changed.  The bundles, catalog, catalogd and RBAC helpers
are those of test_operator_controller.py; this module runs its own catalogd and
operator-controller.  Every wait polls with a generous deadline; nothing asserts timing
(the times measured are printed, for the record, with `pytest -s`).
"""

import re
import time

import pytest

import olmv1_e2e
from conftest import kubectl, kubectl_json, unique  # noqa: F401
from olmv1_e2e import SA_RULES_FULL, http, ns, setup_namespace, wait_for  # noqa: F401
from test_operator_controller import (LABEL, VERSIONS, apply_ce, conditions, configmap_version,  # noqa: F401
                                      delete_ce, wait_installed)

# The test bundle installs a ServiceAccount, a ClusterRole, a ClusterRoleBinding, a Deployment and
# a ConfigMap: five resource types, so five watches per extension.
KINDS_PER_EXTENSION = 5


def drift_world(tmp_path_factory, ctl_extra=()):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("opctl-drift"), LABEL, drift_repair_interval="0",
                           ctl_extra=ctl_extra) as env:
        pkg = unique("dpk")
        images = olmv1_e2e.push_bundles(env, pkg, VERSIONS)
        ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS, "latest")
        env.update(pkg=pkg, images=images, catalog=olmv1_e2e.create_catalog(env, pkg, ref))
        yield env


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    """test_operator_controller's package and catalog, with an operator-controller that has no
    periodic repair (--drift-repair-interval 0): only the drift watches repair.  It runs under
    config/rbac, so it acts as ServiceAccounts by impersonation (the default where allowed)."""
    yield from drift_world(tmp_path_factory)


@pytest.fixture(scope="module")
def token_world(crds, tmp_path_factory):
    """The same with ServiceAccount tokens (--service-account-identity=token, what auto chooses
    under upstream's RBAC, which grants no impersonation)."""
    yield from drift_world(tmp_path_factory, ctl_extra=("--service-account-identity=token",))


def drop_namespace(ns):
    olmv1_e2e.delete_namespace(ns)


def metrics(world):
    status, body = http(f"http://127.0.0.1:{world['ctl'].port}/metrics")
    assert status == 200
    out = {}
    for line in body.decode().splitlines():
        m = re.match(r"^([a-z_]+) ([0-9.e+-]+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def metric(world, name):
    return metrics(world)[name]


def wait_watches(world, pred, what):
    return wait_for(lambda: pred(metric(world, "operator_controller_drift_watches")), what, world["ctl"])


def wait_quiet(world):
    """Reconciles stop: no endless loop of our own re-applies.  Two samples 3 s apart that agree
    (polled, so a slow machine only takes longer)."""
    def check():
        a = metric(world, "operator_controller_reconcile_total")
        time.sleep(3)
        return a == metric(world, "operator_controller_reconcile_total") and a
    return wait_for(check, "reconciles to stop", world["ctl"])


def still_installed(world, name):
    obj, c = conditions(name)
    assert c["Installed"]["status"] == "True", c["Installed"]
    assert c["Progressing"]["reason"] == "Succeeded", c["Progressing"]
    return obj


def test_deleted_and_edited_objects_are_put_back_by_the_watches(world, ns, name):
    pkg = world["pkg"]
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    wait_watches(world, lambda n: n >= KINDS_PER_EXTENSION, "the drift watches to start")
    wait_quiet(world)
    before = metrics(world)

    # (a) The operator Deployment is deleted: it comes back (a new object).
    old_uid = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["uid"]
    t0 = time.time()
    kubectl("delete", "deployment", f"{pkg}-manager", "-n", ns, "--wait=true")
    dep = wait_for(lambda: (d := kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns))
                   ["metadata"]["uid"] != old_uid and d, "the Deployment to be re-created", world["ctl"])
    print(f"\ndrift: deleted Deployment back after {time.time() - t0:.2f} s")
    assert dep["metadata"]["labels"]["olm.operatorframework.io/owner-name"] == name
    assert dep["spec"]["replicas"] == 1

    # (b) A managed field is edited: the ConfigMap's data, the Deployment's replicas.
    t0 = time.time()
    kubectl("patch", "configmap", f"{pkg}-config", "-n", ns, "--type=merge", "-p", '{"data":{"version":"tampered"}}')
    wait_for(lambda: configmap_version(world, ns) == "1.0.0", "the ConfigMap data to be put back", world["ctl"])
    print(f"drift: edited ConfigMap put back after {time.time() - t0:.2f} s")
    kubectl("patch", "deployment", f"{pkg}-manager", "-n", ns, "--type=merge", "-p", '{"spec":{"replicas":3}}')
    wait_for(lambda: kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["spec"]["replicas"] == 1,
             "spec.replicas to be put back", world["ctl"])

    # (c) Nothing of that disturbed the extension's conditions.
    still_installed(world, name)
    # The counter is raised after each repair's write, which the waits above may see first.
    after = wait_for(lambda: (lambda m: m if m["operator_controller_drift_repaired_objects_total"] >=
                              before["operator_controller_drift_repaired_objects_total"] + 3 else None)(metrics(world)),
                     "three repairs counted", world["ctl"])
    # Our own re-applies raise at most one more event each and then settle.
    wait_quiet(world)
    still_installed(world, name)
    # One token for this ServiceAccount, reused by every reconcile since the install.
    assert after["operator_controller_serviceaccount_tokens_requested_total"] == \
        before["operator_controller_serviceaccount_tokens_requested_total"]

    # (d) The watches go away with the extension.
    assert metric(world, "operator_controller_drift_watches") >= KINDS_PER_EXTENSION
    delete_ce(world, name)
    wait_watches(world, lambda n: n == 0, "the drift watches to stop")
    wait_for(lambda: metric(world, "operator_controller_drift_watched_extensions") == 0,
             "no extension watched", world["ctl"])


def test_no_reconcile_loop_while_nothing_changes(world, ns, name):
    """Our no-op re-applies write nothing: a change to a managed object that is not drift of our
    fields (a label someone else adds) causes one reconcile, whose re-apply writes nothing (the
    resourceVersions stay), and then everything is quiet again."""
    pkg = world["pkg"]
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    wait_watches(world, lambda n: n >= KINDS_PER_EXTENSION, "the drift watches to start")
    wait_quiet(world)
    sa_rv = kubectl_json("get", "serviceaccount", f"{pkg}-manager", "-n", ns)["metadata"]["resourceVersion"]
    n0 = metric(world, "operator_controller_reconcile_total")
    kubectl("label", "configmap", f"{pkg}-config", "-n", ns, "e2e-touch=1")
    cm_rv = kubectl_json("get", "configmap", f"{pkg}-config", "-n", ns)["metadata"]["resourceVersion"]
    wait_for(lambda: metric(world, "operator_controller_reconcile_total") > n0, "the touch to be reconciled",
             world["ctl"])
    wait_quiet(world)
    touched = kubectl_json("get", "configmap", f"{pkg}-config", "-n", ns)
    assert touched["metadata"]["labels"].get("e2e-touch") == "1"  # not ours: left alone
    assert touched["metadata"]["resourceVersion"] == cm_rv  # the repair's apply wrote nothing
    assert kubectl_json("get", "serviceaccount", f"{pkg}-manager", "-n", ns)["metadata"]["resourceVersion"] == sa_rv
    still_installed(world, name)
    delete_ce(world, name)


def trigger_reconcile(name):
    """A spec change (the CRD upgrade-safety enforcement flipped, as upstream's step does) and its
    reconcile: Progressing observed at the new generation."""
    ce = kubectl_json("get", "clusterextension", name)
    cur = ce["spec"].get("install", {}).get("preflight", {}).get("crdUpgradeSafety", {}).get("enforcement")
    kubectl("patch", "clusterextension", name, "--type=merge", "-p",
            '{"spec":{"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"%s"}}}}}'
            % ("Strict" if cur == "None" else "None"))
    gen = kubectl_json("get", "clusterextension", name)["metadata"]["generation"]
    wait_for(lambda: conditions(name)[1]["Progressing"].get("observedGeneration") == gen,
             "the spec change to be reconciled")


def test_user_managed_fields_survive_reconciles_and_drift_repair(world, ns, name):
    """Issue 26 item 3 in the default mode (upstream's user-managed-fields scenarios, which it runs
    only with BoxcutterRuntime): labels and annotations a user adds to an installed Deployment, and
    `kubectl rollout restart`'s pod-template annotation, belong to other field managers; a
    reconcile and a drift repair (of a field that is ours, edited at the same time) keep them."""
    pkg = world["pkg"]
    dep = f"{pkg}-manager"
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    wait_watches(world, lambda n: n >= KINDS_PER_EXTENSION, "the drift watches to start")
    ours = kubectl_json("get", "deployment", dep, "-n", ns)["metadata"]["labels"]
    assert ours.get("olm.operatorframework.io/owner-name") == name

    kubectl("annotate", "deployment", dep, "-n", ns, "example.com/custom-annotation=my-value")
    kubectl("label", "deployment", dep, "-n", ns, "example.com/custom-label=my-value")
    kubectl("rollout", "restart", "deployment", dep, "-n", ns)
    restarted = kubectl_json("get", "deployment", dep, "-n", ns)["spec"]["template"]["metadata"]["annotations"]
    restarted_at = restarted["kubectl.kubernetes.io/restartedAt"]
    # A field of ours edited too, so that the drift repair re-applies this very object.
    kubectl("patch", "deployment", dep, "-n", ns, "--type=merge", "-p", '{"spec":{"replicas":3}}')
    wait_for(lambda: kubectl_json("get", "deployment", dep, "-n", ns)["spec"]["replicas"] == 1,
             "spec.replicas to be put back", world["ctl"])
    trigger_reconcile(name)
    wait_quiet(world)

    got = kubectl_json("get", "deployment", dep, "-n", ns)
    assert got["metadata"]["annotations"].get("example.com/custom-annotation") == "my-value"
    assert got["metadata"]["labels"].get("example.com/custom-label") == "my-value"
    for k, v in ours.items():  # the bundle's and OLM's labels are all still there
        assert got["metadata"]["labels"].get(k) == v, (k, got["metadata"]["labels"])
    assert got["spec"]["template"]["metadata"]["annotations"].get("kubectl.kubernetes.io/restartedAt") == restarted_at
    assert got["spec"]["replicas"] == 1
    # The restart made a second ReplicaSet, and the reconciles did not roll back to the first.
    rs = [r for r in kubectl_json("get", "replicasets", "-n", ns)["items"]
          if any(o.get("name") == dep for o in r["metadata"].get("ownerReferences", []))]
    assert len(rs) == 2, [r["metadata"]["name"] for r in rs]
    newest = max(rs, key=lambda r: int(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]))
    assert newest["spec"]["template"]["metadata"]["annotations"].get("kubectl.kubernetes.io/restartedAt") == restarted_at
    still_installed(world, name)
    delete_ce(world, name)


def test_kind_the_service_account_may_not_watch_falls_back(world, name):
    """The ServiceAccount may apply ConfigMaps but not list/watch them: one log line names the
    verb and resource, the other kinds are still watched and repaired."""
    pkg = world["pkg"]
    ns = name[:50]
    no_cm_watch = [r for r in SA_RULES_FULL if "configmaps" not in r["resources"]]
    no_cm_watch += [{"apiGroups": [""], "resources": ["serviceaccounts", "services"], "verbs": ["*"]},
                    {"apiGroups": [""], "resources": ["configmaps"],
                     "verbs": ["get", "create", "update", "patch", "delete"]}]
    setup_namespace(ns, no_cm_watch)
    try:
        apply_ce(world, name, ns, version="1.0.0")
        wait_installed(world, name, "1.0.0")
        path = f"/api/v1/namespaces/{ns}/configmaps"
        line = wait_for(lambda: next((l for l in world["ctl"].log_text().splitlines()
                                      if f"clusterExtension={name} drift watch:" in l and path in l), None),
                        "the 403 to be logged", world["ctl"])
        assert f"ServiceAccount {ns}/installer may not list {path} (HTTP 403)" in line, line
        assert "--drift-repair-interval" in line
        assert sum(1 for l in world["ctl"].log_text().splitlines() if f"clusterExtension={name} drift watch:" in l) == 1
        old_uid = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["uid"]
        kubectl("delete", "deployment", f"{pkg}-manager", "-n", ns, "--wait=true")
        wait_for(lambda: kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["uid"] != old_uid,
                 "the Deployment to be re-created", world["ctl"])
        still_installed(world, name)
        delete_ce(world, name)
    finally:
        drop_namespace(ns)


def test_recreated_service_account_gets_a_new_token(token_world, ns, name):
    """The ServiceAccount is deleted and created again, so the cached token is no longer accepted
    (the watches already open keep streaming until they end).  Drift is still repaired: the
    repair's apply gets a 401, drops the token, mints a new one and retries; the watches are then
    opened again with the new token."""
    world = token_world
    assert "acting as ServiceAccounts with TokenRequest tokens" in world["ctl"].log_text()
    pkg = world["pkg"]
    apply_ce(world, name, ns, version="1.0.0")
    wait_installed(world, name, "1.0.0")
    wait_watches(world, lambda n: n >= KINDS_PER_EXTENSION, "the drift watches to start")
    minted = metric(world, "operator_controller_serviceaccount_tokens_requested_total")
    kubectl("delete", "serviceaccount", "installer", "-n", ns, "--wait=true")
    kubectl("create", "serviceaccount", "installer", "-n", ns)

    # The apiserver keeps accepting a token it has just accepted for a while (it caches
    # successful authentications, 10 s by default), so drift is caused until a repair runs
    # into the 401.
    def drift_and_repair():
        kubectl("patch", "configmap", f"{pkg}-config", "-n", ns, "--type=merge", "-p",
                '{"data":{"version":"tampered"}}')
        wait_for(lambda: configmap_version(world, ns) == "1.0.0", "the ConfigMap to be put back", world["ctl"])
        return metric(world, "operator_controller_serviceaccount_tokens_requested_total") > minted
    wait_for(drift_and_repair, "the rejected token to be replaced", world["ctl"])
    rejected = f"clusterExtension={name} the token of ServiceAccount {ns}/installer was rejected (HTTP 401)"
    wait_for(lambda: rejected in world["ctl"].log_text(), "the 401 to be logged", world["ctl"])

    # The watches were opened again with the new token: a deletion is still seen.
    old_uid = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["uid"]
    kubectl("delete", "deployment", f"{pkg}-manager", "-n", ns, "--wait=true")
    wait_for(lambda: kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["uid"] != old_uid,
             "the Deployment to be re-created", world["ctl"])
    wait_watches(world, lambda n: n >= KINDS_PER_EXTENSION, "the drift watches to come back")
    still_installed(world, name)
    delete_ce(world, name)


def test_impersonation_needs_no_token_and_checks_the_service_account(world, ns, name):
    """Under config/rbac operator-controller impersonates the extension's ServiceAccount: it
    installs, repairs drift and watches with no TokenRequest at all; the objects are applied as
    that ServiceAccount (its RBAC decides: a Role it lacks makes the install fail); and a
    ServiceAccount that does not exist is reported as such before anything is applied."""
    pkg = world["pkg"]
    assert "acting as ServiceAccounts by impersonation" in world["ctl"].log_text()
    # config/rbac lets it list and watch them: which exist comes from a watch, not a GET each.
    assert "knowing which ServiceAccounts exist from a watch of them" in world["ctl"].log_text()
    minted = metric(world, "operator_controller_serviceaccount_tokens_requested_total")
    assert minted == 0

    # A missing ServiceAccount: upstream's message (a TokenRequest's NotFound there).
    kubectl("delete", "serviceaccount", "installer", "-n", ns, "--wait=true")
    apply_ce(world, name, ns, version="1.0.0")
    wait_for(lambda: "service account \"installer\" not found" in
             conditions(name)[1].get("Progressing", {}).get("message", ""),
             "the missing ServiceAccount to be reported", world["ctl"])
    assert conditions(name)[1]["Installed"]["status"] != "True"

    # Created, without the right to read Deployments: the requests are that ServiceAccount's.
    olmv1_e2e.set_rules(ns, [r for r in SA_RULES_FULL if r["apiGroups"] != ["apps"]])
    kubectl("create", "serviceaccount", "installer", "-n", ns)
    refused = f'User "system:serviceaccount:{ns}:installer" cannot'
    wait_for(lambda: refused in conditions(name)[1].get("Progressing", {}).get("message", ""),
             "the ServiceAccount's own refusal in the status", world["ctl"])
    # Its RBAC complete: the next attempt installs, and every kind is watched.
    olmv1_e2e.set_rules(ns, SA_RULES_FULL)
    wait_installed(world, name, "1.0.0")
    wait_watches(world, lambda n: n >= KINDS_PER_EXTENSION, "the drift watches to start")
    old_uid = kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["uid"]
    kubectl("delete", "deployment", f"{pkg}-manager", "-n", ns, "--wait=true")
    wait_for(lambda: kubectl_json("get", "deployment", f"{pkg}-manager", "-n", ns)["metadata"]["uid"] != old_uid,
             "the Deployment to be re-created", world["ctl"])

    # Deleted and created again: impersonation names the user, so nothing is refused and drift
    # is still repaired through the same watches.
    kubectl("delete", "serviceaccount", "installer", "-n", ns, "--wait=true")
    kubectl("create", "serviceaccount", "installer", "-n", ns)
    kubectl("patch", "configmap", f"{pkg}-config", "-n", ns, "--type=merge", "-p", '{"data":{"version":"tampered"}}')
    wait_for(lambda: configmap_version(world, ns) == "1.0.0", "the ConfigMap to be put back", world["ctl"])
    still_installed(world, name)
    assert metric(world, "operator_controller_serviceaccount_tokens_requested_total") == 0
    assert "was rejected (HTTP 401)" not in world["ctl"].log_text()
    delete_ce(world, name)
