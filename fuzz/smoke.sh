#!/usr/bin/env bash
# smoke.sh [BUILD_DIR]: runs every libFuzzer target of BUILD_DIR/fuzz (default build-fuzz) for a
# bounded time from its seed corpus (fuzz/corpus/<target>/), FUZZ_JOBS at a time.  Part of
# `make test`: a crash, a leak, UB, a failed check or an input slower than FUZZ_TIMEOUT s fails
# it, with the input saved in BUILD_DIR/fuzz-artifacts/ and the log tail shown.
#
# The seed corpus is only read: what a run discovers goes to BUILD_DIR/fuzz-work/<target>/
# (thrown away at the next run), so `make test` leaves the tree as it was.
# Environment: FUZZ_SECONDS (per target, default 15), FUZZ_JOBS (default 2), FUZZ_TIMEOUT
# (default 10), FUZZ_TARGETS (names without fuzz_, default all).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BUILD=${1:-$REPO/build-fuzz}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
SECONDS_EACH=${FUZZ_SECONDS:-15}
JOBS=${FUZZ_JOBS:-2}
TIMEOUT=${FUZZ_TIMEOUT:-10}
WORK=$BUILD/fuzz-work
ART=$BUILD/fuzz-artifacts

targets=()
if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -ra targets <<<"$FUZZ_TARGETS"
else
  for b in "$BUILD"/fuzz/fuzz_*; do [ -x "$b" ] && targets+=("${b##*/fuzz_}"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz-smoke: no fuzz targets in $BUILD/fuzz (make fuzz)" >&2; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK" "$ART"

# run TARGET: one bounded run, its exit status in WORK/TARGET.rc; its own TMPDIR (the unpacker
# target makes its sandbox there).
run() {
  local t=$1 bin=$BUILD/fuzz/fuzz_$1 seeds=$REPO/fuzz/corpus/$1 rc=0
  if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
    echo "fuzz-smoke: $bin or its seed corpus $seeds is missing" >"$WORK/$t.log"
    rc=1
  else
    mkdir -p "$WORK/$t/corpus" "$WORK/$t/tmp"
    # The first corpus dir receives new inputs: the scratch one, never the committed seeds.
    TMPDIR=$WORK/$t/tmp UBSAN_OPTIONS=print_stacktrace=1 \
      "$bin" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
      -artifact_prefix="$ART/$t-" -print_final_stats=1 "$WORK/$t/corpus" "$seeds" >"$WORK/$t.log" 2>&1 || rc=$?
  fi
  echo "$rc" >"$WORK/$t.rc"
}

t0=$(date +%s)
running=0
for t in "${targets[@]}"; do
  if [ $running -ge "$JOBS" ]; then
    wait -n
    running=$((running - 1))
  fi
  run "$t" &
  running=$((running + 1))
done
wait

failed=()
for t in "${targets[@]}"; do
  if [ "$(cat "$WORK/$t.rc" 2>/dev/null)" = 0 ]; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$t.log")
    echo "fuzz-smoke: $t ok (${runs:-?} inputs in ${SECONDS_EACH}s)"
  else
    failed+=("$t")
    echo "fuzz-smoke: $t FAILED; tail of $WORK/$t.log (inputs: $ART/$t-*):"
    tail -n 40 "$WORK/$t.log"
  fi
done
echo "fuzz-smoke: ${#targets[@]} targets in $(( $(date +%s) - t0 ))s, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
