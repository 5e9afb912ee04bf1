#!/usr/bin/env bash
# rss_breakdown.sh PID|SMAPS_FILE [TOP]: where a process's resident memory is (not part of the
# test suite).  Reads /proc/PID/smaps (or a saved copy, e.g. from scale_extensions.sh's
# SMAPS_DIR) and prints
#   * per mapped object (the binary, each shared library, [heap], ...): Rss, Pss, anonymous
#     (relocated data, .bss, heap) and file-backed clean pages, the TOP (default 25) largest;
#   * the anonymous memory by kind: the main heap, glibc's other malloc arenas (64 MiB-aligned
#     heaps), thread stacks (a mapping right after a one-page guard), the rest.
# File-backed pages of a library are shared with every process using it (Pss divides them),
# but VmRSS counts all of them: a library's constructors, relocation and symbol lookups, and
# the kernel's fault-around (64 KiB per fault) make them resident even if never called.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: rss_breakdown.sh PID|SMAPS_FILE [TOP]" >&2; exit 2; }
src=$1 top=${2:-25}
case $src in *[!0-9]*) file=$src ;; *) file=/proc/$src/smaps ;; esac
[ -r "$file" ] || { echo "rss_breakdown.sh: cannot read $file" >&2; exit 1; }

# mawk-compatible (Debian's default awk): no strtonum, no sorted arrays.
awk '
function hex(h,   i, v) { v = 0; h = tolower(h)
  for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
  return v }
function flush() {
  if (name == "") return
  obj[name] += rss; pss_[name] += pss; anon_[name] += an
  if (kind != "") { krss[kind] += rss; kn[kind]++ }
}
/^[0-9a-f]+-[0-9a-f]+ / {
  flush()
  split($1, r, "-"); size = (hex(r[2]) - hex(r[1])) / 1024
  # 64 MiB-aligned: the low 26 bits of the start are zero
  aligned = (substr(r[1], length(r[1]) - 5) == "000000" && index("048c", substr(r[1], length(r[1]) - 6, 1)) > 0)
  perm = $2; path = $6; rss = pss = an = 0; kind = ""
  if (path ~ /^\//) { n = split(path, p, "/"); name = p[n] }
  else if (path != "") name = path
  else name = "[anon]"
  if (path == "") {
    if (prev_perm == "---p" && prev_size == 4 && perm ~ /^rw/) kind = "thread stacks"
    else if (perm ~ /^rw/ && aligned) kind = "malloc arenas"
    else kind = "other anonymous"
  } else if (path == "[heap]") kind = "main heap"
  else if (path == "[stack]") kind = "main stack"
  prev_perm = perm; prev_size = size
  next
}
/^Rss:/ { rss = $2 } /^Pss:/ { pss = $2 } /^Anonymous:/ { an = $2 }
END {
  flush()
  for (o in obj) {
    t_rss += obj[o]; t_pss += pss_[o]; t_an += anon_[o]
    if (obj[o] > 0) printf "O %-34s %8d %8d %8d %8d\n", substr(o, 1, 34), obj[o], pss_[o], anon_[o], obj[o] - anon_[o]
  }
  printf "T %-34s %8d %8d %8d %8d   (KiB)\n", "TOTAL", t_rss, t_pss, t_an, t_rss - t_an
  for (k in krss) printf "K   %-18s %8d KiB in %d mapping(s)\n", k, krss[k], kn[k]
}' "$file" >"${TMPDIR:-/tmp}/rss_breakdown.$$"
trap 'rm -f "${TMPDIR:-/tmp}/rss_breakdown.$$"' EXIT
printf "%-34s %8s %8s %8s %8s\n" object Rss Pss anon file
grep '^O ' "${TMPDIR:-/tmp}/rss_breakdown.$$" | sort -k3,3nr | head -n "$top" | cut -c3-
grep '^T ' "${TMPDIR:-/tmp}/rss_breakdown.$$" | cut -c3-
echo
echo "anonymous and stack mappings by kind:"
grep '^K ' "${TMPDIR:-/tmp}/rss_breakdown.$$" | cut -c3-
