#!/usr/bin/env bash
# A real torch.distributed DDP job under `muster serve`: examples/serve/ddp's
# PyTorchJob (gloo, CPU) borrows team B's GPUs, is preempted when team B's finetune
# reclaims them (rank 0 saves an emergency checkpoint on SIGTERM and exits 143), is
# re-admitted, resumes from the checkpoint and succeeds; then the same script runs
# as an Indexed batch Job. Skips when Debian's python3-torch is not installed.
# Usage: bash tests/server/ddp_test.sh BUILD_DIR
set -uo pipefail

# The build directory (or the muster binary itself).
BUILD=${1:-build}
if [ -d "$BUILD" ]; then MUSTER=$(realpath "$BUILD/muster"); else MUSTER=$(realpath "$BUILD"); fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SERVE="$ROOT/examples/serve"
# Debian's python3 throughout: it has torch (python3-torch) and yaml (python3-yaml).
PY=/usr/bin/python3
# find_spec, not "import torch": importing takes seconds, the pods pay it anyway.
if ! "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is None)" 2>/dev/null; then
  echo "SKIP: python3-torch not installed (apt-get install python3-torch)"
  echo "0 passed, 0 failed"
  exit 0
fi

TMP=$(mktemp -d)
DATA="$TMP/data"
export KUBECONFIG="$TMP/kubeconfig"
export KUBECACHEDIR="$TMP/cache"
PASS=0
FAIL=0
PID=""
BASE=""
# Generous bounds: each rank imports torch (seconds on a loaded machine); they are
# limits against hangs, not timing assertions.
WAIT_S=${MUSTER_DDP_WAIT_S:-180}

cleanup() {
  if [ -n "$PID" ]; then
    kill -TERM "$PID" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$PID" 2>/dev/null
  fi
  # Pod processes outlive the server by design (a restarted server adopts them):
  # kill the ones still running (pid and start time from their state.json), so a
  # failed run leaves no rank waiting on a dead rendezvous.
  "$PY" - "$DATA" <<'PY' 2>/dev/null
import glob, json, os, signal, sys
for path in glob.glob(sys.argv[1] + "/pods/*/state.json"):
    st = json.load(open(path))
    for pid, ticks in ((st.get("pid"), st.get("start_ticks")), (st.get("shim_pid"), st.get("shim_start_ticks"))):
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            if int(fields[19]) == ticks:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, TypeError, IndexError):
            pass
PY
  rm -rf "$TMP"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
bad() {
  FAIL=$((FAIL + 1))
  echo "FAIL $1"
  [ -n "${2:-}" ] && sed 's/^/     /' <<<"$2" | tail -30
  echo "     --- server log (tail)"
  tail -15 "$TMP/server.log" | sed 's/^/     /'
}
finish() {
  echo "$PASS passed, $FAIL failed"
  [ "$FAIL" -eq 0 ]
  exit
}

start_server() {
  rm -f "$TMP/server.log" # the previous server's "listening on" line must not be read
  "$MUSTER" serve --data "$DATA" --listen 127.0.0.1:0 -f "$SERVE/cluster.yaml" \
    -f "$SERVE/queues.yaml" >"$TMP/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do
    if grep -q "listening on" "$TMP/server.log" 2>/dev/null; then
      BASE="http://127.0.0.1:$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.log")"
      return 0
    fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server did not start:"
  cat "$TMP/server.log"
  return 1
}

# apply FILE: kubectl when installed, else POST the manifest's JSON to the REST API.
apply() {
  if command -v kubectl >/dev/null 2>&1; then
    kubectl --server "$BASE" --request-timeout=20s apply --validate=false -f "$1"
  else
    "$PY" - "$BASE" "$1" <<'PY'
import json, sys, urllib.request, yaml
base, path = sys.argv[1], sys.argv[2]
for doc in yaml.safe_load_all(open(path)):
    group = doc["apiVersion"]
    prefix = "/api/" + group if "/" not in group else "/apis/" + group
    plural = {"PyTorchJob": "pytorchjobs", "Job": "jobs", "Service": "services",
              "ResourceFlavor": "resourceflavors", "ClusterQueue": "clusterqueues",
              "LocalQueue": "localqueues"}[doc["kind"]]
    if doc["kind"] in ("ResourceFlavor", "ClusterQueue"):
        url = f"{base}{prefix}/{plural}"
    else:
        url = f"{base}{prefix}/namespaces/{doc['metadata'].get('namespace', 'default')}/{plural}"
    req = urllib.request.Request(url, json.dumps(doc).encode(), {"Content-Type": "application/json"})
    print(urllib.request.urlopen(req).status, url)
PY
  fi
}

# log POD [previous]: the pod's current (or previous attempt's) log.
log() { curl -s "$BASE/api/v1/namespaces/default/pods/$1/log${2:+?previous=true}"; }

# workload_state NAME: "<Finished status> <Finished reason> <Evicted/Preempted seen>".
workload_state() {
  curl -s "$BASE/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/$1" | "$PY" -c '
import json, sys
try:
    conds = json.load(sys.stdin).get("status", {}).get("conditions", [])
except ValueError:
    conds = []
fin = [c for c in conds if c["type"] == "Finished"]
evicted = any(c["type"] in ("Evicted", "Preempted") and c["status"] == "True" for c in conds)
print(fin[0]["status"] if fin else "-", fin[0].get("reason", "-") if fin else "-", evicted)'
}

# exit_codes POD...: "pod=code" of each pod's last terminated container.
exit_codes() {
  for pod in "$@"; do
    curl -s "$BASE/api/v1/namespaces/default/pods/$pod" | "$PY" -c '
import json, sys
pod = json.load(sys.stdin)
st = (pod.get("status", {}).get("containerStatuses") or [{}])[0].get("state", {})
print(sys.argv[1] + "=" + str(st.get("terminated", {}).get("exitCode", "none")))' "$pod"
  done | tr '\n' ' '
}

# wait_for DESCRIPTION CMD...: polls CMD until it succeeds, up to WAIT_S seconds.
wait_for() {
  local what=$1
  shift
  local deadline=$((SECONDS + WAIT_S))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$PID" 2>/dev/null || { bad "$what (server exited)"; return 1; }
    sleep 0.3
  done
  bad "timed out after ${WAIT_S}s waiting for $what"
  return 1
}

start_server || { echo "0 passed, 1 failed"; exit 1; }

# 1. The DDP PyTorchJob starts training.
if apply "$SERVE/ddp/pytorchjob-ddp.yaml" >"$TMP/apply.txt" 2>&1; then ok "apply pytorchjob-ddp.yaml"; else
  bad "apply pytorchjob-ddp.yaml" "$(cat "$TMP/apply.txt")"; finish; fi
wait_for "rank 0 logs step 3" bash -c "curl -s '$BASE/api/v1/namespaces/default/pods/ddp-master-0/log' | grep -q '^step 3/'" \
  || finish
ok "rank 0 trains (step 3 logged)"

# 2. Team B reclaims its quota: the DDP gang is preempted mid-run.
if apply "$SERVE/finetune.yaml" >"$TMP/apply.txt" 2>&1; then ok "apply finetune.yaml"; else
  bad "apply finetune.yaml" "$(cat "$TMP/apply.txt")"; finish; fi
EVICTED=False
sigterm_checkpoint_logged() {
  [ "$(workload_state pytorchjob-ddp | cut -d' ' -f3)" = True ] && EVICTED=True
  log ddp-master-0 previous | grep -q 'checkpoint saved at step [0-9]* (SIGTERM)'
}
if wait_for "rank 0's SIGTERM checkpoint (logs --previous)" sigterm_checkpoint_logged; then
  K=$(log ddp-master-0 previous | sed -n 's/.*checkpoint saved at step \([0-9]*\) (SIGTERM).*/\1/p' | tail -1)
  ok "preempted: rank 0 saved an emergency checkpoint at step $K and exited"
  if log ddp-master-0 previous | grep -q 'rank 0: SIGTERM, exiting 143'; then ok "rank 0 exits 143 on SIGTERM"; else
    bad "rank 0 exits 143 on SIGTERM" "$(log ddp-master-0 previous)"; fi
else
  K=""
fi
if [ "$(workload_state pytorchjob-ddp | cut -d' ' -f3)" = True ]; then EVICTED=True; fi
if [ "$EVICTED" = True ]; then ok "Workload pytorchjob-ddp was Evicted/Preempted"; else
  bad "Workload pytorchjob-ddp was Evicted/Preempted" \
    "$(curl -s "$BASE/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/pytorchjob-ddp")"; fi

# 3. finetune finishes, the DDP gang is re-admitted, resumes and succeeds.
ddp_finished() { [ "$(workload_state pytorchjob-ddp | cut -d' ' -f1)" = True ]; }
wait_for "pytorchjob-ddp Finished" ddp_finished
STATE=$(workload_state pytorchjob-ddp)
if [[ "$STATE" == "True Succeeded"* ]]; then ok "pytorchjob-ddp Finished=True reason Succeeded"; else
  bad "pytorchjob-ddp Finished=True reason Succeeded" "state: $STATE
$(log ddp-master-0)"; fi
for pod_rank in ddp-master-0:0 ddp-worker-0:1; do
  pod=${pod_rank%:*} rank=${pod_rank#*:}
  OUT=$(log "$pod")
  R=$(sed -n 's/.*resumed from step \([0-9]*\).*/\1/p' <<<"$OUT" | tail -1)
  if [ -n "$R" ] && [ "$R" -gt 0 ] && { [ -z "$K" ] || [ "$R" = "$K" ]; }; then
    ok "$pod resumed from step $R (the SIGTERM checkpoint)"
  else
    bad "$pod resumed from step K > 0 (SIGTERM checkpoint: ${K:-none})" "$OUT"
  fi
  if grep -q "^rank $rank done after 30 steps" <<<"$OUT"; then ok "$pod finished 30 steps"; else
    bad "$pod finished 30 steps" "$OUT"; fi
done
CODES=$(exit_codes ddp-master-0 ddp-worker-0)
if [ "$CODES" = "ddp-master-0=0 ddp-worker-0=0 " ]; then ok "every rank exited 0"; else
  bad "every rank exited 0" "$CODES"; fi
finetune_done() { [ "$(workload_state job-finetune | cut -d' ' -f1)" = True ]; }
if wait_for "job-finetune Finished" finetune_done && [[ "$(workload_state job-finetune)" == "True Succeeded"* ]]; then
  ok "finetune (the preemptor) succeeded"
else
  bad "finetune (the preemptor) succeeded" "$(workload_state job-finetune)"
fi

# 4. The same script as an Indexed batch Job (rank = JOB_COMPLETION_INDEX).
if apply "$SERVE/ddp/indexed-job-ddp.yaml" >"$TMP/apply.txt" 2>&1; then ok "apply indexed-job-ddp.yaml"; else
  bad "apply indexed-job-ddp.yaml" "$(cat "$TMP/apply.txt")"; finish; fi
indexed_finished() { [ "$(workload_state job-ddp-indexed | cut -d' ' -f1)" = True ]; }
wait_for "job-ddp-indexed Finished" indexed_finished
STATE=$(workload_state job-ddp-indexed)
if [[ "$STATE" == "True Succeeded"* ]]; then ok "job-ddp-indexed Finished=True reason Succeeded"; else
  bad "job-ddp-indexed Finished=True reason Succeeded" "state: $STATE
$(log ddp-indexed-0)"; fi
for rank in 0 1; do
  OUT=$(log "ddp-indexed-$rank")
  if grep -q "^rank $rank of 2: no checkpoint" <<<"$OUT" && grep -q "^rank $rank done after 30 steps" <<<"$OUT"; then
    ok "indexed rank $rank trained 30 steps"
  else
    bad "indexed rank $rank trained 30 steps" "$OUT"
  fi
done
CODES=$(exit_codes ddp-indexed-0 ddp-indexed-1)
if [ "$CODES" = "ddp-indexed-0=0 ddp-indexed-1=0 " ]; then ok "every indexed rank exited 0"; else
  bad "every indexed rank exited 0" "$CODES"; fi

# 5. Seed 001's hands-on lab: its queues and headless Service unchanged, then its
# two-rank Indexed Job. As written, the Job's command is `torchrun ... -c SCRIPT`,
# which torchrun itself refuses (it has no -c; "unrecognized arguments: -c"), here
# as on any cluster: muster runs it as written and the pod's log says so. Then the
# same Job with only the launcher replaced by what torchrun would have set up for
# the script (RANK from the completion index through the downward API, WORLD_SIZE,
# and the seed's rendezvous endpoint as MASTER_ADDR/MASTER_PORT): both ranks meet
# at pytorch-ddp-0.pytorch-ddp-svc:29500, the name the pod's hostname and
# subdomain give it.
SEEDS="$ROOT/tests/seeds/restored"
for f in 001-0310.yaml 001-0319.yaml; do
  if apply "$SEEDS/$f" >"$TMP/apply.txt" 2>&1; then ok "seed 001 lab: apply $f unchanged"; else
    bad "seed 001 lab: apply $f unchanged" "$(cat "$TMP/apply.txt")"; fi
done
if apply "$SEEDS/001-0327.yaml" >"$TMP/apply.txt" 2>&1; then ok "seed 001 lab: apply 001-0327.yaml (the Job) unchanged"; else
  bad "seed 001 lab: apply 001-0327.yaml (the Job) unchanged" "$(cat "$TMP/apply.txt")"; fi
if wait_for "the lab Job's torchrun refusing -c" bash -c "curl -s '$BASE/api/v1/namespaces/default/pods/pytorch-ddp-0/log' | grep -q 'unrecognized arguments: -c'"; then
  ok "the lab Job as written runs torchrun, which refuses -c (as upstream's torchrun does)"
fi
curl -s -X DELETE "$BASE/apis/batch/v1/namespaces/default/jobs/pytorch-ddp?propagationPolicy=Foreground" >/dev/null
lab_gone() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/api/v1/namespaces/default/pods/pytorch-ddp-0")" = 404 ] &&
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/apis/batch/v1/namespaces/default/jobs/pytorch-ddp")" = 404 ]; }
wait_for "the lab Job and its pods deleted" lab_gone
"$PY" - "$SEEDS/001-0327.yaml" >"$TMP/lab-direct.yaml" <<'PY'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
c = job["spec"]["template"]["spec"]["containers"][0]
cmd = c["command"]
endpoint = next(a for a in cmd if a.startswith("--rdzv_endpoint=")).split("=", 1)[1]
host, port = endpoint.rsplit(":", 1)
script = cmd[cmd.index("-c") + 1]
c["command"] = ["/usr/bin/python3", "-u", "-c", script]
c["env"] = [
    {"name": "RANK", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
    {"name": "WORLD_SIZE", "value": str(job["spec"]["completions"])},
    {"name": "MASTER_ADDR", "value": host},
    {"name": "MASTER_PORT", "value": port},
]
print(yaml.safe_dump(job))
PY
if apply "$TMP/lab-direct.yaml" >"$TMP/apply.txt" 2>&1; then ok "seed 001 lab: the Job with ranks started directly"; else
  bad "seed 001 lab: the Job with ranks started directly" "$(cat "$TMP/apply.txt")"; fi
lab_finished() { [ "$(workload_state job-pytorch-ddp | cut -d' ' -f1)" = True ]; }
wait_for "job-pytorch-ddp Finished" lab_finished
STATE=$(workload_state job-pytorch-ddp)
if [[ "$STATE" == "True Succeeded"* ]]; then ok "the lab's Job Finished=True reason Succeeded"; else
  bad "the lab's Job Finished=True reason Succeeded" "state: $STATE
$(log pytorch-ddp-0)
$(log pytorch-ddp-1)"; fi
for rank in 0 1; do
  OUT=$(log "pytorch-ddp-$rank")
  if grep -q "^SUCCESS: Rank $rank of 2 initialized." <<<"$OUT"; then
    ok "lab rank $rank rendezvoused through pytorch-ddp-0.pytorch-ddp-svc:29500"
  else
    bad "lab rank $rank rendezvoused through pytorch-ddp-0.pytorch-ddp-svc:29500" "$OUT"
  fi
done

finish
