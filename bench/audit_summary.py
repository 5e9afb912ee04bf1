#!/usr/bin/env python3
"""Count an apiserver audit log's requests by user and verb+resource (bench/audit-metadata.yaml).

Usage: audit_summary.py AUDIT_LOG [--since RFC3339] [--until RFC3339] [--per N]
--per N divides each count by N (requests per extension for a batch of N)."""
import argparse
import collections
import json

ap = argparse.ArgumentParser()
ap.add_argument("log")
ap.add_argument("--since", default="")
ap.add_argument("--until", default="")
ap.add_argument("--per", type=float, default=0)
args = ap.parse_args()

def who(user, agent):
    name = user.get("username", "")
    agent = agent.split("/")[0].split(" ")[0]
    if name in ("olmv1-admin", "system:apiserver"):  # shared by the bench's kubectl and the control plane
        return f"{name} ({agent})"
    if name.startswith("system:serviceaccount:"):
        ns, sa = name.split(":")[2:4]
        if sa == "installer":  # the bench's per-extension installers: one bucket
            return "installer SAs (operator-controller applying as them)"
        return f"sa {ns}/{sa}"
    return name

counts = collections.Counter()
for line in open(args.log):
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    if ev.get("stage") != "ResponseComplete":
        continue
    t = ev.get("requestReceivedTimestamp", "")
    if (args.since and t < args.since) or (args.until and t > args.until):
        continue
    ref = ev.get("objectRef") or {}
    res = ref.get("resource", ev.get("requestURI", "").split("?")[0])
    if ref.get("subresource"):
        res += "/" + ref["subresource"]
    code = (ev.get("responseStatus") or {}).get("code", 0)
    counts[(who(ev.get("user", {}), ev.get("userAgent", "")), ev.get("verb", ""), res + (f" ({code})" if code >= 300 else ""))] += 1

by_user = collections.Counter()
for (u, _, _), c in counts.items():
    by_user[u] += c
for u, total in by_user.most_common():
    per = f" ({total / args.per:.2f} per extension)" if args.per else ""
    print(f"{total:7d}  {u}{per}")
    for (uu, verb, res), c in sorted(counts.items(), key=lambda x: -x[1]):
        if uu == u:
            per = f"  {c / args.per:6.2f}/ext" if args.per else ""
            print(f"         {c:7d}{per}  {verb} {res}")
