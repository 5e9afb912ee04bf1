#!/usr/bin/env bash
# compare_deps.sh: checks (and installs, via apt) what the side-by-side bench of
# ../shared/upstream/bench/run.sh needs: ab (apache2-utils), wrk, jq, curl, openssl, unshare.
# Exit 1 with the missing commands named when they cannot be installed.
set -euo pipefail
declare -A pkg=([ab]=apache2-utils [wrk]=wrk [jq]=jq [curl]=curl [openssl]=openssl [unshare]=util-linux [xz]=xz-utils)
missing=()
for c in "${!pkg[@]}"; do command -v "$c" >/dev/null || missing+=("${pkg[$c]}"); done
[ ${#missing[@]} -eq 0 ] && { echo "bench-compare: ab, wrk, jq, curl, openssl, unshare, xz present"; exit 0; }
echo "bench-compare: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; }; then
  echo "bench-compare: could not install ${missing[*]} (apt-get install ${missing[*]})" >&2
  exit 1
fi
