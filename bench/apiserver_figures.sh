# apiserver_figures.sh: sourced by the benches that count what the apiserver was asked and
# what the machine's CPU did (scale_extensions.sh, sbs_extensions.sh).  Each figure is taken
# before and after a phase and diffed; kubectl must reach the cluster.

# The apiserver's requests so far by "VERB resource [subresource]" (apiserver_request_total),
# as JSON.
request_counts() { kubectl get --raw /metrics | python3 -c '
import re, sys, json
counts = {}
for line in sys.stdin:
    if not line.startswith("apiserver_request_total{"):
        continue
    labels = dict(re.findall(r"(\w+)=\"([^\"]*)\"", line.split("}")[0]))
    key = " ".join(x for x in (labels.get("verb"), labels.get("resource"), labels.get("subresource")) if x)
    if labels.get("verb") == "WATCH" and labels.get("code") != "200":  # refused watches apart
        key += " (" + labels.get("code", "?") + ")"
    counts[key] = counts.get(key, 0) + float(line.rsplit(" ", 1)[1])
print(json.dumps(counts))'; }

# request_diff BEFORE AFTER TITLE [N]: the requests between two request_counts, WATCH excluded
# (long-running), the REQ_TOP (default 14) most frequent kinds; with N, per extension too.
request_diff() { python3 - "$1" "$2" "$3" "${4:-0}" <<'PY'
import json, os, sys
b, a, title, n = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
d = {k: int(a.get(k, 0) - b.get(k, 0)) for k in a}
d = {k: v for k, v in d.items() if v > 0 and not k.startswith("WATCH")}
tot = sum(d.values())
print(f"  apiserver requests {title}: {tot} in all (WATCH excluded)" + (f", {tot / n:.1f} per extension" if n else ""))
for k in sorted(d, key=lambda k: -d[k])[:int(os.environ.get("REQ_TOP", "14"))]:
    print(f"    {d[k]:6d}  " + (f"{d[k] / n:6.2f}/ext  " if n else "") + k)
# A watch is counted when it ends, so the open ones are not here; one refused (403: an identity
# that may not watch what was asked) ends at once and is.
w = {k: int(a.get(k, 0) - b.get(k, 0)) for k in a if k.startswith("WATCH") and k.endswith(")")}
w = {k: v for k, v in w.items() if v > 0}
if w:
    print("  watches refused: " + ", ".join(f"{w[k]} {k[6:]}" for k in sorted(w, key=lambda k: -w[k])))
PY
}

# restart_requests BEFORE AFTER: a restart's requests by verb, among them the writes to installed
# objects (the kinds the benches' bundles hold; expected 0) and the ClusterExtension status writes.
restart_requests() { python3 - "$1" "$2" <<'PY'
import json, sys
b, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
d = {k: int(a.get(k, 0) - b.get(k, 0)) for k in a}
d = {k: v for k, v in d.items() if v > 0}
installed = ("deployments", "configmaps", "serviceaccounts", "roles", "rolebindings", "services",
             "clusterroles", "clusterrolebindings")
writes = ("POST", "PUT", "PATCH", "APPLY", "DELETE")
# a subresource (serviceaccounts/token: the TokenRequests) is not a write to the object
w_inst = sum(v for k, v in d.items() if k.split()[0] in writes and k.split()[1:] in [[r] for r in installed])
w_status = sum(v for k, v in d.items() if k.split()[0] in writes and k.split()[1:] == ["clusterextensions", "status"])
by_verb = {}
for k, v in d.items():
    by_verb[k.split()[0]] = by_verb.get(k.split()[0], 0) + v
print(f"  apiserver requests during the restart: {sum(d.values())} in all ("
      + ", ".join(f"{k} {v}" for k, v in sorted(by_verb.items(), key=lambda x: -x[1]))
      + f"); writes to installed objects {w_inst}; ClusterExtension status writes {w_status}")
for k in sorted(d, key=lambda k: -d[k])[:16]:
    print(f"    {d[k]:6d}  {k}")
PY
}

# The CPU seconds (user + system) of every process on the machine by PID with its command name,
# and the machine's busy and idle time, as JSON: what per-daemon figures leave out (the
# registry, kube-controller-manager, the scheduler, kwok, kernel threads).  A process's children
# are not added to it (a daemon killed and waited for would land its whole life in its parent).
machine_cpu() { python3 -c '
import glob, json, os
hz = os.sysconf("SC_CLK_TCK")
by = {}
for f in glob.glob("/proc/[0-9]*/stat"):
    try:
        s = open(f).read()
    except OSError:
        continue
    comm, rest = s[s.index("(") + 1:s.rindex(")")], s[s.rindex(")") + 2:].split()
    by[f.split("/")[2]] = [comm, (int(rest[11]) + int(rest[12])) / hz, rest[19]]  # starttime: PIDs are reused
cpu = [int(x) for x in open("/proc/stat").readline().split()[1:]]
print(json.dumps({"procs": by, "busy": (sum(cpu) - cpu[3] - cpu[4]) / hz, "idle": (cpu[3] + cpu[4]) / hz}))'; }

# machine_cpu_diff BEFORE AFTER: busy and idle CPU-seconds between two machine_cpu, every command
# that used 0.3 s or more (summed over its processes), and what processes that ended meanwhile
# or lived between the two (kubectl, curl, jq, compilers) used: the busy time nobody above has.
machine_cpu_diff() { python3 - "$1" "$2" <<'PY'
import json, sys
b, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
by = {}
for pid, (comm, cpu, start) in a["procs"].items():
    was = b["procs"].get(pid)
    comm = comm.split("-")[0] if comm.startswith("kworker") else comm  # its name tells its current work
    by[comm] = by.get(comm, 0) + cpu - (was[1] if was and was[2] == start else 0)
busy, idle = a["busy"] - b["busy"], a["idle"] - b["idle"]
top = sorted((k for k in by if by[k] >= 0.3), key=lambda k: -by[k])
print("  machine CPU-s: busy %.1f, idle %.1f; %s; ended or short-lived processes %.1f" % (
      busy, idle, ", ".join("%s %.1f" % (k, by[k]) for k in top), max(0.0, busy - sum(by.values()))))
PY
}
