#!/usr/bin/env bash
# Makes the TEST-ONLY certificates in test/fixtures/tls (committed, so tests need no openssl):
# a CA, a server certificate it signs for 127.0.0.1 and localhost, valid for a century, and a
# second CA with a server certificate of its own for the same names, valid for 80 years (a
# renewal, told apart by its CA and its expiry). Each is made for client authentication too, as
# the chart's one certificate is presented by the callers under mutual TLS. Never use them outside
# tests: their keys are public.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/tls"
mkdir -p "$dir"
cd "$dir"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' > server.ext
# ca name, server name, days
make_pair() {
  openssl req -x509 -newkey rsa:2048 -nodes -days "$3" -subj "/CN=$1" -keyout ca-pair.key -out "$4" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$5.key" -out server.csr 2>/dev/null
  openssl x509 -req -in server.csr -CA "$4" -CAkey ca-pair.key -CAcreateserial -days "$3" \
    -extfile server.ext -out "$5.crt" 2>/dev/null
  rm -f server.csr ca-pair.key ./*.srl
}
make_pair 'Outreach test CA' outreach-test-server 36500 ca.crt server
make_pair 'Another test CA' outreach-test-server-renewed 29200 other-ca.crt renewed
rm -f server.ext
echo "wrote $dir: ca.crt, server.crt, server.key, other-ca.crt, renewed.crt, renewed.key"
