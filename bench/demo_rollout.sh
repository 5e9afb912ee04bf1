#!/usr/bin/env bash
# demo_rollout.sh: how long the demo bundle (config/samples/demo-clusterextension.yaml,
# olmv1-demo-operator 1.0.0) takes to roll out on the local cluster with its REAL node
# (OLMV1_NODE=real, as `OLMV1_NODE=real make run`: OLM v1 as Pods, the demo Deployment a real
# container), with operator-controller's BoxcutterRuntime gate off and then on (issue 26).
# Per run, seconds from `kubectl apply` to:
#   installed   the ClusterExtension's Installed=True
#   available   the demo Deployment's Available=True (olmv1-demo)
#   succeeded   (gate on) the ClusterObjectSet revision's Succeeded=True
#   deleted     from `kubectl delete` until the ClusterExtension and the Deployment are gone
# RUNS times per mode (default 3); prints min/median/max per figure and `uptime`.
# Not part of the test suite. Root (the real node). Its own state dir (OLMV1_LOCAL_STATE, default
# /tmp/demo-roll-state, not .dev); everything it started is stopped by PID at the end
# (scripts/down-local.sh). Needs `make build`; the first real-node run builds the node (~5 min).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
runs=${RUNS:-3}
max_wait=${MAX_WAIT:-300}
export OLMV1_LOCAL_STATE=${OLMV1_LOCAL_STATE:-/tmp/demo-roll-state}
state=$OLMV1_LOCAL_STATE
[ "$state" != "$repo/.dev" ] || { echo "demo_rollout: use a state dir other than .dev" >&2; exit 2; }
trap 'bash scripts/down-local.sh >/dev/null 2>&1 || echo "demo_rollout: down-local.sh failed (state $state)" >&2' EXIT

echo "uptime at start: $(uptime)"
t_up0=$(date +%s)
OLMV1_NODE=real bash scripts/run-in-cluster.sh >"$state.run.log" 2>&1 ||
  { tail -n 40 "$state.run.log" >&2; exit 1; }
# shellcheck disable=SC1091
source "$state/env"
echo "cluster with real node $OLMV1_NODE_NAME up in $(($(date +%s) - t_up0)) s (log $state.run.log)"

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }
all_true() { # all_true WORDS: non-empty and every word True (one condition per object listed)
  local w
  [ -n "$1" ] || return 1
  for w in $1; do [ "$w" = True ] || return 1; done
}
# poll T0 CMD...: seconds since T0 when CMD's output is "True" (all words True), or fail
poll() {
  local t0=$1 out
  shift
  for _ in $(seq $((max_wait * 10))); do
    out=$("$@" 2>/dev/null || true)
    if all_true "$out"; then since "$t0"; return 0; fi
    sleep 0.1
  done
  echo "demo_rollout: timed out after ${max_wait}s: $*" >&2; return 1
}
installed() { kubectl get clusterextension demo-operator -o jsonpath='{.status.conditions[?(@.type=="Installed")].status}'; }
available() { kubectl -n olmv1-demo get deployments -o jsonpath='{.items[*].status.conditions[?(@.type=="Available")].status}'; }
succeeded() {
  kubectl get clusterobjectsets -l olm.operatorframework.io/owner-name=demo-operator \
    -o jsonpath='{.items[?(@.spec.lifecycleState=="Active")].status.conditions[?(@.type=="Succeeded")].status}'
}
gone() { # "True" once the extension and the demo Deployment are both gone
  [ -z "$(kubectl get clusterextension demo-operator -o name --ignore-not-found)" ] &&
    [ -z "$(kubectl -n olmv1-demo get deployments -o name)" ] && echo True
}
stats() { # stats LABEL VALUES...
  local label=$1
  shift
  python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[2:]]
print(f"  {sys.argv[1]:<10} min {min(v):6.2f}  median {statistics.median(v):6.2f}  max {max(v):6.2f} s   (" + " ".join(sys.argv[2:]) + ")")' "$label" "$@"
}

set_gate() { # set_gate on|off: operator-controller's args with/without the gate, rolled out
  local dep=operator-controller-controller-manager args
  args=$(kubectl -n olmv1-system get deployment $dep -o json | python3 -c '
import json, sys
mode = sys.argv[1]
args = [a for a in json.load(sys.stdin)["spec"]["template"]["spec"]["containers"][0]["args"]
        if not a.startswith("--feature-gates=BoxcutterRuntime=")]
if mode == "on":
    args.append("--feature-gates=BoxcutterRuntime=true")
print(json.dumps([{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args}]))' "$1")
  kubectl -n olmv1-system patch deployment $dep --type=json -p "$args" >/dev/null
  kubectl -n olmv1-system rollout status deployment/$dep --timeout="${max_wait}s" >/dev/null
}

results=()
for mode in off on; do
  set_gate $mode
  inst=() avail=() succ=() del=()
  for i in $(seq "$runs"); do
    t0=$(now)
    kubectl apply -f config/samples/demo-clusterextension.yaml >/dev/null
    # the three are polled side by side, each reporting its own time since t0
    poll "$t0" installed >"$state/installed" &
    p1=$!
    poll "$t0" available >"$state/available" &
    p2=$!
    if [ $mode = on ]; then poll "$t0" succeeded >"$state/succeeded" & p3=$!; fi
    wait $p1
    wait $p2
    inst+=("$(cat "$state/installed")") avail+=("$(cat "$state/available")")
    if [ $mode = on ]; then wait "$p3"; succ+=("$(cat "$state/succeeded")"); fi
    t1=$(now)
    kubectl delete clusterextension demo-operator --wait=false >/dev/null
    del+=("$(poll "$t1" gone)")
    echo "gate $mode run $i: installed ${inst[-1]} available ${avail[-1]}${succ:+ succeeded ${succ[-1]}} deleted ${del[-1]} s"
  done
  results+=("BoxcutterRuntime $mode ($runs runs):")
  results+=("$(stats installed "${inst[@]}")" "$(stats available "${avail[@]}")")
  [ $mode = off ] || results+=("$(stats succeeded "${succ[@]}")")
  results+=("$(stats deleted "${del[@]}")")
done
printf '%s\n' "${results[@]}"
echo "uptime: $(uptime)"
echo "nproc: $(nproc)"
