#!/usr/bin/env bash
# demo-catalogs.sh REGISTRY: the two demo ClusterCatalogs of `make run` (one job), pushed to and
# referenced at REGISTRY (the local cluster's registry as catalogd reaches it: $OLMV1_REGISTRY
# for a catalogd on the host, $OLMV1_NODE_REGISTRY for one in a Pod on the real node).
#   demo            the ../shared sample catalog (browse and resolve only: its bundle images are
#                   not pullable offline)
#   demo-operators  the installable package olmv1-demo-operator (scripts/demo-package.py), plus
#                   what an administrator prepares to install it (config/samples/demo-installer-rbac.yaml)
# Needs KUBECONFIG (the caller sources the cluster's env); waits until both are Serving.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
registry=${1:?usage: demo-catalogs.sh REGISTRY}
state=${OLMV1_LOCAL_STATE:-$repo/.dev}
build=${BUILD:-$repo/build}
shared=${OLMV1_SHARED:-$repo/../shared}
# The CLI pushes plain HTTP to loopback registries by itself; the node's address needs saying.
export OLMV1_INSECURE_REGISTRIES=${OLMV1_INSECURE_REGISTRIES:+$OLMV1_INSECURE_REGISTRIES,}$registry

catalog() { # NAME REF
  kubectl apply -f - >/dev/null <<YAML
apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: $1
spec:
  source:
    type: Image
    image:
      ref: $2
      pollIntervalMinutes: 10
YAML
}
ref="$registry/olmv1/demo-catalog:latest"
"$build/cli/olmv1" catalog push -q "$shared/data/catalogs-small/sample20" "$ref" >/dev/null
catalog demo "$ref"
python3 "$repo/scripts/demo-package.py" --olmv1 "$build/cli/olmv1" --registry "$registry" \
  --out "$state/demo-package" >/dev/null
catalog demo-operators "$registry/olmv1/demo-operators:latest"
kubectl apply -f "$repo/config/samples/demo-installer-rbac.yaml" >/dev/null
kubectl wait --for=condition=Serving --timeout=120s clustercatalog/demo clustercatalog/demo-operators >/dev/null
