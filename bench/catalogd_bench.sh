#!/usr/bin/env bash
# catalogd benchmark (not part of the test suite).
#
#   bench/catalogd_bench.sh [BUILD_DIR]
#
# Against a real kube-apiserver and registry: the cluster whose env is already loaded
# (KUBECONFIG + OLMV1_REGISTRY, e.g. `. /tmp/dev/env`), else a fresh one started here with
# e2e/cluster/up.sh and stopped at the end.
#   1. pushes certified-operators-v4.18 as a catalog image (not timed);
#   2. starts catalogd on a free 127.0.0.1 port with an empty cache dir;
#   3. times ClusterCatalog creation → Serving=True (pull + unpack + load + validate + store
#      + status), then RSS of catalogd while serving and 5 s later (STEADY_SECS), and one
#      GET /api/v1/all, and the stage timings of catalogd's debug log;
#   4. restarts catalogd on the same cache and times start → /api/v1/all answering 200
#      (the persisted store is served before any reconcile).
# catalogd is stopped by its PID only.  Needs curl, python3 and kubectl.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=${1:-$REPO/build}
CATALOGD=$BUILD/catalogd/catalogd
OLMV1=$BUILD/cli/olmv1
CATALOG=${CATALOG:-$REPO/../shared/data/catalogs/certified-operators-v4.18}
KUBECTL=${KUBECTL:-kubectl}

for b in "$CATALOGD" "$OLMV1"; do
  [ -x "$b" ] || { echo "missing $b (make build)" >&2; exit 1; }
done
[ -d "$CATALOG" ] || { echo "missing catalog $CATALOG" >&2; exit 1; }

WORK=$(mktemp -d /tmp/catalogd-bench-XXXXXX)
PID=
OWN_CLUSTER=
NAME=bench-certified-$$
cleanup() {
  set +e
  if [ -n "${KUBECONFIG:-}" ]; then
    "$KUBECTL" delete clustercatalog "$NAME" --ignore-not-found --wait=false >/dev/null 2>&1
    # release our finalizer if catalogd is gone already
    [ -n "$PID" ] || "$KUBECTL" patch clustercatalog "$NAME" --type=merge \
      -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  fi
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
    sleep 1 # lets catalogd release the finalizer
    kill -TERM "$PID"; wait "$PID" || true
  fi
  if [ -n "$OWN_CLUSTER" ]; then bash "$REPO/e2e/cluster/down.sh" --state-dir "$WORK/cluster" >/dev/null 2>&1; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "${KUBECONFIG:-}" ] || [ -z "${OLMV1_REGISTRY:-}" ]; then
  echo "starting a cluster in $WORK/cluster ..." >&2
  bash "$REPO/e2e/cluster/up.sh" --state-dir "$WORK/cluster" >&2
  OWN_CLUSTER=1
  # shellcheck disable=SC1091
  . "$WORK/cluster/env"
fi
export KUBECONFIG

now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$PID/status"; }
hwm_mib() { awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$PID/status"; }

PORT=$(free_port)
URL=http://127.0.0.1:$PORT

start_catalogd() { # $1: log file; sets PID, returns when /healthz answers
  "$CATALOGD" --cache-dir "$WORK/cache" --catalogs-server-addr "127.0.0.1:$PORT" --no-access-log \
    --log-level debug 2>"$1" &
  PID=$!
  until curl -sf -o /dev/null "$URL/healthz"; do
    kill -0 "$PID" 2>/dev/null || { cat "$1" >&2; echo "catalogd exited early" >&2; exit 1; }
    sleep 0.01
  done
}
stop_catalogd() { kill -TERM "$PID"; wait "$PID"; PID=; }

"$KUBECTL" apply --server-side --force-conflicts -f "$REPO/config/crd" >/dev/null
"$KUBECTL" wait --for=condition=Established --timeout=60s crd/clustercatalogs.olm.operatorframework.io >/dev/null

REF=$OLMV1_REGISTRY/bench/certified-operators:v4.18
echo "catalog:   $CATALOG ($(du -sh "$CATALOG" | cut -f1) on disk)"
t0=$(now_ns)
"$OLMV1" catalog push -q "$CATALOG" "$REF" >/dev/null
echo "push:      $(secs "$t0" "$(now_ns)") s (not part of the figures below)"

start_catalogd "$WORK/catalogd-1.log"
echo "catalogd:  pid $PID on $URL, RSS idle $(rss_mib) MiB"

t0=$(now_ns)
cat <<EOF | "$KUBECTL" apply -f - >/dev/null
apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: $NAME
spec:
  source:
    type: Image
    image:
      ref: $REF
EOF
t_applied=$(now_ns)
"$KUBECTL" wait --for=condition=Serving "clustercatalog/$NAME" --timeout=600s >/dev/null
t1=$(now_ns)
echo "create → Serving=True: $(secs "$t0" "$t1") s (kubectl apply returned after $(secs "$t0" "$t_applied") s; created at $(date -u -d "@$(awk -v a="$t0" 'BEGIN { printf "%.3f", a / 1e9 }')" +%H:%M:%S.%3N))"
echo "RSS while serving: $(rss_mib) MiB (peak $(hwm_mib) MiB)"
sleep "${STEADY_SECS:-5}" # the gzip form is written just after Serving; then catalogd idles
echo "steady RSS ${STEADY_SECS:-5} s later: $(rss_mib) MiB"
t0=$(now_ns)
size=$(curl -sf -o /dev/null -w '%{size_download}' "$URL/catalogs/$NAME/api/v1/all")
echo "GET /api/v1/all: $size bytes in $(secs "$t0" "$(now_ns)") s; RSS after $(rss_mib) MiB"
# the debug log times each stage (pull, load, validate, store, status, reconcile, gzip)
grep -E 'unpacking|serving new content|status written| took |finalizer|label|serving it ' "$WORK/catalogd-1.log" | sed 's/^/  log: /'

stop_catalogd
t0=$(now_ns)
"$CATALOGD" --cache-dir "$WORK/cache" --catalogs-server-addr "127.0.0.1:$PORT" --no-access-log \
  2>"$WORK/catalogd-2.log" &
PID=$!
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/catalogs/$NAME/api/v1/all" || true)" = 200 ]; do
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/catalogd-2.log" >&2; exit 1; }
  sleep 0.005
done
echo "restart → /api/v1/all 200: $(secs "$t0" "$(now_ns)") s (stored catalog, before any reconcile)"
"$KUBECTL" wait --for=condition=Serving "clustercatalog/$NAME" --timeout=600s >/dev/null
echo "RSS after restart: $(rss_mib) MiB"
