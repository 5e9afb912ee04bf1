#!/usr/bin/env bash
# The part of `run.sh`'s "apply -> Serving" figure that no catalogd can shorten (not part of the
# test suite).
#
#   bench/apply_floor.sh [N]        (default N=10)
#
# ../shared/upstream/bench/run.sh times A1 as: `kubectl apply` of a ClusterCatalog, then every
# 0.1 s one GET of the object (curl with the admin certificate, piped to jq) until Serving=True.
# So even a catalogd that were Serving the instant the object exists is measured at
# "kubectl apply + one poll", and one that needs D seconds after the apply is measured at about
#   apply + k * (0.1 s + poll) + poll,   k = the polls that still saw no Serving.
# This starts a bare control plane (etcd + kube-apiserver, e2e/cluster/up.sh in a temporary
# state dir), installs the CRDs, runs no catalogd at all, and times N rounds of exactly that
# apply and one such poll.  Prints min / median / max of each, the load average, and the
# polls' schedule relative to the end of the apply.  Everything is stopped by PID.
set -euo pipefail
n=${1:-10}
REPO=$(cd "$(dirname "$0")/.." && pwd)
STATE=$(mktemp -d /tmp/apply-floor-XXXXXX)
cleanup() { bash "$REPO/e2e/cluster/down.sh" --state-dir "$STATE" >/dev/null 2>&1 || true; rm -rf "$STATE"; }
trap cleanup EXIT

OLMV1_CLUSTER_FULL=0 bash "$REPO/e2e/cluster/up.sh" --state-dir "$STATE" >/dev/null
# shellcheck disable=SC1091
source "$STATE/env"
export KUBECONFIG
kubectl apply -f "$REPO/config/crd/olm.operatorframework.io_clustercatalogs.yaml" >/dev/null
kubectl wait --for condition=Established crd/clustercatalogs.olm.operatorframework.io --timeout=60s >/dev/null
server=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')
pki=$STATE/pki
now() { date +%s.%N; }
poll() { # the poll of run.sh's lib.sh (cc_cond): one GET as admin, jq for the condition
  curl -sS --max-time 10 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "$server/apis/olm.operatorframework.io/v1/clustercatalogs/$1" |
    jq -r '.status.conditions[]? | select(.type=="Serving") | .status' 2>/dev/null || true
}

applies=() totals=() polls=()
for i in $(seq "$n"); do
  name=floor-$i
  t0=$(now)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: $name
  labels:
    olm.operatorframework.io/metadata.name: $name
spec:
  source:
    type: Image
    image:
      ref: registry.invalid/floor:1
YAML
  t1=$(now)
  poll "$name" >/dev/null
  t2=$(now)
  applies+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')")
  polls+=("$(awk -v a="$t1" -v b="$t2" 'BEGIN{printf "%.3f", b-a}')")
  totals+=("$(awk -v a="$t0" -v b="$t2" 'BEGIN{printf "%.3f", b-a}')")
done
stats() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {printf "min %.3f  median %.3f  max %.3f s", v[1], v[int((NR+1)/2)], v[NR]}'; }
echo "machine: $(nproc) CPU(s), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kubectl apply of a ClusterCatalog:  $(stats "${applies[@]}")"
echo "one poll (curl + jq):               $(stats "${polls[@]}")"
echo "apply + one poll (the floor of A1): $(stats "${totals[@]}")"
p=$(printf '%s\n' "${polls[@]}" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
awk -v p="$p" 'BEGIN {
  printf "polls end, after the apply returned, at about:";
  for (k = 0; k < 5; k++) printf " %.3f", p + k * (0.1 + p);
  printf " s\n(a catalogd that is Serving D s after the apply is measured at apply + the first of these >= D)\n" }'
