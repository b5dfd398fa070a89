#!/usr/bin/env bash
# muster's main job on its embedded default, end to end: builds muster, starts
# `muster serve` (durable store under a temporary --data, kubectl-compatible API) on
# the example workstation with two team queues, and drives it with muster's own
# client (`muster apply/get/logs`, same API kubectl uses):
#   1. team A's 2-rank PyTorchJob is gang-admitted (borrowing team B's idle GPUs) and
#      runs as local processes with RANK/WORLD_SIZE/MASTER_* and CUDA_VISIBLE_DEVICES;
#   2. team B's Indexed Job reclaims B's quota: the PyTorchJob is preempted (SIGTERM,
#      checkpoint, grace period) and requeued;
#   3. team B's job finishes, the PyTorchJob is re-admitted, resumes from its
#      checkpoint and finishes.
# Usage: scripts/demo.sh [--keep]   (--keep leaves the data directory for inspection)
set -euo pipefail
cd "$(dirname "$0")/.."
NINJA_TARGETS=muster scripts/build.sh build >/dev/null
M="$PWD/build/muster"
keep=false
[ "${1:-}" = "--keep" ] && keep=true

work=$(mktemp -d /tmp/muster-demo.XXXXXX)
log="$work/server.log"
"$M" serve --data "$work/data" --listen 127.0.0.1:0 \
  -f examples/serve/cluster.yaml -f examples/serve/queues.yaml >"$log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  if $keep; then echo "data kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

url=""
for _ in $(seq 100); do
  url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$log")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "muster serve did not start:"; cat "$log"; exit 1; }
export MUSTER_SERVER="$url"
echo "== muster serve is listening on $url (data in $work/data)"
head -n 1 "$log"

# Waits until `muster get workload NAME` shows the column value wanted (ADMITTED or
# FINISHED, as the Workload's conditions say).
workload_field() {  # name, field index in `muster get workloads` (1-based)
  "$M" get workloads 2>/dev/null | awk -v n="$1" -v f="$2" 'NR > 1 && $1 == n { print $f }'
}
wait_for() {  # description, command...
  local what=$1
  shift
  for _ in $(seq 300); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "timed out waiting for: $what"
  tail -n 20 "$log"
  exit 1
}
admitted() { [ "$(workload_field "$1" 4)" = "True" ]; }
finished() { [ "$(workload_field "$1" 5)" = "True" ]; }
# The Workload's Evicted condition is True (or already settled to "Previously: ...").
evicted() { "$M" get workload "$1" -o json | tr -d ' \n' | grep -q '"type":"Evicted"'; }
pod_running() { "$M" get pod "$1" 2>/dev/null | grep -q ' Running '; }
show() {
  echo
  echo "\$ muster $*"
  "$M" "$@"
}

echo
echo "== 1. team A submits a 2-rank PyTorchJob needing 4 GPUs (it borrows team B's idle quota)"
show apply -f examples/serve/pretrain.yaml
wait_for "pretrain admitted" admitted pytorchjob-pretrain
wait_for "pretrain running" pod_running pretrain-worker-0
show get workloads
show get pods -o wide
sleep 1
show logs pretrain-master-0
show logs pretrain-worker-0

echo
echo "== 2. team B submits an Indexed Job: it reclaims team B's quota and preempts the borrower"
show apply -f examples/serve/finetune.yaml
wait_for "pretrain evicted" evicted pytorchjob-pretrain
wait_for "finetune admitted" admitted job-finetune
show get workloads
show get pods
wait_for "pretrain's master stopped" bash -c "! '$M' get pod pretrain-master-0 | grep -q ' Running '"
show logs pretrain-master-0

echo
echo "== 3. finetune finishes; pretrain is re-admitted, resumes from its checkpoint and finishes"
wait_for "finetune finished" finished job-finetune
wait_for "pretrain finished" finished pytorchjob-pretrain
show get workloads
show get pods
show logs pretrain-master-0 --previous
show logs pretrain-master-0
show describe workload pytorchjob-pretrain
show get events
echo
echo "\$ curl -s $url/metrics | grep -E '^kueue_(admitted|evicted)_workloads_total'"
curl -s "$url/metrics" | grep -E '^kueue_(admitted|evicted)_workloads_total' || true
echo
echo "== done: both jobs succeeded; the PyTorchJob was preempted once and resumed from its checkpoint"
