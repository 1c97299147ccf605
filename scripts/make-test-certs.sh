#!/usr/bin/env bash
# Makes the TEST-ONLY certificates in test/fixtures/tls (committed, so tests need no openssl):
# a CA, a server certificate it signs for 127.0.0.1 and localhost, and a second CA that signs
# nothing, all valid for a century. Never use them outside tests: their keys are public.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/tls"
mkdir -p "$dir"
cd "$dir"
days=36500
openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj '/CN=Outreach test CA' \
  -keyout ca.key -out ca.crt 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj '/CN=Another test CA' \
  -keyout other-ca.key -out other-ca.crt 2>/dev/null
rm other-ca.key
openssl req -newkey rsa:2048 -nodes -subj '/CN=outreach-test-server' \
  -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" \
  -extfile server.ext -out server.crt 2>/dev/null
rm -f server.csr server.ext ca.srl ca.key
echo "wrote $dir: ca.crt, other-ca.crt, server.crt, server.key"
