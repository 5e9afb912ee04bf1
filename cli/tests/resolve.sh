#!/usr/bin/env bash
# olmv1 resolve against real catalog data (shared/data/catalogs-small/sample20).
# Expectations come from reading the catalog's upgrade graph by hand.
set -u
bin=$1
cat_dir=${OLMV1_SHARED:-../../../shared}/data/catalogs-small/sample20
pass=0 fail=0

check() { # name expected actual
  if [ "$2" == "$3" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $1: expected [$2] got [$3]"; fi
}
bundle_of() { "$bin" resolve --catalog sample="$cat_dir" -o json "$@" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["bundle"])' 2>/dev/null; }
error_of() { "$bin" resolve --catalog sample="$cat_dir" "$@" 2>&1 >/dev/null | tail -n 1; }

# Latest across every channel: tigera's highest version.
check latest "tigera-operator.v1.40.4" "$(bundle_of --package tigera-operator)"
check channel "tigera-operator.v1.38.2" "$(bundle_of --package tigera-operator --channel release-v1.38)"
check range "tigera-operator.v1.38.2" "$(bundle_of --package tigera-operator --version '>=1.38, <1.40')"
check tilde "tigera-operator.v1.38.1" "$(bundle_of --package tigera-operator --version '~1.38.0, !=1.38.2')"
# From 1.38.0 the skipRange "<1.40.4" of v1.40.4 is an upgrade edge.
check skiprange "tigera-operator.v1.40.4" \
  "$(bundle_of --package tigera-operator --installed-bundle tigera-operator.v1.38.0 --installed-version 1.38.0)"
# Edges only from the requested channel.
check channel-edges "tigera-operator.v1.38.2" \
  "$(bundle_of --package tigera-operator --channel release-v1.38 --installed-bundle tigera-operator.v1.38.0 --installed-version 1.38.0)"
# Quay 3.15.2 -> stable-3.17: 3.17.0 replaces 3.16.2, so nothing in stable-3.17 succeeds 3.15.2.
check no-successor 'error upgrading from currently installed version "3.15.2": no bundles found for package "project-quay" in channels [stable-3.17]' \
  "$(error_of --package project-quay --channel stable-3.17 --installed-bundle quay-operator.v3.15.2 --installed-version 3.15.2)"
check self-certified "quay-operator.v3.17.4" \
  "$(bundle_of --package project-quay --channel stable-3.17 --policy SelfCertified --installed-bundle quay-operator.v3.15.2 --installed-version 3.15.2)"
check missing 'no bundles found for package "no-such-package"' "$(error_of --package no-such-package)"
check bad-range 'desired version range "1.2.3 - " is invalid' "$(error_of --package tigera-operator --version '1.2.3 - ' | cut -d: -f1)"
# Two copies of the same catalog with equal priority are ambiguous; priority breaks the tie.
check ambiguous 'found bundles for package "tigera-operator" in multiple catalogs with the same priority [a sample]' \
  "$(error_of --catalog a="$cat_dir" --package tigera-operator)"
check priority "a" "$("$bin" resolve --catalog sample="$cat_dir" --catalog a="$cat_dir" --priority a=1 --package tigera-operator -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["catalog"])')"
check unavailable "sample" "$("$bin" resolve --catalog sample="$cat_dir" --catalog a="$cat_dir" --unavailable a --package tigera-operator -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["catalog"])')"
# Exit codes: 0 resolved, 1 resolution error, 2 usage.
"$bin" resolve --catalog sample="$cat_dir" --package tigera-operator >/dev/null 2>&1; check exit-ok 0 $?
"$bin" resolve --catalog sample="$cat_dir" --package nope >/dev/null 2>&1; check exit-fail 1 $?
"$bin" resolve --package nope >/dev/null 2>&1; check exit-usage 2 $?
"$bin" resolve --catalog sample="$cat_dir" --package x --policy Selfcertified >/dev/null 2>&1; check exit-bad-policy 2 $?
# Text output explains the filters.
out=$("$bin" resolve --catalog sample="$cat_dir" --package tigera-operator --channel release-v1.38 --version '<1.38.2')
check explain-channel 1 "$(grep -c 'in channels \[release-v1.38\]: 3 kept, 2 removed' <<<"$out")"
check explain-range 1 "$(grep -c 'matching version "<1.38.2": 2 kept, 1 removed' <<<"$out")"
check explain-result 1 "$(grep -c '^bundle: tigera-operator.v1.38.1$' <<<"$out")"

echo "resolve_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
