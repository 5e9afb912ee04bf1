#!/usr/bin/env bash
# cos_rollout.sh: how long a ClusterObjectSet takes to roll out (apply -> Succeeded True) on the
# local cluster (kube-controller-manager on kwok nodes), with operator-controller started with
# --feature-gates=BoxcutterRuntime=true as its ServiceAccount bound to cluster-admin (upstream's
# rights: a ClusterObjectSet without ServiceAccount annotations is applied as operator-controller):
#   small  three phases of one ConfigMap each, inline
#   crd1m  one CustomResourceDefinition of ~1 MB (a wide openAPIV3Schema), gzipped in an immutable
#          Secret of type olm.operatorframework.io/object-data, probed for Established
# Each RUNS times (default 3); prints the median and operator-controller's RSS after.
set -euo pipefail
OPCTL_BENCH_NAME=cos OPCTL_EXTRA_ARGS=(--feature-gates=BoxcutterRuntime=true)
# shellcheck source=bench/opctl_env.sh
. "$(dirname "$0")/opctl_env.sh"
runs=${RUNS:-3}
kubectl create clusterrolebinding cos-bench-admin --clusterrole=cluster-admin \
  --serviceaccount=olmv1-system:operator-controller-controller-manager >/dev/null
kubectl create namespace cos-bench >/dev/null

wait_succeeded() { # wait_succeeded NAME: seconds from now until Succeeded=True
  local t0 t1
  t0=$(now)
  for _ in $(seq $((max_wait * 20))); do
    if [ "$(kubectl get clusterobjectset "$1" -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}' 2>/dev/null)" = True ]; then
      t1=$(now); python3 -c "print(f'{$t1 - $t0:.2f}')"; return 0
    fi
    sleep 0.05
  done
  echo "bench: $1 did not succeed in ${max_wait}s" >&2; return 1
}
median() { python3 -c 'import statistics,sys; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.2f}")' "$@"; }

small=()
for i in $(seq "$runs"); do
  python3 - "$i" >"$state/small.json" <<'PY'
import json, sys
i = sys.argv[1]
phases = [{"name": f"p{k}", "objects": [{"object": {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": f"small-{i}-{k}", "namespace": "cos-bench"}, "data": {"k": "v"}}}]} for k in range(3)]
print(json.dumps({"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterObjectSet",
                  "metadata": {"name": f"small-{i}"},
                  "spec": {"lifecycleState": "Active", "collisionProtection": "Prevent", "revision": 1, "phases": phases}}))
PY
  kubectl apply -f "$state/small.json" >/dev/null
  small+=("$(wait_succeeded "small-$i")")
done

crd=()
for i in $(seq "$runs"); do
  python3 - "$i" "$state/crd-cos.json" >"$state/crd-secret.json" <<'PY'
import base64, gzip, json, sys
i, out = sys.argv[1], sys.argv[2]
props = {f"field{n:05d}": {"type": "string", "description": "x" * 60} for n in range(9000)}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": f"bigs{i}.bench.example.com"},
       "spec": {"group": "bench.example.com", "scope": "Namespaced",
                "names": {"plural": f"bigs{i}", "singular": f"big{i}", "kind": f"Big{i}", "listKind": f"Big{i}List"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                  "spec": {"type": "object", "properties": props}}}}}]}}
raw = json.dumps(crd).encode()
sys.stderr.write(f"CRD {len(raw)} bytes, gzipped {len(gzip.compress(raw))}\n")
secret = {"apiVersion": "v1", "kind": "Secret", "type": "olm.operatorframework.io/object-data", "immutable": True,
          "metadata": {"name": f"crd-{i}", "namespace": "cos-bench"},
          "data": {"crd": base64.b64encode(gzip.compress(raw)).decode()}}
probes = [{"selector": {"type": "GroupKind", "groupKind": {"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition"}},
           "assertions": [{"type": "ConditionEqual", "conditionEqual": {"type": "Established", "status": "True"}}]}]
cos = {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterObjectSet", "metadata": {"name": f"crd1m-{i}"},
       "spec": {"lifecycleState": "Active", "collisionProtection": "Prevent", "revision": 1, "progressionProbes": probes,
                "phases": [{"name": "crds", "objects": [{"ref": {"name": f"crd-{i}", "namespace": "cos-bench", "key": "crd"}}]}]}}
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [secret]}))
open(out, "w").write(json.dumps(cos))
PY
  kubectl apply -f "$state/crd-secret.json" >/dev/null
  kubectl apply -f "$state/crd-cos.json" >/dev/null
  crd+=("$(wait_succeeded "crd1m-$i")")
done

echo "small (3 phases x 1 ConfigMap): ${small[*]} s, median $(median "${small[@]}") s"
echo "crd1m (~1 MB CRD from a gzipped Secret): ${crd[*]} s, median $(median "${crd[@]}") s"
echo "operator-controller RSS after: $(rss_kib) KiB"
kubectl delete clusterrolebinding cos-bench-admin >/dev/null
