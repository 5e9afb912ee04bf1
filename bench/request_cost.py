#!/usr/bin/env python3
"""request_cost.py: the apiserver's and etcd's CPU per request, by kind of request.

Not part of the test suite.  For each kind, N requests one after the other over one keep-alive
TLS connection as the cluster admin; prints the CPU milliseconds kube-apiserver and etcd used
per request (from /proc, so run it on the machine of the cluster, with nothing else running),
and the wall time per request.  What the batch figures of bench/sbs_extensions.sh are made of:
which of an install's requests weigh, and what a different request would cost.

Usage: bench/request_cost.py ENVFILE [N] [KINDS]
  ENVFILE  the cluster's env file (e2e/cluster/up.sh --state-dir DIR: DIR/env)
  N        requests per kind (default 500)
  KINDS    comma-separated, default all: get404 get404-cache get404-cache-sa-token
           get404-cache-sa-impersonated get-sa-cache get get-cache post-configmap apply-configmap
           reapply-configmap post-secret token patch-ce-finalizer patch-ce-status
Everything it creates is in the namespace request-cost, and a ClusterExtension request-cost
(the CRDs of config/crd must be installed; no operator-controller should run), deleted at the
end.
"""
import base64
import json
import os
import sys
import time

from cluster_env import admin_connection, read_env

NS = "request-cost"



def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Api:
    def __init__(self, env):
        self.conn = admin_connection(env)

    def __call__(self, method, path, body=None, ctype="application/json", extra=None):
        headers = {"Accept": "application/json", "User-Agent": "request-cost", **(extra or {})}
        if body is not None:
            headers["Content-Type"] = ctype
            body = json.dumps(body).encode()
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        r.read()
        return r.status


def configmap(name):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS,
            "labels": {"olm.operatorframework.io/owner-kind": "ClusterExtension",
                       "olm.operatorframework.io/owner-name": name}}, "data": {"k": "v" * 200}}


CE = "/apis/olm.operatorframework.io/v1/clusterextensions/request-cost"


def ce_status(i):
    """A status like operator-controller's: Installed, Progressing, Available and the four
    deprecation conditions, with one message changing so that every write changes something."""
    def cond(t, status, reason, msg):
        return {"type": t, "status": status, "reason": reason, "message": msg, "observedGeneration": 1,
                "lastTransitionTime": "2026-01-01T00:00:00Z"}
    return {"status": {"conditions": [
        cond("Installed", "True", "Succeeded", f"Installed bundle registry.example/b@sha256:{i:064x} successfully"),
        cond("Available", "True", "ProbesSucceeded", "Objects are available and pass all probes."),
        cond("Deprecated", "False", "NotDeprecated", "not deprecated"),
        cond("PackageDeprecated", "False", "NotDeprecated", "package not deprecated"),
        cond("ChannelDeprecated", "False", "NotDeprecated", "channel not deprecated"),
        cond("BundleDeprecated", "False", "NotDeprecated", "bundle not deprecated"),
        cond("Progressing", "True", "Succeeded", "Desired state reached")],
        "install": {"bundle": {"name": "b.v1.0.0", "version": "1.0.0"}}}}


def kinds(api, ids):
    cms = f"/api/v1/namespaces/{NS}/configmaps"
    as_sa = {"Authorization": f"Bearer {ids['sa']}"}
    impersonating = {"Authorization": f"Bearer {ids['impersonator']}",
                     "Impersonate-User": f"system:serviceaccount:{NS}:sa"}
    blob = base64.b64encode(os.urandom(3000)).decode()
    apply = "?fieldManager=request-cost&force=true"
    return {
        "get404": lambda i: api("GET", f"{cms}/absent-{i}"),
        "get404-cache": lambda i: api("GET", f"{cms}/absent-{i}?resourceVersion=0"),
        # the same GET as a ServiceAccount: with its token, or by a third one impersonating it
        # (operator-controller's two ways, --service-account-identity; RBAC decides both)
        "get404-cache-sa-token": lambda i: api("GET", f"{cms}/absent-{i}?resourceVersion=0", extra=as_sa),
        "get404-cache-sa-impersonated": lambda i: api("GET", f"{cms}/absent-{i}?resourceVersion=0",
                                                      extra=impersonating),
        "get-sa-cache": lambda i: api("GET", f"/api/v1/namespaces/{NS}/serviceaccounts/sa?resourceVersion=0"),
        "post-configmap": lambda i: api("POST", cms, configmap(f"posted-{i}")),
        "get": lambda i: api("GET", f"{cms}/posted-{i}"),
        "get-cache": lambda i: api("GET", f"{cms}/posted-{i}?resourceVersion=0"),
        "apply-configmap": lambda i: api("PATCH", f"{cms}/applied-{i}{apply}", configmap(f"applied-{i}"),
                                         "application/apply-patch+yaml"),
        "reapply-configmap": lambda i: api("PATCH", f"{cms}/applied-{i}{apply}", configmap(f"applied-{i}"),
                                           "application/apply-patch+yaml"),
        "post-secret": lambda i: api("POST", f"/api/v1/namespaces/{NS}/secrets", {
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"secret-{i}"}, "data": {"release": blob}}),
        "token": lambda i: api("POST", f"/api/v1/namespaces/{NS}/serviceaccounts/sa/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}),
        # adds and removes a finalizer in turn: a write of the whole CRD object each time
        "patch-ce-finalizer": lambda i: api("PATCH", CE, {"metadata": {"finalizers": ["request-cost/x"] if i % 2 == 0
                                                                        else None}},
                                            "application/merge-patch+json"),
        "patch-ce-status": lambda i: api("PATCH", CE + "/status", ce_status(i), "application/merge-patch+json"),
    }


def service_accounts(api):
    """ServiceAccount sa (may get configmaps in NS) and impersonator (may get and impersonate
    serviceaccounts, as config/rbac lets operator-controller); their tokens."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    rules = {"request-cost-sa": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
             "request-cost-impersonator": [{"apiGroups": [""], "resources": ["serviceaccounts"],
                                            "verbs": ["get", "impersonate"]}]}
    tokens = {}
    for sa, role in (("sa", "request-cost-sa"), ("impersonator", "request-cost-impersonator")):
        api("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                                                 "metadata": {"name": sa}})
        api("POST", f"{rbac}/clusterroles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                             "metadata": {"name": role}, "rules": rules[role]})
        api("POST", f"{rbac}/clusterrolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": NS}]})
        api.conn.request("POST", f"/api/v1/namespaces/{NS}/serviceaccounts/{sa}/token", body=json.dumps({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}),
            headers={"Content-Type": "application/json", "Accept": "application/json"})
        tokens[sa] = json.loads(api.conn.getresponse().read())["status"]["token"]
    return tokens


def main():
    env = read_env(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    api = Api(env)
    chosen = sys.argv[3].split(",") if len(sys.argv) > 3 else list(table)
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    api("POST", "/apis/olm.operatorframework.io/v1/clusterextensions", {
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension", "metadata": {"name": "request-cost"},
        "spec": {"namespace": NS, "serviceAccount": {"name": "sa"},
                 "source": {"sourceType": "Catalog", "catalog": {"packageName": "request-cost"}}}})
    table = kinds(api, service_accounts(api))
    apiserver, etcd = env["OLMV1_APISERVER_PID"], env["OLMV1_ETCD_PID"]
    try:
        for kind in chosen:
            a0, e0, t0 = cpu_s(apiserver), cpu_s(etcd), time.time()
            codes = {}
            for i in range(n):
                code = table[kind](i)
                codes[code] = codes.get(code, 0) + 1
            a1, e1, t1 = cpu_s(apiserver), cpu_s(etcd), time.time()
            print(f"{kind:18s} n={n}  apiserver {1000 * (a1 - a0) / n:5.2f} ms  etcd {1000 * (e1 - e0) / n:5.2f} ms"
                  f"  wall {1000 * (t1 - t0) / n:5.2f} ms per request  answers {codes}", flush=True)
    finally:
        api("PATCH", CE, {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        api("DELETE", CE)
        api("DELETE", f"/api/v1/namespaces/{NS}")
        for kind in ("clusterroles", "clusterrolebindings"):
            for name in ("request-cost-sa", "request-cost-impersonator"):
                api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/{kind}/{name}")


if __name__ == "__main__":
    main()
