#!/usr/bin/env bash
# identity.sh --service-account NAMESPACE/NAME --out KUBECONFIG [--duration 8760h]
#
# Writes a kubeconfig that authenticates as the ServiceAccount NAMESPACE/NAME (created if
# missing) with a TokenRequest token, using the cluster entry (server, CA) of the current
# $KUBECONFIG, which must be allowed to create serviceaccounts/token (the admin one).  The
# daemons then run locally (make run, e2e) with exactly the permissions config/rbac grants
# their in-cluster ServiceAccounts.  The token is bound to the ServiceAccount: deleting it
# (or its namespace) revokes the kubeconfig.  A client certificate would not do: the user
# name "system:serviceaccount:<ns>:<name>" is longer than the 64 characters a CN may hold.
set -euo pipefail
die() { echo "identity.sh: $*" >&2; exit 2; }
SA= OUT= DURATION=8760h
while [ $# -gt 0 ]; do
  case $1 in
    --service-account) SA=${2:-}; shift 2 ;;
    --out) OUT=${2:-}; shift 2 ;;
    --duration) DURATION=${2:-}; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done
[ -n "$SA" ] && [ -n "$OUT" ] || die "usage: identity.sh --service-account NS/NAME --out FILE [--duration 8760h]"
[ -n "${KUBECONFIG:-}" ] || die "KUBECONFIG (an admin kubeconfig of the cluster) is not set"
ns=${SA%%/*} name=${SA#*/}
[[ $ns =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] && [[ $name =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] && [ "$ns" != "$SA" ] ||
  die "--service-account must be NAMESPACE/NAME, got '$SA'"

kubectl create serviceaccount "$name" -n "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
token=$(kubectl create token "$name" -n "$ns" --duration="$DURATION")
server=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
if [ -z "$ca" ]; then
  ca_file=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority}')
  [ -n "$ca_file" ] && ca=$(base64 -w0 < "$ca_file")
fi
[ -n "$server" ] && [ -n "$ca" ] || die "cannot read the server and CA from $KUBECONFIG"

umask 077
mkdir -p "$(dirname "$OUT")"
cat > "$OUT.tmp" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: $ns-$name
  user:
    token: $token
contexts:
- name: $ns-$name
  context: {cluster: local, user: $ns-$name}
current-context: $ns-$name
KUBECONFIG
mv "$OUT.tmp" "$OUT"
