#!/usr/bin/env bash
# Runs the product locally: the local control plane and registry (e2e/cluster), the CRDs,
# catalogd in the background, and (unless --no-demo) a demo ClusterCatalog made from the
# sample catalog in ../shared.  State, logs and PIDs live in .dev/; `make down` stops it all.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
demo=1
[ "${1:-}" = "--no-demo" ] && demo=0
state=$repo/.dev
build=${BUILD:-$repo/build}
shared=${OLMV1_SHARED:-$repo/../shared}

bash e2e/cluster/up.sh --state-dir "$state"
# shellcheck disable=SC1091
source "$state/env"
kubectl apply -f config/crd -f config/openshift >/dev/null
kubectl wait --for condition=established --timeout=60s \
  crd/clustercatalogs.olm.operatorframework.io crd/clusterextensions.olm.operatorframework.io >/dev/null

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
catalogd_pid=$(cat "$state/catalogd.pid" 2>/dev/null || true)
if alive "$catalogd_pid"; then
  echo "catalogd already running (PID $catalogd_pid)"
  port=$(cat "$state/catalogd.port")
else
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$state/catalogd-cache"
  setsid "$build/catalogd/catalogd" --kubeconfig "$KUBECONFIG" --cache-dir "$state/catalogd-cache" \
    --catalogs-server-addr "127.0.0.1:$port" --external-address "127.0.0.1:$port" \
    --insecure-registries "$OLMV1_REGISTRY" >"$state/logs/catalogd.log" 2>&1 < /dev/null &
  echo $! > "$state/catalogd.pid"
  echo "$port" > "$state/catalogd.port"
  for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { tail -20 "$state/logs/catalogd.log"; exit 1; }
fi
grep -q OLMV1_CATALOGD_URL "$state/env" || cat >> "$state/env" <<ENV
export OLMV1_CATALOGD_URL=http://127.0.0.1:$port
export OLMV1_SYSTEM_NAMESPACE=olmv1-system
export OLMV1_CATALOGD_PID=$(cat "$state/catalogd.pid")
ENV

if [ $demo = 1 ]; then
  ref="$OLMV1_REGISTRY/olmv1/demo-catalog:latest"
  "$build/cli/olmv1" catalog push -q "$shared/data/catalogs-small/sample20" "$ref" >/dev/null
  kubectl apply -f - >/dev/null <<YAML
apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: demo
spec:
  source:
    type: Image
    image:
      ref: $ref
      pollIntervalMinutes: 10
YAML
  kubectl wait --for=condition=Serving --timeout=120s clustercatalog/demo >/dev/null
fi

cat <<MSG
OLM v1 is running locally (state and logs in .dev/).
  source .dev/env
  kubectl get clustercatalogs
  curl -s "\$OLMV1_CATALOGD_URL/catalogs/demo/api/v1/metas?schema=olm.package" | head -c 600
  build/cli/olmv1 resolve --catalog demo=$shared/data/catalogs-small/sample20 --package tigera-operator
  make down     # stops catalogd and the cluster by PID
MSG
