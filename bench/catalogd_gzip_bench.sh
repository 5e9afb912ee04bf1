#!/usr/bin/env bash
# gzip on catalogd's serving path (not part of the test suite).
#
#   bench/catalogd_gzip_bench.sh [BUILD_DIR]
#
# Loads certified-operators-v4.18 into catalogd-serve (127.0.0.1, ephemeral port), then:
#   1. GET /api/v1/all with "Accept-Encoding: gzip", 10 times one after the other:
#      median time and the compressed size;
#   2. /healthz latency (20 probes, max and median) while 8 and then 32 clients download
#      /api/v1/all with gzip in a loop.
# Needs curl.  The server is stopped by its PID only.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=${1:-$REPO/build}
CATALOG=${CATALOG:-$REPO/../shared/data/catalogs/certified-operators-v4.18}
BIN=$BUILD/catalogd/catalogd-serve
[ -x "$BIN" ] || { echo "missing $BIN" >&2; exit 1; }

WORK=$(mktemp -d /tmp/catalogd-gzip-bench-XXXXXX)
PID=
LOADERS=()
cleanup() {
  for p in "${LOADERS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -TERM "$PID"; wait "$PID" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN" --cache-dir "$WORK/cache" --addr 127.0.0.1:0 --no-access-log --load "cert=$CATALOG" >"$WORK/out" 2>"$WORK/err" &
PID=$!
until grep -q '^serving on' "$WORK/out" 2>/dev/null; do
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/err" >&2; exit 1; }
  sleep 0.05
done
PORT=$(sed -n 's/^serving on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/out")
URL=http://127.0.0.1:$PORT/catalogs/cert/api/v1/all

median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.3f", a[int((NR + 1) / 2)] }'; }
maxof() { sort -n | tail -1 | awk '{ printf "%.3f", $1 }'; }

for _ in $(seq 10); do
  curl -s -o /dev/null -w '%{time_total} %{size_download}\n' -H 'Accept-Encoding: gzip' "$URL"
done >"$WORK/seq"
echo "gzip /api/v1/all: median $(cut -d' ' -f1 "$WORK/seq" | median) s, $(head -1 "$WORK/seq" | cut -d' ' -f2) bytes"

for n in 8 32; do
  LOADERS=()
  for _ in $(seq "$n"); do
    ( while true; do curl -s -o /dev/null -H 'Accept-Encoding: gzip' "$URL" || true; done ) &
    LOADERS+=($!)
  done
  sleep 1
  for _ in $(seq 20); do
    curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/healthz"
    sleep 0.1
  done >"$WORK/h$n"
  for p in "${LOADERS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${LOADERS[@]}" 2>/dev/null || true
  LOADERS=()
  echo "/healthz with $n gzip downloads: median $(median <"$WORK/h$n") s, max $(maxof <"$WORK/h$n") s"
done
