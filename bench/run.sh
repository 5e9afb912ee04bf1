#!/usr/bin/env bash
# Reproducible benchmarks.  Usage: bash bench/run.sh  (after `make build`)
# Prints load/validate/render throughput and peak RSS for the real certified-operators
# catalog and for a generated catalog 10x its size.
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
echo "== FBC load + validate + render (machine: $(nproc) cores) =="
"$build/bench/fbc_bench" "$real"
"$build/bench/fbc_bench" "$gen"
