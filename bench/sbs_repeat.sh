#!/usr/bin/env bash
# sbs_repeat.sh: bench/sbs_extensions.sh several times, each run on a fresh cluster, alternating
# between installers, then the minimum, median and maximum of each figure per installer.
#
# One run of a batch of 1,000 on this 2-core VM varies by ~20% from the next (the same binary
# took 19.7-27.2 s on four fresh clusters in a row), so a before/after or ours/floor comparison
# of one run each says little; alternating rounds and medians say more.  Not part of the tests.
#
# Usage: [ROUNDS=3] [INSTALLERS="C floor-contract"] [SIZES=1000] bash bench/sbs_repeat.sh
#   INSTALLERS: C (operator-controller), floor, floor-contract (bench/floor_installer.py; see
#   sbs_extensions.sh).  Other sbs_extensions.sh settings (OPCTL_ENV, OPCTL_ARGS, POLL, ...) pass
#   through to every run.  Logs: $WORK_ROOT/<installer>-<round>.log (WORK_ROOT default /tmp/sbs-repeat).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
INSTALLERS=${INSTALLERS:-C floor-contract}
export SIZES=${SIZES:-1000}
WORK_ROOT=${WORK_ROOT:-/tmp/sbs-repeat}
mkdir -p "$WORK_ROOT"
logs=()
for r in $(seq "$ROUNDS"); do
  for inst in $INSTALLERS; do
    log=$WORK_ROOT/$inst-$r.log
    rm -rf "$WORK_ROOT/work-$inst-$r"
    echo "[$(date +%H:%M:%S)] round $r: $inst (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    if [ "$inst" = C ]; then
      env -u INSTALLER WORK="$WORK_ROOT/work-$inst-$r" bash "$REPO/bench/sbs_extensions.sh" >"$log" 2>&1
    else
      INSTALLER=$inst WORK="$WORK_ROOT/work-$inst-$r" bash "$REPO/bench/sbs_extensions.sh" >"$log" 2>&1
    fi
    rm -rf "$WORK_ROOT/work-$inst-$r" # the cluster is down (no KEEP_CLUSTER); its state goes too
    grep -E "^N=[0-9]+: apply" "$log" | sed "s/^/  /" >&2
    logs+=("$inst=$log")
  done
done
python3 - "${logs[@]}" <<'PY'
import re, statistics, sys
from collections import defaultdict
figs = defaultdict(lambda: defaultdict(list))  # (installer, n) -> figure -> values
for arg in sys.argv[1:]:
    inst, path = arg.split("=", 1)
    n = None
    for line in open(path, errors="replace"):
        m = re.match(r"N=(\d+): apply -> (\d+)/(\d+) Installed in ([\d.]+) s", line)
        if m:
            n = int(m.group(1))
            if m.group(2) == m.group(3):
                figs[(inst, n)]["apply -> all Installed (s)"].append(float(m.group(4)))
            continue
        if n is None:
            continue
        m = re.search(r"machine CPU-s: busy ([\d.]+)", line)
        if m:
            figs[(inst, n)]["machine busy CPU-s"].append(float(m.group(1)))
            a = re.search(r"kube-apiserver ([\d.]+)", line)
            if a:
                figs[(inst, n)]["kube-apiserver CPU-s"].append(float(a.group(1)))
        m = re.search(r"apiserver requests during the batch: (\d+)", line)
        if m:
            figs[(inst, n)]["apiserver requests"].append(int(m.group(1)))
            n = None  # the batch's figures end here
print("installer, N, figure: min / median / max (runs)")
for (inst, n) in sorted(figs, key=lambda k: (k[1], k[0])):
    for name, vals in figs[(inst, n)].items():
        print(f"  {inst:15s} {n:5d}  {name:28s} {min(vals):9.1f} / {statistics.median(vals):9.1f} / {max(vals):9.1f}  ({len(vals)})")
PY
