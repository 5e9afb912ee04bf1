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
lock_state_dir

ENV_FILE=$STATE_DIR/env
TIMEOUT=${OLMV1_STOP_TIMEOUT:-15}

# stop_group PID...: TERM them all, wait up to TIMEOUT for all, KILL what is left. Our
# processes are not our children (up.sh starts them with setsid), so poll with kill -0.
stop_group() {
  local pid left deadline=$(( $(date +%s) + TIMEOUT ))
  [ $# -gt 0 ] || return 0
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  while :; do
    left=()
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
    [ ${#left[@]} -gt 0 ] || return 0
    [ "$(date +%s)" -lt $deadline ] || break
    sleep 0.1
  done
  say "PIDs ${left[*]} did not exit ${TIMEOUT}s after TERM, sending KILL"
  kill -KILL "${left[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    for pid in "${left[@]}"; do kill -0 "$pid" 2>/dev/null && continue 2; done
    return 0
  done
  say "warning: PIDs ${left[*]} still alive"
}

# ours NAME...: PIDs of those components that are still running for this state dir.
ours() {
  local name pid
  for name in "$@"; do
    pid=$(env_get "$ENV_FILE" "OLMV1_${name}_PID")
    if [ -n "$pid" ] && pid_ours "$pid"; then echo "$pid"; fi
  done
}

# Three stages, each stopped in parallel: an apiserver whose etcd is already gone keeps
# retrying and does not finish its graceful shutdown, and its clients (KCM, scheduler,
# kwok) keep it busy; the registry is independent.
stopped=()
if [ -f "$ENV_FILE" ]; then
  # The real nodes first (their processes, namespaces, cgroups, iptables chains): nothing of
  # them must outlive the cluster, and their kubelets would keep restarting containers.
  bash "$CLUSTER_DIR/node-down.sh" --state-dir "$STATE_DIR"
    for stage in "KWOK SCHEDULER CONTROLLER_MANAGER REGISTRY" "APISERVER" "ETCD"; do
    # shellcheck disable=SC2086
    group=($(ours $stage))
    stop_group "${group[@]+"${group[@]}"}"
    stopped+=("${group[@]+"${group[@]}"}")
  done
  # Any other *_PID a later version of up.sh may add.
  extra=()
  for pid in $(env_pids "$ENV_FILE"); do
    [[ " ${stopped[*]-} " == *" $pid "* ]] || { pid_ours "$pid" && extra+=("$pid"); } || true
  done
  stop_group "${extra[@]+"${extra[@]}"}"
  stopped+=("${extra[@]+"${extra[@]}"}")
fi
if [ ${#stopped[@]} -gt 0 ]; then
  say "stopped PIDs ${stopped[*]}"
else
  say "nothing running for $STATE_DIR"
fi

# Remove only what up.sh creates; never the state dir itself (it may be user-chosen).
rm -rf "$STATE_DIR/etcd" "$STATE_DIR/registry" "$STATE_DIR/pki" "$STATE_DIR/apiserver-certs" \
       "$STATE_DIR/kwok" "$STATE_DIR/node" "$STATE_DIR"/node-[0-9]* "$STATE_DIR/registry.yml" \
       "$STATE_DIR/kubeconfig" "$ENV_FILE"
[ $KEEP_LOGS = 1 ] || rm -rf "$STATE_DIR/logs"
exit 0
