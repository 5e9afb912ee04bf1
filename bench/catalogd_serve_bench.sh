#!/usr/bin/env bash
# catalogd-serve benchmark (not part of the test suite).
#
#   bench/catalogd_serve_bench.sh [BUILD_DIR] [PACKAGE]
#
# 1. Starts catalogd-serve on 127.0.0.1 with --load of certified-operators-v4.18 into a fresh
#    cache dir and measures the time until it prints "serving on" (FBC load + store write).
# 2. Restarts it on the same cache dir without --load: time to serve a persisted store.
# 3. Reports RSS while serving, then drives GET /api/v1/metas?package=PACKAGE with wrk
#    (2 threads, 2 connections, 10 s, loopback) and prints throughput and latency.
# Servers are stopped by their PID only.  Needs wrk (apt-get install -y wrk) and curl.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=${1:-$REPO/build}
PKG=${2:-gpu-operator-certified}
CATALOG=${CATALOG:-$REPO/../shared/data/catalogs/certified-operators-v4.18}
BIN=$BUILD/catalogd/catalogd-serve
DURATION=${DURATION:-10s}

[ -x "$BIN" ] || { echo "missing $BIN (cmake --build $BUILD --target catalogd-serve)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 1; }
[ -d "$CATALOG" ] || { echo "missing catalog $CATALOG" >&2; exit 1; }

WORK=$(mktemp -d /tmp/catalogd-bench-XXXXXX)
PID=
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -TERM "$PID"; wait "$PID" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

now_ns() { date +%s%N; }

# start_server OUT ARGS...: starts in the background; sets PID, PORT and ELAPSED (seconds to
# "serving").  Not called in $(...): the PID must stay in this shell.
start_server() {
  local out=$1; shift
  local t0; t0=$(now_ns)
  "$BIN" --cache-dir "$WORK/cache" --addr 127.0.0.1:0 --no-access-log "$@" >"$out" 2>"$out.err" &
  PID=$!
  until grep -q '^serving on' "$out" 2>/dev/null; do
    kill -0 "$PID" 2>/dev/null || { cat "$out.err" >&2; echo "catalogd-serve exited early" >&2; exit 1; }
    sleep 0.02
  done
  local t1; t1=$(now_ns)
  PORT=$(sed -n 's/^serving on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out")
  ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
}

stop_server() {
  kill -TERM "$PID"
  wait "$PID"
  PID=
}

rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$PID/status"; }

echo "catalog:  $CATALOG ($(du -sh "$CATALOG" | cut -f1) on disk)"
start_server "$WORK/run1.out" --load "certified=$CATALOG"
echo "first start (load FBC + write store) to serving: ${ELAPSED}s"
grep -h 'stored' "$WORK/run1.out.err" || true
echo "store: catalog.jsonl $(du -h "$WORK/cache/catalogs/certified/catalog.jsonl" | cut -f1), index.json $(du -h "$WORK/cache/catalogs/certified/index.json" | cut -f1)"
stop_server

start_server "$WORK/run2.out"
echo "restart (persisted store, no load) to serving:    ${ELAPSED}s"
echo "RSS while serving (idle):                         $(rss_mib) MiB"

URL="http://127.0.0.1:$PORT/catalogs/certified/api/v1/metas?package=$PKG"
BYTES=$(curl -s -o /dev/null -w '%{size_download}' "$URL")
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$URL")
[ "$CODE" = 200 ] && [ "$BYTES" -gt 0 ] || { echo "GET $URL: $CODE, $BYTES bytes (is $PKG in the catalog?)" >&2; exit 1; }
echo "response: GET /api/v1/metas?package=$PKG -> $CODE, $BYTES bytes"
ALL_BYTES=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$PORT/catalogs/certified/api/v1/all")
echo "          GET /api/v1/all -> $ALL_BYTES bytes"

echo "wrk -t2 -c2 -d$DURATION --latency (loopback):"
wrk -t2 -c2 -d"$DURATION" --latency "$URL" | sed 's/^/  /'
echo "RSS while serving (after load):                   $(rss_mib) MiB"
stop_server
echo "stopped (SIGTERM to pid, exit 0)"
