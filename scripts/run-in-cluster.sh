#!/usr/bin/env bash
# run-in-cluster.sh [--no-demo]: `make run` / `make up` with OLMV1_NODE=real (run-local.sh hands
# over to it). The local control plane with its real node (e2e/cluster/node.sh), OLM v1 on it as
# Pods exactly as `make deploy` installs it (make images, dist/olmv1-install.yaml, make certs): no
# host process of catalogd or operator-controller. Then, unless --no-demo, the demo catalogs
# (scripts/demo-catalogs.sh) at the registry address Pods reach. `make down` stops it all.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
demo=1
[ "${1:-}" = "--no-demo" ] && demo=0
state=${OLMV1_LOCAL_STATE:-$repo/.dev}

OLMV1_NODE=real bash e2e/cluster/up.sh --state-dir "$state"
# shellcheck disable=SC1091
source "$state/env"
[ "${OLMV1_NODE:-}" = real ] || {
  echo "run: $state holds a cluster without the real node; make down first" >&2; exit 1; }
kubectl apply -f config/openshift >/dev/null
echo "run: make deploy (images, install file, certificates; log: $state/logs/deploy.log)" >&2
if ! OLMV1_LOCAL_STATE=$state bash scripts/deploy.sh >"$state/logs/deploy.log" 2>&1; then
  tail -n 30 "$state/logs/deploy.log" >&2
  exit 1
fi
grep -q OLMV1_SYSTEM_NAMESPACE "$state/env" || echo "export OLMV1_SYSTEM_NAMESPACE=olmv1-system" >> "$state/env"
[ $demo = 0 ] || bash scripts/demo-catalogs.sh "$OLMV1_NODE_REGISTRY"

proxy=/api/v1/namespaces/olmv1-system/services
cat <<MSG
OLM v1 runs in the local cluster (state in .dev/): catalogd and operator-controller are Pods on
$OLMV1_NODE_NAME (a real kubelet + containerd), from the images of make images and the unchanged
dist/olmv1-install.yaml, serving HTTPS through their Services with the certificates of make certs.
  source .dev/env
  kubectl -n olmv1-system get pods -o wide
  kubectl -n olmv1-system logs deploy/catalogd-controller-manager
  kubectl get clustercatalogs
  kubectl get --raw "$proxy/https:catalogd-service:https/proxy/catalogs/demo/api/v1/metas?schema=olm.package" | head -c 600
  kubectl get --raw $proxy/https:operator-controller-service:metrics/proxy/metrics | head
MSG
if [ $demo = 1 ]; then
  cat <<MSG
Two demo catalogs: "demo" (the ../shared sample, browse only) and "demo-operators" with the
installable olmv1-demo-operator (0.1.0 -> 0.2.0 -> 1.0.0), whose Deployment runs a real container
(images/demo-operator). Namespace olmv1-demo and ServiceAccount demo-installer are in place:
  kubectl apply -f config/samples/demo-clusterextension.yaml
  kubectl wait --for=condition=Installed --timeout=120s clusterextension/demo-operator
  kubectl -n olmv1-demo logs deploy/olmv1-demo-operator-manager   # olmv1-demo-operator 1.0.0 running as uid 65532 ...
  kubectl delete clusterextension demo-operator
MSG
fi
cat <<MSG
  make down     # the cluster, its node and every container, by PID
MSG
