#!/usr/bin/env bash
# Authentication of `muster serve` with the real kubectl: static tokens
# (--token-auth-file), HTTPS with a client certificate (--client-ca-file), 401 for a
# wrong or missing token, health checks without credentials, the owner annotation
# of what each user creates, and the loopback-only rule without authentication.
# Usage: bash tests/server/auth_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

MUSTER=$(realpath "${1:-build/muster}")
if ! command -v kubectl >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1; then
  echo "kubectl or openssl not found; skipping"
  echo "0 passed, 0 failed"
  exit 0
fi
TMP=$(mktemp -d)
export KUBECACHEDIR="$TMP/cache"
PID=""
cleanup() {
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

# start_server ARGS...: sets PID and URL.
start_server() {
  # A fresh log: the previous server's "listening on" line must not be read.
  rm -f "$TMP/server.log"
  # Authentication only: what users may do (RBAC, the default) is rbac_test.sh's.
  "$MUSTER" serve --data "$TMP/data" --no-local-node --executor emulated \
    --authorization-mode AlwaysAllow "$@" >"$TMP/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do
    if grep -q "listening on" "$TMP/server.log" 2>/dev/null; then
      URL=$(sed -n 's/.*listening on \(https\?:\/\/127.0.0.1:[0-9]*\).*/\1/p' "$TMP/server.log")
      return 0
    fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server did not start:"; cat "$TMP/server.log"
  return 1
}
stop_server() {
  kill -TERM "$PID" 2>/dev/null
  wait "$PID" 2>/dev/null
  PID=""
}

# Without authentication: loopback only.
check_fails "a non-loopback --listen without TLS and authentication is refused" \
  "is not a loopback address" "$MUSTER" serve --data "$TMP/refused" --listen 0.0.0.0:0

# Tokens over plain HTTP on loopback (kubectl sends tokens over HTTPS only: curl here).
printf 'tok-alice,alice,1001,"team-a,dev"\ntok-bob,bob,1002\n' >"$TMP/tokens.csv"
start_server --listen 127.0.0.1:0 --token-auth-file "$TMP/tokens.csv" || exit 1
ns() { printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s","annotations":{"muster.dev/owner":"%s"}}}' "$1" "$2"; }
C="curl -sS -H Content-Type:application/json"
check "alice creates with her token (a forged owner is overwritten)" '"muster.dev/owner":"alice"' \
  $C -H "Authorization: Bearer tok-alice" -X POST --data "$(ns team-a bob)" "$URL/api/v1/namespaces"
check "a merge patch cannot change the owner" '"muster.dev/owner":"alice"' \
  curl -sS -H "Authorization: Bearer tok-bob" -H Content-Type:application/merge-patch+json -X PATCH \
  --data '{"metadata":{"annotations":{"muster.dev/owner":"bob"}}}' "$URL/api/v1/namespaces/team-a"
for t in "Bearer garbage" "Bearer " "Basic YWxpY2U6eA==" ""; do
  code=$(curl -s -o "$TMP/401.json" -w '%{http_code}' ${t:+-H "Authorization: $t"} "$URL/api/v1/namespaces")
  if [ "$code" = 401 ] && grep -q '"kind":"Status"' "$TMP/401.json"; then
    ok "'$t' is 401 with a Status body"
  else
    bad "'$t' is 401 with a Status body" "$code $(cat "$TMP/401.json")"
  fi
done
check "healthz needs no credentials" "^ok" curl -sS "$URL/healthz"
# The dashboard's page and scripts are static: a browser loads them without credentials
# and the page then asks for a token; its data needs one.
check "the dashboard page loads without credentials" "<title>" curl -sS "$URL/ui/"
check "the dashboard's scripts load without credentials" "M.Watch" curl -sS "$URL/ui/core.js"
check "the views need credentials" "^401$" \
  curl -sS -o /dev/null -w '%{http_code}' "$URL/apis/muster.dev/v1alpha1/workloadviews"
stop_server

# HTTPS with a client certificate (CN = user, O = group) and a token.
cd "$TMP" || exit 1
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca \
  -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=muster \
  -keyout tls.key -out tls.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >tls.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile tls.ext \
  -out tls.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/O=team-c/CN=carol" \
  -keyout carol.key -out carol.csr 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' >client.ext
openssl x509 -req -in carol.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
  -extfile client.ext -out carol.crt 2>/dev/null
cd - >/dev/null || exit 1
start_server --listen 127.0.0.1:0 --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/tls.key" \
  --client-ca-file "$TMP/ca.crt" --token-auth-file "$TMP/tokens.csv" || exit 1
case "$URL" in https://*) ok "TLS serving";; *) bad "TLS serving" "$URL";; esac
K="kubectl --request-timeout=20s --server $URL --certificate-authority $TMP/ca.crt"
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-c\n' >"$TMP/team-c.yaml"
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b\n' >"$TMP/team-b.yaml"
check "carol creates with her client certificate" "created" \
  $K --client-certificate "$TMP/carol.crt" --client-key "$TMP/carol.key" apply -f "$TMP/team-c.yaml"
check "bob creates with his token" "created" $K --token tok-bob apply -f "$TMP/team-b.yaml"
check "the owner of bob's object is bob" "^bob$" \
  $K --token tok-alice get namespace team-b -o 'jsonpath={.metadata.annotations.muster\.dev/owner}{"\n"}'

check "the owner of carol's object is carol (the certificate's CN)" "^carol$" \
  $K --token tok-alice get namespace team-c -o 'jsonpath={.metadata.annotations.muster\.dev/owner}{"\n"}'
check_fails "a wrong token is 401" "Unauthorized|must be logged in" $K --token garbage get namespaces
check_fails "no credentials is 401" "Unauthorized|must be logged in|EOF" $K get namespaces </dev/null
check "objects created before the restart kept their owner" "^alice$" \
  $K --token tok-bob get namespace team-a -o 'jsonpath={.metadata.annotations.muster\.dev/owner}{"\n"}'
stop_server

# --auto-tls: serve's own CA and serving certificate, and an admin kubeconfig.
start_server --listen 127.0.0.1:0 --auto-tls || exit 1
case "$URL" in https://*) ok "--auto-tls serves HTTPS";; *) bad "--auto-tls serves HTTPS" "$URL";; esac
check "--auto-tls names the admin kubeconfig" "admin credentials .* in $TMP/data/admin.kubeconfig" cat "$TMP/server.log"
KA="kubectl --request-timeout=20s --kubeconfig $TMP/data/admin.kubeconfig"
check "the admin kubeconfig works unchanged with kubectl" "^namespace/team-a" $KA get namespaces -o name
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: by-admin\n' >"$TMP/by-admin.yaml"
check "the admin creates with its certificate" "created" $KA apply -f "$TMP/by-admin.yaml"
check "the admin owns what it creates" "^muster-admin$" \
  $KA get namespace by-admin -o 'jsonpath={.metadata.annotations.muster\.dev/owner}{"\n"}'
check_fails "without the certificate it is 401" "Unauthorized|must be logged in|EOF" \
  kubectl --request-timeout=20s --server "$URL" --certificate-authority "$TMP/data/pki/ca.crt" get namespaces </dev/null
cp "$TMP/data/admin.kubeconfig" "$TMP/kept.kubeconfig"
stop_server
start_server --listen 127.0.0.1:0 --auto-tls || exit 1
# The port changed; the certificates did not: the old kubeconfig works at the new URL.
check "a restart keeps the CA and the admin's certificate" "^namespace/by-admin" \
  kubectl --request-timeout=20s --kubeconfig "$TMP/kept.kubeconfig" --server "$URL" get namespace by-admin -o name
stop_server
check_fails "--auto-tls with --tls-cert-file is refused" "not both" \
  "$MUSTER" serve --data "$TMP/data" --auto-tls --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/tls.key"

finish
