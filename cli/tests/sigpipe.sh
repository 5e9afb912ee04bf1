#!/usr/bin/env bash
# olmv1 ignores SIGPIPE (issue 12, item 1): a peer that hangs up is an error to handle, never
# a silent death.  A reader of stdout that goes away (`olmv1 catalog render DIR | head`)
# still ends the command quietly with 141, what a shell shows for SIGPIPE, but by exit(),
# not by the signal.  Python starts olmv1 with SIGPIPE at its default disposition.
# Usage: sigpipe.sh /path/to/olmv1   (run from cli/tests; OLMV1_SHARED = shared/)
set -u
bin=${1:?usage: $0 /path/to/olmv1}
shared=${OLMV1_SHARED:-../../../shared}
exec python3 - "$bin" "$shared/data/catalogs-small/sample20" <<'PY'
import os, subprocess, sys
olmv1, sample = sys.argv[1], sys.argv[2]
fails = 0
for args in (["catalog", "render", sample], ["semver", "match", "--batch"]):
    r, w = os.pipe()
    p = subprocess.Popen([olmv1, *args], stdout=w, stderr=subprocess.PIPE,
                         stdin=subprocess.PIPE if args[0] == "semver" else subprocess.DEVNULL)
    os.close(w)
    os.read(r, 1) if args[0] == "catalog" else None
    os.close(r)  # the reader goes away while olmv1 still writes (or before it starts)
    if args[0] == "semver":
        try:
            p.stdin.write(b">=1.0.0\t1.2.3\n" * 200000)
            p.stdin.close()
        except BrokenPipeError:
            pass
    err = p.stderr.read().decode()
    p.wait()
    if p.returncode != 141 or err:
        fails += 1
        print(f"FAIL olmv1 {' '.join(args[:2])} into a closed pipe: exit {p.returncode} "
              f"(-13 is death by SIGPIPE), stderr {err!r}; want exit 141 and nothing on stderr")
print("sigpipe:", "ok" if not fails else f"{fails} failed")
sys.exit(1 if fails else 0)
PY
