# opctl_env.sh: what the operator-controller benchmarks share; source it, don't run it.
#
# Before sourcing set OPCTL_BENCH_NAME (the temp dir's name) and optionally OPCTL_EXTRA_ARGS
# (an array of extra operator-controller flags).  It checks the binaries, brings up a local
# cluster (e2e/cluster/up.sh) in a temporary state dir, applies the CRDs and config/rbac, starts
# catalogd and operator-controller as their ServiceAccounts (e2e/cluster/identity.sh, as
# `make run` does) on free 127.0.0.1 ports, pushes the bench package of
# scripts/demo-package.py --bench with a ClusterCatalog "bench", and gives the bench
# ServiceAccounts their ClusterRole (installer_role).  Everything is stopped by PID on exit.
#
# Defines: repo build max_wait state hport catalogd_pid opctl_pid, stop_pid, start_opctl,
# free_port, now, rss_kib, installer_role.  Environment: BUILD (default build/), MAX_WAIT seconds
# (default 600).
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
build=${BUILD:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
max_wait=${MAX_WAIT:-600}
for b in cli/olmv1 catalogd/catalogd controller/operator-controller; do
  [ -x "$build/$b" ] || { echo "bench: $build/$b is not built (make build)" >&2; exit 1; }
done

state=$(mktemp -d "${TMPDIR:-/tmp}/olmv1-${OPCTL_BENCH_NAME:-opctl}-bench.XXXXXX")
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
  crd/clustercatalogs.olm.operatorframework.io crd/clusterextensions.olm.operatorframework.io \
  crd/clusterobjectsets.olm.operatorframework.io >/dev/null
kubectl apply -f config/manager/00-namespace.yaml -f config/rbac >/dev/null
for d in catalogd operator-controller; do
  bash e2e/cluster/identity.sh --service-account "olmv1-system/$d-controller-manager" --out "$state/$d.kubeconfig"
done

cport=$(free_port) chport=$(free_port) hport=$(free_port)
"$build/catalogd/catalogd" --kubeconfig "$state/catalogd.kubeconfig" --cache-dir "$state/catalogd-cache" \
  --catalogs-server-addr "127.0.0.1:$cport" --health-addr "127.0.0.1:$chport" --no-access-log \
  --insecure-registries "$OLMV1_REGISTRY" >"$state/logs/catalogd.log" 2>&1 </dev/null &
catalogd_pid=$!
start_opctl() { # (re)starts operator-controller and waits until both daemons answer
  "$build/controller/operator-controller" --kubeconfig "$state/operator-controller.kubeconfig" \
    --system-namespace olmv1-system --cache-path "$state/opctl-cache" --health-addr "127.0.0.1:$hport" \
    --insecure-registries "$OLMV1_REGISTRY" "${OPCTL_EXTRA_ARGS[@]}" \
    >>"$state/logs/operator-controller.log" 2>&1 </dev/null &
  opctl_pid=$!
  for _ in $(seq 150); do
    curl -fsS "http://127.0.0.1:$cport/healthz" >/dev/null 2>&1 && curl -fsS "http://127.0.0.1:$hport/readyz" >/dev/null 2>&1 && break
    sleep 0.2
  done
}
[ -n "${OPCTL_EXTRA_ARGS+set}" ] || OPCTL_EXTRA_ARGS=()
start_opctl

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
installer_role() { # installer_role VERBS: the ClusterRole "bench-installer" of the bench ServiceAccounts
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: bench-installer
rules:
- apiGroups: [""]
  resources: [configmaps, serviceaccounts, services]
  verbs: $1
- apiGroups: [apps]
  resources: [deployments]
  verbs: $1
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles, clusterrolebindings, roles, rolebindings]
  verbs: $1
YAML
}
installer_role '["*"]'
