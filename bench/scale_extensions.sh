#!/usr/bin/env bash
# Scale benchmark: N ClusterExtensions applied at once (not part of the test suite).
#
# Brings up its own local cluster (e2e/cluster/up.sh in a temporary state dir, via
# bench/opctl_env.sh), catalogd and operator-controller, then builds and pushes N one-bundle
# packages scale-op-000 .. scale-op-<N-1> in ONE catalog "scale".  Each bundle (written by
# e2e/tests/olmv1_bundles.py) installs a Deployment (pause image), a ConfigMap, a
# ServiceAccount and a Role + RoleBinding (install mode OwnNamespace), so every extension has
# five kinds of objects in its own namespace, installed by its own ServiceAccount.
# Namespaces, ServiceAccounts and their binding are created first (not timed); then all N
# ClusterExtensions go in one `kubectl apply` and it prints:
#   * the time until every one reports Installed=True, and the load average then,
#   * operator-controller RSS: idle before, peak while installing (sampled; and VmHWM), after,
#   * kube-apiserver RSS before / after, and its watch count (apiserver_registered_watchers
#     summed, and apiserver_longrunning_requests{verb="WATCH"} summed) before / after,
#   * operator-controller's drift watches and TokenRequests,
#   * after deleting all N (uninstall), the time that took and operator-controller RSS.
# Everything is stopped by PID at the end.
#
# Usage: bench/scale_extensions.sh N          e.g.  bench/scale_extensions.sh 1000
# Environment: BUILD (default build/), MAX_WAIT seconds (default 600), OPCTL_ARGS (extra
# operator-controller flags, one string split on spaces, e.g. "--log-level debug"),
# KEEP_LOGS (a directory to copy the daemons' logs to at the end), MALLOC_STATS=1 (at the
# end, glibc's malloc_stats() of operator-controller via gdb, into its log: bytes in use
# against bytes held from the system, per arena), SMAPS_DIR (a directory for copies of
# operator-controller's /proc/PID/smaps when idle before, and when idle after the uninstall:
# which mappings hold the resident memory), SKIP_UNINSTALL=1 (stop after the installed
# figures: no delete-all, for quick iterations), RESTART=1 (then operator-controller is
# restarted with the N extensions installed, once the install settled: time to steady state,
# apiserver requests by verb), RESTARTS=K (K restarts, each printed) and RESTART_ARGS="A|B"
# (extra flags of the restarts in turn: A, B, A, B ..., a paired comparison on one cluster).
# WAIT_FOR=revisions (with OPCTL_ARGS=--feature-gates=BoxcutterRuntime=true: wait until each
# extension has its revision <name>-1 instead of Installed=True, the ClusterExtension side alone).
# COS_WATCH_RIGHTS=1: operator-controller's own identity may list+watch the bundle's kinds
# cluster-wide, so the ClusterObjectSet controller watches the objects it applied (under
# config/rbac alone it may not: it re-probes them by polling, 2 s while rolling out, 30 s after).
set -euo pipefail
n=${1:-100}
OPCTL_BENCH_NAME=scale
read -r -a OPCTL_EXTRA_ARGS <<<"${OPCTL_ARGS:-}"
# shellcheck source=bench/opctl_env.sh
source "$(dirname "$0")/opctl_env.sh"
if [ "${COS_WATCH_RIGHTS:-0}" = 1 ]; then
  kubectl create clusterrole bench-cos-watch --verb=list,watch \
    --resource=configmaps,serviceaccounts,deployments.apps,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io >/dev/null
  kubectl create clusterrolebinding bench-cos-watch --clusterrole=bench-cos-watch \
    --serviceaccount=olmv1-system:operator-controller-controller-manager >/dev/null
fi

metric() { curl -fsS "http://127.0.0.1:$hport/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
apiserver_rss() { awk '/^VmRSS/ {print $2}' "/proc/$OLMV1_APISERVER_PID/status"; }
# Sums of a metric family of the apiserver (scraped with the admin kubeconfig).
apiserver_sum() { kubectl get --raw /metrics | awk -v m="$1" -v f="${2:-}" \
  'index($1, m) == 1 && (substr($1, length(m) + 1, 1) == "{" || substr($1, length(m) + 1, 1) == "") && index($1, f) {s += $2} END {printf "%d", s}'; }
watches() { echo "registered_watchers $(apiserver_sum apiserver_registered_watchers)," \
                 "longrunning WATCH $(apiserver_sum apiserver_longrunning_requests 'verb="WATCH"')"; }
# RSS split: anonymous (heap, stacks) and file-backed (the binary and its libraries).
rss_split() { awk '/^RssAnon/ {a=$2} /^RssFile/ {f=$2} END {printf "anon %d KiB, file %d KiB", a, f}' "/proc/$opctl_pid/status"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$opctl_pid/status"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# CPU seconds (user+system) a process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat"; }
cpus() { echo "operator-controller $(cpu_s "$opctl_pid") s, kube-apiserver $(cpu_s "$OLMV1_APISERVER_PID") s," \
              "etcd $(cpu_s "$OLMV1_ETCD_PID") s, catalogd $(cpu_s "$catalogd_pid") s"; }

# ---- N packages in one catalog
t0=$(now)
python3 - "$repo" "$OLMV1_REGISTRY" "$state/scale" "$n" "$build/cli/olmv1" <<'PY' >"$state/scale-catalog.ref"
import json, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
repo, registry, out, n, olmv1 = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, str(Path(repo) / "e2e" / "tests"))
import olmv1_bundles as ob

def one(i):
    pkg = f"scale-op-{i:03d}"
    d = ob.write_bundle(out / pkg, pkg, "1.0.0", supported=("OwnNamespace",), cluster_rules=None,
                        rules=ob.READ_CONFIGMAPS, image="registry.k8s.io/pause:3.10", default_channel="stable")
    rc, ref, err = ob.run_olmv1(olmv1, "bundle", "push", "-q", str(d), f"{registry}/scale/bundle-{pkg}:v1.0.0")
    if rc:
        raise SystemExit(f"bundle push {pkg}: {err}")
    return pkg, ref

with ThreadPoolExecutor(4) as ex:
    results = list(ex.map(one, range(n)))
cat = out / "catalog"
cat.mkdir(parents=True, exist_ok=True)
lines = []
for pkg, ref in results:
    lines += [{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"},
              {"schema": "olm.channel", "name": "stable", "package": pkg, "entries": [{"name": f"{pkg}.v1.0.0"}]},
              {"schema": "olm.bundle", "name": f"{pkg}.v1.0.0", "package": pkg, "image": ref,
               "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": "1.0.0"}}]}]
(cat / "catalog.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
rc, ref, err = ob.run_olmv1(olmv1, "catalog", "push", "-q", str(cat), f"{registry}/scale/catalog:latest")
if rc:
    raise SystemExit(f"catalog push: {err}")
print(ref)
PY
kubectl apply -f - >/dev/null <<YAML
apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: scale
spec:
  source:
    type: Image
    image:
      ref: $(cat "$state/scale-catalog.ref")
YAML
kubectl wait --for=condition=Serving --timeout=300s clustercatalog/scale >/dev/null
awk -v a="$(now)" -v b="$t0" -v n="$n" 'BEGIN{printf "setup: %d packages pushed, catalog serving in %.1f s\n", n, a-b}'

# ---- namespaces, ServiceAccounts, one binding (not timed); then the N ClusterExtensions
python3 - "$n" >"$state/objs.json" <<'PY'
import json, sys
n = int(sys.argv[1])
items = []
for i in range(n):
    ns = f"scale-{i}"
    items += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
              {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "installer", "namespace": ns}}]
items.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": "scale-installer"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-installer"},
              "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": f"scale-{i}"} for i in range(n)]})
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
python3 - "$n" >"$state/ces.json" <<'PY'
import json, sys
n = int(sys.argv[1])
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
     "metadata": {"name": f"scale-{i}", "labels": {"bench": "scale"}},
     "spec": {"namespace": f"scale-{i}", "serviceAccount": {"name": "installer"},
              "config": {"configType": "Inline", "inline": {"watchNamespace": f"scale-{i}"}},
              "source": {"sourceType": "Catalog", "catalog": {"packageName": f"scale-op-{i:03d}",
                                                              "selector": {"matchLabels": {
                                                                  "olm.operatorframework.io/metadata.name": "scale"}}}}}}
    for i in range(n)]}))
PY
kubectl apply -f "$state/objs.json" >/dev/null
installed() {
  kubectl get clusterextensions -l bench=scale -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(sum(any(c["type"] == "Installed" and c["status"] == "True" for c in i.get("status", {}).get("conditions", []))
          for i in items))'
}
sleep 3
echo "machine: $(nproc) CPU(s), load average $(load)"
[ -z "${SMAPS_DIR:-}" ] || { mkdir -p "$SMAPS_DIR"; cp "/proc/$opctl_pid/smaps" "$SMAPS_DIR/idle.smaps"; }
echo "before: operator-controller RSS $(rss_kib) KiB ($(rss_split)); kube-apiserver RSS $(apiserver_rss) KiB; watches: $(watches)"

source "$repo/bench/apiserver_figures.sh"
kubectl get --raw /metrics >/dev/null # warm
install_before=$(request_counts) install_mcpu=$(machine_cpu)
echo "CPU used so far: $(cpus)"
t0=$(now)
kubectl apply -f "$state/ces.json" >/dev/null
peak=0 done_n=0
while :; do
  r=$(rss_kib); [ "${r:-0}" -gt "$peak" ] && peak=$r
  # operator-controller's gauge counts Installed=True in its informer's copy of the objects:
  # cheap to poll (a `kubectl get` of 1,000 objects every turn would load the machine);
  # the apiserver's view confirms it.
  if [ "${WAIT_FOR:-installed}" = revisions ]; then
    done_n=$(kubectl get clusterobjectsets -l olm.operatorframework.io/owner-kind=ClusterExtension -o name | wc -l)
    [ "$done_n" -ge "$n" ] && break
    sleep 0.8
  else
    done_n=$(metric operator_controller_installed_extensions)
    [ "${done_n:-0}" -ge "$n" ] && { done_n=$(installed); [ "$done_n" -ge "$n" ] && break; }
  fi
  if awk -v a="$(now)" -v b="$t0" -v m="$max_wait" 'BEGIN{exit !(a-b>m)}'; then
    echo "bench: only $done_n/$n Installed after ${max_wait}s" >&2
    break
  fi
  sleep 0.2
done
t1=$(now)
awk -v a="$t1" -v b="$t0" -v n="$n" -v d="$done_n" -v l="$(load)" \
  -v w="${WAIT_FOR:-installed}" 'BEGIN{printf "apply -> %s: %d/%d in %.2f s (load average %s)\n", w == "revisions" ? "revision <name>-1" : "Installed=True", d, n, a-b, l}'
echo "CPU used by then: $(cpus)"
echo "operator-controller peak RSS while installing: sampled ${peak} KiB, VmHWM $(hwm_kib) KiB"
sleep 15 # idle: past operator-controller's periodic heap trim
echo "installed, idle: operator-controller RSS $(rss_kib) KiB; kube-apiserver RSS $(apiserver_rss) KiB"
echo "  apiserver watches: $(watches)"
echo "  operator-controller drift watches $(metric operator_controller_drift_watches)," \
     "TokenRequests $(metric operator_controller_serviceaccount_tokens_requested_total)," \
     "reconciles $(metric operator_controller_reconcile_total)"
REQ_TOP=${REQ_TOP:-25} request_diff "$install_before" "$(request_counts)" "apply -> idle" "$n"
machine_cpu_diff "$install_mcpu" "$(machine_cpu)"
echo "  CPU used by the idle figures: $(cpus)"
# ---- RESTART=1: operator-controller restarted with the N extensions installed.  Steady state:
# every extension reconciled once by the new process (its reconcile counter reaches N) and its
# queue empty.  Printed: the time to that, and the apiserver's requests during it by verb and
# resource (apiserver_request_total before and after; nothing else runs meanwhile), among
# them the writes to installed objects (expected 0) and the status writes.  It starts once the
# install has settled (settle, below).
# Settled first: after "all Installed" the Deployments' rollouts still change what the probes
# say (Available), which reconciles write; a restart in the middle of that would count those
# status writes as its own.  Settled: no reconcile for 10 s (at most MAX_WAIT).
settle() {
  local last="" since_t t0; t0=$(now); since_t=$(now)
  while :; do
    local rec; rec=$(metric operator_controller_reconcile_total)
    [ "$rec" != "$last" ] && { last=$rec; since_t=$(now); }
    awk -v a="$since_t" -v b="$(now)" 'BEGIN{exit !(b-a>=10)}' && break
    awk -v a="$t0" -v b="$(now)" -v m="$max_wait" 'BEGIN{exit !(b-a>m)}' && break
    sleep 0.5
  done
  awk -v a="$(now)" -v b="$t0" -v l="$(load)" 'BEGIN{printf "settled (no reconcile for 10 s) %.1f s after the idle figures (load average %s)\n", a-b, l}'
}
# RESTARTS=K restarts K times (each printed), RESTART_ARGS="A|B" gives the restarts extra
# flags in turn (A, B, A, B ...: a paired comparison on the same cluster).
IFS='|' read -r -a restart_args <<<"${RESTART_ARGS:-}"
[ "${#restart_args[@]}" -gt 0 ] || restart_args=("")
[ -n "${RESTARTS:-}" ] && [ "${RESTART:-0}" = 0 ] && RESTART=1
for ((ri = 0; ri < ${RESTARTS:-1}; ri++)); do
if [ "${RESTART:-0}" = 1 ]; then
  settle
  read -r -a OPCTL_EXTRA_ARGS <<<"${OPCTL_ARGS:-} ${restart_args[ri % ${#restart_args[@]}]}"
  [ -z "${restart_args[ri % ${#restart_args[@]}]}" ] || echo "restart $((ri + 1)): operator-controller ${OPCTL_EXTRA_ARGS[*]}"
  kubectl get --raw /metrics >/dev/null # warm
  before=$(request_counts)
  t0=$(now)
  stop_pid "$opctl_pid"
  t_stopped=$(now)
  start_opctl
  while :; do
    rec=$(metric operator_controller_reconcile_total); depth=$(metric operator_controller_workqueue_depth)
    [ "${rec%.*}" -ge "$n" ] 2>/dev/null && [ "${depth:-1}" = 0 ] && break
    awk -v a="$(now)" -v b="$t0" -v m="$max_wait" 'BEGIN{exit !(a-b>m)}' && { echo "bench: restart not steady after ${max_wait}s (reconciles $rec, queue $depth)" >&2; break; }
    sleep 0.1
  done
  t1=$(now)
  after=$(request_counts)
  awk -v a="$t1" -v b="$t0" -v s="$t_stopped" -v n="$n" -v l="$(load)" \
    'BEGIN{printf "restart with %d installed: stopped in %.2f s, steady (all %d reconciled, queue empty) %.2f s after the stop began (load average %s)\n", n, s-b, n, a-b, l}'
  echo "  operator-controller RSS $(rss_kib) KiB, reconciles $(metric operator_controller_reconcile_total), TokenRequests $(metric operator_controller_serviceaccount_tokens_requested_total)"
  restart_requests "$before" "$after"
fi
done
# MALLOC_STATS and KEEP_LOGS, at the end of either form of the run.
finish() {
  [ "${MALLOC_STATS:-0}" = 0 ] || gdb -p "$opctl_pid" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1 || true
  [ -z "${KEEP_LOGS:-}" ] || { mkdir -p "$KEEP_LOGS"; cp "$state"/logs/*.log "$KEEP_LOGS"/; }
}
[ "${SKIP_UNINSTALL:-0}" = 0 ] || { finish; exit 0; }
# `kubectl delete --wait=true` waits for the objects one after another and takes about 18 s
# for 100 ConfigMaps that have no finalizer at all, which would hide the uninstall's own
# time: delete without waiting, then count what is left every 0.2 s.
t0=$(now)
kubectl delete clusterextensions -l bench=scale --wait=false >/dev/null
left=$n
while :; do
  left=$(kubectl get clusterextensions -l bench=scale -o name | wc -l)
  [ "$left" -eq 0 ] && break
  awk -v a="$(now)" -v b="$t0" -v m="$max_wait" 'BEGIN{exit !(a-b > m)}' && break
  sleep 0.2
done
awk -v a="$(now)" -v b="$t0" -v n="$n" -v left="$left" -v l="$(load)" \
  'BEGIN{printf "delete all %d -> gone: %.2f s, %d left (load average %s)\n", n, a-b, left, l}'
sleep 15
[ -z "${SMAPS_DIR:-}" ] || cp "/proc/$opctl_pid/smaps" "$SMAPS_DIR/uninstalled.smaps"
finish
echo "uninstalled, idle: operator-controller RSS $(rss_kib) KiB ($(rss_split)); kube-apiserver RSS $(apiserver_rss) KiB; watches: $(watches)"
