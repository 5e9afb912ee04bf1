#!/usr/bin/env bash
# operator-controller drift-watch benchmark (not part of the test suite).
#
# Brings up its own local cluster (e2e/cluster/up.sh in a temporary state dir), catalogd and
# operator-controller with --drift-repair-interval 0 (only the drift watches repair), pushes the
# bench package of scripts/demo-package.py --bench, then for 1 extension and for N (default 20):
#   * installs them (each in its own namespace with its own ServiceAccount),
#   * once idle: operator_controller_drift_watches, RSS, open fds, TCP connections of
#     operator-controller, TokenRequests made so far,
#   * `kubectl delete deployment` in one extension's namespace -> the Deployment exists again
#     (a new uid), REPEAT times (default 5): min / median / max,
#   * for N: restarts operator-controller with the ServiceAccounts allowed to list/watch, and
#     again without (every watch ends at its 403), to show what the watches themselves cost,
#   * deletes the batch, and checks the watch count returns to 0.
# Everything is stopped by PID at the end.
#
# Usage: bench/operator_controller_drift_bench.sh [N]
# Environment: BUILD (default build/), REPEAT (default 5), MAX_WAIT seconds (default 600).
set -euo pipefail
repeat=${REPEAT:-5}
n_many=${1:-20}
OPCTL_BENCH_NAME=drift
OPCTL_EXTRA_ARGS=(--drift-repair-interval 0)
# shellcheck source=bench/opctl_env.sh
source "$(dirname "$0")/opctl_env.sh"
metric() { curl -fsS "http://127.0.0.1:$hport/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
usage() {
  local rss fds tcp
  rss=$(rss_kib)
  fds=$(find "/proc/$opctl_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  tcp=$(find "/proc/$opctl_pid/fd" -mindepth 1 -maxdepth 1 -lname 'socket:*' | wc -l)
  echo "drift watches $(metric operator_controller_drift_watches), RSS ${rss} KiB, fds ${fds} (sockets ${tcp})," \
       "TokenRequests $(metric operator_controller_serviceaccount_tokens_requested_total)," \
       "reconciles $(metric operator_controller_reconcile_total)"
}
wait_until() { # wait_until DESC CMD...: polls CMD until it succeeds or max_wait passes
  local desc=$1 t0
  shift
  t0=$(now)
  until "$@"; do
    if awk -v a="$(now)" -v b="$t0" -v m="$max_wait" 'BEGIN{exit !(a-b>m)}'; then
      echo "bench: timed out waiting for $desc" >&2
      exit 1
    fi
    sleep 0.1
  done
}
# Reconciles have stopped: the counter did not move for 3 s.
quiet() { local a; a=$(metric operator_controller_reconcile_total); sleep 3; [ "$a" = "$(metric operator_controller_reconcile_total)" ]; }

sleep 3
echo "no extensions: $(usage)"

all_installed() { # all_installed TAG N
  local got
  got=$(kubectl get clusterextensions -l "bench=$1" -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(sum(any(c["type"] == "Installed" and c["status"] == "True" for c in i.get("status", {}).get("conditions", []))
          for i in items))')
  [ "$got" -ge "$2" ]
}
watches_are() { [ "$(metric operator_controller_drift_watches)" = "$1" ]; }
deployment_uid() { kubectl get deployments -n "$1" -o jsonpath='{.items[0].metadata.uid}' 2>/dev/null; }
uid_changed() { local u; u=$(deployment_uid "$1"); [ -n "$u" ] && [ "$u" != "$2" ]; }

batch() { # batch TAG N
  local tag=$1 n=$2
  python3 - "$tag" "$n" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
tag, n = sys.argv[1], int(sys.argv[2])
items = []
for i in range(n):
    ns = f"drift-{tag}-{i}"
    items += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
              {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "installer", "namespace": ns}}]
items.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": f"drift-installer-{tag}"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-installer"},
              "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": f"drift-{tag}-{i}"}
                           for i in range(n)]})
items += [{"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
           "metadata": {"name": f"drift-{tag}-{i}", "labels": {"bench": tag}},
           "spec": {"namespace": f"drift-{tag}-{i}", "serviceAccount": {"name": "installer"},
                    "source": {"sourceType": "Catalog", "catalog": {"packageName": "olmv1-bench-operator"}}}}
          for i in range(n)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
  wait_until "$n extensions Installed" all_installed "$tag" "$n"
  wait_until "reconciles to stop" quiet
  echo "$n extension(s) installed, idle: $(usage)"
  local ns="drift-$tag-0" times=() i uid t0 t1
  for i in $(seq "$repeat"); do
    uid=$(deployment_uid "$ns")
    t0=$(now)
    kubectl delete deployments --all -n "$ns" --wait=false >/dev/null
    wait_until "the Deployment to come back" uid_changed "$ns" "$uid"
    t1=$(now)
    times+=("$(awk -v a="$t1" -v b="$t0" 'BEGIN{printf "%.2f", a-b}')")
    wait_until "reconciles to stop" quiet
  done
  echo "  kubectl delete deployment -> Deployment back (s), $repeat runs: $(printf '%s\n' "${times[@]}" | sort -n |
    awk '{v[NR]=$1} END{printf "min %s median %s max %s", v[1], v[int((NR+1)/2)], v[NR]}')"
  echo "  after the repairs: $(usage)"
  if [ "$n" -gt 1 ]; then
    # What the watches cost: the same installed extensions after a fresh start, with and
    # without list/watch for the ServiceAccounts (without: every watch stops at its 403).
    stop_pid "$opctl_pid"; start_opctl
    # Two kinds (Deployment, ConfigMap): one shared watch each, whatever n is (the
    # ServiceAccounts may list/watch cluster-wide).
    wait_until "the drift watches to start" watches_are 2
    wait_until "reconciles to stop" quiet
    echo "  restarted, watches allowed:   $(usage)"
    installer_role '[get, create, update, patch, delete]'
    stop_pid "$opctl_pid"; start_opctl
    wait_until "the 403s" watches_are 0
    wait_until "reconciles to stop" quiet
    sleep 5
    echo "  restarted, list/watch denied: $(usage)"
    installer_role '["*"]'
  fi
  kubectl delete clusterextensions -l "bench=$tag" --wait=true --timeout=600s >/dev/null
  kubectl delete clusterrolebinding "drift-installer-$tag" >/dev/null
  wait_until "the drift watches to stop" watches_are 0
  echo "  uninstalled: $(usage)"
}

echo "machine: $(nproc) CPU(s); operator-controller --drift-repair-interval 0"
batch one 1
batch many "$n_many"
