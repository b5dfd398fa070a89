#!/usr/bin/env bash
# Kueue's waitForPodsReady on `muster serve` with the real kubectl and podman: a Job
# whose image is missing under imagePullPolicy Never (its pod waits in
# ErrImageNeverPull, never Ready) is evicted after the 5 s timeout with the Workload
# condition Evicted reason PodsReadyTimeout, kept out of line for its backoff
# (status.requeueState count and requeueAt), admitted again when the backoff ends,
# and deactivated (spec.active false, Evicted DeactivatedDueToRequeuingLimitExceeded)
# at the timeout past backoffLimitCount 2. The server is killed with -9 and restarted
# on its data during each backoff (15 s, then 20 s: wide for a loaded machine): the
# count goes on from the Workload's requeueState.
# Skips (exit 0) without root, kubectl or podman.
# Usage: bash tests/server/pods_ready_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: not root (podman containers need a root server)"
  echo "0 passed, 0 failed"
  exit 0
fi
require_commands kubectl podman
serve_tmp
# Unique to this run: podman's image store is shared, and the image must be missing.
NEVER_IMAGE=localhost/muster-never-ready-$$:1

cat >"$TMP/kueue.yaml" <<'EOF2'
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
waitForPodsReady:
  enable: true
  timeout: 5s
  blockAdmission: true
  requeuingStrategy:
    timestamp: Eviction
    backoffLimitCount: 2
    backoffBaseSeconds: 15
    backoffMaxSeconds: 20
EOF2

# Podman's start-up, and backoffs of up to 20 s, want longer waits than serve.sh's.
SERVE_START_TRIES=300
EVENTUALLY_TRIES=300
SERVE_ARGS=(--container-runtime=podman --config "$TMP/kueue.yaml")
restart_serve "${SERVE_ARGS[@]}"

check "the queues apply" "localqueue.kueue.x-k8s.io/lq created" $K apply -f - <<<"$(kueue_queues 1 1Gi)"

check "a Job whose image is missing under imagePullPolicy Never applies" "job.batch/stuck created" \
  $K apply -f - <<EOF2
apiVersion: batch/v1
kind: Job
metadata:
  name: stuck
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: $NEVER_IMAGE
        imagePullPolicy: Never
        command: [sh, -c, 'echo started']
        resources:
          requests: {cpu: 100m, memory: 64Mi}
EOF2

# wl: the Workload's Evicted reason, requeueState count, whether requeueAt is set,
# spec.active and its Admitted status.
wl() {
  $K get workload job-stuck -o 'jsonpath={.status.conditions[?(@.type=="Evicted")].reason} count={.status.requeueState.count} at={.status.requeueState.requeueAt} active={.spec.active} admitted={.status.conditions[?(@.type=="Admitted")].status}'
}
eventually "its Workload is admitted, PodsReady False WaitForStart" "^True False WaitForStart$" \
  $K get workload job-stuck -o 'jsonpath={.status.conditions[?(@.type=="Admitted")].status} {.status.conditions[?(@.type=="PodsReady")].status} {.status.conditions[?(@.type=="PodsReady")].reason}'
eventually "after the 5 s timeout it is evicted (PodsReadyTimeout) and backs off: requeueState count 1, requeueAt" \
  "^PodsReadyTimeout count=1 at=[0-9T:-]+Z active=true admitted=False$" wl
check "its pod waited in ErrImageNeverPull" "ErrImageNeverPull" \
  $K get events -o 'jsonpath={.items[*].reason}'
check "the eviction message is upstream's" "^Exceeded the PodsReady timeout default/stuck$" \
  $K get workload job-stuck -o 'jsonpath={.status.conditions[?(@.type=="Evicted")].message}'

restart_serve "${SERVE_ARGS[@]}"  # kill -9 and restart during the first, 15 s, backoff
eventually "after a restart, its requeueState is still count 1" \
  "^PodsReadyTimeout count=1 at=[0-9T:-]+Z active=true" wl
eventually "the backoff over, it is admitted again and times out again: count 2" \
  "^PodsReadyTimeout count=2 at=[0-9T:-]+Z active=true admitted=False$" wl

restart_serve "${SERVE_ARGS[@]}"  # and again during the second, 20 s, backoff
eventually "after a second restart, its requeueState is still count 2" \
  "^PodsReadyTimeout count=2 at=[0-9T:-]+Z active=true" wl
eventually "its third timeout passes backoffLimitCount 2: deactivated, requeueState cleared" \
  "^DeactivatedDueToRequeuingLimitExceeded count= at= active=false admitted=False$" wl
check "the deactivation message is upstream's" \
  "^The workload is deactivated due to exceeding the maximum number of re-queuing retries$" \
  $K get workload job-stuck -o 'jsonpath={.status.conditions[?(@.type=="Evicted")].message}'
sleep 2
check "it stays deactivated: no pod runs for it" "^active=false admitted=False$" \
  $K get workload job-stuck -o 'jsonpath=active={.spec.active} admitted={.status.conditions[?(@.type=="Admitted")].status}'

finish
