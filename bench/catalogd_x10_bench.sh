#!/usr/bin/env bash
# catalogd with a catalog 10x certified-operators-v4.18 (not part of the test suite).
#
#   bench/catalogd_x10_bench.sh [BUILD_DIR] [COPIES]
#
# Generates (once, into BUILD_DIR/bench-data/certified-x<COPIES>) a catalog COPIES times
# certified-operators-v4.18 with bench/gen_catalog (renamed copies of every package, same graph
# shapes), then runs bench/catalogd_bench.sh on it: push, ClusterCatalog create → Serving=True,
# peak and steady RSS, GET /api/v1/all, restart on the kept cache.  Against the cluster whose env
# is loaded (KUBECONFIG + OLMV1_REGISTRY), else a fresh one (e2e/cluster/up.sh).
# Goal of issue 16: Serving in <= 5 s, steady RSS <= 40 MiB.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=${1:-$REPO/build}
COPIES=${2:-10}
SRC=${SRC:-$REPO/../shared/data/catalogs/certified-operators-v4.18}
GEN=$BUILD/bench-data/certified-x$COPIES
[ -x "$BUILD/bench/gen_catalog" ] || { echo "missing $BUILD/bench/gen_catalog (make build)" >&2; exit 1; }
if [ ! -d "$GEN" ]; then
  mkdir -p "$GEN.tmp"
  "$BUILD/bench/gen_catalog" "$SRC" "$GEN.tmp" "$COPIES" >/dev/null
  mv "$GEN.tmp" "$GEN"
fi
echo "catalog x$COPIES: $(find "$GEN" -type f | wc -l) files, $(du -sh "$GEN" | cut -f1); load average $(cut -d' ' -f1-3 /proc/loadavg)"
CATALOG=$GEN exec bash "$HERE/catalogd_bench.sh" "$BUILD"
