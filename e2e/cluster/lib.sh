# lib.sh: helpers shared by up.sh and down.sh (sourced, not executed).

# Repo root = two levels above this file, so the scripts work from any cwd.
CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$CLUSTER_DIR/../.." && pwd)

die() { echo "cluster: error: $*" >&2; exit 1; }
say() { echo "cluster: $*" >&2; }

# parse_state_dir "$@": sets STATE_DIR (absolute). Default is <repo>/.dev.
parse_state_dir() {
  STATE_DIR=$REPO_ROOT/.dev
  while [ $# -gt 0 ]; do
    case $1 in
      --state-dir) [ $# -ge 2 ] || die "--state-dir needs a value"; STATE_DIR=$2; shift 2 ;;
      --state-dir=*) STATE_DIR=${1#*=}; shift ;;
      -h|--help) echo "usage: $0 [--state-dir DIR]   (default: $REPO_ROOT/.dev)"; exit 0 ;;
      *) die "unknown argument: $1" ;;
    esac
  done
  [ -n "$STATE_DIR" ] || die "empty --state-dir"
  mkdir -p "$STATE_DIR"
  STATE_DIR=$(cd "$STATE_DIR" && pwd -P)
  # down.sh deletes things under it; refuse obviously dangerous values.
  case $STATE_DIR in /|/root|/home|/tmp|/usr|/etc|/var|"$REPO_ROOT") die "refusing state dir $STATE_DIR" ;; esac
}

# lock_state_dir: serialise up.sh/down.sh runs on the same state dir (two `make cluster-up` at
# once must not see each other's half-written env file as stale). up.sh exports
# OLMV1_STATE_LOCKED for the down.sh it calls itself, which would otherwise wait forever.
# The lock file stays in DIR (removing a lock file that others may wait on is racy).
lock_state_dir() {
  [ "${OLMV1_STATE_LOCKED:-}" = "$STATE_DIR" ] && return 0
  exec 7>"$STATE_DIR/.lock"
  if ! flock -w 600 7; then die "timed out waiting for another up.sh/down.sh on $STATE_DIR"; fi
  export OLMV1_STATE_LOCKED=$STATE_DIR
}

# pid_ours PID: true if PID is alive AND was started for this state dir. Every process we
# start has STATE_DIR in its command line (data dir, config or cert paths), which guards
# against a PID that was recycled by an unrelated process after a reboot or crash.
pid_ours() {
  local pid=$1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$STATE_DIR/"
}

# env_pids FILE: print the values of all OLMV1_*_PID variables in FILE (without sourcing it
# into the caller, so a stale file cannot clobber our variables), the last one of each, as
# env_get reads them: restart.sh appends a restarted component's new PID, and its old one is
# gone (up.sh took that for a crashed cluster and wiped it). The name may hold digits
# (OLMV1_KUBELET_1_PID: the second real node's).
env_pids() {
  awk '/^export OLMV1_[A-Z0-9_]*_PID=[0-9]+$/ { split(substr($0, 8), kv, "="); if (!(kv[1] in pid)) order[n++] = kv[1]; pid[kv[1]] = kv[2] }
       END { for (i = 0; i < n; i++) print pid[order[i]] }' "$1" 2>/dev/null
}

# env_get FILE NAME: value of "export NAME=value" in FILE.
env_get() {
  sed -n "s/^export $2=//p" "$1" 2>/dev/null | tail -1 | sed "s/^'\(.*\)'\$/\1/"
}

# Milliseconds since the epoch, and "S.s" seconds since such a value (no bc needed).
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { local d=$(( $(now_ms) - $1 )); printf '%d.%d' $((d / 1000)) $((d % 1000 / 100)); }

# port_busy PORT: something listens on (or is bound to) 127.0.0.1:PORT. Uses ss (iproute2)
# when present, else a bash /dev/tcp connect attempt.
port_busy() {
  if command -v ss >/dev/null 2>&1; then
    [ -n "$(ss -Htan "sport = :$1" 2>/dev/null)" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
