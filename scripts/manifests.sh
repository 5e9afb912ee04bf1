#!/usr/bin/env bash
# manifests.sh [OUT]: renders the one install file (make manifests), default
# dist/olmv1-install.yaml: the namespace, CRDs, RBAC, Services, Deployments,
# NetworkPolicies and PodDisruptionBudgets of config/, in that order, with the image
# references of the last `make images` (dist/images.env) pinned by digest.
#
# CATALOGD_IMAGE / OPERATOR_CONTROLLER_IMAGE override the images (e.g. a mirror).
# Apply it with:  kubectl apply --server-side -f dist/olmv1-install.yaml
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dist=${OLMV1_DIST_DIR:-$repo/dist}
out=${1:-$dist/olmv1-install.yaml}
images_env=$dist/images.env

if [ -z "${CATALOGD_IMAGE:-}" ] || [ -z "${OPERATOR_CONTROLLER_IMAGE:-}" ]; then
  if [ -f "$images_env" ]; then
    # shellcheck disable=SC1090
    . "$images_env"
  fi
fi
: "${CATALOGD_IMAGE:?no image: run make images first (it writes dist/images.env) or set CATALOGD_IMAGE}"
: "${OPERATOR_CONTROLLER_IMAGE:?no image: run make images first (it writes dist/images.env) or set OPERATOR_CONTROLLER_IMAGE}"

files=(
  config/manager/00-namespace.yaml
  config/crd/olm.operatorframework.io_clustercatalogs.yaml
  config/crd/olm.operatorframework.io_clusterextensions.yaml
  config/crd/olm.operatorframework.io_clusterobjectsets.yaml
  config/rbac/serviceaccounts.yaml
  config/rbac/clusterroles.yaml
  config/rbac/roles.yaml
  config/rbac/clusterrolebindings.yaml
  config/rbac/rolebindings.yaml
  config/manager/services.yaml
  config/manager/deployments.yaml
  config/manager/networkpolicies.yaml
  config/manager/poddisruptionbudgets.yaml
)
mkdir -p "$(dirname "$out")"
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  echo "# OLM v1 (C) install file, rendered by scripts/manifests.sh from config/ at $(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo unknown)."
  echo "# catalogd: $CATALOGD_IMAGE"
  echo "# operator-controller: $OPERATOR_CONTROLLER_IMAGE"
  echo "# Apply: kubectl apply --server-side -f olmv1-install.yaml; TLS: see config/certs/ or make certs."
  for f in "${files[@]}"; do
    echo "---"
    echo "# Source: $f"
    # One object per document; comments and separators of the source are kept.
    sed -e '/^---[[:space:]]*$/{s/.*/---/}' "$repo/$f"
  done
} | sed -e "s|image: olmv1/catalogd:devel|image: $CATALOGD_IMAGE|" \
        -e "s|image: olmv1/operator-controller:devel|image: $OPERATOR_CONTROLLER_IMAGE|" > "$tmp"
grep -q "image: olmv1/.*:devel" "$tmp" && { echo "manifests.sh: an image was not replaced" >&2; exit 1; }
mv "$tmp" "$out"
trap - EXIT
echo "manifests: $out ($(grep -c '^kind:' "$out") objects)" >&2
