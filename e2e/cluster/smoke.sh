#!/usr/bin/env bash
# smoke.sh [--state-dir DIR]: check that a running cluster (from up.sh) does what the e2e
# tests rely on: kubectl access, RBAC, TokenRequest, CRDs with CEL validation, and pushes
# to the OCI registry. With KCM running (full mode) it deletes its namespace and CRD at the end;
# without KCM a deleted namespace would stay Terminating and break the next run, so they stay.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
parse_state_dir "$@"
[ -f "$STATE_DIR/env" ] || die "no cluster in $STATE_DIR (run up.sh first)"
# shellcheck disable=SC1091
source "$STATE_DIR/env"

ok() { echo "smoke: ok   $*"; }
bad() { echo "smoke: FAIL $*" >&2; exit 1; }
kq() { kubectl "$@" 2>/dev/null; }

# ---- API access and version
ver=$(curl -fsS --cacert "$OLMV1_CA_CERT" --cert "$OLMV1_ADMIN_CERT" --key "$OLMV1_ADMIN_KEY" \
      "$OLMV1_APISERVER/version" | jq -r .gitVersion)
ok "server version $ver"
kq get ns default >/dev/null || bad "kubectl get ns"
ok "kubectl get ns: $(kq get ns -o name | tr '\n' ' ')"
[ "$(kq auth can-i '*' '*' --all-namespaces)" = yes ] || bad "admin is not cluster-admin"
ok "kubectl auth can-i '*' '*' = yes (system:masters)"

# ---- ServiceAccount + TokenRequest (served by kube-apiserver alone)
ns=olmv1-smoke
kq create namespace $ns >/dev/null 2>&1 || true
kq -n $ns create serviceaccount installer >/dev/null 2>&1 || true
tok=$(kq -n $ns create token installer --duration=10m) || bad "kubectl create token"
[ -n "$tok" ] || bad "empty token"
ok "kubectl create token (TokenRequest) returned a JWT"
# The raw API call the C client makes; expirationSeconds below 600 is rejected by validation.
tok2=$(curl -fsS --cacert "$OLMV1_CA_CERT" --cert "$OLMV1_ADMIN_CERT" --key "$OLMV1_ADMIN_KEY" \
  -H 'Content-Type: application/json' -X POST \
  "$OLMV1_APISERVER/api/v1/namespaces/$ns/serviceaccounts/installer/token" \
  -d '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' |
  jq -r .status.token)
[ -n "$tok2" ] && [ "$tok2" != null ] || bad "TokenRequest via curl"
ok "POST .../serviceaccounts/installer/token (curl) returned a JWT"
# The token authenticates against this apiserver (audience = --api-audiences).
who=$(curl -fsS --cacert "$OLMV1_CA_CERT" -H "Authorization: Bearer $tok2" -H 'Content-Type: application/json' \
  -X POST "$OLMV1_APISERVER/apis/authentication.k8s.io/v1/selfsubjectreviews" \
  -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' | jq -r .status.userInfo.username)
[ "$who" = "system:serviceaccount:$ns:installer" ] || bad "token authenticates as '$who'"
ok "bearer token authenticates as $who"
# ...and RBAC applies to it: no bindings yet, so it may not list pods.
[ "$(kq auth can-i list pods -n $ns --as=system:serviceaccount:$ns:installer)" = no ] ||
  bad "RBAC: unbound ServiceAccount may list pods"
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$OLMV1_CA_CERT" -H "Authorization: Bearer $tok2" \
  "$OLMV1_APISERVER/api/v1/namespaces/$ns/pods")
[ "$code" = 403 ] || bad "expected 403 for unbound ServiceAccount, got $code"
ok "RBAC: unbound ServiceAccount gets 403"

# ---- CRD with a CEL validation rule
kq apply -f - >/dev/null <<'EOF' || bad "apply CRD"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.smoke.olmv1.test}
spec:
  group: smoke.olmv1.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
            x-kubernetes-validations:
            - rule: "self.replicas <= 3"
              message: "replicas must be at most 3"
EOF
kq wait --for=condition=Established crd/widgets.smoke.olmv1.test --timeout=60s >/dev/null || bad "CRD not Established"
widget() {
  printf 'apiVersion: smoke.olmv1.test/v1\nkind: Widget\nmetadata: {name: %s, namespace: %s}\nspec: {replicas: %s}\n' "$1" $ns "$2"
}
# The CRD's REST endpoint can take a moment after Established; retry the valid create.
for _ in $(seq 20); do widget ok 1 | kq apply -f - >/dev/null 2>&1 && break; sleep 0.5; done
kq -n $ns get widget ok >/dev/null || bad "valid Widget was not created"
if out=$(widget toomany 5 | kubectl apply -f - 2>&1); then bad "CEL rule did not reject replicas=5"; fi
grep -q 'replicas must be at most 3' <<<"$out" || bad "unexpected rejection: $out"
ok "CEL rule rejected replicas=5: $(grep -o 'spec: Invalid value.*' <<<"$out" | head -1)"

# ---- OCI registry: build a one-layer image as an oci: layout and push it with skopeo
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
lay=$tmp/layout && mkdir -p "$lay/blobs/sha256" "$tmp/src"
echo "hello from smoke.sh" > "$tmp/src/hello.txt"
tar -C "$tmp/src" -cf "$tmp/layer.tar" hello.txt && gzip -n -c "$tmp/layer.tar" > "$tmp/layer.tgz"
blob() { local s; s=$(sha256sum "$1" | cut -d' ' -f1); cp "$1" "$lay/blobs/sha256/$s"; echo "$s $(stat -c%s "$1")"; }
read -r lsha lsz < <(blob "$tmp/layer.tgz")
printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)" > "$tmp/config.json"
read -r csha csz < <(blob "$tmp/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%d}]}' \
  "$csha" "$csz" "$lsha" "$lsz" > "$tmp/manifest.json"
read -r msha msz < <(blob "$tmp/manifest.json")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"org.opencontainers.image.ref.name":"v1"}}]}' \
  "$msha" "$msz" > "$lay/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "$lay/oci-layout"
skopeo copy -q --dest-tls-verify=false "oci:$lay:v1" "docker://$OLMV1_REGISTRY/smoke/hello:v1" ||
  bad "skopeo copy to $OLMV1_REGISTRY"
tags=$(curl -fsS "http://$OLMV1_REGISTRY/v2/smoke/hello/tags/list" | jq -c .tags)
[ "$tags" = '["v1"]' ] || bad "registry tags: $tags"
dig=$(curl -fsS -o /dev/null -D - -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
  "http://$OLMV1_REGISTRY/v2/smoke/hello/manifests/v1" | tr -d '\r' | sed -n 's/^Docker-Content-Digest: //Ip')
[ "$dig" = "sha256:$msha" ] || bad "manifest digest $dig != sha256:$msha"
ok "skopeo pushed $OLMV1_REGISTRY/smoke/hello:v1 ($dig)"

if [ -n "${OLMV1_KWOK_PID:-}" ] && [ "${OLMV1_NODE:-}" != real ]; then
  # ---- Full mode: a Deployment becomes Available on the kwok node
  kq -n $ns create deployment smoke --image=example.invalid/none:1 --replicas=2 >/dev/null 2>&1 || true
  kq -n $ns wait --for=condition=Available deployment/smoke --timeout=120s >/dev/null ||
    bad "Deployment did not become Available"
  ok "Deployment smoke Available ($(kq -n $ns get deploy smoke -o jsonpath='{.status.availableReplicas}') replicas)"
fi
if [ "${OLMV1_NODE:-}" = real ]; then
  # ---- Real node: a Deployment of the pause image runs real containers on real-node-0, the
  # kubelet serves logs, CoreDNS answers for Services, and the kwok node takes no Pod.
  kq -n $ns create deployment smoke --image="$OLMV1_PAUSE_IMAGE" --replicas=2 >/dev/null 2>&1 || true
  kq -n $ns wait --for=condition=Available deployment/smoke --timeout=120s >/dev/null ||
    bad "Deployment did not become Available on the real node"
  real_nodes=" ${OLMV1_NODE_NAMES:-$OLMV1_NODE_NAME} "
  for n in $(kq -n $ns get pods -l app=smoke -o jsonpath='{.items[*].spec.nodeName}'); do
    [[ $real_nodes == *" $n "* ]] || bad "a smoke Pod on '$n', not on a real node ($real_nodes)"
  done
  pod=$(kq -n $ns get pods -l app=smoke -o jsonpath='{.items[0].metadata.name}')
  kq -n $ns logs "$pod" >/dev/null || bad "kubectl logs $pod (apiserver -> kubelet)"
  ok "Deployment smoke Available on${real_nodes% } (pause containers; kubectl logs works)"
  in_node() { nsenter --net="/proc/$OLMV1_NODE_HOLDER_PID/ns/net" -- "$@"; }
  in_node curl -fsSk --max-time 5 https://10.0.0.1/version >/dev/null ||
    bad "kubernetes Service (10.0.0.1:443) not reachable from the node"
  ok "kubernetes Service reachable through kube-proxy"
  if command -v busybox >/dev/null; then
    a=$(in_node busybox nslookup kubernetes.default.svc.cluster.local "$OLMV1_CLUSTER_DNS" | sed -n 's/^Address: //p' | tail -1)
    [ "$a" = 10.0.0.1 ] || bad "cluster DNS: kubernetes.default.svc.cluster.local -> '$a'"
    ok "cluster DNS ($OLMV1_CLUSTER_DNS): kubernetes.default.svc.cluster.local -> $a"
  fi
fi
if [ -n "${OLMV1_CONTROLLER_MANAGER_PID:-}" ]; then
  kq delete namespace $ns --wait=false >/dev/null || true
  kq delete crd widgets.smoke.olmv1.test --wait=false >/dev/null || true
fi
echo "smoke: all checks passed"
