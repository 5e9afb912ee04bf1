#!/usr/bin/env bash
# certs.sh: TLS for clusters with neither cert-manager nor OpenShift's service-ca (make certs).
#
# Makes (once; kept and reused) a CA and serving certificates with openssl in
# ${OLMV1_CERTS_DIR:-.dev/olmv1-certs}, then creates or updates in olmv1-system:
#   Secret catalogd-service-cert       tls.crt, tls.key, ca.crt  (catalogd-service.olmv1-system.svc)
#   Secret operator-controller-cert    tls.crt, tls.key, ca.crt  (operator-controller-service...)
# operator-controller trusts catalogd through ca.crt (mounted into --catalogd-cas-dir).
# Certificates are renewed when they expire within 30 days; the CA is kept, so clients
# that trust it keep working. Run it again to rotate; the daemons reload nothing yet, so
# restart them afterwards (kubectl -n olmv1-system rollout restart deployment).
set -euo pipefail
NS=${OLMV1_SYSTEM_NAMESPACE:-olmv1-system}
DIR=${OLMV1_CERTS_DIR:-.dev/olmv1-certs}
KUBECTL=${KUBECTL:-kubectl}
DAYS=${OLMV1_CERT_DAYS:-365}

q() { local out; if ! out=$("$@" 2>&1); then echo "$out" >&2; return 1; fi; }
mkdir -p "$DIR"
umask 077

if [ ! -s "$DIR/ca.crt" ] || [ ! -s "$DIR/ca.key" ]; then
  q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -keyout "$DIR/ca.key" -out "$DIR/ca.crt" -subj "/CN=olmv1-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
  echo "certs: new CA $DIR/ca.crt" >&2
fi

# issue NAME SERVICE: a serving certificate for SERVICE.NS.svc, unless a valid one is there.
issue() {
  local name=$1 svc=$2 crt=$DIR/$1.crt key=$DIR/$1.key
  if [ -s "$crt" ] && openssl x509 -in "$crt" -noout -checkend $((30 * 86400)) >/dev/null 2>&1 &&
     openssl verify -CAfile "$DIR/ca.crt" "$crt" >/dev/null 2>&1; then
    return 0
  fi
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth" \
    "subjectAltName=DNS:$svc.$NS.svc,DNS:$svc.$NS.svc.cluster.local,DNS:$svc.$NS,DNS:$svc" > "$DIR/$name.ext"
  q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$key" -out "$DIR/$name.csr" \
    -subj "/CN=$svc.$NS.svc"
  q openssl x509 -req -in "$DIR/$name.csr" -CA "$DIR/ca.crt" -CAkey "$DIR/ca.key" -CAcreateserial \
    -days "$DAYS" -extfile "$DIR/$name.ext" -out "$crt"
  rm -f "$DIR/$name.csr" "$DIR/$name.ext" "$DIR/ca.srl"
  echo "certs: issued $crt for $svc.$NS.svc" >&2
}
issue catalogd-service-cert catalogd-service
issue operator-controller-cert operator-controller-service

[ "${1:-}" = "--files-only" ] && exit 0
"$KUBECTL" get namespace "$NS" >/dev/null 2>&1 || "$KUBECTL" create namespace "$NS" >/dev/null
for name in catalogd-service-cert operator-controller-cert; do
  "$KUBECTL" -n "$NS" create secret generic "$name" --type=kubernetes.io/tls \
    --from-file=tls.crt="$DIR/$name.crt" --from-file=tls.key="$DIR/$name.key" \
    --from-file=ca.crt="$DIR/ca.crt" --dry-run=client -o yaml |
    "$KUBECTL" apply --server-side --field-manager=olmv1-certs --force-conflicts -f - >/dev/null
  echo "certs: secret $NS/$name" >&2
done
