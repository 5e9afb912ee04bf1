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
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
build=${BUILD:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
max_wait=${MAX_WAIT:-600}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(50)
for b in cli/olmv1 catalogd/catalogd controller/operator-controller; do
  [ -x "$build/$b" ] || { echo "bench: $build/$b is not built (make build)" >&2; exit 1; }
done

state=$(mktemp -d "${TMPDIR:-/tmp}/olmv1-opctl-bench.XXXXXX")
catalogd_pid="" opctl_pid=""
stop_pid() {
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid"
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
  stop_pid "$opctl_pid"
  stop_pid "$catalogd_pid"
  bash "$repo/e2e/cluster/down.sh" --state-dir "$state" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$opctl_pid/status"; }

bash e2e/cluster/up.sh --state-dir "$state" >/dev/null
# shellcheck disable=SC1091
source "$state/env"
kubectl apply -f config/crd -f config/openshift >/dev/null
kubectl wait --for condition=established --timeout=60s \
  crd/clustercatalogs.olm.operatorframework.io crd/clusterextensions.olm.operatorframework.io >/dev/null
# Both daemons run as their ServiceAccounts with config/rbac, as `make run` does.
kubectl apply -f config/manager/00-namespace.yaml -f config/rbac >/dev/null
for d in catalogd operator-controller; do
  bash e2e/cluster/identity.sh --service-account "olmv1-system/$d-controller-manager" --out "$state/$d.kubeconfig"
done

cport=$(free_port) chport=$(free_port) hport=$(free_port)
"$build/catalogd/catalogd" --kubeconfig "$state/catalogd.kubeconfig" --cache-dir "$state/catalogd-cache" --catalogs-server-addr "127.0.0.1:$cport" \
  --health-addr "127.0.0.1:$chport" --no-access-log --insecure-registries "$OLMV1_REGISTRY" \
  >"$state/logs/catalogd.log" 2>&1 </dev/null &
catalogd_pid=$!
"$build/controller/operator-controller" --kubeconfig "$state/operator-controller.kubeconfig" --system-namespace olmv1-system --cache-path "$state/opctl-cache" \
  --health-addr "127.0.0.1:$hport" --insecure-registries "$OLMV1_REGISTRY" \
  >"$state/logs/operator-controller.log" 2>&1 </dev/null &
opctl_pid=$!
for _ in $(seq 150); do
  curl -fsS "http://127.0.0.1:$cport/healthz" >/dev/null 2>&1 && curl -fsS "http://127.0.0.1:$hport/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done

python3 scripts/demo-package.py --olmv1 "$build/cli/olmv1" --registry "$OLMV1_REGISTRY" --out "$state/demo" --bench >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: bench
spec:
  source:
    type: Image
    image:
      ref: $OLMV1_REGISTRY/olmv1/bench-operators:latest
YAML
kubectl wait --for=condition=Serving --timeout=120s clustercatalog/bench >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: bench-installer
rules:
- apiGroups: [""]
  resources: [configmaps, serviceaccounts, services]
  verbs: ["*"]
- apiGroups: [apps]
  resources: [deployments]
  verbs: ["*"]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles, clusterrolebindings, roles, rolebindings]
  verbs: ["*"]
YAML
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
