#!/usr/bin/env bash
# Stops what scripts/run-local.sh started, by PID, then the local cluster.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
state=$repo/.dev
pid=$(cat "$state/catalogd.pid" 2>/dev/null || true)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  echo "catalogd: stopped PID $pid"
fi
rm -f "$state/catalogd.pid" "$state/catalogd.port"
bash "$repo/e2e/cluster/down.sh" --state-dir "$state"
