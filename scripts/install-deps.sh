#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the benchmarks need.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libjansson-dev libyaml-dev libcmocka-dev
  libuv1-dev libarchive-dev libssl-dev zlib1g-dev libh2o-dev
  # ISA-L: gunzips gzip image layers (oci/pull/oci_unpack_source.c); runtime libisal2
  libisal-dev
  # scripts/build-curl.sh (our static libcurl): Debian's curl source, unpacked by dpkg-source
  # (build-essential brings dpkg-dev); libcurl4-openssl-dev only for -DOLMV1_SYSTEM_CURL=ON
  libnghttp2-dev libcurl4-openssl-dev
  # libarchive.a's dependencies (oci/CMakeLists.txt links libarchive statically)
  libzstd-dev liblz4-dev libacl1-dev libbz2-dev liblzma-dev libxml2-dev nettle-dev
  openssl curl jq iproute2 docker-registry skopeo python3-pytest python3-yaml wrk apache2-utils hyperfine
  # the real test node (OLMV1_NODE=real, e2e/cluster/node.sh) and its Pods' toolbox image
  containerd runc containernetworking-plugins iptables busybox-static
  # graph/: Graphviz's layout (libgvc, libcgraph) for `olmv1 catalog graph -o svg`; the test that
  # looks at the picture as a person would opens it in headless chromium (fonts to draw text)
  libgraphviz-dev chromium fonts-dejavu-core
  # libFuzzer targets (fuzz/, make fuzz-smoke)
  clang libclang-rt-14-dev llvm
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
