#!/usr/bin/env python3
"""floor_installer.py: the least any installer can ask of the cluster for the shared bench's batch.

Not OLM, and not part of the product or the tests: a yardstick for bench/sbs_extensions.sh
(INSTALLER=floor).  It watches ClusterExtensions and, for each new one, does only what the
batch cannot do without -- whatever the implementation:

  * pulls the bundle image from the registry: its manifest and its one layer (2 requests; the
    image reference comes from the catalog's FBC, read from disk before the batch);
  * puts the bundle's two objects on the cluster (server-side apply of the ConfigMap and the
    Deployment, as rendered by `olmv1 bundle render` for sbs-op-000, names substituted);
  * reports Installed=True (one merge patch of the status).

That is 3 apiserver requests and 2 registry requests per extension.  Left out, and needed by
an installer that keeps upstream's contract: the finalizer, a token for the extension's
ServiceAccount (everything here runs as the cluster admin), the conflict check, the install
record, the Helm release, the Available/deprecation conditions.  So the batch's wall time with
this installer is a floor: the cluster's own work for 1,000 namespaces, Deployments and
ClusterExtensions, the bench's kubectl and polls, and the registry, on this machine.

With --contract it also makes the requests upstream's contract asks of any installer (still as
the cluster admin, still nothing of its own to track): the finalizer's patch before installing,
the conflict check of each object (a GET from the watch cache, as Helm's install reads each
object before creating it), the Helm release Secret (a release of the same objects, gzipped as
Helm stores it), and the whole status (Installed, Progressing and the four deprecation
conditions, as upstream writes them), and on deletion the finalizer's removal (the installed
objects are left to the garbage collector).  8 apiserver requests per extension: what no installer
keeping that contract can go below, whatever its language.

Usage: floor_installer.py ENVFILE CATALOG_JSON TEMPLATE_JSON [WORKERS] [--contract]
  ENVFILE: the cluster's env (e2e/cluster/up.sh), for the apiserver, admin certificate, registry.
"""
import base64
import gzip
import http.client
import json
import queue
import sys
import threading
import time
from datetime import datetime, timezone

from cluster_env import admin_connection, read_env


def read_fbc(path):
    """package name -> bundle image, from a JSON stream of FBC objects."""
    text, dec, i, images = open(path).read(), json.JSONDecoder(), 0, {}
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return images
        obj, i = dec.raw_decode(text, i)
        if obj.get("schema") == "olm.bundle":
            images[obj["package"]] = obj["image"]


class Apiserver:
    def __init__(self, env):
        self.conn = admin_connection(env)

    def request(self, method, path, body, ctype):
        self.conn.request(method, path, body=json.dumps(body).encode(),
                          headers={"Content-Type": ctype, "Accept": "application/json", "User-Agent": "floor"})
        r = self.conn.getresponse()
        data = r.read()
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {data[:300]!r}")
        return data


def pull(reg, image):
    """GET the manifest by digest, then its layers (read and dropped)."""
    hostport, rest = image.split("/", 1)
    repo, digest = rest.split("@", 1)
    reg.request("GET", f"/v2/{repo}/manifests/{digest}",
                headers={"Accept": "application/vnd.oci.image.manifest.v1+json"})
    r = reg.getresponse()
    manifest = json.loads(r.read())
    for layer in manifest["layers"]:
        reg.request("GET", f"/v2/{repo}/blobs/{layer['digest']}")
        r = reg.getresponse()
        r.read()
        if r.status != 200:
            raise RuntimeError(f"blob {layer['digest']}: {r.status}")


def objects_for(template, package, namespace):
    text = json.dumps(template).replace("sbs-op-000", package).replace("ns-x", namespace)
    return json.loads(text)["items"]


def helm_release_secret(name, package, namespace, objects, owner_uid, now):
    """A Helm (v3, "secrets" driver) release of `objects`, deployed, version 1."""
    release = {"name": name, "namespace": namespace, "version": 1,
               "info": {"status": "deployed", "first_deployed": now, "last_deployed": now,
                        "description": "Install complete"},
               "chart": {"metadata": {"name": package, "version": "1.0.0", "apiVersion": "v2"}, "values": {}},
               "config": {}, "manifest": "\n---\n".join(json.dumps(o, indent=2) for o in objects),
               "labels": {"olm.operatorframework.io/bundle-name": f"{package}.v1.0.0",
                          "olm.operatorframework.io/package-name": package,
                          "olm.operatorframework.io/bundle-version": "1.0.0"}}
    helm_text = base64.b64encode(gzip.compress(json.dumps(release).encode())).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v1", "namespace": "olmv1-system",
                         "labels": {"name": name, "owner": "helm", "status": "deployed", "version": "1"},
                         "ownerReferences": [{"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
                                              "name": name, "uid": owner_uid, "controller": True}]},
            "data": {"release": base64.b64encode(helm_text.encode()).decode()}}


def ce_path(name):
    return f"/apis/olm.operatorframework.io/v1/clusterextensions/{name}"


def condition(ctype, status, reason, message, gen, now):
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "observedGeneration": gen, "lastTransitionTime": now}


def install(api, reg, images, template, ce, contract):
    name, spec = ce["metadata"]["name"], ce["spec"]
    package, namespace = spec["source"]["catalog"]["packageName"], spec["namespace"]
    if contract:
        api.request("PATCH", ce_path(name), {"metadata": {"finalizers": ["olm.operatorframework.io/cleanup"]}},
                    "application/merge-patch+json")
    pull(reg, images[package])
    objects = objects_for(template, package, namespace)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for obj in objects:
        plural = {"ConfigMap": "/api/v1/namespaces/%s/configmaps/%s",
                  "Deployment": "/apis/apps/v1/namespaces/%s/deployments/%s"}[obj["kind"]]
        path = plural % (namespace, obj["metadata"]["name"])
        if contract:  # the conflict check: absent, as on every first install here
            api.conn.request("GET", path + "?resourceVersion=0", headers={"Accept": "application/json"})
            r = api.conn.getresponse()
            r.read()
            if r.status != 404:
                raise RuntimeError(f"{path} already exists ({r.status})")
        api.request("PATCH", path + "?fieldManager=floor&force=true", obj, "application/apply-patch+yaml")
    gen = ce["metadata"].get("generation", 1)
    conds = [condition("Installed", "True", "Succeeded", "installed by the floor installer", gen, now),
             condition("Progressing", "True", "Succeeded", "Desired state reached", gen, now)]
    if contract:
        api.request("POST", "/api/v1/namespaces/olmv1-system/secrets",
                    helm_release_secret(name, package, namespace, objects, ce["metadata"]["uid"], now),
                    "application/json")
        conds += [condition(t, "False", "Deprecated" if t == "Deprecated" else "NotDeprecated", "", gen, now)
                  for t in ("Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated")]
    status = {"status": {"conditions": conds,
                         "install": {"bundle": {"name": f"{package}.v1.0.0", "version": "1.0.0"}}}}
    api.request("PATCH", ce_path(name) + "/status", status, "application/merge-patch+json")


def worker(env, images, template, work, contract):
    api = Apiserver(env)
    host, port = env["OLMV1_REGISTRY"].split(":")
    reg = http.client.HTTPConnection(host, int(port))
    while True:
        ce = work.get()
        try:
            if ce["metadata"].get("deletionTimestamp"):  # the finalizer's work is left to the GC
                api.request("PATCH", ce_path(ce["metadata"]["name"]), {"metadata": {"finalizers": None}},
                            "application/merge-patch+json")
                continue
            install(api, reg, images, template, ce, contract)
        except Exception as e:  # a yardstick: say it and go on
            print(f"floor: {ce['metadata']['name']}: {e}", file=sys.stderr, flush=True)


def main():
    env, images = read_env(sys.argv[1]), read_fbc(sys.argv[2])
    template = json.load(open(sys.argv[3]))
    contract = "--contract" in sys.argv[4:]
    numbers = [a for a in sys.argv[4:] if a != "--contract"]
    workers = int(numbers[0]) if numbers else 8
    work = queue.Queue()
    for _ in range(workers):
        threading.Thread(target=worker, args=(env, images, template, work, contract), daemon=True).start()
    # One watch of all ClusterExtensions from now on; each one added is installed once.  On a
    # fresh cluster the apiserver answers 429 until its cache of the new CRD is filled: again.
    for attempt in range(60):
        api = Apiserver(env)
        api.conn.request("GET", "/apis/olm.operatorframework.io/v1/clusterextensions?watch=1",
                         headers={"Accept": "application/json", "User-Agent": "floor"})
        r = api.conn.getresponse()
        if r.status == 200:
            break
        body = r.read()
        if r.status != 429 or attempt == 59:
            sys.exit(f"floor: the watch of ClusterExtensions answered {r.status}: {body[:500]!r}")
        time.sleep(0.5)
    print("floor: watching", flush=True)
    for line in r:
        ev = json.loads(line)
        if ev.get("type") not in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK"):
            sys.exit(f"floor: the watch ended with {line[:500]!r}")
        meta = ev["object"].get("metadata", {})
        if ev["type"] == "ADDED" and not ev["object"].get("status", {}).get("install"):
            work.put(ev["object"])
        elif ev["type"] == "MODIFIED" and meta.get("deletionTimestamp") and meta.get("finalizers"):
            work.put(ev["object"])

if __name__ == "__main__":
    main()
