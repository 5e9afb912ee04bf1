#!/usr/bin/env python3
"""cli_manifest_flags: every container of the Deployments in a manifest runs its command and
args through the built binary's own flag parser (--check-flags: parse and validate only, no
files, network or API server).  Passes when each binary accepts its manifest's arguments;
fails when a manifest passes a flag (or value) its binary refuses.  To show that the check
can fail, each container is also run with a bogus extra flag, which must exit 2 with one line.

usage: manifest_flags.py MANIFEST.yaml NAME=BINARY...   (NAME: the command's basename)
"""
import os
import subprocess
import sys

import yaml

BOGUS = "--no-such-flag"


def containers(manifest):
    """(deployment/container, command, args) of every container of every Deployment."""
    with open(manifest, encoding="utf-8") as fh:
        for doc in yaml.safe_load_all(fh):
            if not doc or doc.get("kind") != "Deployment":
                continue
            pod = doc["spec"]["template"]["spec"]
            for c in pod.get("initContainers", []) + pod.get("containers", []):
                where = f'{doc["metadata"]["name"]}/{c["name"]}'
                # No command: the image's entrypoint, named like the image (olmv1/catalogd:v1).
                command = c.get("command") or [c["image"].split("@")[0].rsplit("/", 1)[-1].split(":")[0]]
                yield where, [str(x) for x in command], [str(x) for x in c.get("args", [])]


def run(binary, args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


def main():
    manifest, pairs = sys.argv[1], sys.argv[2:]
    binaries = dict(p.split("=", 1) for p in pairs)
    failures, seen = [], set()
    for where, command, args in containers(manifest):
        name = os.path.basename(command[0])
        if name not in binaries:
            failures.append(f"{where}: runs {command[0]}, which this build does not make ({', '.join(binaries)})")
            continue
        seen.add(name)
        before = len(failures)
        argv = command[1:] + args
        rc, out, err = run(binaries[name], argv + ["--check-flags"])
        if rc != 0 or out or err:
            failures.append(f"{where}: {name} {' '.join(argv)} --check-flags: exit {rc} (want 0 and no output): "
                            f"{(out + err).strip()}")
        rc, out, err = run(binaries[name], argv + [BOGUS, "--check-flags"])
        if rc != 2 or out or err.count("\n") != 1 or BOGUS not in err:
            failures.append(f"{where}: with {BOGUS} added: exit {rc}, stdout {out!r}, stderr {err!r} "
                            f"(want exit 2 and one stderr line naming it)")
        if len(failures) == before:
            print(f"ok {where}: {name} accepts its {len(argv)} argument(s) and refuses {BOGUS}")
    for name in sorted(set(binaries) - seen):
        failures.append(f"{manifest}: no container runs {name}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
