#!/usr/bin/env bash
# Stops what scripts/run-local.sh started, by PID (operator-controller first, then catalogd),
# then the local cluster.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
state=${OLMV1_LOCAL_STATE:-$repo/.dev}  # the state dir; tests may point it elsewhere
stop() { # stop NAME: SIGTERM the PID in $state/NAME.pid, wait up to 30 s, then SIGKILL
  local name=$1 pid
  pid=$(cat "$state/$name.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "$name: stopped PID $pid"
  fi
  rm -f "$state/$name.pid" "$state/$name.port" "$state/$name.metrics-port"
}
stop operator-controller
stop catalogd
bash "$repo/e2e/cluster/down.sh" --state-dir "$state"
