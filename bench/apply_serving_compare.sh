#!/usr/bin/env bash
# apply → Serving of certified-operators-v4.18, C against upstream's Go catalogd, timed exactly.
#
#   bench/apply_serving_compare.sh [TRIALS]      (default 5 per implementation)
#   REPO=OTHER_CHECKOUT bench/apply_serving_compare.sh   measures that checkout's build instead
#
# run.sh's A1 (../shared/upstream/bench) polls every 0.1 s, which rounds C's figure up to the
# next poll (bench/apply_floor.sh).  This extension of it times the same thing with a watch
# opened before the apply (bench/serving_watch.py), so both implementations are measured to
# the millisecond.  Each trial is what run.sh's A1 is: a catalogd just started on an empty
# cache, then `kubectl apply` of the catalog; C and Go alternate, on one cluster and registry,
# with run.sh's own helpers (lib.sh: TLS, registries.conf, identities, daemon flags).
# Needs ../shared/upstream (else says so and exits 0).  Daemons are stopped by PID.
set -euo pipefail
TRIALS=${1:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
export REPO=${REPO:-$(cd "$HERE/.." && pwd)}
# ../shared beside this checkout (not beside REPO, which may be another build to measure)
SHARED=${OLMV1_SHARED:-$(cd "$HERE/../.." && pwd)/shared}
SHARED_UPSTREAM=${SHARED_UPSTREAM:-$SHARED/upstream}
export CERTIFIED=${CERTIFIED:-$SHARED/data/catalogs/certified-operators-v4.18}
if [ ! -f "$SHARED_UPSTREAM/bench/lib.sh" ]; then
  echo "apply_serving_compare: $SHARED_UPSTREAM/bench not found: nothing to compare"; exit 0
fi
export SHARED_UPSTREAM=$(cd "$SHARED_UPSTREAM" && pwd)
export UPSTREAM=${UPSTREAM:-$HOME/.cache/olmv1-upstream} WORK=${WORK:-/tmp/olmv1-serving-compare}
export RES=$WORK/results.jsonl
mkdir -p "$UPSTREAM/bin" "$WORK"
for b in catalogd operator-controller; do
  [ -x "$UPSTREAM/bin/$b" ] || { xz -dc "$SHARED_UPSTREAM/bin/$b.xz" >"$UPSTREAM/bin/$b" && chmod +x "$UPSTREAM/bin/$b"; }
done
[ -x "$REPO/build/catalogd/catalogd" ] || { echo "missing $REPO/build/catalogd/catalogd (make build)" >&2; exit 1; }

bash "$REPO/e2e/cluster/up.sh" --state-dir "$WORK/cluster" >&2
CD_PID=
cleanup() {
  set +e
  stop_pid "$CD_PID"
  bash "$REPO/e2e/cluster/down.sh" --state-dir "$WORK/cluster" >/dev/null 2>&1
  rmdir /run/secrets 2>/dev/null   # the empty mount point lib.sh made for the Go daemon
}
trap cleanup EXIT
# shellcheck disable=SC1091
source "$WORK/cluster/env"
# shellcheck disable=SC1091
source "$SHARED_UPSTREAM/bench/lib.sh"
setup_tls; setup_registries_conf; setup_identities
REF=$OLMV1_REGISTRY/sbs/certified-operators:v4.18
"$REPO/build/cli/olmv1" catalog push -q "$CERTIFIED" "$REF" >/dev/null

: >"$WORK/figures"
for t in $(seq "$TRIALS"); do
  for impl in C Go; do
    apply_crds "$impl"
    rm -rf "$WORK/cache-$impl"
    start_catalogd "$impl" "$WORK/cache-$impl" "$WORK/catalogd-$impl.log"
    wait_http_200 "$CD_HEALTH" 60 "$CD_PID" || { tail -20 "$WORK/catalogd-$impl.log" >&2; exit 1; }
    sleep 2 # as run.sh: the daemon settles (informers synced) before the apply
    load=$(loadavg)
    out=$(python3 "$HERE/serving_watch.py" certified "$REF")
    echo "$impl $t $out load=${load// /,}" | tee -a "$WORK/figures"
    kubectl delete clustercatalog certified --wait=true --timeout=120s >/dev/null
    stop_pid "$CD_PID"; CD_PID=
  done
done

# min / median / max of serving_s per implementation, and the ratio of the medians
awk '
  { split($4, s, "="); v[$1, ++n[$1]] = s[2] }
  function med(i,   k, j, t, a) {
    for (k = 1; k <= n[i]; k++) a[k] = v[i, k]
    for (k = 1; k <= n[i]; k++) for (j = k + 1; j <= n[i]; j++) if (a[j] < a[k]) { t = a[k]; a[k] = a[j]; a[j] = t }
    lo[i] = a[1]; hi[i] = a[n[i]]
    return n[i] % 2 ? a[(n[i] + 1) / 2] : (a[n[i] / 2] + a[n[i] / 2 + 1]) / 2
  }
  END {
    mc = med("C"); mg = med("Go")
    printf "apply -> Serving (watch, s): C min %.3f median %.3f max %.3f | Go min %.3f median %.3f max %.3f | Go/C medians %.2fx\n",
      lo["C"], mc, hi["C"], lo["Go"], mg, hi["Go"], mg / mc
  }' "$WORK/figures" | tee -a "$WORK/figures"
