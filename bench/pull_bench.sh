#!/usr/bin/env bash
# What keeping registry connections between pulls saves (oci/oci_handle_pool.c), over TLS as a
# real registry speaks: Debian's docker-registry on loopback with its own CA, N small one-layer
# images, pulled by bench/pull_bench (built with the product) as operator-controller pulls
# bundles (a new oci_registry per pull, THREADS threads, manifest and layer), once with a new
# connection per pull (what every pull did before) and once with kept connections, ROUNDS times
# alternating.  Printed per run: wall seconds, the puller's CPU seconds, the registry's CPU
# seconds, the connections opened.  Not part of the test suite.
#
# Usage: bench/pull_bench.sh        Environment: N (default 500), THREADS (8), ROUNDS (2)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/build/bench/pull_bench
N=${N:-500} THREADS=${THREADS:-8} ROUNDS=${ROUNDS:-2}
[ -x "$BIN" ] || { echo "pull_bench: build first (make build)" >&2; exit 1; }
command -v docker-registry >/dev/null || { echo "pull_bench: needs docker-registry (apt-get install docker-registry)" >&2; exit 1; }
W=$(mktemp -d /tmp/pull-bench-XXXXXX)
REG_PID=""
cleanup() { [ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

# a CA and a certificate for 127.0.0.1 (ECDSA P-256, as a modern registry would serve)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=pull-bench-ca \
  -keyout "$W/ca.key" -out "$W/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "$W/tls.key" -out "$W/tls.csr" 2>/dev/null
openssl x509 -req -in "$W/tls.csr" -CA "$W/ca.crt" -CAkey "$W/ca.key" -CAcreateserial -days 1 \
  -extfile <(printf 'subjectAltName=IP:127.0.0.1') -out "$W/tls.crt" 2>/dev/null
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$W/registry.yml" <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $W/data}, cache: {blobdescriptor: inmemory}}
http: {addr: 127.0.0.1:$PORT, tls: {certificate: $W/tls.crt, key: $W/tls.key}}
EOF
docker-registry serve "$W/registry.yml" >"$W/registry.log" 2>&1 &
REG_PID=$!
for _ in $(seq 100); do curl -fs --cacert "$W/ca.crt" "https://127.0.0.1:$PORT/v2/" >/dev/null && break; sleep 0.1; done
reg_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$REG_PID/stat"; }

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(git -C "$REPO" rev-parse --short HEAD); registry https://127.0.0.1:$PORT"
"$BIN" push "127.0.0.1:$PORT" "$N" "$W/ca.crt"
for r in $(seq "$ROUNDS"); do
  for mode in fresh kept; do
    c0=$(reg_cpu)
    line=$("$BIN" pull "127.0.0.1:$PORT" "$N" "$W/ca.crt" "$THREADS" "$mode")
    echo "round $r: $line; registry $(awk -v a="$c0" -v b="$(reg_cpu)" 'BEGIN{printf "%.2f", b - a}') CPU-s"
  done
done
