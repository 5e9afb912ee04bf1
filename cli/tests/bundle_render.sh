#!/usr/bin/env bash
# olmv1 bundle render against the renderer's fixture bundles
# (domain/render/tests/fixtures/bundles).  Hashed names are upstream's corpus names
# for argocd-operator v0.6.0; the rest are checked in domain/render/tests.
set -u
bin=$1
fix=../../domain/render/tests/fixtures/bundles
if ! "$bin" bundle render --help >/dev/null 2>&1; then
  echo "bundle_render_cli: SKIP: 'olmv1 bundle render' is not wired into this olmv1 binary yet"
  exit 0
fi
pass=0 fail=0
check() { # name expected actual
  if [ "$2" == "$3" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $1: expected [$2] got [$3]"; fi
}
names() { "$bin" bundle render "$@" -o json | python3 -c 'import json,sys; print(" ".join(o["kind"]+"/"+o["metadata"]["name"] for o in json.load(sys.stdin)["items"]))'; }
err_of() { "$bin" bundle render "$@" 2>&1 >/dev/null; }

out=$(names "$fix/argocd" --install-namespace argocd-system)
check all-ns-count 10 "$(wc -w <<<"$out")"
check all-ns-order "ClusterRole/argocd-operator-metrics-reader" "$(cut -d' ' -f1 <<<"$out")"
check all-ns-cp 1 "$(grep -c 'ClusterRole/argocd-operator.v0-1dhiybrldl1gyksid1dk2dqjsc72psdybc7iyvse5gpx' <<<"$(tr ' ' '\n' <<<"$out")")"
check all-ns-promoted 1 "$(grep -c '^ClusterRole/argocd-operator.v0.-3gkm3u8zfarktdile5wekso69zs9bgzb988mhjm0y6p$' <<<"$(tr ' ' '\n' <<<"$out")")"
out=$(names "$fix/argocd" --install-namespace argocd-system --watch-namespace argocd-watch)
check single-role 1 "$(grep -c '^Role/argocd-operator.v0-22gmilmgp91wu25is5i2ec598hni8owq3l71bbkl7iz3$' <<<"$(tr ' ' '\n' <<<"$out")")"
# YAML: sorted keys, quoted ambiguous strings, documents separated by ---.
yaml=$("$bin" bundle render "$fix/argocd" --install-namespace argocd-system)
check yaml-docs 9 "$(grep -c '^---$' <<<"$yaml")"
check yaml-targets 1 "$(grep -c '^        olm.targetNamespaces: ""$' <<<"$yaml")"
check yaml-rhl 1 "$(grep -c '^  revisionHistoryLimit: 1$' <<<"$yaml")"
# Config from a file (YAML), merged with deploymentConfig.
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
printf 'watchNamespace: argocd-system\ndeploymentConfig:\n  nodeSelector:\n    disk: ssd\n' >"$cfg"
check config-file 1 "$("$bin" bundle render "$fix/argocd" --install-namespace argocd-system --config "$cfg" | grep -c '^      nodeSelector:$')"
# Errors and exit codes.
check own-missing 'invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing' \
  "$(err_of "$fix/own-only" --install-namespace ns)"
check unknown-field 'invalid ClusterExtension configuration: invalid configuration: unknown field "watchNamespace"' \
  "$(err_of "$fix/webhook" --install-namespace ns --watch-namespace x)"
# Webhooks: --cert-provider none renders them without CA injection, as upstream's
# regression generator does; the default (openshift-service-ca) and cert-manager inject.
# Webhook configurations carry metadata.namespace = the install namespace either way.
summary='import json,sys
items = json.load(sys.stdin)["items"]
def ann(o): return o["metadata"].get("annotations", {})
inject = sorted({k for o in items for k in ann(o) if k.startswith(("service.beta.openshift.io/", "cert-manager.io/"))})
hooks = [o for o in items if o["kind"].endswith("WebhookConfiguration")]
dep = [o for o in items if o["kind"] == "Deployment"][0]["spec"]["template"]["spec"]
print(len(items), ",".join(inject) or "-",
      ",".join(o["kind"][0] + ":" + o["metadata"].get("namespace", "-") for o in hooks),
      ",".join(sorted({k for o in hooks for k in o["webhooks"][0]["clientConfig"]})),
      ",".join(v["name"] for v in dep["volumes"]),
      ",".join(o["kind"] for o in items if o["kind"] in ("Issuer", "Certificate")) or "-")'
pick() { "$bin" bundle render "$fix/webhook" --install-namespace webhook-system "$@" -o json | python3 -c "$summary" 2>&1; }
check no-provider '10 - M:webhook-system,V:webhook-system service webhook-certs,data -' "$(pick --cert-provider none)"
check default-provider '10 service.beta.openshift.io/inject-cabundle,service.beta.openshift.io/serving-cert-secret-name M:webhook-system,V:webhook-system service data,apiservice-cert,webhook-cert -' "$(pick)"
check cert-manager '12 cert-manager.io/inject-ca-from M:webhook-system,V:webhook-system service data,apiservice-cert,webhook-cert Certificate,Issuer' "$(pick --cert-provider cert-manager)"
check no-provider-crd 'webhook-operator-controller-manager-service /convert' \
  "$("$bin" bundle render "$fix/webhook" --install-namespace webhook-system --cert-provider none -o json | python3 -c 'import json,sys
crd = [o for o in json.load(sys.stdin)["items"] if o["kind"] == "CustomResourceDefinition"][0]
s = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]; print(s["name"], s["path"])')"
check no-provider-yaml-ns 2 "$("$bin" bundle render "$fix/webhook" --install-namespace webhook-system --cert-provider none |
  python3 -c 'import sys; docs = sys.stdin.read().split("\n---\n")
print(sum(1 for d in docs if "WebhookConfiguration" in d and "\n  namespace: webhook-system\n" in d))')"
check bad-provider 'olmv1 bundle render: unknown --cert-provider "vault"' \
  "$(err_of "$fix/webhook" --install-namespace ns --cert-provider vault)"
check no-csv 'olmv1 bundle render: no ClusterServiceVersion found in "manifests"' "$(err_of "$fix/no-csv" --install-namespace ns)"
"$bin" bundle render "$fix/argocd" --install-namespace ns >/dev/null 2>&1; check exit-ok 0 $?
"$bin" bundle render "$fix/own-only" --install-namespace ns >/dev/null 2>&1; check exit-fail 1 $?
"$bin" bundle render "$fix/argocd" >/dev/null 2>&1; check exit-usage 2 $?
"$bin" bundle render "$fix/argocd" --install-namespace ns -o xml >/dev/null 2>&1; check exit-bad-format 2 $?

echo "bundle_render_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
