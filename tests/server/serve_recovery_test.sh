#!/usr/bin/env bash
# kill -9 recovery of `muster serve`'s scheduler controller.
#  (a) a running 2-rank PyTorchJob survives kill -9 of the server: its processes keep
#      running, the restarted server adopts them (same PIDs, no second copy, Workload
#      still Admitted, pods Running) and the job then finishes Succeeded.
#  (b) ~20 one-pod Jobs are POSTed while the server is killed and restarted 3 times:
#      every acknowledged job exists once, runs to completion once and finishes
#      Succeeded; ClusterQueue counts agree with the Workloads; nothing is left running.
# Every process the pods start has the test's unique marker in its command line, so
# leftovers are found with pgrep -f.
# Usage: bash tests/server/serve_recovery_test.sh build-dir|path/to/muster
# (MUSTER_KEEP_TEST_DIR=1 keeps the data directory and server log for a post-mortem.)
set -uo pipefail

ARG=${1:-build}
if [ -d "$ARG" ]; then MUSTER=$(realpath "$ARG/muster"); else MUSTER=$(realpath "$ARG"); fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MANIFESTS="$ROOT/tests/server/manifests"
MARK="muster-recovery-$$-$(date +%s)"
TMP=$(mktemp -d "/tmp/$MARK.XXXXXX")
DATA="$TMP/data"
RUNS="$TMP/runs"
mkdir -p "$RUNS"
LOG="$TMP/server.log"
PID=""
PORT=""
STARTS=0
PASS=0

cleanup() {
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
  # Pod processes this test started (their command lines hold the marker).
  local left
  left=$(pgrep -f "$MARK" 2>/dev/null | grep -vx "$$")
  [ -n "$left" ] && kill -9 $left 2>/dev/null
  if [ "${MUSTER_KEEP_TEST_DIR:-0}" = 1 ]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL $1"
  [ -n "${2:-}" ] && sed 's/^/     /' <<<"$2" | head -40
  echo "     --- server log (last 30 lines) ---"
  tail -30 "$LOG" 2>/dev/null | sed 's/^/     /'
  echo "$PASS passed, 1 failed"
  exit 1
}
ok() {
  PASS=$((PASS + 1))
  echo "ok   $1"
}

start_server() {
  STARTS=$((STARTS + 1))
  echo "--- server start $STARTS" >>"$LOG"
  local from
  from=$(wc -l <"$LOG")
  "$MUSTER" serve --data "$DATA" --listen 127.0.0.1:0 -f "$ROOT/examples/serve/cluster.yaml" \
    -f "$ROOT/examples/serve/queues.yaml" >>"$LOG" 2>&1 &
  PID=$!
  for _ in $(seq 1 150); do
    PORT=$(tail -n +"$((from + 1))" "$LOG" |
      sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' | head -1)
    [ -n "$PORT" ] && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  fail "server start $STARTS" "the server did not report 'listening on'"
}

kill_server() {
  kill -9 "$PID" 2>/dev/null
  wait "$PID" 2>/dev/null
  PID=""
}

api() { curl -sf --max-time 10 "http://127.0.0.1:$PORT$1"; }

# post_yaml PATH FILE: POSTs FILE; prints the HTTP status (000 when unreachable).
post_yaml() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST \
    -H 'Content-Type: application/yaml' --data-binary @"$2" "http://127.0.0.1:$PORT$1"
}

# wait_for SECONDS CMD...: polls CMD (every 0.2 s) until it succeeds.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  while ! "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.2
  done
}

# py EXPR: evaluates a Python expression over the JSON object on stdin (`o`); exit 0
# when it is true. Prints the value when it is not a bool.
py() {
  python3 -c '
import json, sys
o = json.load(sys.stdin)
def cond(obj, t):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == t:
            return c
    return {}
v = eval(sys.argv[1])
if isinstance(v, bool):
    sys.exit(0 if v else 1)
print(v)' "$1"
}

WL=/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads
PODS=/api/v1/namespaces/default/pods
PTJ=/apis/kubeflow.org/v1/namespaces/default/pytorchjobs
JOBS=/apis/batch/v1/namespaces/default/jobs

# Polls grep the compact JSON the server writes (keys sorted), not python3: on a
# loaded machine an interpreter start can take seconds.
has() { grep -qF -- "$1"; }
gang_admitted() {
  api "$WL/pytorchjob-recovery-gang" | has '"reason":"Admitted","status":"True","type":"Admitted"'
}
gang_pods_running() {
  [ "$(api "$PODS" | grep -o '"phase":"Running"' | wc -l)" = 2 ]
}
gang_pids_written() { [ -s "$RUNS/pid-0" ] && [ -s "$RUNS/pid-1" ]; }
gang_finished() {
  api "$WL/pytorchjob-recovery-gang" | has '"status":"True","type":"Finished"'
}

# ---- (a) a running gang survives kill -9 of the server ----
start_server
sed "s|@RUNS@|$RUNS|g" "$MANIFESTS/recovery-gang.yaml" >"$TMP/gang.yaml"
code=$(post_yaml "$PTJ" "$TMP/gang.yaml")
[ "$code" = 201 ] || fail "submit the PyTorchJob" "HTTP $code"
wait_for 20 gang_admitted || fail "the PyTorchJob is admitted" "$(api "$WL/pytorchjob-recovery-gang")"
wait_for 20 gang_pids_written || fail "both ranks start" "$(ls -la "$RUNS")"
wait_for 20 gang_pods_running || fail "both pods Running" "$(api "$PODS")"
ok "the PyTorchJob is admitted and both ranks run"
PID0=$(cat "$RUNS/pid-0")
PID1=$(cat "$RUNS/pid-1")

kill_server
sleep 0.5
kill -0 "$PID0" 2>/dev/null && kill -0 "$PID1" 2>/dev/null ||
  fail "the ranks survive kill -9 of the server" "pids $PID0 $PID1: $(ps -o pid,args -p "$PID0,$PID1")"
ok "the ranks survive kill -9 of the server"

start_server
# The stored Workload says Admitted from before the crash; the new server's own
# (in-memory) gauge says its engine adopted the gang.
engine_holds_gang() {
  api /metrics | has 'kueue_admitted_active_workloads{cluster_queue="team-a"} 1'
}
wait_for 30 engine_holds_gang || fail "the restarted engine holds the gang as admitted" \
  "$(api /metrics | grep -E 'kueue_(admitted|pending)')"
wait_for 30 gang_admitted || fail "the restarted server keeps the Workload Admitted" \
  "$(api "$WL/pytorchjob-recovery-gang")"
wait_for 30 gang_pods_running || fail "the restarted server reports both pods Running" "$(api "$PODS")"
kill -0 "$PID0" 2>/dev/null && kill -0 "$PID1" 2>/dev/null ||
  fail "the adopted ranks still run after the restart" "pids $PID0 $PID1"
[ "$(cat "$RUNS/pid-0")" = "$PID0" ] && [ "$(cat "$RUNS/pid-1")" = "$PID1" ] &&
  [ "$(wc -l <"$RUNS/starts-0")" = 1 ] && [ "$(wc -l <"$RUNS/starts-1")" = 1 ] ||
  fail "no second copy of the gang starts" "$(head "$RUNS"/pid-* "$RUNS"/starts-*)"
ok "the restarted server adopts the running gang (same PIDs, no second copy)"
touch "$RUNS/release"  # the ranks finish now

wait_for 60 gang_finished || fail "the adopted PyTorchJob finishes" "$(api "$WL/pytorchjob-recovery-gang")"
api "$WL/pytorchjob-recovery-gang" | py 'cond(o, "Finished").get("reason") == "Succeeded"' ||
  fail "the adopted PyTorchJob succeeds" "$(api "$WL/pytorchjob-recovery-gang")"
wait_for 10 sh -c "curl -sf 'http://127.0.0.1:$PORT$PTJ/recovery-gang' | grep -q PyTorchJobSucceeded" ||
  fail "the PyTorchJob reports Succeeded" "$(api "$PTJ/recovery-gang")"
# The master's success ends the job (the worker may be stopped before it writes done).
[ "$(cat "$RUNS/starts-0" "$RUNS/starts-1" | wc -l)" = 2 ] &&
  [ "$(cat "$RUNS/done-0" 2>/dev/null | wc -l)" = 1 ] ||
  fail "each rank ran exactly once" "$(head "$RUNS"/starts-* "$RUNS"/done-*)"
ok "the adopted PyTorchJob finishes Succeeded, each rank ran once"

# ---- (b) a burst of jobs while the server is killed and restarted 3 times ----
ACKED=()
N=20
for i in $(seq 0 $((N - 1))); do
  name=$(printf 'burst-%02d' "$i")
  # Deterministic crash points: before jobs 5, 11 and 16 the server is killed; the
  # POST of job 5 and 16 goes to a dead server (not acknowledged), the server is back
  # for job 11.
  case $i in
    5 | 16)
      kill_server
      ;;
    11)
      kill_server
      start_server
      ;;
    6 | 17)
      start_server
      ;;
  esac
  sed -e "s|@RUNS@|$RUNS|g" -e "s|@NAME@|$name|g" "$MANIFESTS/recovery-burst-job.yaml" >"$TMP/$name.yaml"
  if [ -n "$PID" ]; then code=$(post_yaml "$JOBS" "$TMP/$name.yaml"); else code=000; fi
  [ "$code" = 201 ] && ACKED+=("$name")
  [ "$code" = 201 ] || [ "$code" = 000 ] || fail "POST $name" "HTTP $code"
  sleep 0.15
done
echo "     ${#ACKED[@]} of $N jobs acknowledged across 3 kill -9 restarts"
[ ${#ACKED[@]} -ge $((N - 3)) ] || fail "the burst is acknowledged" "${ACKED[*]}"

all_finished() {
  [ "$(api "$WL" | grep -o '"status":"True","type":"Finished"' | wc -l)" -ge $((${#ACKED[@]} + 1)) ]
}
wait_for 120 all_finished || fail "every acknowledged job finishes" \
  "$(api "$WL" | py '"\n".join(w["metadata"]["name"] + " " + str([(c["type"], c["status"]) for c in w["status"].get("conditions", [])]) for w in o["items"])')"

# Queue counts settle once nothing is pending or admitted.
queues_consistent() {
  local wl cq
  wl=$(api "$WL") && cq=$(api /apis/kueue.x-k8s.io/v1beta1/clusterqueues) || return 1
  python3 - "$wl" "$cq" <<'PY'
import json, sys
wls = json.loads(sys.argv[1])["items"]
cqs = json.loads(sys.argv[2])["items"]
def finished(w):
    return any(c["type"] == "Finished" and c["status"] == "True"
               for c in w.get("status", {}).get("conditions", []) or [])
unfinished = {}
for w in wls:
    if finished(w):
        continue
    cq = (w.get("status", {}).get("admission") or {}).get("clusterQueue") or \
         {"team-a": "team-a", "team-b": "team-b"}.get(w["spec"].get("queueName"), "")
    unfinished[cq] = unfinished.get(cq, 0) + 1
for q in cqs:
    s = q.get("status", {})
    got = s.get("pendingWorkloads", 0) + s.get("admittedWorkloads", 0)
    want = unfinished.get(q["metadata"]["name"], 0)
    if got != want:
        print(f'{q["metadata"]["name"]}: pending {s.get("pendingWorkloads")} + admitted '
              f'{s.get("admittedWorkloads")} != {want} unfinished workloads')
        sys.exit(1)
PY
}
wait_for 30 queues_consistent || fail "ClusterQueue counts match the unfinished Workloads" "$(queues_consistent)"
ok "ClusterQueue pending + admitted counts match the unfinished Workloads"

jobs_json=$(api "$JOBS") || fail "list Jobs"
wl_json=$(api "$WL") || fail "list Workloads"
problems=$(python3 - "$jobs_json" "$wl_json" "$RUNS" "$DATA" "${ACKED[@]}" <<'PY'
import glob, json, os, sys
jobs = json.loads(sys.argv[1])["items"]
wls = {w["metadata"]["name"]: w for w in json.loads(sys.argv[2])["items"]}
runs, data, acked = sys.argv[3], sys.argv[4], sys.argv[5:]
def cond(obj, t):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == t:
            return c
    return {}
names = [j["metadata"]["name"] for j in jobs]
restarted = 0
for name in sorted(set(names)):
    if not name.startswith("burst-"):
        continue
    if name not in acked:
        print(f"note: {name} was stored though its POST was not acknowledged", file=sys.stderr)
for name in acked:
    if names.count(name) != 1:
        print(f"{name}: {names.count(name)} Job objects"); continue
    job = next(j for j in jobs if j["metadata"]["name"] == name)
    w = wls.get("job-" + name)
    if w is None:
        print(f"{name}: no Workload job-{name}"); continue
    fin = cond(w, "Finished")
    if fin.get("status") != "True" or fin.get("reason") != "Succeeded":
        print(f"{name}: Workload Finished {fin}")
    if cond(job, "Complete").get("status") != "True" or job["status"].get("succeeded") != 1:
        print(f"{name}: Job status {json.dumps(job.get('status'))}")
    lines = open(os.path.join(runs, name)).read().split() if os.path.exists(os.path.join(runs, name)) else []
    if lines.count("done") != 1:
        print(f"{name}: the pod finished {lines.count('done')} times ({lines})")
    if lines.count("start") > 1:
        restarted += 1
        # A clean restart: every earlier run was stopped before it finished.
        if lines[-2:] != ["start", "done"]:
            print(f"{name}: runs {lines}")
    logs = glob.glob(os.path.join(data, "pods", f"default_{name}-*", "log"))
    if len(logs) != 1:
        print(f"{name}: pod logs {logs}")
    else:
        text = open(logs[0]).read()
        if text.count(f"{name} done") != 1:
            print(f"{name}: pod log shows {text.count(f'{name} done')} completed runs: {text!r}")
print(f"note: {restarted} pods restarted cleanly", file=sys.stderr)
PY
)
[ -z "$problems" ] || fail "every acknowledged job exists once and succeeded once" "$problems"
ok "every acknowledged job exists once, ran to completion once and finished Succeeded"

# Stop the server; nothing the pods started may be left.
kill -TERM "$PID" 2>/dev/null
wait_for 10 sh -c "! kill -0 $PID" || kill_server
PID=""
nothing_left() { ! pgrep -f "$MARK" | grep -vx "$$" >/dev/null; }
wait_for 5 nothing_left || fail "no process is left after the server stops" \
  "$(pgrep -af "$MARK" | grep -v "^$$ ")"
ok "no process of the test is left running"
echo "$PASS passed, 0 failed"
