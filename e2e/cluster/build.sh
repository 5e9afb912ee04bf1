#!/usr/bin/env bash
# build.sh: build the test control-plane binaries from their Go modules.
#
# Output (one directory per component and version, so several versions can coexist
# and a version bump simply builds into a fresh directory):
#   $CACHE/bin/etcd-<ver>/etcd
#   $CACHE/bin/k8s-<ver>/kube-apiserver  [+ kube-controller-manager, kube-scheduler]
#   $CACHE/bin/kwok-<ver>/kwok                                        (optional)
#   $CACHE/bin/k8s-<ver>/kubelet, kube-proxy, $CACHE/bin/coredns-<ver>/coredns  (OLMV1_NODE=real)
# with CACHE=${OLMV1_CACHE_DIR:-$HOME/.cache/olmv1}.
#
# A component is skipped when its binaries already exist, so a second run takes
# well under a second. Module and build caches are Go's defaults (GOPATH/GOCACHE),
# which keeps rebuilds after a version bump cheap.
#
# Environment:
#   OLMV1_K8S_VERSION   (default v1.36.3)   newest 1.36 patch that builds with Go 1.26
#   OLMV1_ETCD_VERSION  (default v3.6.16)
#   OLMV1_KWOK_VERSION  (default v0.8.0)
#   OLMV1_CLUSTER_FULL  (default 1) also build kube-controller-manager, kube-scheduler
#                       and kwok: needed for Deployments to become Available, namespace
#                       deletion and garbage collection. 0 = etcd + kube-apiserver only
#                       (saves ~4 min of a cold build).
#   OLMV1_NODE          (default kwok) real: also kubelet and kube-proxy (same module and
#                       version as kube-apiserver) and CoreDNS (a main with only the plugins
#                       the node needs), for the real node of node.sh.
#   OLMV1_COREDNS_VERSION (default v1.15.0)
#
# Prints the bin directories as shell assignments on stdout (last lines):
#   OLMV1_ETCD_BIN=... OLMV1_K8S_BIN=... [OLMV1_KWOK_BIN=...]
# Progress and timings go to stderr so callers can `eval` stdout.
set -euo pipefail

K8S_VERSION=${OLMV1_K8S_VERSION:-v1.36.3}
ETCD_VERSION=${OLMV1_ETCD_VERSION:-v3.6.16}
KWOK_VERSION=${OLMV1_KWOK_VERSION:-v0.8.0}
COREDNS_VERSION=${OLMV1_COREDNS_VERSION:-v1.15.0}
FULL=${OLMV1_CLUSTER_FULL:-1}
NODE=${OLMV1_NODE:-kwok}
CACHE=${OLMV1_CACHE_DIR:-$HOME/.cache/olmv1}

ETCD_BIN=$CACHE/bin/etcd-$ETCD_VERSION
K8S_BIN=$CACHE/bin/k8s-$K8S_VERSION
KWOK_BIN=$CACHE/bin/kwok-$KWOK_VERSION
COREDNS_BIN=$CACHE/bin/coredns-$COREDNS_VERSION

# Go may not be on PATH for non-login shells (it lives in /usr/local/go/bin here).
if ! command -v go >/dev/null 2>&1; then
  PATH=$PATH:/usr/local/go/bin
fi
command -v go >/dev/null || { echo "build.sh: go not found (need Go >= 1.26)" >&2; exit 1; }

# GOTOOLCHAIN=local: a go.mod asking for a newer Go must fail loudly, not try a toolchain
#   download. GOWORK=off: a go.work above the temp dir must not leak in.
# CGO_ENABLED=0: upstream builds these statically; avoids needing a C toolchain for Go.
# -mod=mod: let `go build` fill in go.sum entries that `go get` did not record.
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"

log() { echo "build.sh: $*" >&2; }

# modfield MODULE@VERSION FIELD: a field (GoMod, Dir) of `go mod download -json`, downloading
# the module if needed; sed instead of jq keeps the dependency list short.
modfield() {
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"'"$2"'": "\(.*\)",\{0,1\}$/\1/p'
}

# timed NAME CMD...: run CMD and report its wall time, so the cost of every step is visible.
# CMD's output (hundreds of "go: downloading/added" lines on a cold cache) goes to a log that
# is shown only if CMD fails, which keeps CI logs readable.
timed() {
  local name=$1 t0 t1 out=$WORK/step.log; shift
  t0=$(date +%s%N)
  if ! "$@" >"$out" 2>&1; then
    cat "$out" >&2
    log "$name FAILED"
    return 1
  fi
  t1=$(date +%s%N)
  t0=$(( (t1 - t0) / 100000000 ))   # tenths of a second
  log "$(printf '%-28s %5d.%ds' "$name" $((t0 / 10)) $((t0 % 10)))"
}

have() { local f; for f in "$@"; do [ -x "$f" ] || return 1; done; }
k8s_want=("$K8S_BIN/kube-apiserver")
if [ "$FULL" = 1 ]; then k8s_want+=("$K8S_BIN/kube-controller-manager" "$K8S_BIN/kube-scheduler"); fi
if [ "$NODE" = real ]; then k8s_want+=("$K8S_BIN/kubelet" "$K8S_BIN/kube-proxy"); fi
all_cached() {
  have "$ETCD_BIN/etcd" "${k8s_want[@]}" || return 1
  [ "$FULL" != 1 ] || { have "$KWOK_BIN/kwok" && [ -s "$KWOK_BIN/stages.yaml" ]; } || return 1
  [ "$NODE" != real ] || have "$COREDNS_BIN/coredns"
}
print_dirs() {
  echo "OLMV1_ETCD_BIN=$ETCD_BIN"
  echo "OLMV1_K8S_BIN=$K8S_BIN"
  if [ "$FULL" = 1 ]; then echo "OLMV1_KWOK_BIN=$KWOK_BIN"; fi
  if [ "$NODE" = real ]; then echo "OLMV1_COREDNS_BIN=$COREDNS_BIN"; fi
}
# Fast path without the lock: another build of other components must not hold us up.
if all_cached; then
  log "cached: etcd $ETCD_VERSION, kubernetes $K8S_VERSION$([ "$FULL" != 1 ] || echo ", kwok $KWOK_VERSION")$([ "$NODE" != real ] || echo ", coredns $COREDNS_VERSION")"
  print_dirs
  exit 0
fi

# Two up.sh runs (say the developer's cluster and a pytest one) may start on a cold cache at the
# same time; serialise builds so they do not compile the same thing twice or race on the output.
mkdir -p "$CACHE/bin"
exec 9>"$CACHE/build.lock"
flock 9

WORK=$(mktemp -d -t olmv1-build.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# ---------------------------------------------------------------- etcd
# go.etcd.io/etcd/server/v3's module root is `package main`. `go install ...@v3.x` is refused
# because server/go.mod has replace directives, so build it from a throw-away wrapper module;
# its own wrapper keeps MVS from mixing etcd's dependency versions into kube-apiserver's.
build_etcd() {
  local d=$WORK/etcd
  mkdir -p "$d" && cd "$d"
  go mod init local/olmv1-etcd >/dev/null 2>&1
  timed "etcd: go get" go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  # Version is compiled in (api/version.Version), no -X needed.
  timed "etcd: go build" go build -trimpath -ldflags "-s -w" -o "$d/etcd" go.etcd.io/etcd/server/v3
  mkdir -p "$ETCD_BIN"
  mv "$d/etcd" "$ETCD_BIN/etcd"   # move only a complete binary into place
}

# ---------------------------------------------------------------- kubernetes
# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with ./staging/...
# Replaces only apply in the main module, so a wrapper must pin every staging module to the
# published tag v0.Y.Z (== Kubernetes v1.Y.Z). The list is read from the upstream go.mod itself.
build_k8s() {
  local d=$WORK/k8s kmod sv v major minor ldf p pkgs=() cmds=()
  # Only the missing commands: adding the node's kubelet to a cached control plane must not
  # rebuild kube-apiserver.
  for p in "${k8s_want[@]}"; do [ -x "$p" ] || cmds+=("${p##*/}"); done
  for p in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$p"); done

  mkdir -p "$d" && cd "$d"
  go mod init local/olmv1-k8s >/dev/null 2>&1
  kmod=$(modfield "k8s.io/kubernetes@$K8S_VERSION" GoMod)
  [ -s "$kmod" ] || { log "cannot download k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
  # Same `go` and `godebug` lines as upstream: only the main module's lines set the GODEBUG
  # defaults, so copying them gives the runtime behaviour of official builds.
  go mod edit -go="$(awk '$1=="go"{print $2; exit}' "$kmod")"
  awk '/^godebug \(/{b=1;next} b&&/^\)/{b=0;next} b{print $1;next} /^godebug /{print $2}' "$kmod" |
    while read -r kv; do go mod edit -godebug="$kv"; done
  sv="v0.${K8S_VERSION#v1.}"     # v1.36.3 -> v0.36.3
  sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "$kmod" |
    sort -u | while read -r m; do go mod edit -replace="$m=$m@$sv"; done

  timed "k8s: go get" go get $(printf '%s@'"$K8S_VERSION"' ' "${pkgs[@]}")

  # Stamp the version like hack/lib/version.sh does; otherwise /version reports
  # v0.0.0-master and kubectl/kwok cannot tell the server version.
  v=${K8S_VERSION#v}; major=${v%%.*}; minor=${v#*.}; minor=${minor%%.*}
  ldf="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
    ldf+=" -X $p.gitTreeState=clean -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  mkdir -p "$d/out"
  # Same tags as upstream release builds (hack/lib/golang.sh).
  timed "k8s: go build ${cmds[*]}" \
    go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldf" -o "$d/out/" "${pkgs[@]}"
  mkdir -p "$K8S_BIN"
  for p in "${cmds[@]}"; do mv "$d/out/$p" "$K8S_BIN/$p"; done
}

# ---------------------------------------------------------------- kwok
# kwok's go.mod has no replace directives, so plain `go install pkg@version` works.
build_kwok() {
  mkdir -p "$WORK/kwok"
  timed "kwok: go install" env GOBIN="$WORK/kwok" \
    go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mkdir -p "$KWOK_BIN"
  mv "$WORK/kwok/kwok" "$KWOK_BIN/kwok"
}

# The kwok controller has no built-in stages: without any it exits with "no stages found".
# kwokctl writes its embedded default stages into the config; do the same, taking the YAML
# from the very module version that was built (node init + lease heartbeat, pod ready /
# complete / delete: what `kwokctl create cluster` uses).
kwok_stages() {
  local dir f out=$WORK/stages.yaml
  dir=$(modfield "sigs.k8s.io/kwok@$KWOK_VERSION" Dir)
  : > "$out"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    { echo "---"; cat "$dir/kustomize/stage/$f"; } >> "$out"
  done
  mkdir -p "$KWOK_BIN"
  mv "$out" "$KWOK_BIN/stages.yaml"
}

# ---------------------------------------------------------------- CoreDNS
# The node's cluster DNS. github.com/coredns/coredns's own main links every plugin (the cloud
# SDKs of route53, azure, clouddns ... are most of its build time); CoreDNS documents building
# a main of one's own that imports coremain and only the wanted plugins, with their order
# (dnsserver.Directives) a subsequence of upstream's plugin.cfg. Own wrapper module: its
# client-go must not meet kube-apiserver's.
build_coredns() {
  local d=$WORK/coredns pl imports=""
  local plugins=(bind ready health errors log cache kubernetes loop)
  mkdir -p "$d" && cd "$d"
  go mod init local/olmv1-coredns >/dev/null 2>&1
  for pl in "${plugins[@]}"; do imports+=$'\t_ "github.com/coredns/coredns/plugin/'"$pl"$'"\n'; done
  cat > main.go <<EOF
// Generated by e2e/cluster/build.sh: CoreDNS with only the plugins the test node needs.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
$imports)

func init() { dnsserver.Directives = []string{$(printf '"%s", ' "${plugins[@]}")} }

func main() { coremain.Run() }
EOF
  # The packages, not the module: the module's root package imports every plugin, and `go get`
  # would download all their SDKs (1.6 GB instead of ~0.3 GB).
  timed "coredns: go get" go get $(printf "github.com/coredns/coredns/%s@$COREDNS_VERSION " \
    core/dnsserver coremain "${plugins[@]/#/plugin/}")
  timed "coredns: go build" go build -trimpath -ldflags "-s -w" -o "$d/coredns" .
  mkdir -p "$COREDNS_BIN"
  mv "$d/coredns" "$COREDNS_BIN/coredns"
}

T0=$(date +%s)
if have "$ETCD_BIN/etcd"; then log "etcd $ETCD_VERSION cached in $ETCD_BIN"; else build_etcd; fi

if have "${k8s_want[@]}"; then log "kubernetes $K8S_VERSION cached in $K8S_BIN"; else build_k8s; fi

if [ "$FULL" = 1 ]; then
  if have "$KWOK_BIN/kwok"; then log "kwok $KWOK_VERSION cached in $KWOK_BIN"; else build_kwok; fi
  [ -s "$KWOK_BIN/stages.yaml" ] || kwok_stages
fi
if [ "$NODE" = real ]; then
  if have "$COREDNS_BIN/coredns"; then log "coredns $COREDNS_VERSION cached in $COREDNS_BIN"; else build_coredns; fi
fi
log "total $(( $(date +%s) - T0 ))s"

print_dirs
