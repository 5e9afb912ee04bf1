#!/usr/bin/env bash
# registry_gogc.sh: docker-registry's CPU for the pulls of a batch of bundles, at two GOGC
# values, alternating.  Why the local cluster's registry runs with GOGC=400 (e2e/cluster/up.sh,
# OLMV1_REGISTRY_GOGC): it allocates and clears a large read buffer for every blob it serves.
# Not part of the test suite.
#
# A registry of its own on 127.0.0.1 (Debian's docker-registry, plain HTTP, the config up.sh
# writes), N bundles pushed with the shared bench's gen_packages.py (once, kept in WORK), then
# per round and GOGC value: a fresh registry process on the same storage, every bundle's
# manifest, config and layer fetched with one `curl -K` (keep-alive), the registry's CPU time
# (utime + stime from /proc) and peak RSS.
#
# Usage: [N=1000] [ROUNDS=3] [GOGCS="100 400"] [WORK=/tmp/registry-gogc] bash bench/registry_gogc.sh
# Needs `make build` (olmv1 pushes the bundles) and ../shared/upstream/bench/gen_packages.py.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-1000} ROUNDS=${ROUNDS:-3} GOGCS=${GOGCS:-100 400} WORK=${WORK:-/tmp/registry-gogc}
GEN=${GEN:-$REPO/../shared/upstream/bench/gen_packages.py}
REGISTRY=$(command -v docker-registry) || { echo "registry_gogc: docker-registry not found" >&2; exit 1; }
[ -f "$GEN" ] || { echo "registry_gogc: no $GEN" >&2; exit 1; }
[ -x "$REPO/build/cli/olmv1" ] || { echo "registry_gogc: build/cli/olmv1 not built (make build)" >&2; exit 1; }
mkdir -p "$WORK/store"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/registry.yml" <<EOF
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $WORK/store
  delete:
    enabled: true
  cache:
    blobdescriptor: inmemory
http:
  addr: 127.0.0.1:$PORT
  secret: registry-gogc-bench
EOF
PID=""
stop() { [ -z "$PID" ] || { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; PID=""; }; }
trap stop EXIT
start() { # start GOGC
  GOGC=$1 setsid "$REGISTRY" serve "$WORK/registry.yml" </dev/null >"$WORK/registry-$1.log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/v2/" >/dev/null && return 0; sleep 0.1; done
  echo "registry_gogc: the registry did not start (see $WORK/registry-$1.log)" >&2; exit 1
}
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
ACCEPT=(-H 'Accept: application/vnd.oci.image.manifest.v1+json' -H 'Accept: application/vnd.docker.distribution.manifest.v2+json')

if [ ! -s "$WORK/pushed-$N" ]; then
  start 100
  python3 "$GEN" --repo "$REPO" --registry "127.0.0.1:$PORT" --out "$WORK/pkgs" --count "$N" >/dev/null
  : >"$WORK/urls"
  for i in $(seq 0 $((N - 1))); do
    repo=sbs/bundle-sbs-op-$(printf %03d "$i")
    echo "url = \"http://127.0.0.1:PORT/v2/$repo/manifests/v1.0.0\"" >>"$WORK/urls"
    curl -fs "${ACCEPT[@]}" "http://127.0.0.1:$PORT/v2/$repo/manifests/v1.0.0" |
      jq -r '.config.digest, .layers[].digest' | while read -r d; do
        echo "url = \"http://127.0.0.1:PORT/v2/$repo/blobs/$d\"" >>"$WORK/urls"
      done
  done
  stop
  echo "$N" >"$WORK/pushed-$N"
fi
sed "s/PORT/$PORT/; s/\$/\noutput = \/dev\/null/" "$WORK/urls" >"$WORK/urls.port"
requests=$(grep -c '^url' "$WORK/urls.port")
echo "docker-registry $(dpkg-query -W -f='${Version}' docker-registry 2>/dev/null || echo '?'), $requests requests per round, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for g in $GOGCS; do
    start "$g"
    bad=$(curl -s "${ACCEPT[@]}" -w '%{http_code}\n' -K "$WORK/urls.port" | grep -vc '^200$' || true)
    echo "round $r GOGC=$g: registry CPU $(cpu_s "$PID") s, peak RSS $(awk '/^VmHWM/ {print $2}' "/proc/$PID/status") KiB$([ "$bad" = 0 ] || echo ", $bad answers not 200")"
    stop
  done
done
