#!/usr/bin/env bash
# Behaviour of `olmv1 semver match` and `olmv1 semver compare`: outputs, exit codes,
# usage, batch mode.  Usage: semver.sh /path/to/olmv1
set -u
OLMV1=${1:?usage: $0 /path/to/olmv1}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME WANT_EXIT WANT_STDOUT -- CMD...   (stdout compared exactly)
expect() {
    local name=$1 want_rc=$2 want_out=$3
    shift 4
    local out rc
    out=$("$@" 2>"$tmp/err")
    rc=$?
    if [[ $rc == "$want_rc" && $out == "$want_out" ]]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $name: exit $rc (want $want_rc), stdout [$out] (want [$want_out]), stderr: $(cat "$tmp/err")"
    fi
}

# stderr_has NAME PATTERN: the last command's stderr contains PATTERN
stderr_has() {
    if grep -qF -- "$2" "$tmp/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $1: stderr lacks [$2]: $(cat "$tmp/err")"
    fi
}

m() { "$OLMV1" semver match "$@"; }
c() { "$OLMV1" semver compare "$@"; }

# --- match, masterminds (default) ---
expect "tilde in"            0 true  -- m '~1.12' 1.12.9
expect "tilde out"           0 false -- m '~1.12' 1.13.0
expect "explicit syntax"     0 true  -- m --syntax masterminds '>=1.11, <1.13' 1.12.0
expect "syntax= form"        0 false -- m --syntax=masterminds '^0.0.3' 0.0.4
expect "lenient version"     0 true  -- m '1.2.x' v1.2
expect "prerelease gate"     0 false -- m '<4.1.2' 4.1.2-rc.1
expect "hyphen range"        0 true  -- m '4.1.0 - 4.1.2' 4.1.2
expect "options after args"  0 true  -- m '>=1' 2.0.0 --syntax masterminds
expect "invalid range"       2 ""    -- m '!1.2.3' 1.2.3
stderr_has "invalid range message" '"!1.2.3"'
expect "empty range"         2 ""    -- m '' 1.2.3
expect "invalid version"     3 ""    -- m '>=1' 1.2.3.4
stderr_has "invalid version message" '"1.2.3.4"'
expect "range checked first" 2 ""    -- m '>>1' bad

# --- match, blang ---
expect "blang prerelease"    0 true  -- m --syntax blang '<4.1.2' 4.1.2-rc.1
expect "blang hyphen"        0 false -- m --syntax blang '4.1.0 - 4.1.2' 4.1.1
expect "blang !=x"           0 false -- m --syntax blang '!=4.1.x' 5.0.0
expect "blang bang space"    0 true  -- m --syntax blang '! 1.2.3' 1.2.3
expect "blang empty alt"     0 true  -- m --syntax blang '1.0.0 || || 2.0.0' 2.0.0
expect "blang tilde invalid" 2 ""    -- m --syntax blang '~1.2.3' 1.2.3
expect "blang comma invalid" 2 ""    -- m --syntax=blang '>=1.0.0,<2.0.0' 1.2.3
expect "blang strict version" 3 ""   -- m --syntax blang '>=1.0.0' v1.2.3
expect "blang short version" 3 ""    -- m --syntax blang '>=1.0.0' 1.2

# --- compare ---
expect "compare less"        0 -1 -- c 1.0.0-rc.1 1.0.0
expect "compare equal build" 0 0  -- c 1.0.0+a 1.0.0+b
expect "compare greater"     0 1  -- c 1.10.0 1.9.0
expect "compare lenient"     0 0  -- c v1 1.0.0
expect "compare ascii"       0 -1 -- c 1.0.0-a10 1.0.0-a9
expect "compare blang"       0 1  -- c --syntax blang 1.0.0-beta.-2 1.0.0-beta.4
expect "compare blang strict" 3 "" -- c --syntax blang v1 1.0.0
expect "compare bad first"   3 "" -- c 1.2.3.4 1.0.0
expect "compare bad second"  3 "" -- c 1.0.0 x
stderr_has "compare message" '"x"'

# --- usage ---
expect "match help"          0 "$(m --help)" -- m --help
grep -q 'Usage: olmv1 semver match' <(m --help) && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: match --help text"; }
grep -q 'Usage: olmv1 semver compare' <(c -h) && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: compare -h text"; }
expect "match no args"       2 "" -- m
stderr_has "usage on stderr" 'Usage: olmv1 semver match'
expect "match one arg"       2 "" -- m '>=1'
expect "match three args"    2 "" -- m '>=1' 1.0.0 2.0.0
expect "bad syntax"          2 "" -- m --syntax npm '>=1' 1.0.0
stderr_has "bad syntax message" '"npm"'
expect "syntax no value"     2 "" -- m --syntax
expect "unknown option"      2 "" -- c --frobnicate 1 2
expect "batch with args"     2 "" -- m --batch '>=1' 1.0.0
expect "compare no args"     2 "" -- c

# --- batch ---
printf '>=1.0.0\t1.2.3\n<1.0.0\t1.2.3\n!1.2.3\t1.2.3\n>=1\t1.2.3.4\n~1.2.3\tv1.2.5\r\nno-tab-line\n\t1.0.0\n^0.0.3\t0.0.3' >"$tmp/match.in"
expect "match batch" 0 "$(printf 'true\nfalse\nerror\nbadversion\ntrue\nerror\nerror\ntrue')" \
    -- m --batch <"$tmp/match.in"
printf '>=1.0.0\t1.2.3\n~1.2.3\t1.2.3\n>=1.0.0\tv1.2.3\n<4.1.2\t4.1.2-rc.1\n1.0.0 || || 2.0.0\t3.0.0\n' >"$tmp/blang.in"
expect "match batch blang" 0 "$(printf 'true\nerror\nbadversion\ntrue\nfalse')" \
    -- m --batch --syntax blang <"$tmp/blang.in"
printf '1.0.0\t2.0.0\n2.0.0\t1.0.0\n1.0.0+x\t1.0.0\nv1\t1.0.0\nbad\t1.0.0\n1.0.0\n' >"$tmp/cmp.in"
expect "compare batch" 0 "$(printf -- '-1\n1\n0\n0\nbadversion\nbadversion')" -- c --batch <"$tmp/cmp.in"
expect "compare batch blang" 0 "$(printf -- '-1\n1\n0\nbadversion\nbadversion\nbadversion')" \
    -- c --batch --syntax blang <"$tmp/cmp.in"
expect "empty batch" 0 "" -- m --batch </dev/null

# 100k lines must be quick
awk 'BEGIN { for (i = 0; i < 100000; i++) printf ">=1.%d.0, <2.0.0 || ~3.%d\t%d.%d.%d\n", i % 50, i % 7, i % 4, i % 60, i % 9 }' >"$tmp/big.in"
start=$(date +%s%N)
lines=$("$OLMV1" semver match --batch <"$tmp/big.in" | grep -cE '^(true|false)$')
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [[ $lines == 100000 && $ms -lt 10000 ]]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL: 100k batch: $lines answers in ${ms} ms"
fi

echo "$pass passed, $fail failed (100k-line batch: ${ms} ms)"
[[ $fail == 0 ]]
