#!/usr/bin/env bash
# restart.sh --component etcd|apiserver [--kill] [--down SECONDS] [--state-dir DIR]: stop one
# control-plane process of the cluster in DIR by the PID recorded in DIR/env (SIGTERM, SIGKILL
# after OLMV1_STOP_TIMEOUT s; --kill: SIGKILL at once, a crash), leave it down for SECONDS
# (default 0), and start it again with exactly the same command line (read from /proc/PID/cmdline
# before stopping it: same ports, certs, data dir) and egress proxy variables, detached like up.sh starts it, output appended
# to DIR/logs/<component>.log.  The new PID is appended to DIR/env (env_get reads the last value,
# so down.sh stops the new process).  Waits until the kube-apiserver's /readyz answers again
# (OLMV1_READY_TIMEOUT s, default 180): after etcd comes back the apiserver must reconnect.
# Used by the e2e fault and chaos tests; never stops anything by name.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COMPONENT="" SIGNAL=TERM DOWN=0 args=()
while [ $# -gt 0 ]; do
  case $1 in
    --component) COMPONENT=${2:-}; shift 2 ;;
    --kill) SIGNAL=KILL; shift ;;
    --down) DOWN=${2:-}; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
case $COMPONENT in
  etcd) VAR=OLMV1_ETCD_PID ;;
  apiserver) VAR=OLMV1_APISERVER_PID ;;
  *) die "--component etcd|apiserver is required" ;;
esac
[[ $DOWN =~ ^[0-9]+$ ]] || die "--down takes whole seconds"
parse_state_dir "${args[@]+"${args[@]}"}"
lock_state_dir

ENV_FILE=$STATE_DIR/env
PKI=$STATE_DIR/pki
STOP_TIMEOUT=${OLMV1_STOP_TIMEOUT:-30}
READY_TIMEOUT=${OLMV1_READY_TIMEOUT:-180}
[ -f "$ENV_FILE" ] || die "no $ENV_FILE: is a cluster running there?"
pid=$(env_get "$ENV_FILE" "$VAR")
pid_ours "$pid" || die "$COMPONENT PID '$pid' of $STATE_DIR is not running"
case $COMPONENT in
  etcd) port=$(env_get "$ENV_FILE" OLMV1_ETCD_PORT) ;;
  apiserver) port=$(env_get "$ENV_FILE" OLMV1_APISERVER_PORT) ;;
esac
api_port=$(env_get "$ENV_FILE" OLMV1_APISERVER_PORT)

cmd=()
while IFS= read -r -d '' arg; do cmd+=("$arg"); done <"/proc/$pid/cmdline"
[ ${#cmd[@]} -gt 0 ] || die "cannot read the command line of PID $pid"
# ...and the environment up.sh starts it with: the egress proxy settings of the apiserver (its
# service proxy reaches catalogd through them) and the Go garbage collector's target.
proxy_env=()
while IFS= read -r -d '' kv; do
  case $kv in HTTP_PROXY=*|HTTPS_PROXY=*|NO_PROXY=*|GOGC=*) proxy_env+=("$kv") ;; esac
done <"/proc/$pid/environ"

# Stop.
kill -"$SIGNAL" "$pid"
deadline=$(( $(date +%s) + STOP_TIMEOUT ))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$(date +%s)" -ge $deadline ]; then
    say "$COMPONENT $pid did not exit ${STOP_TIMEOUT}s after $SIGNAL, sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    deadline=$(( $(date +%s) + 30 ))
  fi
  sleep 0.1
done
say "$COMPONENT $pid stopped ($SIGNAL)"
sleep "$DOWN"

# Start again (same argv), once nothing listens on the port (connections in TIME_WAIT do not
# matter: etcd and the apiserver bind with SO_REUSEADDR).
listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
for _ in $(seq 300); do listening "$port" || break; sleep 0.1; done
echo "---- restarted by restart.sh at $(date -u +%FT%TZ)" >>"$STATE_DIR/logs/$COMPONENT.log"
setsid env "${proxy_env[@]+"${proxy_env[@]}"}" "${cmd[@]}" </dev/null >>"$STATE_DIR/logs/$COMPONENT.log" 2>&1 7>&- 8>&- &
new=$!
echo "export $VAR=$new" >>"$ENV_FILE"

t0=$(date +%s)
until curl -fsS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "https://127.0.0.1:$api_port/readyz" >/dev/null 2>&1; do
  kill -0 "$new" 2>/dev/null || die "$COMPONENT exited after the restart (see $STATE_DIR/logs/$COMPONENT.log)"
  [ $(( $(date +%s) - t0 )) -lt "$READY_TIMEOUT" ] || die "kube-apiserver not ready ${READY_TIMEOUT}s after the restart"
  sleep 0.3
done
say "$COMPONENT restarted as PID $new; kube-apiserver ready after $(( $(date +%s) - t0 ))s"
