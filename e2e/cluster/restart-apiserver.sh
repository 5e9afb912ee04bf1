#!/usr/bin/env bash
# restart-apiserver.sh [--state-dir DIR]: stop the kube-apiserver of the cluster in DIR (by the PID
# recorded in DIR/env, SIGTERM, SIGKILL after OLMV1_STOP_TIMEOUT s) and start it again with exactly
# the same command line (read from /proc/PID/cmdline before stopping it: same port, certs, etcd)
# and egress proxy variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY from /proc/PID/environ),
# detached like up.sh starts it, output appended to DIR/logs/apiserver.log.  The new PID is appended
# to DIR/env (env_get reads the last value, so down.sh stops the new process).  Waits until /readyz
# answers again (OLMV1_READY_TIMEOUT s, default 180).  Used by the e2e fault tests; never stops
# anything by name.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
parse_state_dir "$@"
lock_state_dir

ENV_FILE=$STATE_DIR/env
PKI=$STATE_DIR/pki
STOP_TIMEOUT=${OLMV1_STOP_TIMEOUT:-30}
READY_TIMEOUT=${OLMV1_READY_TIMEOUT:-180}
[ -f "$ENV_FILE" ] || die "no $ENV_FILE: is a cluster running there?"
pid=$(env_get "$ENV_FILE" OLMV1_APISERVER_PID)
port=$(env_get "$ENV_FILE" OLMV1_APISERVER_PORT)
pid_ours "$pid" || die "kube-apiserver PID '$pid' of $STATE_DIR is not running"

cmd=()
while IFS= read -r -d '' arg; do cmd+=("$arg"); done <"/proc/$pid/cmdline"
[ ${#cmd[@]} -gt 0 ] || die "cannot read the command line of PID $pid"
# ...and the egress proxy settings up.sh starts it with.
proxy_env=()
while IFS= read -r -d '' kv; do
  case $kv in HTTP_PROXY=*|HTTPS_PROXY=*|NO_PROXY=*) proxy_env+=("$kv") ;; esac
done <"/proc/$pid/environ"

# Stop.
kill -TERM "$pid"
deadline=$(( $(date +%s) + STOP_TIMEOUT ))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$(date +%s)" -ge $deadline ]; then
    say "kube-apiserver $pid did not exit ${STOP_TIMEOUT}s after TERM, sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    deadline=$(( $(date +%s) + 30 ))
  fi
  sleep 0.1
done
say "kube-apiserver $pid stopped"

# Start again (same argv), once nothing listens on the port (connections in TIME_WAIT do not
# matter: the apiserver binds with SO_REUSEADDR).
listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
for _ in $(seq 300); do listening "$port" || break; sleep 0.1; done
echo "---- restarted by restart-apiserver.sh at $(date -u +%FT%TZ)" >>"$STATE_DIR/logs/apiserver.log"
setsid env "${proxy_env[@]}" "${cmd[@]}" </dev/null >>"$STATE_DIR/logs/apiserver.log" 2>&1 7>&- 8>&- &
new=$!
echo "export OLMV1_APISERVER_PID=$new" >>"$ENV_FILE"

t0=$(date +%s)
until curl -fsS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
  kill -0 "$new" 2>/dev/null || die "kube-apiserver exited after the restart (see $STATE_DIR/logs/apiserver.log)"
  [ $(( $(date +%s) - t0 )) -lt "$READY_TIMEOUT" ] || die "kube-apiserver not ready ${READY_TIMEOUT}s after the restart"
  sleep 0.3
done
say "kube-apiserver restarted as PID $new, ready after $(( $(date +%s) - t0 ))s"
