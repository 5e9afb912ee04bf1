#!/usr/bin/env bash
# node-exec.sh NODE_DIR [--new] CMD...: run CMD as part of the real node (one job: placement).
#
# Joins the node's cgroup (NODE_DIR/cgroup names it; every v1 hierarchy), so node-down.sh finds
# CMD and everything it starts (containerd's shims, the containers) by PID; then
#   --new   makes a new network and mount namespace (the node's; used for the holder process),
#   else    enters the namespaces of the holder (PID in NODE_DIR/holder.pid).
# CMD replaces this script (same PID), so the caller's $! is CMD's PID.
set -euo pipefail
NODE_DIR=${1:?usage: node-exec.sh NODE_DIR [--new] CMD...}; shift
cg=$(cat "$NODE_DIR/cgroup")
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then   # v2: one hierarchy
  echo $$ > "/sys/fs/cgroup/$cg/node/cgroup.procs"
else
  for h in /sys/fs/cgroup/*/; do
    [ ! -f "$h$cg/node/cgroup.procs" ] || echo $$ > "$h$cg/node/cgroup.procs"
  done
fi
if [ "${1:-}" = --new ]; then
  shift
  exec unshare --net --mount --propagation private -- "$@"
fi
holder=$(cat "$NODE_DIR/holder.pid")
exec nsenter --net="/proc/$holder/ns/net" --mount="/proc/$holder/ns/mnt" -- "$@"
