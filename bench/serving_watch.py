#!/usr/bin/env python3
"""serving_watch.py NAME REF: apply a ClusterCatalog and time it to Serving=True, exactly.

run.sh (../shared/upstream/bench) times apply -> Serving by polling every 0.1 s, so a
result is the apply plus the end of the first poll that sees Serving: 0.017, 0.134,
0.251 s ... after the apply (bench/apply_floor.sh).  At a few tenths of a second that
quantum is a third of the figure.  Here a watch on the catalog is open *before* the
apply, and the clock stops at the event that carries Serving=True: what is left is the
apiserver's own event latency (about a millisecond), the same for every implementation.

Prints one line: "apply_s=<kubectl apply> serving_s=<apply start -> Serving event>".
The apiserver, CA and admin client certificate come from the cluster env (e2e/cluster/up.sh).
"""
import http.client
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.parse

GROUP_PATH = "/apis/olm.operatorframework.io/v1/clustercatalogs"


def connect():
    url = urllib.parse.urlparse(os.environ["OLMV1_APISERVER"])
    ctx = ssl.create_default_context(cafile=os.environ["OLMV1_CA_CERT"])
    ctx.load_cert_chain(os.environ["OLMV1_ADMIN_CERT"], os.environ["OLMV1_ADMIN_KEY"])
    return http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=600)


def serving(obj):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Serving" and c.get("status") == "True":
            return True
    return False


def main():
    name, ref = sys.argv[1], sys.argv[2]
    conn = connect()
    # The list gives the resourceVersion to watch from, so no event after it is missed.
    conn.request("GET", f"{GROUP_PATH}?fieldSelector=metadata.name%3D{name}")
    listed = json.loads(conn.getresponse().read())
    if listed.get("items"):
        sys.exit(f"serving_watch: clustercatalog {name} exists already")
    rv = listed["metadata"]["resourceVersion"]
    conn.request("GET", f"{GROUP_PATH}?watch=1&fieldSelector=metadata.name%3D{name}&resourceVersion={rv}")
    resp = conn.getresponse()  # the headers come once the watch is registered
    if resp.status != 200:
        sys.exit(f"serving_watch: watch answered {resp.status}")

    manifest = {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterCatalog",
        "metadata": {"name": name, "labels": {"olm.operatorframework.io/metadata.name": name}},
        "spec": {"source": {"type": "Image", "image": {"ref": ref}}},
    }
    t0 = time.monotonic()
    subprocess.run(["kubectl", "apply", "-f", "-"], input=json.dumps(manifest).encode(), check=True,
                   stdout=subprocess.DEVNULL)
    t_applied = time.monotonic()
    while True:
        line = resp.readline()
        if not line:
            sys.exit("serving_watch: the watch ended before Serving=True")
        ev = json.loads(line)
        if ev.get("type") == "ERROR":
            sys.exit(f"serving_watch: watch error: {ev.get('object')}")
        if serving(ev.get("object") or {}):
            t1 = time.monotonic()
            break
    print(f"apply_s={t_applied - t0:.3f} serving_s={t1 - t0:.3f}")


if __name__ == "__main__":
    main()
