#!/usr/bin/env bash
# down.sh [--state-dir DIR] [--keep-logs]: stop the processes recorded in DIR/env and remove
# the cluster state (etcd data, registry storage, certs, kubeconfig, env).
# Processes are stopped by PID only (never by name, other clusters may be running), and only
# if their command line still refers to DIR (guards against recycled PIDs).
# Safe to run when nothing runs or DIR is empty.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KEEP_LOGS=0
args=()
for a in "$@"; do
  if [ "$a" = --keep-logs ]; then KEEP_LOGS=1; else args+=("$a"); fi
done
parse_state_dir "${args[@]+"${args[@]}"}"

ENV_FILE=$STATE_DIR/env
TIMEOUT=${OLMV1_STOP_TIMEOUT:-15}

# Our PIDs, in stop order: clients of the apiserver first, etcd after the apiserver.
pids=()
if [ -f "$ENV_FILE" ]; then
  for name in KWOK SCHEDULER CONTROLLER_MANAGER APISERVER REGISTRY ETCD; do
    pid=$(env_get "$ENV_FILE" "OLMV1_${name}_PID")
    [ -n "$pid" ] && pid_ours "$pid" && pids+=("$pid")
  done
  # Any other *_PID someone added later.
  for pid in $(env_pids "$ENV_FILE"); do
    [[ " ${pids[*]-} " == *" $pid "* ]] || { pid_ours "$pid" && pids+=("$pid"); } || true
  done
fi

# stop PID: TERM, wait up to TIMEOUT, then KILL. Our processes are not our children
# (up.sh started them with setsid), so poll with kill -0 instead of `wait`.
stop() {
  local pid=$1 deadline=$(( $(date +%s) + TIMEOUT ))
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt $deadline ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    say "PID $pid did not exit ${TIMEOUT}s after TERM, sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
}

# One at a time, in order: an apiserver whose etcd is already gone keeps retrying and
# does not finish its graceful shutdown, and KCM/scheduler/kwok slow it down the same way.
if [ ${#pids[@]} -gt 0 ]; then
  for pid in "${pids[@]}"; do stop "$pid"; done
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && say "warning: PID $pid still alive"; done
  say "stopped PIDs ${pids[*]}"
else
  say "nothing running for $STATE_DIR"
fi

# Remove only what up.sh creates; never the state dir itself (it may be user-chosen).
rm -rf "$STATE_DIR/etcd" "$STATE_DIR/registry" "$STATE_DIR/pki" "$STATE_DIR/apiserver-certs" \
       "$STATE_DIR/kwok" "$STATE_DIR/registry.yml" "$STATE_DIR/kubeconfig" "$ENV_FILE"
[ $KEEP_LOGS = 1 ] || rm -rf "$STATE_DIR/logs"
exit 0
