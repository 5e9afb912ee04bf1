#!/usr/bin/env bash
# operator-controller benchmark (not part of the test suite).
#
# Brings up its own local cluster (e2e/cluster/up.sh in a temporary state dir), catalogd and
# operator-controller on free 127.0.0.1 ports, pushes the bench variant of the `make run` demo
# package (scripts/demo-package.py --bench: olmv1-bench-operator 1.0.0, a CSV with a Deployment and
# a ConfigMap, no RBAC so that many copies can coexist) and a ClusterCatalog for it, then measures:
#   * operator-controller RSS when idle with no extensions,
#   * apply -> Installed=True for 1 extension, then for each N given (default: 50), all N
#     ClusterExtensions applied at once (one kubectl apply), each into its own namespace with its own
#     ServiceAccount; wall time until every one reports Installed=True, and RSS once idle again.
# Each batch is deleted (uninstalled) before the next.  Everything is stopped by PID at the end.
#
# Usage: bench/operator_controller_bench.sh [N ...]        e.g.  bench/operator_controller_bench.sh 50 200
# Environment: BUILD (default build/) for the binaries; MAX_WAIT seconds per batch (default 600).
set -euo pipefail
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(50)
OPCTL_BENCH_NAME=opctl
# shellcheck source=bench/opctl_env.sh
source "$(dirname "$0")/opctl_env.sh"
sleep 3
echo "operator-controller idle RSS, no extensions: $(rss_kib) KiB"

# batch TAG N: namespaces + ServiceAccounts + bindings first (not timed), then all N
# ClusterExtensions in one apply; prints the time until all are Installed=True.
batch() {
  local tag=$1 n=$2 i objs ces
  objs=$(python3 - "$tag" "$n" <<'PY'
import json, sys
tag, n = sys.argv[1], int(sys.argv[2])
items = []
for i in range(n):
    ns = f"bench-{tag}-{i}"
    items += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
              {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "installer", "namespace": ns}}]
items.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": f"bench-installer-{tag}"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-installer"},
              "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": f"bench-{tag}-{i}"}
                           for i in range(n)]})
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
)
  ces=$(python3 - "$tag" "$n" <<'PY'
import json, sys
tag, n = sys.argv[1], int(sys.argv[2])
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
     "metadata": {"name": f"bench-{tag}-{i}", "labels": {"bench": tag}},
     "spec": {"namespace": f"bench-{tag}-{i}", "serviceAccount": {"name": "installer"},
              "source": {"sourceType": "Catalog", "catalog": {"packageName": "olmv1-bench-operator"}}}}
    for i in range(n)]}))
PY
)
  echo "$objs" | kubectl apply -f - >/dev/null
  local t0 t1 done_n=0
  t0=$(now)
  echo "$ces" | kubectl apply -f - >/dev/null
  while :; do
    done_n=$(kubectl get clusterextensions -l "bench=$tag" -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(sum(any(c["type"] == "Installed" and c["status"] == "True" for c in i.get("status", {}).get("conditions", []))
          for i in items))')
    [ "$done_n" -ge "$n" ] && break
    if awk -v a="$(now)" -v b="$t0" -v m="$max_wait" 'BEGIN{exit !(a-b>m)}'; then
      echo "bench: only $done_n/$n Installed after ${max_wait}s" >&2
      break
    fi
    sleep 0.2
  done
  t1=$(now)
  awk -v a="$t1" -v b="$t0" -v n="$n" -v d="$done_n" \
    'BEGIN{printf "apply -> Installed=True, %d extension(s): %d/%d in %.2f s (%.1f ms per extension)\n", n, d, n, a-b, (a-b)*1000/n}'
  sleep 15  # idle: past operator-controller's periodic heap trim (every 10 s)
  echo "operator-controller idle RSS with $n extension(s) installed: $(rss_kib) KiB"
  kubectl delete clusterextensions -l "bench=$tag" --wait=true --timeout=600s >/dev/null
  kubectl delete clusterrolebinding "bench-installer-$tag" >/dev/null
}

echo "machine: $(nproc) CPU(s); operator-controller default --max-concurrent-reconciles"
batch one 1
for n in "${sizes[@]}"; do batch "n$n" "$n"; done
sleep 15  # past operator-controller's periodic heap trim (every 10 s)
echo "operator-controller idle RSS after uninstalling everything: $(rss_kib) KiB"
