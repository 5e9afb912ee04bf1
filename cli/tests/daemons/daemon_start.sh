#!/usr/bin/env bash
# cli_daemon_start: what catalogd and operator-controller do with their command line before
# they reach the API server: `version`/--version (the same text as `olmv1 version`), --help,
# --check-flags, and bad input at start, which must be ONE stderr line naming the flag and
# the file or port, exit 1 (2 for a bad command line), with nothing started.  The kubeconfig
# points at a port this script holds and never answers on; the script checks at the end that
# no daemon ever connected to it.  One live start per daemon checks the new listeners.
# Usage: daemon_start.sh CATALOGD OPERATOR_CONTROLLER OLMV1 TLS_FIXTURES_DIR
set -u
CATALOGD=${1:?usage}
OPCTL=${2:?usage}
OLMV1=${3:?usage}
FIX=$(cd "${4:?usage}" && pwd)
pass=0
fail=0
tmp=$(mktemp -d)
helper_pid=
cleanup() {
    [ -n "$helper_pid" ] && kill "$helper_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect NAME WANT_EXIT WANT_STDERR_SUBSTRING -- CMD...: exit code, no stdout, exactly one stderr
# line containing the substring ("" for an empty stderr).
expect() {
    local name=$1 want_rc=$2 want_err=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? lines
    lines=$(wc -l <"$tmp/err")
    if [[ $rc != "$want_rc" ]]; then
        bad "$name: exit $rc (want $want_rc); stderr: $(cat "$tmp/err")"
    elif [[ -s $tmp/out ]]; then
        bad "$name: unexpected stdout: $(head -3 "$tmp/out")"
    elif [[ -z $want_err && -s $tmp/err ]]; then
        bad "$name: unexpected stderr: $(cat "$tmp/err")"
    elif [[ -n $want_err && ($lines != 1 || $(cat "$tmp/err") != *"$want_err"*) ]]; then
        bad "$name: stderr is not one line with [$want_err]: $(cat "$tmp/err")"
    else
        ok
    fi
}

# A helper holding two ports: "busy" (listening, for "port in use") and "api" (the fake API
# server, counting connections).  It prints both, then the count for each line it reads.
mkfifo "$tmp/helper_in"
cat >"$tmp/helper.py" <<'PY'
import select, socket, sys
busy, api = socket.socket(), socket.socket()
for s in (busy, api):
    s.bind(("127.0.0.1", 0))
    s.listen(16)
print(busy.getsockname()[1], api.getsockname()[1], flush=True)
api.setblocking(False)
seen = 0
while True:
    r, _, _ = select.select([sys.stdin, api], [], [])
    if api in r:
        api.accept()[0].close()
        seen += 1
    if sys.stdin in r:
        if not sys.stdin.readline():
            break
        print(seen, flush=True)
PY
python3 -u "$tmp/helper.py" >"$tmp/helper_out" <"$tmp/helper_in" &
helper_pid=$!
exec 3>"$tmp/helper_in"
for _ in $(seq 50); do [ -s "$tmp/helper_out" ] && break; sleep 0.1; done
read -r busy api <"$tmp/helper_out"
api_contacts() { # asks the helper; its answer is the last line of helper_out
    local n
    n=$(wc -l <"$tmp/helper_out")
    echo >&3
    for _ in $(seq 50); do [ "$(wc -l <"$tmp/helper_out")" -gt "$n" ] && break; sleep 0.1; done
    tail -1 "$tmp/helper_out"
}
cat >"$tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:$api"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
export KUBECONFIG=$tmp/kubeconfig
mkdir -p "$tmp/empty" "$tmp/junk" "$tmp/cas"
echo "not a certificate" >"$tmp/junk/ca.crt"
cp "$FIX/server.crt" "$tmp/cas/ca.crt"
printf '[[registry]]\nlocation = nope\n' >"$tmp/bad-registries.conf"
cd_args=(--cache-dir "$tmp/catalogd-cache" --catalogs-server-addr 127.0.0.1:0)
oc_args=(--cache-path "$tmp/opctl-cache" --health-probe-bind-address 127.0.0.1:0)

# --- version: one text for the three binaries
v_cli=$("$OLMV1" version)
v_cd=$("$CATALOGD" version)
v_cd2=$("$CATALOGD" --version)
v_oc=$("$OPCTL" version)
v_oc2=$("$OPCTL" --check-flags --version)
ver=${v_cli#olmv1 }
if [[ $v_cli == "olmv1 $ver" && -n $ver && $v_cd == "catalogd $ver" && $v_cd2 == "$v_cd" &&
      $v_oc == "operator-controller $ver" && $v_oc2 == "$v_oc" ]]; then ok; else
    bad "versions differ: [$v_cli] [$v_cd] [$v_cd2] [$v_oc] [$v_oc2]"; fi
expect "catalogd version x" 2 "version takes no arguments" -- "$CATALOGD" version x

# --- help and the check mode
for d in "$CATALOGD" "$OPCTL"; do
    if "$d" --help | grep -q -- "--check-flags" && "$d" --help | grep -q -- "--metrics-bind-address"; then ok
    else bad "$d --help does not document --check-flags and --metrics-bind-address"; fi
    # Paths that do not exist are fine: the check mode reads no file.
    expect "$d --check-flags" 0 "" -- "$d" --check-flags --tls-cert /nonexistent.crt --tls-key /nonexistent.key \
        --pull-cas-dir /nonexistent --metrics-bind-address ":$busy" --kubeconfig /nonexistent
    expect "$d unknown flag" 2 "unknown flag --no-such-flag" -- "$d" --no-such-flag
    expect "$d bad feature gate" 2 "--feature-gates: unrecognized feature gate \"Bogus\"" -- \
        "$d" --feature-gates Bogus=true
    expect "$d bad address" 2 "--metrics-bind-address: want :PORT" -- "$d" --check-flags --metrics-bind-address 7443
    expect "$d bad secret" 2 "--global-pull-secret: want NAMESPACE/NAME" -- "$d" --global-pull-secret x
    expect "$d bad TLS profile" 2 "--tls-profile: want old, intermediate, modern or custom, got \"strict\"" -- \
        "$d" --check-flags --tls-profile strict
    expect "$d custom TLS without custom" 2 "--tls-custom-ciphers is used only with --tls-profile custom" -- \
        "$d" --check-flags --tls-custom-ciphers TLS_AES_128_GCM_SHA256
    expect "$d bad log level" 2 "--log-level: want error, warn, info or debug, got \"trace\"" -- \
        "$d" --check-flags --log-level trace
    expect "$d bad log format" 2 "--log-format: want text or json, got \"logfmt\"" -- "$d" --check-flags --log-format logfmt
    expect "$d klog verbosity" 0 "" -- "$d" --check-flags -v 4 --log-format json --v=2 --log-level warn
    expect "$d custom TLS profile" 0 "" -- "$d" --check-flags --tls-profile Custom --tls-custom-version VersionTLS13 \
        --tls-custom-ciphers TLS_AES_128_GCM_SHA256,ECDHE-RSA-AES128-GCM-SHA256 --tls-custom-curves X25519,secp256r1
done

# --- bad input at start: one line, exit 1, before the API server is contacted
for d in "$CATALOGD" "$OPCTL"; do
    if [[ $d == "$CATALOGD" ]]; then args=("${cd_args[@]}"); else args=("${oc_args[@]}"); fi
    expect "$d missing cert" 1 "--tls-cert: cannot open /nonexistent.crt: No such file or directory" -- \
        "$d" "${args[@]}" --tls-cert /nonexistent.crt --tls-key "$FIX/server.key"
    expect "$d cert given as key" 1 "--tls-key $FIX/server.crt: holds no PEM private key" -- \
        "$d" "${args[@]}" --tls-cert "$FIX/server.crt" --tls-key "$FIX/server.crt"
    expect "$d mismatched pair" 1 "--tls-cert $FIX/server.crt and --tls-key $FIX/other.key do not match" -- \
        "$d" "${args[@]}" --tls-cert "$FIX/server.crt" --tls-key "$FIX/other.key"
    expect "$d missing pull CAs" 1 "--pull-cas-dir: cannot read the directory $tmp/nope: No such file or directory" -- \
        "$d" "${args[@]}" --pull-cas-dir "$tmp/nope"
    expect "$d empty pull CAs" 1 "--pull-cas-dir: $tmp/empty holds no *.crt or *.pem file" -- \
        "$d" "${args[@]}" --pull-cas-dir "$tmp/empty"
    expect "$d malformed registries.conf" 1 "--registries-conf: $tmp/bad-registries.conf: line 2: " -- \
        "$d" "${args[@]}" --registries-conf "$tmp/bad-registries.conf"
    expect "$d missing registries.conf" 1 "--registries-conf: registries configuration $tmp/nope.conf: No such file" -- \
        "$d" "${args[@]}" --registries-conf "$tmp/nope.conf"
    expect "$d metrics port in use" 1 "--metrics-bind-address 127.0.0.1:$busy: " -- \
        "$d" "${args[@]}" --metrics-bind-address "127.0.0.1:$busy"
    expect "$d health port in use" 1 "--health-probe-bind-address 127.0.0.1:$busy: " -- \
        "$d" "${args[@]}" --health-probe-bind-address "127.0.0.1:$busy"
    if grep -q "address already in use" "$tmp/err"; then ok; else bad "$d: $(cat "$tmp/err")"; fi
done
expect "catalogd server port in use" 1 "--catalogs-server-addr 127.0.0.1:$busy: " -- \
    "$CATALOGD" --cache-dir "$tmp/catalogd-cache" --catalogs-server-addr "127.0.0.1:$busy"
expect "catalogd-cas-dir junk" 1 "--catalogd-cas-dir: $tmp/junk/ca.crt holds no PEM certificate" -- \
    "$OPCTL" "${oc_args[@]}" --catalogd-cas-dir "$tmp/junk"
expect "catalogd-ca-file missing" 1 "--catalogd-ca-file: cannot open $tmp/nope.pem" -- \
    "$OPCTL" "${oc_args[@]}" --catalogd-cas-dir "$tmp/cas" --catalogd-ca-file "$tmp/nope.pem"

# --- none of the above reached the API server
contacts=$(api_contacts)
if [[ $contacts == 0 ]]; then ok; else bad "$contacts connection(s) to the API server before the live starts"; fi

# --- live: the new listeners answer (the API server never answers meanwhile)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
get() { curl -sS --max-time 5 --cacert "$FIX/server.crt" "$@"; }
wait_for() { for _ in $(seq 300); do curl -s -o /dev/null --max-time 1 -k "$1" && return 0; sleep 0.1; done; return 1; }
cport=$(free_port) chport=$(free_port) cmport=$(free_port)
"$CATALOGD" --cache-dir "$tmp/catalogd-cache" --catalogs-server-addr "127.0.0.1:$cport" --no-access-log \
    --health-probe-bind-address "127.0.0.1:$chport" --metrics-bind-address "127.0.0.1:$cmport" \
    --tls-cert "$FIX/server.crt" --tls-key "$FIX/server.key" --pull-cas-dir "$tmp/cas" 2>"$tmp/catalogd.log" &
cpid=$!
hport=$(free_port) mport=$(free_port)
"$OPCTL" --cache-path "$tmp/opctl-cache" --health-probe-bind-address "127.0.0.1:$hport" \
    --metrics-bind-address "127.0.0.1:$mport" --tls-cert "$FIX/server.crt" --tls-key "$FIX/server.key" \
    --catalogd-cas-dir "$tmp/cas" --global-pull-secret olmv1-system/pull 2>"$tmp/opctl.log" &
opid=$!
wait_for "https://127.0.0.1:$cmport/metrics" && wait_for "https://127.0.0.1:$mport/metrics" || bad "listeners did not start"
# The metrics listeners want a bearer token (TokenReview + SubjectAccessReview): none is 401
# at once, without asking the API server; e2e/tests/test_metrics_auth.py runs the rest live.
if [[ $(get -w '%{http_code}' "https://127.0.0.1:$cmport/metrics") == $'Unauthorized\n401' ]]; then ok; else bad "catalogd metrics listener"; fi
if [[ $(get -o /dev/null -w '%{http_code}' "https://127.0.0.1:$cport/catalogs/x/api/v1/all") == 404 ]]; then ok; else bad "catalogd https server"; fi
if [[ $(curl -sS --max-time 5 "http://127.0.0.1:$chport/healthz") == ok ]]; then ok; else bad "catalogd health listener"; fi
if [[ $(get -w '%{http_code}' "https://127.0.0.1:$mport/metrics") == $'Unauthorized\n401' ]]; then ok; else bad "operator-controller metrics over https"; fi
if [[ $(get -o /dev/null -w '%{http_code}' "https://127.0.0.1:$mport/healthz") == 404 ]]; then ok; else bad "metrics listener serves only /metrics"; fi
# With a metrics listener, /metrics is served there only.
if [[ $(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$hport/metrics") == 404 ]]; then ok; else bad "operator-controller metrics on the health listener"; fi
if [[ $(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "https://127.0.0.1:$cport/metrics" -k) == 404 ]]; then ok; else bad "catalogd metrics on the catalog server"; fi
# --global-pull-secret is watched: the API server refusing shows as a line naming the Secret.
# (logged after its first request failed: as slow to come as the contact below, so 30 s too)
for _ in $(seq 300); do grep -q "watching the global pull secret olmv1-system/pull" "$tmp/opctl.log" && break; sleep 0.1; done
if grep -q "watching the global pull secret olmv1-system/pull" "$tmp/opctl.log"; then ok; else bad "no global pull secret line"; fi
# --- the live starts do reach it (so the zero above means something).  Asked before the daemons
# stop: their first API request may come after the lines above (slow under ASan on a busy
# machine; CI once killed them first), so this waits for it, up to 30 s.
for _ in $(seq 60); do contacts=$(api_contacts); [[ $contacts -gt 0 ]] && break; sleep 0.5; done
if [[ $contacts -gt 0 ]]; then ok; else bad "the live starts never reached the fake API server"; fi
kill -TERM "$cpid" "$opid"
wait "$cpid" && wait "$opid" && ok || bad "a daemon did not stop cleanly: $(tail -3 "$tmp/catalogd.log" "$tmp/opctl.log")"
exec 3>&-

echo "daemon_start: $pass passed, $fail failed"
[ "$fail" = 0 ]
