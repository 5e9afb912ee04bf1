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

Usage: floor_installer.py ENVFILE CATALOG_JSON TEMPLATE_JSON [WORKERS]
  ENVFILE: the cluster's env (e2e/cluster/up.sh), for the apiserver, admin certificate, registry.
"""
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


def install(api, reg, images, template, ce):
    name, spec = ce["metadata"]["name"], ce["spec"]
    package, namespace = spec["source"]["catalog"]["packageName"], spec["namespace"]
    pull(reg, images[package])
    for obj in objects_for(template, package, namespace):
        plural = {"ConfigMap": "/api/v1/namespaces/%s/configmaps/%s",
                  "Deployment": "/apis/apps/v1/namespaces/%s/deployments/%s"}[obj["kind"]]
        api.request("PATCH", plural % (namespace, obj["metadata"]["name"]) + "?fieldManager=floor&force=true",
                    obj, "application/apply-patch+yaml")
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    gen = ce["metadata"].get("generation", 1)
    status = {"status": {"conditions": [
        {"type": "Installed", "status": "True", "reason": "Succeeded", "message": "installed by the floor installer",
         "observedGeneration": gen, "lastTransitionTime": now},
        {"type": "Progressing", "status": "True", "reason": "Succeeded", "message": "Desired state reached",
         "observedGeneration": gen, "lastTransitionTime": now}],
        "install": {"bundle": {"name": f"{package}.v1.0.0", "version": "1.0.0"}}}}
    api.request("PATCH", f"/apis/olm.operatorframework.io/v1/clusterextensions/{name}/status", status,
                "application/merge-patch+json")


def worker(env, images, template, work):
    api = Apiserver(env)
    host, port = env["OLMV1_REGISTRY"].split(":")
    reg = http.client.HTTPConnection(host, int(port))
    while True:
        ce = work.get()
        try:
            install(api, reg, images, template, ce)
        except Exception as e:  # a yardstick: say it and go on
            print(f"floor: {ce['metadata']['name']}: {e}", file=sys.stderr, flush=True)


def main():
    env, images = read_env(sys.argv[1]), read_fbc(sys.argv[2])
    template = json.load(open(sys.argv[3]))
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    work = queue.Queue()
    for _ in range(workers):
        threading.Thread(target=worker, args=(env, images, template, work), daemon=True).start()
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
        if ev["type"] == "ADDED" and not ev["object"].get("status", {}).get("install"):
            work.put(ev["object"])

if __name__ == "__main__":
    main()
