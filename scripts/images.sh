#!/usr/bin/env bash
# images.sh: builds the catalogd and operator-controller images without a container
# engine and pushes them with `olmv1 image push` (make images).
#
#   IMAGE_REGISTRY   where to push (default: $OLMV1_REGISTRY of the local cluster, .dev/env)
#   VERSION          the tag (default: git describe --tags --always --dirty)
#   OLMV1_SOURCE_URL the org.opencontainers.image.source label (default: git remote origin)
#   REGISTRY_AUTH_FILE  credentials for a private registry (docker config JSON)
#   OLMV1_DIST_DIR   where images.env goes (default: dist/)
#
# Each image is one layer laid out by images/rootfs.sh (the stripped daemon, exactly the
# libraries it loads, CA certificates, /etc/passwd with user 65532), runs as 65532:65532
# with the daemon as its Entrypoint, and carries the OCI labels source, revision, version,
# title and licenses. Layers have fixed owners, modes, mtimes and order, so the same
# binary and packages give the same digest. Prints both references with their digests and
# writes them to dist/images.env for `make manifests`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$repo/build}
olmv1=$build/cli/olmv1
[ -x "$olmv1" ] || { echo "images.sh: $olmv1 is not built (make build)" >&2; exit 1; }

registry=${IMAGE_REGISTRY:-}
if [ -z "$registry" ] && [ -f "${OLMV1_LOCAL_STATE:-$repo/.dev}/env" ]; then
  registry=$(. "${OLMV1_LOCAL_STATE:-$repo/.dev}/env" && echo "${OLMV1_REGISTRY:-}")
fi
[ -n "$registry" ] || { echo "images.sh: set IMAGE_REGISTRY (e.g. quay.io/you) or start the local cluster (make cluster-up)" >&2; exit 1; }
version=${VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo devel)}
revision=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
source_url=${OLMV1_SOURCE_URL:-$(git -C "$repo" remote get-url origin 2>/dev/null || echo unknown)}

declare -A binary=([catalogd]=$build/catalogd/catalogd [operator-controller]=$build/controller/operator-controller)
declare -A var=([catalogd]=CATALOGD_IMAGE [operator-controller]=OPERATOR_CONTROLLER_IMAGE)
dist=${OLMV1_DIST_DIR:-$repo/dist}
mkdir -p "$dist"
env_out=$(mktemp "$dist/images.env.XXXXXX")
trap 'rm -f "$env_out"' EXIT
for name in catalogd operator-controller; do
  root=${OLMV1_IMAGES_WORK:-$build/images}/$name
  bash "$repo/images/rootfs.sh" "${binary[$name]}" "$root"
  ref=$("$olmv1" image push -q "$root" "$registry/olmv1/$name:$version" \
          --entrypoint "/usr/local/bin/$name" --user 65532:65532 \
          --label "org.opencontainers.image.title=$name" \
          --label "org.opencontainers.image.version=$version" \
          --label "org.opencontainers.image.revision=$revision" \
          --label "org.opencontainers.image.source=$source_url" \
          --label "org.opencontainers.image.licenses=NOASSERTION")
  echo "$ref"
  echo "${var[$name]}=$ref" >> "$env_out"
done
mv "$env_out" "$dist/images.env"
trap - EXIT
