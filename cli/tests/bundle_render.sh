#!/usr/bin/env bash
# olmv1 bundle render against the renderer's fixture bundles
# (controller/render/tests/fixtures/bundles).  Hashed names are upstream's corpus names
# for argocd-operator v0.6.0; the rest are checked in controller/render/tests.
set -u
bin=$1
fix=../../controller/render/tests/fixtures/bundles
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
check no-provider 'unsupported bundle: webhookDefinitions are not supported' \
  "$(err_of "$fix/webhook" --install-namespace ns --cert-provider none)"
check no-csv 'olmv1 bundle render: no ClusterServiceVersion found in "manifests"' "$(err_of "$fix/no-csv" --install-namespace ns)"
"$bin" bundle render "$fix/argocd" --install-namespace ns >/dev/null 2>&1; check exit-ok 0 $?
"$bin" bundle render "$fix/own-only" --install-namespace ns >/dev/null 2>&1; check exit-fail 1 $?
"$bin" bundle render "$fix/argocd" >/dev/null 2>&1; check exit-usage 2 $?
"$bin" bundle render "$fix/argocd" --install-namespace ns -o xml >/dev/null 2>&1; check exit-bad-format 2 $?

echo "bundle_render_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
