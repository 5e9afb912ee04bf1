#!/usr/bin/env bash
# certs.sh PKI_DIR: generate the test PKI with openssl (one job: certificates).
#   ca.{crt,key}          self-signed CA that signs everything below
#   apiserver.{crt,key}   serving cert for 127.0.0.1 / localhost (+ in-cluster names)
#   admin.{crt,key}       client cert, O=system:masters => superuser under RBAC
#   sa.{key,pub}          ServiceAccount token signing key pair (TokenRequest)
# Existing files are kept, so a restart of the same state dir keeps issued tokens valid.
set -euo pipefail
PKI=${1:?usage: certs.sh PKI_DIR}
mkdir -p "$PKI"
cd "$PKI"
[ -s ca.crt ] && [ -s apiserver.crt ] && [ -s admin.crt ] && [ -s sa.pub ] && exit 0
umask 077   # private keys must not be world-readable

# openssl prints progress dots and "Certificate request self-signature ok" on stderr;
# keep it quiet unless something fails.
q() { local out; if ! out=$("$@" 2>&1); then echo "$out" >&2; return 1; fi; }

q openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
  -subj "/CN=olmv1-test-ca"

# 10.0.0.1 is the first IP of --service-cluster-ip-range (the `kubernetes` Service).
cat > server.ext <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.0.0.1
EOF
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > client.ext

q openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
q openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
  -extfile server.ext -out apiserver.crt

q openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=olmv1-admin"
q openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
  -extfile client.ext -out admin.crt

q openssl genrsa -out sa.key 2048
q openssl rsa -in sa.key -pubout -out sa.pub

rm -f ./*.csr ./*.ext ca.srl
# Public material may be read by anyone (e.g. tests running as another user).
chmod 644 ca.crt apiserver.crt admin.crt sa.pub
