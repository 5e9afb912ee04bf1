#!/usr/bin/env bash
# Compares two builds of the olmv1 CLI on the catalogs of bench/run.sh, runs interleaved so
# both see the same machine load.  Usage: bash bench/compare_cli.sh OLD_BUILD NEW_BUILD [RUNS]
# (run bench/run.sh once first: it generates the catalogs under NEW_BUILD/bench-data).
# Prints, per catalog, command and build, the median of RUNS runs of wall, user and system
# time and the peak RSS (GNU time), and checks that both builds print the same bytes.
set -euo pipefail
old=$1 new=$2 runs=${3:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${OLMV1_SHARED:-$repo/../shared}
catalogs=("$shared/data/catalogs/certified-operators-v4.18" "$new/bench-data/certified-x10"
          "$new/bench-data/certified-x10-onefile")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %-8s %-4s %8s %8s %8s %10s\n' catalog command build wall_s user_s sys_s peak_MB
for cat in "${catalogs[@]}"; do
  for cmd in render validate; do
    for i in $(seq "$runs"); do
      for b in old new; do
        bin=$old/cli/olmv1
        [ $b = new ] && bin=$new/cli/olmv1
        /usr/bin/time -f '%e %U %S %M' -o "$tmp/$b.$i" "$bin" catalog $cmd "$cat" > "$tmp/$b.out" 2>/dev/null || true
      done
      cmp -s "$tmp/old.out" "$tmp/new.out" || { echo "OUTPUT DIFFERS: $cmd $cat" >&2; exit 1; }
    done
    for b in old new; do
      w=$(for i in $(seq "$runs"); do cut -d' ' -f1 "$tmp/$b.$i"; done | median)
      u=$(for i in $(seq "$runs"); do cut -d' ' -f2 "$tmp/$b.$i"; done | median)
      s=$(for i in $(seq "$runs"); do cut -d' ' -f3 "$tmp/$b.$i"; done | median)
      m=$(for i in $(seq "$runs"); do cut -d' ' -f4 "$tmp/$b.$i"; done | median)
      printf '%-28s %-8s %-4s %8s %8s %8s %10.1f\n' "$(basename "$cat")" $cmd $b "$w" "$u" "$s" "$(echo "$m / 1024" | bc -l)"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
