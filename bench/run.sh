#!/usr/bin/env bash
# Reproducible benchmarks.  Usage: bash bench/run.sh  (after `make build`)
# Prints load/validate/render throughput and peak RSS for the real certified-operators
# catalog and for a generated catalog 10x its size (as 550 files and as one file).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$repo/build}
shared=${OLMV1_SHARED:-$repo/../shared}
real=$shared/data/catalogs/certified-operators-v4.18
gen=$build/bench-data/certified-x10

if [ ! -d "$gen" ]; then
  mkdir -p "$(dirname "$gen")"
  "$build/bench/gen_catalog" "$real" "$gen" 10
fi
# The same blobs as one file: the loader maps big files and gives their pages back.
gen1=$build/bench-data/certified-x10-onefile
if [ ! -f "$gen1/catalog.json" ]; then
  mkdir -p "$gen1"
  cat "$gen"/*.json > "$gen1/catalog.json"
fi
echo "== FBC load + validate + render (machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)) =="
"$build/bench/fbc_bench" "$real"
"$build/bench/fbc_bench" "$gen"
"$build/bench/fbc_bench" "$gen1"
