#!/usr/bin/env bash
# Runs the product locally: the local control plane and registry (e2e/cluster), the CRDs,
# catalogd and operator-controller in the background, and (unless --no-demo) two demo
# ClusterCatalogs: "demo" (the sample catalog in ../shared; browse only, its bundle images are
# not pullable offline) and "demo-operators" (a tiny installable package built and pushed by
# scripts/demo-package.py), plus the namespace, ServiceAccount and RBAC to install it
# (config/samples/demo-installer-rbac.yaml).  State, logs and PIDs live in .dev/; `make down`
# stops it all. With OLMV1_NODE=real, scripts/run-in-cluster.sh runs the daemons as Pods instead.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
demo=1
[ "${1:-}" = "--no-demo" ] && demo=0
state=${OLMV1_LOCAL_STATE:-$repo/.dev}  # the state dir; tests may point it elsewhere
build=${BUILD:-$repo/build}
shared=${OLMV1_SHARED:-$repo/../shared}

# With the real node, OLM v1 runs in the cluster as Pods instead (make deploy).
if [ "${OLMV1_NODE:-kwok}" = real ]; then
  exec bash scripts/run-in-cluster.sh "$@"
fi

bash e2e/cluster/up.sh --state-dir "$state"
# shellcheck disable=SC1091
source "$state/env"
kubectl apply -f config/crd -f config/openshift >/dev/null
kubectl wait --for condition=established --timeout=60s \
  crd/clustercatalogs.olm.operatorframework.io crd/clusterextensions.olm.operatorframework.io \
  crd/clusterobjectsets.olm.operatorframework.io >/dev/null

# The daemons run with the least privilege their in-cluster ServiceAccounts get (config/rbac),
# through kubeconfigs holding those ServiceAccounts' tokens, not with the admin kubeconfig.
# Minted on every run: a cluster brought down and up again has new ServiceAccounts.
system_ns=olmv1-system
kubectl apply -f config/manager/00-namespace.yaml -f config/rbac >/dev/null
mkdir -p "$state/identities"
for daemon in catalogd operator-controller; do
  bash e2e/cluster/identity.sh --service-account "$system_ns/$daemon-controller-manager" \
    --out "$state/identities/$daemon.kubeconfig"
done

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Who may scrape the metrics listeners (TokenReview + SubjectAccessReview): a ServiceAccount
# bound to both *-metrics-reader ClusterRoles, for `kubectl create token`.
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: metrics-scraper, namespace: $system_ns}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: olmv1-local-catalogd-metrics-scraper}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: catalogd-metrics-reader}
subjects: [{kind: ServiceAccount, name: metrics-scraper, namespace: $system_ns}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: olmv1-local-operator-controller-metrics-scraper}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator-controller-metrics-reader}
subjects: [{kind: ServiceAccount, name: metrics-scraper, namespace: $system_ns}]
YAML
catalogd_pid=$(cat "$state/catalogd.pid" 2>/dev/null || true)
if alive "$catalogd_pid"; then
  echo "catalogd already running (PID $catalogd_pid)"
  port=$(cat "$state/catalogd.port")
  cmport=$(cat "$state/catalogd.metrics-port" 2>/dev/null || echo 0)
else
  port=$(free_port) cmport=$(free_port)
  mkdir -p "$state/catalogd-cache"
  setsid "$build/catalogd/catalogd" --kubeconfig "$state/identities/catalogd.kubeconfig" --cache-dir "$state/catalogd-cache" \
    --catalogs-server-addr "127.0.0.1:$port" --external-address "127.0.0.1:$port" \
    --metrics-bind-address "127.0.0.1:$cmport" \
    --insecure-registries "$OLMV1_REGISTRY" >"$state/logs/catalogd.log" 2>&1 < /dev/null &
  echo $! > "$state/catalogd.pid"
  echo "$port" > "$state/catalogd.port"
  echo "$cmport" > "$state/catalogd.metrics-port"
  for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { tail -20 "$state/logs/catalogd.log"; exit 1; }
fi
grep -q OLMV1_CATALOGD_URL "$state/env" || cat >> "$state/env" <<ENV
export OLMV1_CATALOGD_URL=http://127.0.0.1:$port
export OLMV1_SYSTEM_NAMESPACE=olmv1-system
export OLMV1_CATALOGD_PID=$(cat "$state/catalogd.pid")
ENV
grep -q OLMV1_CATALOGD_METRICS_URL "$state/env" || echo "export OLMV1_CATALOGD_METRICS_URL=http://127.0.0.1:$cmport/metrics" >> "$state/env"

opctl_pid=$(cat "$state/operator-controller.pid" 2>/dev/null || true)
if alive "$opctl_pid"; then
  echo "operator-controller already running (PID $opctl_pid)"
  hport=$(cat "$state/operator-controller.port")
  mport=$(cat "$state/operator-controller.metrics-port" 2>/dev/null || echo 0)
else
  hport=$(free_port) mport=$(free_port)
  mkdir -p "$state/operator-controller-cache" "$state/logs"
  setsid "$build/controller/operator-controller" --kubeconfig "$state/identities/operator-controller.kubeconfig" --system-namespace "$system_ns" \
    --cache-path "$state/operator-controller-cache" --health-addr "127.0.0.1:$hport" \
    --metrics-bind-address "127.0.0.1:$mport" \
    --insecure-registries "$OLMV1_REGISTRY" >"$state/logs/operator-controller.log" 2>&1 < /dev/null &
  echo $! > "$state/operator-controller.pid"
  echo "$hport" > "$state/operator-controller.port"
  echo "$mport" > "$state/operator-controller.metrics-port"
  for _ in $(seq 150); do curl -fsS "http://127.0.0.1:$hport/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -fsS "http://127.0.0.1:$hport/readyz" >/dev/null || { tail -20 "$state/logs/operator-controller.log"; exit 1; }
fi
grep -q OLMV1_OPERATOR_CONTROLLER_URL "$state/env" || cat >> "$state/env" <<ENV
export OLMV1_OPERATOR_CONTROLLER_URL=http://127.0.0.1:$hport
export OLMV1_OPERATOR_CONTROLLER_PID=$(cat "$state/operator-controller.pid")
ENV
grep -q OLMV1_OPERATOR_CONTROLLER_METRICS_URL "$state/env" ||
  echo "export OLMV1_OPERATOR_CONTROLLER_METRICS_URL=http://127.0.0.1:$mport/metrics" >> "$state/env"

[ $demo = 0 ] || bash scripts/demo-catalogs.sh "$OLMV1_REGISTRY"

cat <<MSG
OLM v1 is running locally (state and logs in .dev/), each daemon as its ServiceAccount in
$system_ns with the RBAC of config/rbac (.dev/identities/): catalogd (PID $(cat "$state/catalogd.pid"), logs
.dev/logs/catalogd.log) and operator-controller (PID $(cat "$state/operator-controller.pid"), logs
.dev/logs/operator-controller.log).
  source .dev/env
  kubectl get clustercatalogs
  curl -s "\$OLMV1_CATALOGD_URL/catalogs/demo/api/v1/metas?schema=olm.package" | head -c 600
  build/cli/olmv1 resolve --catalog demo=$shared/data/catalogs-small/sample20 --package tigera-operator
  # metrics, for a token allowed to get /metrics (\$OLMV1_CATALOGD_METRICS_URL likewise):
  curl -H "Authorization: Bearer \$(kubectl -n $system_ns create token metrics-scraper)" \$OLMV1_OPERATOR_CONTROLLER_METRICS_URL
MSG
if [ $demo = 1 ]; then
  cat <<MSG
Two demo catalogs: "demo" is the ../shared sample catalog (browse and resolve only: its bundle
images are not pullable offline); "demo-operators" holds the installable package
olmv1-demo-operator (0.1.0 -> 0.2.0 -> 1.0.0, built by scripts/demo-package.py and pushed to the
local registry).  Namespace olmv1-demo, ServiceAccount demo-installer and its RBAC are in place
(config/samples/demo-installer-rbac.yaml).  Install it:
  kubectl apply -f config/samples/demo-clusterextension.yaml
  kubectl wait --for=condition=Installed --timeout=120s clusterextension/demo-operator
  kubectl get clusterextensions
  kubectl get deployments,configmaps -n olmv1-demo
Uninstall it:
  kubectl delete clusterextension demo-operator
MSG
fi
cat <<MSG
  make down     # stops operator-controller, catalogd and the cluster by PID
MSG
