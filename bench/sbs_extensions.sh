#!/usr/bin/env bash
# The C side of the shared side-by-side bench's install batches (../shared/upstream/bench,
# phase.sh part B), alone, with figures of where the time goes.  Not part of the test suite.
#
# Same flow as phase.sh for IMPL=C: catalogd over HTTPS (the bench's own CA), the packages of
# gen_packages.py (one bundle per package: a Deployment with the pod's ServiceAccount "default"
# and a ConfigMap, install mode AllNamespaces) in one ClusterCatalog "sbs-ops", ClusterExtensions
# with no catalog selector, each with its own namespace and ServiceAccount "installer" bound to
# the ClusterRole "bench-installer"; batches of SIZES run one after the other in the same
# operator-controller, each uninstalled (delete --wait=true) and its namespaces deleted without
# waiting before the next one (phase.sh's --wait=true delete is replaced by a count: see below); Installed polled as phase.sh does (a LIST of the batch's
# ClusterExtensions + jq every 0.2 s).  It reads lib.sh and gen_packages.py from the shared
# bench, changes nothing there.
#
# Printed per batch: apply -> all Installed (s) with the load average; CPU seconds of
# operator-controller, kube-apiserver, etcd, catalogd and of the poller; the apiserver's
# requests by verb and resource during the batch; the bytes of one poll's LIST and of one
# ClusterExtension's status.
#
# Usage: bench/sbs_extensions.sh            (SIZES="1 100 1000" by default)
# Environment: SIZES, WORK (default /tmp/sbs-c; with KEEP_CLUSTER=1 the cluster, registry and
# pushed packages stay, and the next run on the same WORK reuses them), OPCTL_ARGS (extra
# operator-controller flags, split on spaces, e.g. "--log-level debug"), OPCTL_ENV (extra
# environment for operator-controller only, NAME=VALUE split on spaces, e.g.
# "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2" to try another allocator), POLL=0 (no LIST
# polling: wait on operator-controller's installed gauge instead, to see what polling costs),
# MAX_INSTALL_WAIT (default 300 s), IMPL=Go (upstream's catalogd and operator-controller from
# ../shared/upstream/bin, run as lib.sh runs them, with its cluster-admin installer binding; the
# default is C), RESTART=1 (the last batch stays installed and operator-controller is restarted:
# the time until it is steady again, and the apiserver's requests by verb meanwhile, among
# them writes to installed objects and status writes).  Steady: for C, every extension
# reconciled by the new process (its reconcile counter) and its queue empty; for Go, which
# exports no counter without its authenticated metrics endpoint, every extension's "reconcile
# ending" in its log and then none for 3 s, timed at the last one's log timestamp.
# INSTALLER=floor: bench/floor_installer.py instead of operator-controller (not OLM: the least any
# installer asks of the cluster for this batch, a floor for the figures; see that file; not with
# RESTART=1, which counts operator-controller's reconciles).  INSTALLER=floor-contract: the same
# with the requests upstream's contract asks of any installer (finalizer, conflict checks, Helm
# release Secret, the whole status: floor_installer.py --contract).
# INSTALLER_BINDING=namespace: each installer is bound by a RoleBinding in its own namespace
# (to the same ClusterRole) instead of one ClusterRoleBinding: what namespace-scoped installers
# cost (with BoxcutterRuntime, their revisions' objects are watched per namespace).
# PROFILE_APISERVER=SECS: a CPU profile of kube-apiserver over the first SECS s of each batch, in
# the run's log folder (apiserver-N.pprof; `go tool pprof -top FILE`).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SHARED_BENCH=${SHARED_BENCH:-$REPO/../shared/upstream/bench}
[ -f "$SHARED_BENCH/lib.sh" ] || { echo "bench: no $SHARED_BENCH/lib.sh (../shared/upstream)" >&2; exit 1; }
export REPO WORK=${WORK:-/tmp/sbs-c}
SIZES=${SIZES:-1 100 1000}
IMPL=${IMPL:-C}
case $IMPL in C | Go) ;; *) echo "bench: IMPL is C or Go" >&2; exit 1 ;; esac
MAX_INSTALL_WAIT=${MAX_INSTALL_WAIT:-300}
export RES=$WORK/results.jsonl
read -r -a OPCTL_EXTRA <<<"${OPCTL_ARGS:-}"
read -r -a OPCTL_ENV_EXTRA <<<"${OPCTL_ENV:-}"
mkdir -p "$WORK"
cd "$REPO"
bash e2e/cluster/up.sh --state-dir "$WORK/cluster" >&2 || exit 1
source "$WORK/cluster/env"
source "$SHARED_BENCH/lib.sh"
OC_PID="" CD_PID=""
cleanup() {
  kubectl delete clusterextensions -l sbs-bench --wait=true --timeout=300s >/dev/null 2>&1
  # RESTART=1 keeps the last batch installed, and the next run on a kept cluster would wait for
  # its namespaces to go: they go now, with the batch's binding.
  kubectl delete clusterrolebinding -l sbs-bench >/dev/null 2>&1
  kubectl delete ns -l sbs-bench --wait=false >/dev/null 2>&1
  kubectl delete clustercatalogs --all --wait=true --timeout=120s >/dev/null 2>&1
  stop_pid "$OC_PID"; stop_pid "$CD_PID"
  [ "${KEEP_CLUSTER:-0}" = 1 ] || { bash "$REPO/e2e/cluster/down.sh" --state-dir "$WORK/cluster" >/dev/null 2>&1; rm -f "$WORK/ops.ref"; }
}
trap cleanup EXIT
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0; }
self_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($16 + $17) / hz}' "/proc/$$/stat"; } # waited-for children: the poller's curl and jq
cpus() { echo "operator-controller $(cpu_s "$OC_PID") s, kube-apiserver $(cpu_s "$OLMV1_APISERVER_PID") s, etcd $(cpu_s "$OLMV1_ETCD_PID") s, catalogd $(cpu_s "$CD_PID") s, poller $(self_cpu) s"; }
source "$REPO/bench/apiserver_figures.sh"

# ---- one-time setup (kept with KEEP_CLUSTER=1)
setup_tls
if [ "$IMPL" = Go ]; then # as run.sh: the binaries unpacked once, the token mount, registries.conf
  export UPSTREAM=${UPSTREAM:-$HOME/.cache/olmv1-upstream}
  mkdir -p "$UPSTREAM/bin"
  for b in catalogd operator-controller; do
    [ -x "$UPSTREAM/bin/$b" ] || { xz -dc "$SHARED_BENCH/../bin/$b.xz" >"$UPSTREAM/bin/$b" && chmod +x "$UPSTREAM/bin/$b"; }
  done
  setup_registries_conf
  setup_identities
fi
if [ ! -s "$WORK/ops.ref" ]; then
  kubectl apply -f config/manager/00-namespace.yaml -f config/rbac >/dev/null
  mkdir -p "$WORK/id"
  for d in catalogd operator-controller; do
    bash e2e/cluster/identity.sh --service-account "olmv1-system/$d-controller-manager" --out "$WORK/id/$d.kubeconfig"
  done
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: bench-installer
rules:
- apiGroups: [""]
  resources: [configmaps, serviceaccounts, services]
  verbs: ["*"]
- apiGroups: [apps]
  resources: [deployments]
  verbs: ["*"]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles, clusterrolebindings, roles, rolebindings]
  verbs: ["*"]
YAML
  max=0; for n in $SIZES; do [ "$n" -gt $max ] && max=$n; done
  t0=$(now)
  python3 "$SHARED_BENCH/gen_packages.py" --repo "$REPO" --registry "$OLMV1_REGISTRY" --out "$WORK/pkgs" --count "$max" >"$WORK/ops.ref.tmp" &&
    mv "$WORK/ops.ref.tmp" "$WORK/ops.ref" || exit 1
  log "setup: $max packages pushed in $(since "$t0") s"
fi
# Namespaces of an earlier run still being deleted would load the apiserver (the namespace
# controller's LIST + DELETE of every kind in each): run.sh starts on a fresh cluster and
# waits for them at the end of a phase, so wait here.
t0=$(now)
while [ "$(kubectl get ns -o name | grep -c '^namespace/sbs-')" -gt 0 ]; do
  awk -v a="$t0" -v b="$(now)" 'BEGIN{exit !(b-a>900)}' && { log "namespaces sbs-* still there after 900 s"; break; }
  sleep 2
done
log "no sbs-* namespace left (waited $(since "$t0") s)"
# Their namespaces gone, the cluster may still be collecting what was in them (the garbage
# collector, the apiserver's and etcd's share): a batch started then pays for it and paired
# runs differ by seconds.  Wait (at most 180 s) until kube-apiserver uses under 10% of a CPU
# over 2 s.
t0=$(now)
while :; do
  a0=$(cpu_s "$OLMV1_APISERVER_PID"); sleep 2; a1=$(cpu_s "$OLMV1_APISERVER_PID")
  awk -v a="$a0" -v b="$a1" 'BEGIN{exit !(b - a < 0.2)}' && break
  awk -v a="$t0" -v b="$(now)" 'BEGIN{exit !(b-a>180)}' && { log "the apiserver still busy after 180 s"; break; }
done
log "the apiserver quiet (waited $(since "$t0") s)"
P=$WORK/run-$(date +%H%M%S); mkdir -p "$P"
apply_crds "$IMPL"
# A CRD just established may still answer 429 ("storage is (re)initializing") for a second, and a
# daemon's first LIST of it then waits out the Retry-After: the shared bench applies its CRDs
# long before its batches, so wait here until each of the group's kinds lists.
t0=$(now)
for res in $(kubectl api-resources --api-group=olm.operatorframework.io -o name 2>/dev/null); do
  until kubectl get "$res" --request-timeout=5s >/dev/null 2>&1; do
    awk -v a="$t0" -v b="$(now)" 'BEGIN{exit !(b-a>30)}' && { log "$res does not list after 30 s"; break; }
    sleep 0.2
  done
done
start_catalogd "$IMPL" "$P/catalogd-cache" "$P/catalogd.log"
wait_http_200 "$CD_HEALTH" 60 "$CD_PID" || { log "catalogd did not become ready"; exit 1; }
apply_catalog sbs-ops "$(cat "$WORK/ops.ref")"
for _ in $(seq 1200); do [ "$(cc_cond sbs-ops Serving)" = True ] && break; sleep 0.1; done
OC_HPORT=$(free_port)
start_oc() { # (re)starts operator-controller, waits until ready
  if [[ ${INSTALLER:-} == floor* ]]; then # floor or floor-contract, not OLM: the yardstick of bench/floor_installer.py
    "$REPO/build/cli/olmv1" bundle render "$WORK/pkgs/sbs-op-000/bundle-1.0.0" --install-namespace ns-x -o json \
      >"$P/floor-template.json" || return 1
    python3 -u "$REPO/bench/floor_installer.py" "$WORK/cluster/env" "$WORK/pkgs/catalog/catalog.json" \
      "$P/floor-template.json" $([ "$INSTALLER" = floor-contract ] && echo --contract) >>"$1" 2>&1 </dev/null &
    OC_PID=$!
    for _ in $(seq 400); do grep -q "floor: watching" "$1" && return 0; sleep 0.1; done
    return 1
  elif [ "$IMPL" = C ]; then
    env "${OPCTL_ENV_EXTRA[@]}" "$REPO/build/controller/operator-controller" --kubeconfig "$WORK/id/operator-controller.kubeconfig" \
      --system-namespace olmv1-system --cache-path "$P/opcon-cache" --health-addr "127.0.0.1:$OC_HPORT" \
      --catalogd-ca-file "$WORK/tls/ca.crt" --insecure-registries "$OLMV1_REGISTRY" "${OPCTL_EXTRA[@]}" \
      >>"$1" 2>&1 </dev/null &
    OC_PID=$!
    wait_http_200 "http://127.0.0.1:$OC_HPORT/readyz" 60 "$OC_PID"
  else
    start_opcon Go "$P/opcon-cache" "$1"
    wait_http_200 "$OC_HEALTH" 60 "$OC_PID"
  fi
}
start_oc "$P/operator-controller.log" || { log "operator-controller did not become ready"; exit 1; }
[ "$IMPL" = C ] && [[ ${INSTALLER:-} != floor* ]] || POLL=1 # the installed gauge is ours
installed_gauge() { curl -fsS "http://127.0.0.1:$OC_HPORT/metrics" | awk '$1 == "operator_controller_installed_extensions" {print $2}'; }
echo "machine: $(nproc) CPUs, load $(loadavg); C $(git -C "$REPO" rev-parse --short HEAD); logs in $P"

batch() { # as phase.sh's batch, with the figures above
  local n=$1 tag=c$1-$RANDOM
  local role=bench-installer; [ "$IMPL" = C ] || role=cluster-admin # as phase.sh
  python3 - "$tag" "$n" "$role" "${INSTALLER_BINDING:-cluster}" >"$P/objs-$n.json" <<'PY'
import json, sys
tag, n, binding = sys.argv[1], int(sys.argv[2]), sys.argv[4]
role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": sys.argv[3]}
items = []
for i in range(n):
    ns = f"sbs-{tag}-{i}"
    items += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"sbs-bench": tag}}},
              {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "installer", "namespace": ns}}]
    if binding == "namespace":  # the ClusterRole's rules granted in its own namespace only
        items.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                      "metadata": {"name": "installer", "namespace": ns}, "roleRef": role_ref,
                      "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": ns}]})
if binding != "namespace":
    items.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                  "metadata": {"name": f"sbs-installer-{tag}", "labels": {"sbs-bench": tag}}, "roleRef": role_ref,
                  "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": f"sbs-{tag}-{i}"}
                               for i in range(n)]})
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
  python3 - "$tag" "$n" >"$P/ces-$n.json" <<'PY'
import json, sys
tag, n = sys.argv[1], int(sys.argv[2])
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
     "metadata": {"name": f"sbs-{tag}-{i}", "labels": {"sbs-bench": tag}},
     "spec": {"namespace": f"sbs-{tag}-{i}", "serviceAccount": {"name": "installer"},
              "source": {"sourceType": "Catalog", "catalog": {"packageName": f"sbs-op-{i:03d}"}}}}
    for i in range(n)]}))
PY
  kubectl apply -f "$P/objs-$n.json" >/dev/null
  local before after mbefore t0 done_n=0 polls=0 c0
  before=$(request_counts) mbefore=$(machine_cpu)
  echo "N=$n: before, CPU so far: $(cpus); load $(loadavg)"
  [ -n "${PROFILE_APISERVER:-}" ] && { kubectl get --raw "/debug/pprof/profile?seconds=$PROFILE_APISERVER" >"$P/apiserver-$n.pprof" 2>/dev/null & }
  t0=$(now)
  kubectl apply -f "$P/ces-$n.json" >/dev/null
  echo "  kubectl apply of the $n ClusterExtensions returned after $(since "$t0") s"
  while :; do
    if [ "${POLL:-1}" = 1 ]; then
      done_n=$(ce_installed_count "sbs-bench%3D$tag"); polls=$((polls + 1))
    else
      done_n=$(installed_gauge); done_n=${done_n%.*}
    fi
    [ "${done_n:-0}" -ge "$n" ] && break
    awk -v a="$t0" -v b="$(now)" -v m="$MAX_INSTALL_WAIT" 'BEGIN{exit !(b-a>m)}' && { echo "  timeout: $done_n/$n"; break; }
    sleep 0.2
  done
  echo "N=$n: apply -> $done_n/$n Installed in $(since "$t0") s ($polls LIST polls), load $(loadavg)"
  [ "$IMPL" = C ] && grep -h "installed bundle" "$P/operator-controller.log" | tail -n "$n" | python3 -c '
import datetime, sys
t0 = float(sys.argv[1])
ts = sorted(datetime.datetime.strptime(l.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp() - t0 for l in sys.stdin)
if ts:
    q = lambda f: ts[min(len(ts) - 1, int(f * len(ts)))]
    print("  installs logged by operator-controller, s after the apply began: first %.2f, 50%% %.2f, 90%% %.2f, last %.2f" % (ts[0], q(0.5), q(0.9), ts[-1]))' "$t0"
  after=$(request_counts)
  echo "  CPU by then: $(cpus); operator-controller peak RSS $(awk '/^VmHWM/ {print $2}' "/proc/$OC_PID/status" 2>/dev/null) KiB"
  machine_cpu_diff "$mbefore" "$(machine_cpu)"
  request_diff "$before" "$after" "during the batch"
  c0=$(self_cpu)
  local bytes t1; t1=$(now)
  bytes=$(api "/apis/olm.operatorframework.io/v1/clusterextensions?labelSelector=sbs-bench%3D$tag" | wc -c)
  echo "  one poll's LIST: $bytes bytes in $(since "$t1") s; one ClusterExtension: $(api "/apis/olm.operatorframework.io/v1/clusterextensions/sbs-$tag-0" | wc -c) bytes, its status $(api "/apis/olm.operatorframework.io/v1/clusterextensions/sbs-$tag-0" | jq -c .status | wc -c) bytes"
  [ "${RESTART:-0}" = 1 ] && [ "$n" = "$LAST" ] && { restart "$n"; return; }
  # phase.sh deletes with --wait=true, which waits for the objects one by one (minutes for
  # 1,000 after they are gone): here, delete without waiting and count what is left.
  t0=$(now)
  kubectl delete clusterextensions -l "sbs-bench=$tag" --wait=false >/dev/null
  while [ "$(kubectl get clusterextensions -l "sbs-bench=$tag" -o name | wc -l)" -gt 0 ]; do
    awk -v a="$t0" -v b="$(now)" 'BEGIN{exit !(b-a>300)}' && { echo "  uninstall not done after 300 s"; break; }
    sleep 0.5
  done
  echo "N=$n: uninstall (delete, then all gone) $(since "$t0") s, load $(loadavg)"
  kubectl delete clusterrolebinding -l "sbs-bench=$tag" >/dev/null
  kubectl delete ns -l "sbs-bench=$tag" --wait=false >/dev/null
}
# RESTART=1: operator-controller restarted with the last batch installed.
restart() {
  local n=$1 before after t0 t0_clock logf=$P/operator-controller-restart.log
  # Settled first: after "all Installed" the Deployments' rollouts still change Available,
  # which reconciles write; a restart in the middle of that would count those as its own.
  # Settled: no reconcile for 10 s (C: its counter; Go: "reconcile ending" in its log).
  local s_last="" s_since s0 s_now; s0=$(now); s_since=$(now)
  while :; do
    if [ "$IMPL" = C ]; then
      s_now=$(curl -fsS "http://127.0.0.1:$OC_HPORT/metrics" | awk '$1 == "operator_controller_reconcile_total" {print $2}')
    else
      s_now=$(grep -c '"reconcile ending"' "$P/operator-controller.log" || true)
    fi
    [ "$s_now" != "$s_last" ] && { s_last=$s_now; s_since=$(now); }
    awk -v a="$s_since" -v b="$(now)" 'BEGIN{exit !(b-a>=10)}' && break
    awk -v a="$s0" -v b="$(now)" -v m="$MAX_INSTALL_WAIT" 'BEGIN{exit !(b-a>m)}' && break
    sleep 0.5
  done
  echo "N=$n: settled (no reconcile for 10 s) $(since "$s0") s after all were Installed, load $(loadavg)"
  kubectl get --raw /metrics >/dev/null
  before=$(request_counts) mbefore=$(machine_cpu)
  local api0 etcd0; api0=$(cpu_s "$OLMV1_APISERVER_PID"); etcd0=$(cpu_s "$OLMV1_ETCD_PID")
  t0=$(now); t0_clock=$(date +%H:%M:%S.%N)
  stop_pid "$OC_PID"
  start_oc "$logf" || { echo "  restart: not ready"; return; }
  local steady="" rec depth last=0 seen=0 quiet_since c t_last
  quiet_since=$(now)
  while :; do
    if [ "$IMPL" = C ]; then
      rec=$(curl -fsS "http://127.0.0.1:$OC_HPORT/metrics" | awk '$1 == "operator_controller_reconcile_total" {print $2}')
      depth=$(curl -fsS "http://127.0.0.1:$OC_HPORT/metrics" | awk '$1 == "operator_controller_workqueue_depth" {print $2}')
      [ "${rec%.*}" -ge "$n" ] 2>/dev/null && [ "${depth:-1}" = 0 ] && { steady=$(since "$t0"); break; }
    else
      c=$(grep -c 'clusterextension_controller.go.*"reconcile ending"' "$logf" || true)
      [ "$c" != "$last" ] && { last=$c; quiet_since=$(now); }
      seen=$(grep 'clusterextension_controller.go.*"reconcile ending"' "$logf" | grep -o 'ClusterExtension="[^"]*"' | sort -u | wc -l)
      if [ "$seen" -ge "$n" ] && awk -v a="$quiet_since" -v b="$(now)" 'BEGIN{exit !(b-a>3)}'; then
        # the last reconcile's own timestamp (klog: Immdd hh:mm:ss.uuuuuu), from the stop
        t_last=$(grep 'clusterextension_controller.go.*"reconcile ending"' "$logf" | tail -1 | awk '{print $2}')
        steady=$(python3 -c 'import sys
def s(t): h, m, x = t.split(":"); return int(h) * 3600 + int(m) * 60 + float(x)
print("%.2f" % (s(sys.argv[2]) - s(sys.argv[1][:15])))' "$t0_clock" "$t_last")
        break
      fi
    fi
    awk -v a="$t0" -v b="$(now)" -v m="$MAX_INSTALL_WAIT" 'BEGIN{exit !(b-a>m)}' && { echo "  restart: not steady after ${MAX_INSTALL_WAIT}s"; break; }
    sleep 0.1
  done
  after=$(request_counts)
  echo "N=$n restart ($IMPL): steady ${steady:-?} s after the stop began, load $(loadavg); operator-controller RSS $(rss_kib "$OC_PID") KiB"
  echo "  CPU during the restart: operator-controller $(cpu_s "$OC_PID") s, kube-apiserver $(awk -v a="$api0" -v b="$(cpu_s "$OLMV1_APISERVER_PID")" 'BEGIN{printf "%.1f", b-a}') s, etcd $(awk -v a="$etcd0" -v b="$(cpu_s "$OLMV1_ETCD_PID")" 'BEGIN{printf "%.1f", b-a}') s"
  restart_requests "$before" "$after"
  machine_cpu_diff "$mbefore" "$(machine_cpu)"
}
LAST=${SIZES##* }
for n in $SIZES; do batch "$n"; done
echo "end: CPU $(cpus); load $(loadavg)"
