#!/usr/bin/env bash
# Behaviour of `olmv1 catalog validate` and `olmv1 catalog render`: exit codes, the
# summary line, problem lines for invalid fixtures, load errors naming file:line, and
# render of the real sample catalog (one JSON object per line, in load order).
# Usage: catalog.sh /path/to/olmv1   (run from cli/tests; OLMV1_SHARED = shared/)
set -u
bin=${1:?usage: $0 /path/to/olmv1}
shared=${OLMV1_SHARED:-../../../shared}
sample=$shared/data/catalogs-small/sample20
fix=../../api/tests/fixtures
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name expected actual
  if [ "$2" == "$3" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $1: expected [$2] got [$3]"; fi
}
rc_of() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }

# --help and usage errors.
check validate-help 0 "$(rc_of "$bin" catalog validate --help)"
grep -q 'Usage: olmv1 catalog validate DIR' "$tmp/out"; check validate-help-text 0 $?
grep -q '<file>:<line>: <rule>: <detail>' "$tmp/out"; check validate-help-format 0 $?
check render-help 0 "$(rc_of "$bin" catalog render --help)"
grep -q 'catalog.jsonl' "$tmp/out"; check render-help-text 0 $?
check validate-no-dir 2 "$(rc_of "$bin" catalog validate)"
check render-bad-flag 2 "$(rc_of "$bin" catalog render --bogus "$sample")"
check validate-two-dirs 2 "$(rc_of "$bin" catalog validate "$sample" "$sample")"

# Valid catalogs: exit 0 and one summary line.
check validate-sample20 0 "$(rc_of "$bin" catalog validate "$sample")"
check validate-summary "$sample: valid: 20 packages, 101 channels, 593 bundles, 714 blobs" "$(cat "$tmp/out")"
check validate-fixture 0 "$(rc_of "$bin" catalog validate "$fix/valid/basic")"

# Render: 20 olm.package + 101 olm.channel + 593 olm.bundle blobs, each a JSON object.
check render-sample20 0 "$(rc_of "$bin" catalog render "$sample")"
check render-lines 714 "$(wc -l < "$tmp/out" | tr -d ' ')"
check render-json ok "$(python3 -c '
import json, sys, collections
n = collections.Counter()
for line in open(sys.argv[1], encoding="utf-8"):
    obj = json.loads(line)
    assert isinstance(obj, dict), line[:80]
    # The catalogs hold no floats or U+2028, so the canonical compact form of Python
    # must give the same bytes: an independent check of key order and escaping.
    assert line == json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False) + "\n", line[:80]
    n[obj["schema"]] += 1
assert n == {"olm.package": 20, "olm.channel": 101, "olm.bundle": 593}, n
print("ok")' "$tmp/out" 2>&1 | tail -n 1)"
# Load order: files in lexical walk order, the package blob first in each file.
check render-first-package "cloud-native-postgresql" "$(head -n 1 "$tmp/out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])')"
check render-last-package "tigera-operator" "$(tail -n 1 "$tmp/out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["package"])')"
check render-unquoted-timestamp 1 "$(grep -c '"createdAt":"2025-06-24T14:07:09"' "$tmp/out")"
# Same bytes twice (deterministic).
"$bin" catalog render "$sample" | cmp -s - "$tmp/out"; check render-deterministic 0 $?
# Rendered output is itself a catalog (JSON lines) that renders to the same bytes.
mkdir -p "$tmp/rt" && cp "$tmp/out" "$tmp/rt/catalog.jsonl"
"$bin" catalog render "$tmp/rt" | cmp -s - "$tmp/out"; check render-roundtrip 0 $?
check validate-roundtrip 0 "$(rc_of "$bin" catalog validate "$tmp/rt")"
# .indexignore is honoured.
check render-indexignore 0 "$(rc_of "$bin" catalog render "$fix/indexignore")"
check render-indexignore-lines 9 "$(wc -l < "$tmp/out" | tr -d ' ')"

# Invalid catalogs: exit 1, every problem on stdout, a count on stderr.
check validate-heads 1 "$(rc_of "$bin" catalog validate "$fix/invalid/multiple-heads")"
check validate-heads-line 'catalog.yaml:6: channel-head: channel "foo/stable" has 2 heads: foo.v1.0.0, foo.v1.1.0' "$(cat "$tmp/out")"
check validate-heads-count "$fix/invalid/multiple-heads: invalid: 1 problem" "$(cat "$tmp/err")"
check validate-deprecations 1 "$(rc_of "$bin" catalog validate "$fix/invalid/deprecation-reference")"
check validate-deprecations-lines 5 "$(grep -c ': deprecation-reference: ' "$tmp/out")"
check validate-version 1 "$(rc_of "$bin" catalog validate "$fix/invalid/bundle-version")"
grep -q '^catalog.yaml:14: bundle-version: bundle "foo/foo.v1.0.0": version "1.0" is not strict semver' "$tmp/out"
check validate-version-line 0 $?
for d in "$fix"/invalid/*/; do
  name=$(basename "$d")
  check "validate-$name-rc" 1 "$(rc_of "$bin" catalog validate "$d")"
  [ -s "$tmp/out" ]; check "validate-$name-has-problems" 0 $?
done

# Load errors: exit 1 with file:line, for validate and render alike.
check validate-broken-yaml 1 "$(rc_of "$bin" catalog validate "$fix/malformed/broken-yaml")"
check validate-broken-yaml-msg "olmv1 catalog validate: $fix/malformed/broken-yaml/b.yaml:6: invalid YAML: mapping values are not allowed in this context" "$(cat "$tmp/err")"
check render-broken-json 1 "$(rc_of "$bin" catalog render "$fix/malformed/broken-json")"
grep -q "broken-json/catalog.json:4: invalid JSON" "$tmp/err"; check render-broken-json-msg 0 $?
check render-broken-json-no-stdout "" "$(cat "$tmp/out")"
check validate-missing-dir 1 "$(rc_of "$bin" catalog validate "$tmp/nope")"
mkdir -p "$tmp/cat" && printf 'schema: olm.package\nname: x\nv: .inf\n' > "$tmp/cat/c.yaml"
check render-inf 1 "$(rc_of "$bin" catalog render "$tmp/cat")"
grep -q 'c.yaml:3: value .inf cannot be represented in JSON' "$tmp/err"; check render-inf-msg 0 $?
# An empty directory is a valid, empty catalog.
mkdir -p "$tmp/empty"
check validate-empty 0 "$(rc_of "$bin" catalog validate "$tmp/empty")"
check render-empty "" "$(cd "$tmp" && "$bin" catalog render empty)"

echo "catalog_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
