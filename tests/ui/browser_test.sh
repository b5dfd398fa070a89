#!/usr/bin/env bash
# The dashboard in a real browser (issue 17): Debian's chromium, headless, scripted over
# the DevTools protocol with puppeteer-core (tests/ui/dashboard.test.mjs), against a real
# `muster serve` on 127.0.0.1 port 0 with a temporary data directory:
#   1. pages: a small emulated GPU cluster (tests/ui/make_cluster.py); every page loads
#      without console errors, shows the numbers kubectl and curl read from the API, and
#      a job applied during the test appears and becomes Running without a reload;
#      the simulator's report (muster simulate --report) draws its charts with the same
#      chart module, offline, without errors;
#   2. restricted: a server with token authentication and RBAC; a user bound `edit` in
#      team-a sees team-a's workloads and counts and nothing of team-b, a job they submit
#      appears without a reload, and pages they may not read say so;
#   3. scale: MUSTER_UI_SCALE_JOBS workloads (default 10000) on MUSTER_UI_SCALE_NODES
#      emulated nodes (default 1000): the workloads page's first render is reported (not
#      asserted), with screenshots of the big pages. MUSTER_UI_SCALE_JOBS=0 skips it.
# Screenshots and the figures (report-*.json) go to $SCREENSHOT_DIR (default
# BUILD/ui-screenshots).
#
# Usage: tests/ui/browser_test.sh BUILD_DIR
set -euo pipefail
BUILD=$(cd "${1:?usage: browser_test.sh BUILD_DIR}" && pwd)
MUSTER="$BUILD/muster"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SHOTS=${SCREENSHOT_DIR:-$BUILD/ui-screenshots}
SCALE_JOBS=${MUSTER_UI_SCALE_JOBS:-10000}
SCALE_NODES=${MUSTER_UI_SCALE_NODES:-1000}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

for tool in node npm kubectl curl python3 "$CHROMIUM"; do
  command -v "$tool" >/dev/null || { echo "browser_test: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done

# Chromium must start headless here; when it truly cannot (no usable kernel features, no
# shared memory...), the test is skipped, loudly, rather than failed: that says nothing
# about the dashboard. A missing chromium is a failure (scripts/install-deps.sh installs it).
PROBE=$(mktemp -d /tmp/muster-ui-probe.XXXXXX)
if ! timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$PROBE/profile" --dump-dom about:blank >"$PROBE/out" 2>"$PROBE/err"; then
  echo "###################################################################" >&2
  echo "browser_test: SKIPPED: $CHROMIUM cannot start headless on this machine:" >&2
  tail -5 "$PROBE/err" >&2
  echo "###################################################################" >&2
  rm -rf "$PROBE"
  exit 0
fi
rm -rf "$PROBE"

# puppeteer-core from the lock file; it downloads no browser.
if [ ! -d "$HERE/node_modules/puppeteer-core" ] || [ "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]; then
  (cd "$HERE" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
fi

TMP=$(mktemp -d /tmp/muster-ui-test.XXXXXX)
# serve() runs in a command substitution's subshell: its servers' pids go to a file, not
# a variable the subshell would lose (every server was left running).
cleanup() {
  if [ -f "$TMP/pids" ]; then
    while read -r p; do kill "$p" 2>/dev/null || true; done <"$TMP/pids"
    sleep 0.5
    while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$TMP/pids"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$SHOTS"
rm -f "$SHOTS"/*.png "$SHOTS"/report-*.json

# Starts muster serve on port 0; prints its URL.
serve() {
  local name=$1
  shift
  "$MUSTER" serve --executor emulated --no-local-node --data "$TMP/$name" --listen 127.0.0.1:0 "$@" \
    >"$TMP/$name.log" 2>&1 &
  echo $! >>"$TMP/pids"
  local pid=$! port="" start=$SECONDS
  while [ -z "$port" ]; do
    port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/$name.log" | head -1)
    if ! kill -0 "$pid" 2>/dev/null || [ $((SECONDS - start)) -gt 300 ]; then
      echo "browser_test: muster serve did not start:" >&2
      tail -20 "$TMP/$name.log" >&2
      exit 1
    fi
    [ -z "$port" ] && sleep 0.1
  done
  echo "http://127.0.0.1:$port"
}

# Waits until the scheduler has looked at every job: admitted + pending = jobs.
settle() {
  local url=$1 jobs=$2 start=$SECONDS
  while true; do
    local n
    n=$(curl -sf "$url/apis/muster.dev/v1alpha1/clusterviews/cluster" |
      python3 -c 'import json,sys; print(sum(json.load(sys.stdin)["workloads"].values()))' 2>/dev/null || echo 0)
    [ "$n" -ge "$jobs" ] && return 0
    if [ $((SECONDS - start)) -gt 600 ]; then
      echo "browser_test: only $n of $jobs workloads seen after 600 s" >&2
      return 1
    fi
    sleep 0.5
  done
}

echo "== dashboard pages"
python3 "$HERE/make_cluster.py" cluster "$TMP/cluster.yaml"
python3 "$HERE/make_cluster.py" jobs "$TMP/jobs.yaml"
URL=$(serve pages -f "$TMP/cluster.yaml" -f "$TMP/jobs.yaml")
settle "$URL" 8
# The simulator's report, whose charts are the dashboard's chart module.
"$MUSTER" simulate -f "$ROOT/examples/cluster" -f "$ROOT/examples/queues" -f "$ROOT/examples/jobs" \
  --report "$TMP/report" -o table >/dev/null
MUSTER_URL=$URL SCREENSHOT_DIR=$SHOTS REPORT_FILE="$TMP/report/index.html" \
  timeout 600 node "$HERE/dashboard.test.mjs" pages

echo "== dashboard as a user RBAC binds in one namespace"
printf 'tok-admin,admin,1,system:masters\ntok-alice,alice,2\n' >"$TMP/tokens.csv"
RURL=$(serve restricted --token-auth-file "$TMP/tokens.csv" -f "$TMP/cluster.yaml")
# curl, not kubectl: kubectl sends no bearer token to a plain-HTTP server.
admin_post() {
  curl -sf -o /dev/null -H 'Authorization: Bearer tok-admin' -H 'Content-Type: application/json' \
    -X POST --data "$2" "$RURL$1"
}
for ns in team-a team-b; do
  admin_post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
  for j in 1 2; do
    admin_post "/apis/batch/v1/namespaces/$ns/jobs" "$(python3 "$HERE/make_cluster.py" restricted-job "$ns" "$ns-job-$j")"
  done
done
admin_post /apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings \
  '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"alice-edit"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"},
    "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"alice"}]}'
start=$SECONDS
until [ "$(curl -sf -H 'Authorization: Bearer tok-admin' "$RURL/apis/muster.dev/v1alpha1/workloadviews" |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))' 2>/dev/null || echo 0)" -ge 4 ]; do
  [ $((SECONDS - start)) -gt 120 ] && { echo "browser_test: the restricted server's 4 workloads did not appear" >&2; exit 1; }
  sleep 0.3
done
MUSTER_URL=$RURL MUSTER_TOKEN=tok-alice MUSTER_ADMIN_TOKEN=tok-admin RESTRICTED_NS=team-a SCREENSHOT_DIR=$SHOTS \
  timeout 300 node "$HERE/dashboard.test.mjs" restricted

if [ "$SCALE_JOBS" -gt 0 ]; then
  echo "== dashboard at scale: $SCALE_JOBS workloads on $SCALE_NODES nodes"
  "$MUSTER" gen cluster --nodes "$SCALE_NODES" --gpus-per-node 8 --cluster-queues 8 --cohorts 2 \
    --seed 7 -o "$TMP/scale-cluster.yaml"
  # Single-pod jobs (the mix bench/serve_emulated.sh measures): the default mix of large
  # gangs across 8 queues in 2 cohorts kept one scheduling cycle evicting for minutes.
  "$MUSTER" gen workload --jobs "$SCALE_JOBS" --mix small:1 --queues 8 --gpus-per-node 8 --seed 7 \
    -o "$TMP/scale-workload.yaml"
  python3 "$ROOT/bench/serve_emulated.py" split "$TMP/scale-workload.yaml" "$TMP/scale-config.yaml" \
    "$TMP/scale-jobs.jsonl"
  SCALE_URL=$(serve scale -f "$TMP/scale-cluster.yaml" -f "$TMP/scale-config.yaml")
  start=$SECONDS
  timeout 900 node "$HERE/submit_jobs.mjs" "$SCALE_URL" "$TMP/scale-jobs.jsonl" 8
  settle "$SCALE_URL" "$SCALE_JOBS"
  echo "submitted and scheduled $SCALE_JOBS jobs in $((SECONDS - start)) s"
  MUSTER_URL=$SCALE_URL SCREENSHOT_DIR=$SHOTS timeout 600 node "$HERE/dashboard.test.mjs" scale
fi
echo "screenshots: $(ls "$SHOTS"/*.png | tr '\n' ' ')"
echo "browser tests passed"
