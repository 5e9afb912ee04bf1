#!/usr/bin/env bash
# olmv1 upgradeable over the fixture property files and bundle directories in
# fixtures/upgradeable.  Expected texts are the ones openshift-upgradeable.md §5 gives.
set -u
bin=$1
fx=fixtures/upgradeable
pass=0 fail=0

if ! "$bin" upgradeable --help >/dev/null 2>&1; then
  echo "upgradeable_cli: skipped: command not wired yet ('olmv1 upgradeable --help' failed)"
  exit 0
fi

check() { # name expected actual
  if [ "$2" == "$3" ]; then pass=$((pass+1)); else fail=$((fail+1)); printf 'FAIL %s:\n  expected [%s]\n  got      [%s]\n' "$1" "$2" "$3"; fi
}
run() { "$bin" upgradeable "$@" 2>&1; }
code() { "$bin" upgradeable "$@" >/dev/null 2>&1; echo $?; }
co_message() { run "$@" | sed -n '/^ClusterOperator olm Upgradeable=/,$p' | tail -n +2; }
co_line() { run "$@" | grep '^ClusterOperator olm Upgradeable='; }

# §5 example: two blockers sorted by bundle name; z-stream ignored.
check example-msg 'InstalledOLMOperatorsUpgradeable: Found ClusterExtensions that require upgrades prior to upgrading cluster to version 4.19: bundle "foo.v1.0.0" for ClusterExtension "foo",bundle "zed.v2" for ClusterExtension "bar".' \
  "$(co_message --cluster-version 4.18.3 --properties bar=$fx/zed.v2.json --properties foo=$fx/foo.v1.0.0.json --properties fut=$fx/future.v3.json)"
check example-reason 'ClusterOperator olm Upgradeable=False reason=InstalledOLMOperators_IncompatibleOperatorsInstalled' \
  "$(co_line --cluster-version 4.18.3 --properties bar=$fx/zed.v2.json --properties foo=$fx/foo.v1.0.0.json)"
check example-exit 1 "$(code --cluster-version 4.18.3 --properties foo=$fx/foo.v1.0.0.json)"
check per-extension '  blocks  foo (bundle foo.v1.0.0): olm.maxOpenShiftVersion 4.18' \
  "$(run --cluster-version 4.18.3 --properties foo=$fx/foo.v1.0.0.json | grep foo.v1.0.0 | head -1)"

# Nothing blocks: True/AsExpected, exit 0.
check ok-line 'ClusterOperator olm Upgradeable=True reason=AsExpected' \
  "$(co_line --cluster-version 4.17.0 --properties foo=$fx/foo.v1.0.0.json --properties p=$fx/plain.v0.1.0.json)"
check ok-msg 'All is well' "$(co_message --cluster-version 4.17.0 --properties foo=$fx/foo.v1.0.0.json)"
check ok-exit 0 "$(code --cluster-version 4.17.0 --properties foo=$fx/foo.v1.0.0.json --properties f=$fx/future.v3.json)"
check no-extensions 0 "$(code --cluster-version 4.17.0)"

# --to instead of the cluster version; BUNDLE from NAME:BUNDLE.
check to-exit 1 "$(code --to 4.19 --properties foo=$fx/foo.v1.0.0.json)"
check to-msg 'InstalledOLMOperatorsUpgradeable: Found ClusterExtensions that require upgrades prior to upgrading cluster to version 4.19: bundle "my.bundle" for ClusterExtension "foo".' \
  "$(co_message --to 4.19 --properties foo:my.bundle=$fx/foo.v1.0.0.json)"
check to-ok 0 "$(code --to 4.18 --properties foo=$fx/foo.v1.0.0.json)"

# Number text is kept: 4.10 is not 4.1.
check ten 0 "$(code --cluster-version 4.9.0 --properties t=$fx/ten.json)"
check ten-blocks 1 "$(code --cluster-version 4.10.0 --properties t=$fx/ten.json)"

# 4.23 is 5.0: "5.0" blocks at 4.23 and the message names 5.1.
check v423 'InstalledOLMOperatorsUpgradeable: Found ClusterExtensions that require upgrades prior to upgrading cluster to version 5.1: bundle "five" for ClusterExtension "f".' \
  "$(co_message --cluster-version 4.23.0 --properties f=$fx/five.json)"
check v422 0 "$(code --cluster-version 4.22.1 --properties f=$fx/five.json)"

# Errors fail closed.
check garbage-line 'ClusterOperator olm Upgradeable=False reason=InstalledOLMOperators_FailureGettingExtensionMetadata' \
  "$(co_line --cluster-version 4.17.0 --properties g=$fx/garbage.json)"
check garbage-msg "InstalledOLMOperatorsUpgradeable: error with cluster extension g: error in bundle garbage: could not convert olm.properties: failed to unmarshal properties annotation: invalid character 'a' looking for beginning of value" \
  "$(co_message --cluster-version 4.17.0 --properties g=$fx/garbage.json)"
check dup-msg 'InstalledOLMOperatorsUpgradeable: error(s) with cluster extension d: error in bundle dup: more than one olm.maxOpenShiftVersion found in bundle' \
  "$(co_message --cluster-version 4.17.0 --properties d=$fx/dup.json)"
check garbage-exit 1 "$(code --cluster-version 4.17.0 --properties g=$fx/garbage.json)"

# Bundle directories: the CSV annotation, properties.yaml (an unquoted 4.10 is the
# float 4.1 after sigs.k8s.io/yaml), both at once (a duplicate, an error), neither.
check bundle-annotation 1 "$(code --cluster-version 4.18.0 --bundle a=$fx/bundle-annotation)"
check bundle-annotation-name '  blocks  a (bundle annotated.v1.0.0): olm.maxOpenShiftVersion 4.18' \
  "$(run --cluster-version 4.18.0 --bundle a=$fx/bundle-annotation | grep "^  blocks")"
check bundle-yaml '  blocks  y (bundle yamlprops.v1.0.0): olm.maxOpenShiftVersion 4.1' \
  "$(run --cluster-version 4.9.0 --bundle y=$fx/bundle-yaml | grep "^  blocks")"
check bundle-both 'InstalledOLMOperatorsUpgradeable: error(s) with cluster extension b: error in bundle both.v1.0.0: more than one olm.maxOpenShiftVersion found in bundle' \
  "$(co_message --cluster-version 4.17.0 --bundle b=$fx/bundle-both)"
check bundle-none 0 "$(code --cluster-version 4.17.0 --bundle n=$fx/bundle-none)"

# JSON output carries all three conditions.
check json "$(printf 'InstalledOLMOperatorsUpgradeable False IncompatibleOperatorsInstalled\nOLMIncompatibleOperatorControllerDegraded False AsExpected\nUpgradeable False InstalledOLMOperators_IncompatibleOperatorsInstalled')" \
  "$("$bin" upgradeable --cluster-version 4.18.0 --properties foo=$fx/foo.v1.0.0.json -o json | python3 -c '
import json,sys
d=json.load(sys.stdin)
for c in d["conditions"]+[d["clusterOperatorUpgradeable"]]: print(c["type"], c["status"], c["reason"])')"

# Usage errors: exit 2.
check usage-nothing 2 "$(code)"
check usage-no-version 2 "$(code --properties foo=$fx/foo.v1.0.0.json)"
check usage-bad-version 2 "$(code --cluster-version 4.18 --properties foo=$fx/foo.v1.0.0.json)"
check usage-bad-to 2 "$(code --to 4.19.0)"
check usage-missing-file 2 "$(code --cluster-version 4.18.0 --properties foo=$fx/nope.json)"
check usage-missing-dir 2 "$(code --cluster-version 4.18.0 --bundle foo=$fx/nope)"
check usage-bad-pair 2 "$(code --cluster-version 4.18.0 --bundle foo)"
check usage-output 2 "$(code --cluster-version 4.18.0 -o yaml)"

# Cluster mode (--kubeconfig) takes no files and not both versions; an unreadable
# kubeconfig (or a build without cluster access) is exit 2.  The cluster itself is
# exercised by e2e/tests/test_upgradeable.py.
check kube-with-files 2 "$(code --kubeconfig /nonexistent --properties foo=$fx/foo.v1.0.0.json)"
check kube-both-versions 2 "$(code --kubeconfig /nonexistent --to 4.19 --cluster-version 4.18.0)"
check kube-sysns-offline 2 "$(code --system-namespace x --cluster-version 4.18.0)"
check kube-unreadable 2 "$(code --kubeconfig /nonexistent/kubeconfig)"

echo "upgradeable_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
