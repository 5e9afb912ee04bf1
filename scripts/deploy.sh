#!/usr/bin/env bash
# deploy.sh [--undeploy]: installs OLM v1 on the cluster KUBECONFIG points at (make deploy),
# or removes it (make undeploy). Without KUBECONFIG, the local cluster of .dev/env.
#
# deploy:   make images (unless SKIP_IMAGES=1) -> make manifests -> kubectl apply --server-side
#           -> certificates (OLMV1_CERTS: openssl = make certs, the default, done before the
#           apply; cert-manager; service-ca; none) -> wait until both Deployments are Available.
#           OLMV1_UPSTREAM_MODE=1 runs operator-controller as upstream does (make upstream-e2e sets
#           it): config/rbac-upstream-rights (cluster-admin) and config/upstream-mode (the warning
#           on spec.serviceAccount) applied, --ignore-service-account added to its arguments.
#           OLMV1_FEATURE_GATES="BoxcutterRuntime=true,..." adds one --feature-gates=<Name>=<value>
#           argument per gate to operator-controller (one per arg: upstream's e2e suite reads them
#           that way to decide which tagged scenarios run).
# undeploy: deletes every ClusterExtension first (operator-controller uninstalls what it
#           installed while it still runs), then every ClusterCatalog, then the install file.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
KUBECTL=${KUBECTL:-kubectl}
NS=olmv1-system
if [ -z "${KUBECONFIG:-}" ] && [ -f "${OLMV1_LOCAL_STATE:-$repo/.dev}/env" ]; then
  # shellcheck disable=SC1090
  . "${OLMV1_LOCAL_STATE:-$repo/.dev}/env"
fi
install=${OLMV1_DIST_DIR:-$repo/dist}/olmv1-install.yaml
timeout=${OLMV1_DEPLOY_TIMEOUT:-300s}

if [ "${1:-}" = "--undeploy" ]; then
  [ -f "$install" ] || { echo "deploy.sh: $install is missing (make manifests)" >&2; exit 1; }
  if "$KUBECTL" get crd clusterextensions.olm.operatorframework.io >/dev/null 2>&1; then
    "$KUBECTL" delete clusterextensions --all --wait --timeout="$timeout"
  fi
  if "$KUBECTL" get crd clustercatalogs.olm.operatorframework.io >/dev/null 2>&1; then
    "$KUBECTL" delete clustercatalogs --all --wait --timeout="$timeout"
  fi
  "$KUBECTL" delete -f "$install" --ignore-not-found --wait --timeout="$timeout"
  exit 0
fi

[ "${SKIP_IMAGES:-0}" = 1 ] || bash "$repo/scripts/images.sh"
bash "$repo/scripts/manifests.sh"
# openssl certificates before the Deployments: operator-controller's CA volume takes catalogd's
# ca.crt optionally, and a Pod that started before that Secret existed would see an empty
# --catalogd-cas-dir, exit and be restarted once.
certs=${OLMV1_CERTS:-openssl}
if [ "$certs" = openssl ]; then
  "$KUBECTL" get namespace "$NS" >/dev/null 2>&1 || "$KUBECTL" create namespace "$NS"
  bash "$repo/scripts/certs.sh"
fi
"$KUBECTL" apply --server-side --field-manager=olmv1-install -f "$install"
patched=0
if [ "${OLMV1_UPSTREAM_MODE:-0}" = 1 ]; then
  "$KUBECTL" apply --server-side --field-manager=olmv1-install -f "$repo/config/rbac-upstream-rights" \
    -f "$repo/config/upstream-mode"
  "$KUBECTL" -n "$NS" patch deployment operator-controller-controller-manager --type=json \
    -p '[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--ignore-service-account"}]'
  patched=1
fi
if [ -n "${OLMV1_FEATURE_GATES:-}" ]; then
  ops=""
  IFS=, read -r -a gates <<<"$OLMV1_FEATURE_GATES"
  for g in "${gates[@]}"; do
    case $g in
      *=true | *=false) ;;
      *) echo "deploy.sh: OLMV1_FEATURE_GATES: \"$g\" is not <Name>=true or <Name>=false" >&2; exit 2 ;;
    esac
    ops="$ops${ops:+,}{\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/args/-\",\"value\":\"--feature-gates=$g\"}"
  done
  "$KUBECTL" -n "$NS" patch deployment operator-controller-controller-manager --type=json -p "[$ops]"
  patched=1
fi
# The local cluster's real node (OLMV1_NODE=real) reaches its registry as $OLMV1_NODE_REGISTRY,
# plain HTTP. The install file names no insecure registry; say it on the live Deployments, as
# an administrator of a plain-HTTP registry would (dist/olmv1-install.yaml stays as it is).
if [ -n "${OLMV1_NODE_REGISTRY:-}" ]; then
  "$KUBECTL" -n "$NS" set env deployment/catalogd-controller-manager \
    deployment/operator-controller-controller-manager OLMV1_INSECURE_REGISTRIES="$OLMV1_NODE_REGISTRY"
  patched=1
fi
case $certs in
  openssl) ;;  # above
  cert-manager) "$KUBECTL" apply --server-side -f "$repo/config/certs/cert-manager.yaml" ;;
  service-ca) "$KUBECTL" apply --server-side -f "$repo/config/certs/openshift-service-ca.yaml" ;;
  none) ;;
  *) echo "deploy.sh: OLMV1_CERTS must be openssl, cert-manager, service-ca or none" >&2; exit 2 ;;
esac
for d in catalogd-controller-manager operator-controller-controller-manager; do
  "$KUBECTL" -n "$NS" wait --for=condition=Available --timeout="$timeout" "deployment/$d"
  [ $patched = 0 ] || "$KUBECTL" -n "$NS" rollout status --timeout="$timeout" "deployment/$d"
done
echo "deploy: OLM v1 is running in $NS" >&2
