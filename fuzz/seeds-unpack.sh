#!/usr/bin/env bash
# seeds-unpack.sh: (re)writes fuzz/corpus/oci_unpack/, the unpacker's seed layers, with GNU tar,
# gzip and zstd.  Each seed is one flags byte (bit 0: only the "configs" prefix; bit 1: strip it;
# see fuzz_oci_unpack.c) and then layers separated by "OLMFUZZL".  Besides plain catalogs they
# hold the hostile shapes the unpacker must refuse or contain: "../" and absolute names,
# symlinks out of the root, a file written through a symlink, a hard link to outside, a fifo,
# whiteouts.
set -euo pipefail
OUT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/corpus/oci_unpack
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$OUT"
rm -f "$OUT"/seed-*
cd "$T"
# Fixed owners, modes and times, so the seeds are the same bytes on every run.
TAR=(tar -b 1 --format=gnu --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name)

mkdir -p configs/pkg other && chmod 755 configs configs/pkg other
printf '{"schema":"olm.package","name":"pkg"}\n' > configs/pkg/catalog.json
printf 'x\n' > other/file && chmod 4777 other/file     # setuid, world-writable: modes are cut
ln -s pkg/catalog.json configs/link                       # inside: allowed
ln configs/pkg/catalog.json configs/hard                  # hard link inside: allowed
"${TAR[@]}" -cf catalog.tar configs other

seed() { # NAME FLAGS LAYER...
  local name=$1 flags=$2 first=1; shift 2
  { printf "\\x$flags"
    for l in "$@"; do
      [ $first = 1 ] || printf OLMFUZZL
      first=0
      cat "$l"
    done; } > "$OUT/seed-$name"
}

seed plain 00 catalog.tar
seed prefix-strip 03 catalog.tar
gzip -9n < catalog.tar > catalog.tar.gz && seed gzip-prefix 01 catalog.tar.gz
# Two gzip members, the cut inside a tar header (the unpacker gunzips with ISA-L, member by member).
head -c 700 catalog.tar | gzip -9n > m1.gz && tail -c +701 catalog.tar | gzip -1n > m2.gz
cat m1.gz m2.gz > members.tar.gz && seed gzip-members 00 members.tar.gz
zstd -q -19 < catalog.tar > catalog.tar.zst && seed zstd 02 catalog.tar.zst

# Names that climb out or are absolute (-P keeps them as written).
printf 'out\n' > esc
"${TAR[@]}" -P --transform='s,^esc$,../../../escaped,' -cf dotdot.tar esc && seed dotdot 00 dotdot.tar
"${TAR[@]}" -P --transform='s,^esc$,/tmp/olmv1-fuzz-escaped,' -cf abs.tar esc && seed absolute 00 abs.tar
"${TAR[@]}" -P --transform='s,^esc$,configs/../../escaped,' -cf mid.tar esc && seed dotdot-middle 01 mid.tar

# Symlinks out of the root, then a file written through a symlink to a directory.
ln -s ../../../../etc out-rel && ln -s /etc out-abs && ln -s . self
for l in out-rel out-abs self; do "${TAR[@]}" -cf $l.tar $l && seed symlink-$l 00 $l.tar; done
mkdir -p via && printf 'through\n' > via/f && ln -s configs l
"${TAR[@]}" --transform='s,^via/f$,l/f,r' -cf through.tar l via/f && seed through-symlink 00 through.tar
ln -s .. up && "${TAR[@]}" --transform='s,^via/f$,up/escaped,r' -cf through-up.tar up via/f && seed through-up 00 through-up.tar

# A hard link whose target is outside, and one to a name that comes later.
printf 'tgt\n' > tgt && ln tgt hl
"${TAR[@]}" -P --transform='s,^tgt$,../../tgt,RSh' -cf hardout.tar tgt hl && seed hardlink-out 00 hardout.tar

# Special files: skipped, never created.
mkfifo fifo && "${TAR[@]}" -cf fifo.tar fifo configs/pkg && seed fifo 00 fifo.tar

# Two layers: the second deletes a file (whiteout) and empties a directory (opaque).
mkdir -p wh/configs/pkg && : > wh/configs/.wh.hard && : > wh/configs/pkg/.wh..wh..opq
printf '{"schema":"olm.package","name":"new"}\n' > wh/configs/new.json
"${TAR[@]}" -C wh -cf whiteouts.tar configs && seed whiteouts 00 catalog.tar whiteouts.tar
seed whiteouts-prefix 03 catalog.tar.gz whiteouts.tar
ls -l "$OUT"
