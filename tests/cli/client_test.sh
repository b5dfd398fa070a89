#!/usr/bin/env bash
# muster's own client commands (apply, get, describe, delete, logs) against a real
# `muster serve`; needs no kubectl. Pod logs are faked by writing the files the
# local executor would write under the data directory.
# Usage: bash tests/cli/client_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

MUSTER=$(realpath "${1:-build/muster}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
DATA="$TMP/data"
PID=""
WPID=""

cleanup() {
  [ -n "$WPID" ] && kill "$WPID" 2>/dev/null
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT


# check NAME PATTERN CMD...: CMD must succeed and its output match PATTERN (grep -E).
# check_exit NAME CODE PATTERN CMD...: CMD must exit CODE with output matching PATTERN.
# wait_for FILE PATTERN [MIN]: until FILE has at least MIN (1) lines matching PATTERN (5 s at most).
wait_for() {
  for _ in $(seq 1 50); do
    [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "${3:-1}" ] && return 0
    sleep 0.1
  done
  return 1
}

"$MUSTER" serve --data "$DATA" --listen 127.0.0.1:0 -f "$ROOT/examples/cluster" "$ROOT/examples/queues" \
  >"$TMP/server.log" 2>&1 &
PID=$!
wait_for "$TMP/server.log" "listening on" || { cat "$TMP/server.log"; echo "0 passed, 1 failed"; exit 1; }
PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.log")
export MUSTER_SERVER="http://127.0.0.1:$PORT"
M="$MUSTER"
API="$MUSTER_SERVER"

# get: the server's Table, aligned like kubectl.
check "get cq prints the Table header" '^NAME +COHORT +PENDING WORKLOADS +ADMITTED WORKLOADS +AGE$' $M get cq
out=$($M get clusterqueues 2>&1)
header=$(head -1 <<<"$out")
row=$(grep '^team-a ' <<<"$out")
col=$(awk '{print index($0, "COHORT")}' <<<"$header")
cell=$(awk '{print index($0, $2)}' <<<"$row")
if [ -n "$row" ] && [ "$col" -eq "$cell" ] && grep -qE '^NAME   ' <<<"$header"; then
  ok "columns line up (3 spaces after the widest cell)"
else
  bad "columns line up" "$out"
fi
check "get by Kind and by name -o name" '^clusterqueue.kueue.x-k8s.io/team-a$' $M get ClusterQueue team-a -o name
check "get plural.group" '^clusterqueue.kueue.x-k8s.io/team-b$' $M get clusterqueues.kueue.x-k8s.io -o name
check "get -o json" '"resourceVersion": "[0-9]+"' $M get cq team-a -o json
check "get -o yaml" '^kind: ClusterQueue$' $M get cq team-a -o yaml
check "get -o yaml quotes numeric strings" 'resourceVersion: "[0-9]+"' $M get cq team-a -o yaml
check "get list -o yaml is a List" '^kind: List$' $M get cq -o yaml
check "get -A adds NAMESPACE" '^NAMESPACE +NAME +CLUSTERQUEUE' $M get lq -A
check "get -n" '^team-a +team-a' $M get lq -n team-a
check "get -l selector" '^No resources found$' $M get cq -l 'tier in (none)'
check "empty namespace" '^No resources found in default namespace.$' $M get localqueues
check_exit "unknown type exits 1" 1 'the server doesn.t have a resource type "nosuch"' $M get nosuch
check_exit "missing object exits 1 with the server's message" 1 \
  '^Error from server \(NotFound\): clusterqueues.kueue.x-k8s.io "nope" not found$' $M get cq nope
check_exit "bad usage exits 2" 2 '' $M get
check_exit "bad -o exits 2" 2 '' $M get cq -o toml
check_exit "connection refused names the URL" 1 'http://127.0.0.1:1\b.*connection refused' \
  $M get cq --server http://127.0.0.1:1

# apply: created, unchanged, configured.
check "apply -f dir creates" 'pytorchjob.kubeflow.org/llm-pretrain created' $M apply -f "$ROOT/examples/jobs"
out=$($M apply -f "$ROOT/examples/jobs" 2>&1)
if [ "$(grep -c ' unchanged$' <<<"$out")" -eq "$(grep -c . <<<"$out")" ]; then ok "apply again: every object unchanged"; else bad "apply again" "$out"; fi
sed 's/^  name: preprocess$/  name: preprocess\n  labels: {stage: one}/' "$ROOT/examples/jobs/plain-job.yaml" >"$TMP/job.yaml"
check "apply a changed manifest: configured" '^job.batch/preprocess configured$' $M apply -f "$TMP/job.yaml"
check "the change is stored" '^preprocess ' $M get jobs.batch -l stage=one
check "apply from stdin" '^localqueue.kueue.x-k8s.io/extra created$' $M apply -f - <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: extra, namespace: team-a}
spec: {clusterQueue: team-a}
YAML
check_exit "apply of an invalid object exits 1" 1 'is invalid' $M apply -f - <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: broken}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: cpu
      resources:
      - {name: cpu, nominalQuota: 12x}
YAML

# describe: metadata, nested spec, conditions table, events.
curl -sf -X PATCH -H 'Content-Type: application/merge-patch+json' \
  -d '{"status":{"conditions":[{"type":"Active","status":"True","reason":"Ready","message":"Can admit new workloads"}]}}' \
  "$API/apis/kueue.x-k8s.io/v1beta1/clusterqueues/team-a/status" >/dev/null
out=$($M describe cq team-a 2>&1)
if grep -qE '^Name: +team-a$' <<<"$out" && grep -qE '^Kind: +ClusterQueue$' <<<"$out" &&
  grep -qE '^Spec:$' <<<"$out" && grep -qE '^ +Nominal Quota: ' <<<"$out" &&
  grep -qE '^ +Type +Status +Reason +Message$' <<<"$out" &&
  grep -qE '^ +Active +True +Ready +Can admit new workloads$' <<<"$out" &&
  grep -qE '^Events: +<none>$' <<<"$out"; then
  ok "describe cq"
else
  bad "describe cq" "$out"
fi
$M apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  # Never placed: the test, not the executor, writes this pod's log files.
  nodeSelector: {muster.test/unschedulable: "true"}
  containers:
  - {name: main, image: busybox}
---
apiVersion: v1
kind: Event
metadata: {name: trainer.1, namespace: default}
involvedObject: {kind: Pod, name: trainer, namespace: default}
type: Normal
reason: Scheduled
message: placed on gpu-node-1
source: {component: muster}
YAML
check "describe pod shows its events" '^  Normal +Scheduled +[^ ]+ +muster +placed on gpu-node-1$' $M describe pod trainer

# logs: the files the executor writes under --data.
check_exit "logs before the pod started" 1 'container "main" in pod "trainer" is waiting to start: ContainerCreating' \
  $M logs trainer
check_exit "logs of a missing pod" 1 'pods "ghost" not found' $M logs ghost
mkdir -p "$DATA/pods/default_trainer"
printf 'epoch 1\nepoch 2\nepoch 3\n' >"$DATA/pods/default_trainer/log"
printf 'crashed\n' >"$DATA/pods/default_trainer/log.previous"
check "logs" '^epoch 1$' $M logs trainer
check "logs --tail" '^epoch 3$' $M logs trainer --tail 1
out=$($M logs trainer --tail 1 2>&1)
[ "$out" = "epoch 3" ] && ok "logs --tail 1 prints one line" || bad "logs --tail 1 prints one line" "$out"
check "logs --previous" '^crashed$' $M logs trainer --previous
check_exit "logs -c of another container" 1 'container sidecar is not valid for pod trainer' $M logs trainer -c sidecar
$M logs trainer -f --tail 1 >"$TMP/follow.out" 2>&1 &
WPID=$!
wait_for "$TMP/follow.out" '^epoch 3$'
printf 'epoch 4\n' >>"$DATA/pods/default_trainer/log"
if wait_for "$TMP/follow.out" '^epoch 4$'; then ok "logs -f streams appended lines"; else bad "logs -f streams appended lines" "$(cat "$TMP/follow.out")"; fi
curl -sf -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"status":{"phase":"Succeeded"}}' \
  "$API/api/v1/namespaces/default/pods/trainer/status" >/dev/null
for _ in $(seq 1 50); do kill -0 "$WPID" 2>/dev/null || break; sleep 0.1; done
if ! kill -0 "$WPID" 2>/dev/null && wait "$WPID"; then ok "logs -f ends when the pod finishes"; else bad "logs -f ends when the pod finishes" "$(cat "$TMP/follow.out")"; fi
WPID=""

# get -w: a change arrives as a new row.
$M get cq team-a -w >"$TMP/watch.out" 2>&1 &
WPID=$!
wait_for "$TMP/watch.out" '^team-a '
curl -sf -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"metadata":{"labels":{"watched":"yes"}}}' \
  "$API/apis/kueue.x-k8s.io/v1beta1/clusterqueues/team-a" >/dev/null
if wait_for "$TMP/watch.out" '^team-a ' 2; then ok "get -w prints the change"; else bad "get -w prints the change" "$(cat "$TMP/watch.out")"; fi
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=""

# delete
check "delete TYPE NAME" '^localqueue.kueue.x-k8s.io "extra" deleted$' $M delete lq extra -n team-a
check "delete -f" '^job.batch "preprocess" deleted$' $M delete -f "$ROOT/examples/jobs/plain-job.yaml"
check_exit "deleted object is gone" 1 'NotFound' $M get jobs.batch preprocess
check_exit "delete a missing object exits 1" 1 'Error from server \(NotFound\)' $M delete lq extra -n team-a

# readiness and backup / restore (etcdctl snapshot save / restore)
check "readyz lists its checks" '^\[\+\]store ok$' curl -sf "$API/readyz?verbose"
check "backup --server saves a snapshot" '^snapshot saved to ' $M backup "$TMP/snap.db"
check_exit "backup refuses to overwrite" 1 'exists' $M backup "$TMP/snap.db"
check_exit "backup --data of a running server points to --server" 1 'in use by another muster serve.*--server' \
  $M backup --data "$DATA" "$TMP/snap2.db"
check "restore makes a new data directory" 'resourceVersion [0-9]+' $M restore "$TMP/snap.db" --data "$TMP/restored"
check_exit "restore refuses a directory with a store" 1 'already has a store' \
  $M restore "$TMP/snap.db" --data "$DATA"
"$MUSTER" serve --data "$TMP/restored" --listen 127.0.0.1:0 --no-local-node >"$TMP/restored.log" 2>&1 &
RPID=$!
if wait_for "$TMP/restored.log" "listening on"; then
  RPORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/restored.log")
  check "the restored server has the snapshot's objects" '^clusterqueue.kueue.x-k8s.io/team-a$' \
    $M get cq team-a -o name --server "http://127.0.0.1:$RPORT"
else
  bad "the restored server starts" "$(cat "$TMP/restored.log")"
fi
kill -9 "$RPID" 2>/dev/null

kill -TERM "$PID"
wait "$PID" 2>/dev/null
PID=""
check "backup --data of a stopped server" '^snapshot of .* at resourceVersion [0-9]+ saved' \
  $M backup --data "$DATA" "$TMP/snap3.db"
finish
