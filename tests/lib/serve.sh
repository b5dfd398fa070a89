# What the kubectl tests of `muster serve` share; source it after harness.sh, with
# MUSTER set to the binary:
#   require_commands CMD...          without one of them: a skip line, "0 passed, 0
#                                    failed", exit 0
#   serve_tmp                        TMP (a fresh directory) and KUBECACHEDIR in it; at
#                                    exit the server is killed and TMP removed
#   serve_test_ca                    a CA (TMP/ca.crt, ca.key) and a serving certificate
#                                    for 127.0.0.1 (TMP/tls.crt, tls.key); needs openssl
#   serve_client_cert NAME SUBJECT   TMP/NAME.crt and NAME.key, a client certificate of
#                                    that CA for SUBJECT (e.g. /O=team/CN=user)
#   start_serve [ARGS...]            (re)starts MUSTER serve on a fresh TMP/data on a free
#                                    port, its output in TMP/server.log; sets PID, URL and
#                                    K ("kubectl --server URL ...", to use unquoted; over
#                                    HTTPS it trusts TMP/ca.crt); waits SERVE_START_TRIES
#                                    (default 100) x 0.1 s for it to listen
#   restart_serve [ARGS...]          the same on the data TMP/data already holds (a
#                                    kill -9 and restart: what it stored survives)
#   eventually NAME PATTERN CMD...   CMD's output matches PATTERN within EVENTUALLY_TRIES
#                                    (default 150) x 0.2 s: 30 s
#   kueue_queues CPU MEMORY          prints ResourceFlavor default-flavor, ClusterQueue cq
#                                    (cpu and memory quota, every namespace) and
#                                    LocalQueue default/lq, for kubectl apply -f -
# shellcheck shell=bash

require_commands() {
  local c
  for c in "$@"; do
    if ! command -v "$c" >/dev/null 2>&1; then
      echo "$c not found; skipping"
      echo "0 passed, 0 failed"
      exit 0
    fi
  done
}

PID=""
serve_cleanup() {
  if [ -n "$PID" ]; then
    kill -9 "$PID" 2>/dev/null
    wait "$PID" 2>/dev/null
  fi
  rm -rf "$TMP"
}
serve_tmp() {
  TMP=$(mktemp -d)
  export KUBECACHEDIR="$TMP/cache"
  trap serve_cleanup EXIT
}

serve_test_ca() {
  (
    cd "$TMP" || exit 1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj /CN=test-ca -keyout ca.key -out ca.crt 2>/dev/null &&
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=muster \
        -keyout tls.key -out tls.csr 2>/dev/null &&
      printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >tls.ext &&
      openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile tls.ext -out tls.crt 2>/dev/null
  ) || { echo "openssl could not make the test CA"; exit 1; }
}
serve_client_cert() {
  (
    cd "$TMP" || exit 1
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$2" \
      -keyout "$1.key" -out "$1.csr" 2>/dev/null &&
      printf 'extendedKeyUsage=clientAuth\n' >client.ext &&
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile client.ext -out "$1.crt" 2>/dev/null
  ) || { echo "openssl could not make the client certificate $1"; exit 1; }
}

start_serve() {
  if [ -n "$PID" ]; then
    kill -9 "$PID" 2>/dev/null
    wait "$PID" 2>/dev/null
    PID=""
  fi
  rm -rf "$TMP/data"
  restart_serve "$@"
}

restart_serve() {
  if [ -n "$PID" ]; then
    kill -9 "$PID" 2>/dev/null
    wait "$PID" 2>/dev/null
  fi
  # A fresh log: the shell truncates it only in the background child, so a loaded
  # machine let the loop below read the killed server's "listening on" line (stop 23's
  # CI: every request of the next seed refused).
  rm -f "$TMP/server.log"
  "$MUSTER" serve --data "$TMP/data" --listen 127.0.0.1:0 "$@" >"$TMP/server.log" 2>&1 &
  PID=$!
  URL=""
  for _ in $(seq 1 "${SERVE_START_TRIES:-100}"); do
    URL=$(sed -n 's/.*listening on \(https\?:\/\/127.0.0.1:[0-9]*\).*/\1/p' "$TMP/server.log" 2>/dev/null)
    [ -n "$URL" ] && break
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$URL" ] || { echo "server did not start:"; cat "$TMP/server.log"; exit 1; }
  K="kubectl --request-timeout=20s --server $URL"
  case "$URL" in https:*) K="$K --certificate-authority $TMP/ca.crt" ;; esac
}

eventually() {
  local name=$1 pattern=$2
  shift 2
  local out=""
  for _ in $(seq 1 "${EVENTUALLY_TRIES:-150}"); do
    if out=$("$@" 2>&1) && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; return; fi
    sleep 0.2
  done
  bad "$name" "$out"
}

kueue_queues() {
  cat <<EOF
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: "$1"}
      - {name: memory, nominalQuota: $2}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
EOF
}
