#!/usr/bin/env bash
# adoption_bench.sh [N]: switching a cluster from upstream OLM v1 to ours (issue 28 item 4).
#
# Upstream's operator-controller (../shared/upstream/bin, root: its ServiceAccount token is
# bind-mounted where it looks) installs N one-bundle extensions (the bench package of
# scripts/demo-package.py --bench, each in its own namespace, no spec.serviceAccount); it is
# stopped, ours is started (its own identity with config/rbac-upstream-rights, as an
# administrator switching would run it), and this prints:
#   - how long upstream took to install them all;
#   - how long ours took from its start until every extension had been adopted (our record
#     written) and reported Installed with the same bundle;
#   - the writes the API server counted (apiserver_request_total, verbs other than
#     GET/LIST/WATCH, no subresource) to the kinds the bundle installs, from just before our
#     start until 10 s after the last adoption: 0 means nothing installed was touched;
#   - our writes to Secrets (the N records) and to ClusterExtensions (status), for scale.
# State under $WORK (default /tmp/olmv1-adoption-bench); everything stopped by PID at the end.
set -euo pipefail
N=${1:-100}
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/olmv1-adoption-bench}
UPSTREAM_BIN=${OLMV1_UPSTREAM_BIN:-$REPO/../shared/upstream/bin}
[ -f "$UPSTREAM_BIN/operator-controller.xz" ] || { echo "adoption_bench: no $UPSTREAM_BIN/operator-controller.xz: nothing to compare with"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "adoption_bench: root only (upstream's token bind mount)"; exit 0; }
UP=$HOME/.cache/olmv1/upstream-bin/operator-controller
if [ ! -x "$UP" ]; then mkdir -p "$(dirname "$UP")"; xz -dc "$UPSTREAM_BIN/operator-controller.xz" >"$UP.tmp"; chmod +x "$UP.tmp"; mv "$UP.tmp" "$UP"; fi

rm -rf "$WORK"; mkdir -p "$WORK"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  bash "$REPO/e2e/cluster/down.sh" --state-dir "$WORK/cluster" >/dev/null 2>&1 || true
}
trap cleanup EXIT
bash "$REPO/e2e/cluster/up.sh" --state-dir "$WORK/cluster" >"$WORK/up.log" 2>&1
# shellcheck disable=SC1091
. "$WORK/cluster/env"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
api() { curl -sS --cacert "$OLMV1_CA_CERT" --cert "$OLMV1_ADMIN_CERT" --key "$OLMV1_ADMIN_KEY" "$OLMV1_APISERVER$1"; }
kubectl apply -f "$REPO/config/crd" -f "$REPO/config/manager/00-namespace.yaml" -f "$REPO/config/rbac" >/dev/null
kubectl apply -f "$REPO/config/rbac-upstream-rights" >/dev/null
python3 "$REPO/scripts/demo-package.py" --olmv1 "$REPO/build/cli/olmv1" --registry "$OLMV1_REGISTRY" --out "$WORK/pkg" --bench >/dev/null

CDP=$(free_port)
"$REPO/build/catalogd/catalogd" --cache-dir "$WORK/cd" --catalogs-server-addr "127.0.0.1:$CDP" --health-addr 127.0.0.1:0 \
  --no-access-log >"$WORK/catalogd.log" 2>&1 &
pids+=($!)
kubectl apply -f - >/dev/null <<EOF
apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata: {name: bench}
spec: {source: {type: Image, image: {ref: "$OLMV1_REGISTRY/olmv1/bench-operators:latest"}}}
EOF
kubectl wait --for=condition=Serving clustercatalog/bench --timeout=120s >/dev/null

# Upstream, as a host process with cluster-admin.
mkdir -p "$WORK/secrets/kubernetes.io/serviceaccount" /run/secrets
kubectl create token operator-controller-controller-manager -n olmv1-system --duration=24h \
  >"$WORK/secrets/kubernetes.io/serviceaccount/token"
echo olmv1-system >"$WORK/secrets/kubernetes.io/serviceaccount/namespace"
printf '[[registry]]\nlocation = "%s"\ninsecure = true\n' "$OLMV1_REGISTRY" >"$WORK/registries.conf"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
  -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
CONTAINERS_REGISTRIES_CONF=$WORK/registries.conf unshare -m /bin/bash -c 'mount --bind "$0" /run/secrets && exec "$@"' \
  "$WORK/secrets" "$UP" --kubeconfig "$KUBECONFIG" --cache-path "$WORK/ocu" --system-namespace olmv1-system \
  --health-probe-bind-address "127.0.0.1:$(free_port)" --metrics-bind-address "127.0.0.1:$(free_port)" \
  --tls-cert "$WORK/tls.crt" --tls-key "$WORK/tls.key" --pprof-bind-address 0 >"$WORK/upstream.log" 2>&1 &
up_pid=$!
pids+=($up_pid)

{
  for i in $(seq 1 "$N"); do
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: adopt-%d}\n---\n' "$i"
    printf 'apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata: {name: adopt-%d, labels: {bench: adoption}}\n' "$i"
    printf 'spec: {namespace: adopt-%d, source: {sourceType: Catalog, catalog: {packageName: olmv1-bench-operator}}}\n---\n' "$i"
  done
} >"$WORK/ces.yaml"
installed() {
  api "/apis/olm.operatorframework.io/v1/clusterextensions?labelSelector=bench%3Dadoption" |
    jq '[.items[] | select(any(.status.conditions[]?; .type=="Installed" and .status=="True"))] | length'
}
t0=$(date +%s.%N)
kubectl apply -f "$WORK/ces.yaml" >/dev/null
# Upstream is slow at scale (the shared side-by-side bench saw 463 of 1,000 after 300 s): after
# UPSTREAM_CAP seconds (default 900) the extensions it has not installed are deleted, and the
# adoption is measured over those it did.
cap=${UPSTREAM_CAP:-900}
while [ "$(installed)" -lt "$N" ] && awk -v a="$t0" -v b="$(date +%s.%N)" -v c="$cap" 'BEGIN{exit !(b-a<c)}'; do sleep 2; done
t_up=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
n_up=$(installed)
kill "$up_pid"; wait "$up_pid" 2>/dev/null || true
if [ "$n_up" -lt "$N" ]; then
  api "/apis/olm.operatorframework.io/v1/clusterextensions?labelSelector=bench%3Dadoption" |
    jq -r '.items[] | select(all(.status.conditions[]?; .type!="Installed" or .status!="True")) | .metadata.name' |
    while read -r ce; do kubectl patch clusterextension "$ce" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || true
      kubectl delete clusterextension "$ce" --wait=false >/dev/null; done
  while [ "$(api "/apis/olm.operatorframework.io/v1/clusterextensions?labelSelector=bench%3Dadoption" | jq '.items | length')" -gt "$n_up" ]; do sleep 1; done
fi
echo "upstream installed $n_up of $N in ${t_up} s" >&2
N=$n_up

writes() { # resource -> count of write requests (no subresource)
  api /metrics | awk '/^apiserver_request_total\{/ && /subresource=""/ && !/verb="(GET|LIST|WATCH)"/ {
      match($0, /resource="[^"]*"/); r = substr($0, RSTART + 10, RLENGTH - 11); n[r] += $NF }
    END { for (r in n) printf "%s %d\n", r, n[r] }' | sort
}
writes >"$WORK/writes.before"
records() { api "/api/v1/namespaces/olmv1-system/secrets?labelSelector=olm.operatorframework.io%2Finstall-record%3Dtrue" | jq '.items | length'; }

t1=$(date +%s.%N)
"$REPO/build/controller/operator-controller" --system-namespace olmv1-system --cache-path "$WORK/oc" \
  --health-addr "127.0.0.1:$(free_port)" --insecure-registries "$OLMV1_REGISTRY" >"$WORK/ours.log" 2>&1 &
pids+=($!)
while [ "$(records)" -lt "$N" ] || [ "$(installed)" -lt "$N" ]; do sleep 0.2; done
t_ours=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')
sleep 10
writes >"$WORK/writes.after"
delta() { join -a2 -e 0 -o 0,1.2,2.2 "$WORK/writes.before" "$WORK/writes.after" | awk -v r="$1" '$1==r {print $3-$2}'; }
obj=0
for r in deployments configmaps serviceaccounts clusterroles clusterrolebindings roles rolebindings services; do
  d=$(delta "$r"); obj=$((obj + ${d:-0}))
done
echo "adoption of $N extensions upstream installed (load $(cut -d' ' -f1-3 /proc/loadavg)):"
echo "  upstream: $N Installed in ${t_up} s (cap ${cap} s)"
echo "  ours: all $N adopted (record written) and Installed ${t_ours} s after its start"
echo "  writes to installed objects (deployments, configmaps, serviceaccounts, RBAC, services) from our start to 10 s after: $obj"
echo "  our other writes: secrets $(delta secrets), clusterextensions $(delta clusterextensions)"
echo "  adoption log lines: $(grep -c 'adopting bundle' "$WORK/ours.log")"
