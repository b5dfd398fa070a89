#!/usr/bin/env bash
# `muster kube --dashboard-port P` end to end: muster kube runs against a `muster serve`
# (a Kubernetes-compatible API server on 127.0.0.1 port 0) and its dashboard listener
# serves the page, forwards API reads (the node list equals kubectl's), refuses writes
# (405), and serves the muster.dev views once the API server's SelfSubjectAccessReview
# allows them (muster serve without authentication: everyone is system:masters; the
# fail-closed path without that API is dashboard_server_test's). A clean stop on SIGTERM.
#   tests/kube/dashboard_port_test.sh build/muster
set -uo pipefail
MUSTER=$(realpath "${1:?usage: dashboard_port_test.sh MUSTER}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/muster-dashboard-port.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# Waits up to $3 seconds for a line matching sed expression $2 in file $1; prints the match.
wait_line() {
  local file=$1 expr=$2 limit=$3 start=$SECONDS got=""
  while [ -z "$got" ] && [ $((SECONDS - start)) -lt "$limit" ]; do
    got=$(sed -n "$expr" "$file" 2>/dev/null | head -1)
    [ -z "$got" ] && sleep 0.2
  done
  echo "$got"
}

"$MUSTER" serve --executor emulated --no-local-node --data "$TMP/data" --listen 127.0.0.1:0 \
  -f "$ROOT/examples/cluster" -f "$ROOT/examples/queues" >"$TMP/serve.log" 2>&1 &
PIDS+=($!)
API_PORT=$(wait_line "$TMP/serve.log" 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' 120)
if [ -z "$API_PORT" ]; then
  tail -20 "$TMP/serve.log"
  echo "FAIL muster serve did not start"
  exit 1
fi
API=http://127.0.0.1:$API_PORT

cat >"$TMP/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: serve
  cluster: {server: "$API"}
users:
- name: nobody
  user: {}
contexts:
- name: serve
  context: {cluster: serve, user: nobody, namespace: default}
current-context: serve
EOF

# A free port for the dashboard (the flag takes a port; 0 means no listener).
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$MUSTER" kube --kubeconfig "$TMP/kubeconfig" --dashboard-port "$PORT" >"$TMP/kube.log" 2>&1 &
KUBE_PID=$!
PIDS+=($KUBE_PID)
URL=$(wait_line "$TMP/kube.log" 's/.*dashboard on \(http:\/\/[^ ]*\)\/ui\/.*/\1/p' 60)
if [ -z "$URL" ]; then
  tail -20 "$TMP/kube.log"
  echo "FAIL muster kube printed no dashboard address"
  exit 1
fi
[ "$URL" = "http://127.0.0.1:$PORT" ] && pass "dashboard on $URL" || fail "dashboard on $URL, wanted port $PORT"

code=$(curl -s -o "$TMP/page" -w '%{http_code}' "$URL/ui/")
if [ "$code" = 200 ] && grep -q '<title>muster</title>' "$TMP/page"; then
  pass "GET /ui/ serves the page"
else
  fail "GET /ui/: $code"
fi

want=$(kubectl --server "$API" get nodes -o name | sort | tr '\n' ' ')
got=$(curl -s "$URL/api/v1/nodes" | python3 -c 'import json,sys; print(" ".join(sorted("node/" + i["metadata"]["name"] for i in json.load(sys.stdin)["items"])) + " ")')
if [ -n "$want" ] && [ "$got" = "$want" ]; then
  pass "forwarded node list equals kubectl's ($(echo "$want" | wc -w) nodes)"
else
  fail "forwarded nodes '$got', kubectl '$want'"
fi

code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}' "$URL/api/v1/namespaces")
[ "$code" = 405 ] && pass "POST through the dashboard: 405" || fail "POST through the dashboard: $code"
kubectl --server "$API" get namespace x >/dev/null 2>&1 && fail "the POST reached the API server"

code=$(curl -s -o "$TMP/views" -w '%{http_code}' "$URL/apis/muster.dev/v1alpha1/workloadviews")
if [ "$code" = 200 ] && grep -q '"kind":"WorkloadViewList"' "$TMP/views"; then
  pass "views served once the API server's SelfSubjectAccessReview allows them"
else
  fail "views with SelfSubjectAccessReview allowed: $code $(head -c 300 "$TMP/views")"
fi

kill -TERM "$KUBE_PID"
wait "$KUBE_PID"
rc=$?
PIDS=("${PIDS[@]/$KUBE_PID/}")
if [ "$rc" = 0 ] && grep -q 'muster kube: stopped' "$TMP/kube.log"; then
  pass "muster kube stopped cleanly on SIGTERM"
else
  fail "muster kube exit $rc: $(tail -3 "$TMP/kube.log")"
fi

echo "$fails failure(s)"
[ "$fails" = 0 ]
