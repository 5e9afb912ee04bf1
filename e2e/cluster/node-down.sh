#!/usr/bin/env bash
# node-down.sh [--state-dir DIR]: remove the real nodes of DIR/env (one job: node teardown), run
# by down.sh before it stops the control plane. Safe when there is no node or only half of one.
# For each node, one after the other:
#   1. every process in the node's cgroup (kubelet, containerd, shims, containers, kube-proxy,
#      CoreDNS, the namespace holder) is frozen and killed by PID (v1 freezer / v2 cgroup.freeze),
#      so nothing restarts or forks meanwhile; the node's network and mount namespaces, and with
#      them the veth, the bridge, the links to the other nodes (they live only in the node
#      namespaces), the netns and volume mounts, go away with the last process;
#   2. the cgroup directories, the host's chains OLMV1-NODE-N (nat, filter) and their jumps, and the
#      host end of the veth if it is still there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
parse_state_dir "$@"
ENV_FILE=$STATE_DIR/env

# node_down CGROUP CHAIN HOST_IF: steps 1 and 2 for one node.
node_down() {
  local CG=$1 CHAIN=$2 HOST_IF=$3 V2 roots h r killed attempt pids p t hook rule table_hooks
  [[ $CG =~ ^olmv1-[0-9]+$ ]] || die "unexpected node cgroup name '$CG' in $ENV_FILE"

  # cgroup directories of the node, deepest first.
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then V2=1; roots=("/sys/fs/cgroup/$CG"); else
    V2=0; roots=(); for h in /sys/fs/cgroup/*/; do [ -d "$h$CG" ] && roots+=("$h$CG"); done
  fi
  node_pids() { local r; for r in "${roots[@]}"; do [ -d "$r" ] && find "$r" -name cgroup.procs -exec cat {} + ; done 2>/dev/null | sort -un; }
  freeze() { # FROZEN|THAWED
    if [ $V2 = 1 ]; then
      [ -f "/sys/fs/cgroup/$CG/cgroup.freeze" ] && echo "$([ "$1" = FROZEN ] && echo 1 || echo 0)" > "/sys/fs/cgroup/$CG/cgroup.freeze"
    elif [ -f "/sys/fs/cgroup/freezer/$CG/freezer.state" ]; then
      echo "$1" > "/sys/fs/cgroup/freezer/$CG/freezer.state"
    fi
  }

  killed=0
  for attempt in $(seq 50); do
    pids=$(node_pids)
    [ -n "$pids" ] || break
    freeze FROZEN || true
    # shellcheck disable=SC2086
    for p in $pids; do kill -KILL "$p" 2>/dev/null && killed=$((killed + 1)) || true; done
    freeze THAWED || true
    sleep 0.2
  done
  [ -z "$(node_pids)" ] || say "warning: node processes still alive: $(node_pids | tr '\n' ' ')"
  [ $killed = 0 ] || say "node: killed $killed processes of cgroup $CG"

  for r in "${roots[@]}"; do
    [ -d "$r" ] && find "$r" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ ! -d "$r" ] || say "warning: cannot remove cgroup $r"
  done

  # The chain (nat: DNAT to the host's loopback; filter: what the node may reach) and its jumps.
  for table_hooks in "nat PREROUTING OUTPUT" "filter INPUT"; do
    set -- $table_hooks
    t=$1; shift
    [ -n "$CHAIN" ] && iptables -w -t "$t" -S "$CHAIN" >/dev/null 2>&1 || continue
    for hook in "$@"; do
      while rule=$(iptables -w -t "$t" -S "$hook" | grep -m1 -- "-j $CHAIN\$"); do
        # shellcheck disable=SC2086
        eval iptables -w -t "$t" ${rule/-A /-D } || break
      done
    done
    iptables -w -t "$t" -F "$CHAIN"
    iptables -w -t "$t" -X "$CHAIN"
  done
  if [ -n "$HOST_IF" ] && ip link show "$HOST_IF" >/dev/null 2>&1; then
    ip link del "$HOST_IF" || say "warning: cannot delete $HOST_IF"
  fi
}

# Every node the env file names (OLMV1_NODE_<I>_*, I = 0, 1, ...), or the single node of an env
# file written before there could be several (OLMV1_NODE_* only).
i=0
found=0
while CG=$(env_get "$ENV_FILE" "OLMV1_NODE_${i}_CGROUP"); [ -n "$CG" ]; do
  node_down "$CG" "$(env_get "$ENV_FILE" "OLMV1_NODE_${i}_CHAIN")" "$(env_get "$ENV_FILE" "OLMV1_NODE_${i}_HOST_IF")"
  found=1
  i=$((i + 1))
done
if [ $found = 0 ]; then
  CG=$(env_get "$ENV_FILE" OLMV1_NODE_CGROUP)
  [ -z "$CG" ] || node_down "$CG" "$(env_get "$ENV_FILE" OLMV1_NODE_CHAIN)" "$(env_get "$ENV_FILE" OLMV1_NODE_HOST_IF)"
fi
exit 0
