#!/usr/bin/env bash
# JobSet policies in `muster serve` with the real kubectl and the process runtime: a
# JobSet with startupPolicy InOrder starts its workers only once its leader runs
# (condition StartupPolicyCompleted), and with successPolicy Any on the workers it
# completes when one worker Job succeeds, its leader then stopped. A replicated job
# that dependsOn another's Complete waits Pending, saying so, until it is. Fields
# muster does not act on come back as kubectl warnings and `muster validate` lines.
# Usage: bash tests/server/jobset_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl
serve_tmp

start_serve

kueue_queues 2 2Gi >"$TMP/queues.yaml"
check "the queues apply" "localqueue.kueue.x-k8s.io/lq created" $K apply -f "$TMP/queues.yaml"

# pod_spec COMMAND: a one-container pod template spec running COMMAND in sh.
pod_spec() {
  echo "{terminationGracePeriodSeconds: 1, containers: [{name: c, image: busybox, command: [sh, -c, \"$1\"], resources: {requests: {cpu: 100m, memory: 64Mi}}}]}"
}

cat >"$TMP/ordered.yaml" <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: ordered
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  startupPolicy: {startupPolicyOrder: InOrder}
  successPolicy: {operator: Any, targetReplicatedJobs: [workers]}
  replicatedJobs:
  - name: leader
    template: {spec: {template: {spec: $(pod_spec "sleep 600")}}}
  - name: workers
    template:
      spec:
        parallelism: 2
        completions: 2
        template: {spec: $(pod_spec "sleep 2; echo worker done")}
EOF
check "muster validate has no warning for the policies it acts on" "^clean$" \
  bash -c "out=\$('$MUSTER' validate -f '$TMP/ordered.yaml' 2>&1); grep -E 'spec\.(startupPolicy|successPolicy|replicatedJobs).*warning' <<<\"\$out\" || echo clean"
check "the InOrder / successPolicy Any JobSet applies" "jobset.jobset.x-k8s.io/ordered created" \
  $K apply -f "$TMP/ordered.yaml"
eventually "it completes once the worker Job succeeded" "^True AllJobsCompleted$" \
  $K get jobset ordered -o 'jsonpath={.status.conditions[?(@.type=="Completed")].status} {.status.conditions[?(@.type=="Completed")].reason}'
check "its in-order startup completed" "True InOrderStartupPolicyCompleted" \
  $K get jobset ordered -o 'jsonpath={.status.conditions[?(@.type=="StartupPolicyCompleted")].status} {.status.conditions[?(@.type=="StartupPolicyCompleted")].reason}'
check "both workers succeeded" "Succeeded Succeeded" \
  $K get pods ordered-workers-0-0 ordered-workers-0-1 -o 'jsonpath={.items[*].status.phase}'
eventually "the leader was stopped (its sleep 600 cut short)" "^(Failed|Succeeded)$" \
  $K get pod ordered-leader-0-0 -o 'jsonpath={.status.phase}'
leader_start=$($K get pod ordered-leader-0-0 -o 'jsonpath={.status.startTime}')
for w in ordered-workers-0-0 ordered-workers-0-1; do
  worker_start=$($K get pod "$w" -o 'jsonpath={.status.startTime}')
  check "$w started no earlier than the leader ($leader_start)" "ok" \
    bash -c "[[ -n '$leader_start' && ! '$worker_start' < '$leader_start' ]] && echo ok"
done

check "a dependsOn JobSet applies" "jobset.jobset.x-k8s.io/staged created" $K apply -f - <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: staged
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  replicatedJobs:
  - name: prep
    template: {spec: {template: {spec: $(pod_spec "sleep 4")}}}
  - name: main
    dependsOn: [{name: prep, status: Complete}]
    template: {spec: {template: {spec: $(pod_spec "echo main ran")}}}
EOF
eventually "its main pod waits Pending for prep to be Complete" \
  "Pending WaitingForReplicatedJob waiting for replicated job prep to be Complete \(dependsOn\)" \
  $K get pod staged-main-0-0 -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.reason} {.status.containerStatuses[0].state.waiting.message}'
eventually "then it runs and the JobSet completes" "^True$" \
  $K get jobset staged -o 'jsonpath={.status.conditions[?(@.type=="Completed")].status}'
check "main ran after prep" "main ran" $K logs staged-main-0-0

cat >"$TMP/warned.yaml" <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: warned}
spec:
  ttlSecondsAfterFinished: 60
  failurePolicy:
    maxRestarts: 1
    rules: [{action: RestartJob}]
  replicatedJobs:
  - name: a
    template: {spec: {template: {spec: $(pod_spec "true")}}}
EOF
check "muster validate warns about fields not acted on" \
  "spec.ttlSecondsAfterFinished: warning: not acted on" "$MUSTER" validate -f "$TMP/warned.yaml"
check "kubectl shows them as warnings" \
  "Warning: .*spec.failurePolicy.rules\[0\].action: RestartJob is not acted on" \
  $K apply -f "$TMP/warned.yaml"
check_fails "StartupPolicy and DependsOn together are refused" \
  "StartupPolicy and DependsOn APIs are mutually exclusive" $K apply -f - <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: both}
spec:
  startupPolicy: {startupPolicyOrder: InOrder}
  replicatedJobs:
  - name: a
    template: {spec: {template: {spec: $(pod_spec "true")}}}
  - name: b
    dependsOn: [{name: a, status: Ready}]
    template: {spec: {template: {spec: $(pod_spec "true")}}}
EOF

# The same policies with --executor emulated: nothing runs; a pod set's pods run for
# its template's sim.muster.dev/duration (else the JobSet's) and fail after its
# sim.muster.dev/fail-after.
start_serve --executor emulated
check "the queues apply (emulated)" "localqueue.kueue.x-k8s.io/lq created" \
  $K apply -f "$TMP/queues.yaml"
# emu_set NAME [ANNOTATIONS]: a replicated job of one pod with a pod template's annotations.
emu_set() {
  echo "  - name: $1
    template: {spec: {template: {metadata: {annotations: {${2:-}}}, spec: $(pod_spec "exit 7")}}}"
}
check "an emulated dependsOn JobSet applies" "jobset.jobset.x-k8s.io/emu-staged created" \
  $K apply -f - <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: emu-staged
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {sim.muster.dev/duration: "1s"}
spec:
  replicatedJobs:
$(emu_set prep 'sim.muster.dev/duration: "3s"')
$(emu_set main)
    dependsOn: [{name: prep, status: Complete}]
EOF
eventually "its main pod waits Pending for prep to be Complete (emulated)" \
  "Running Pending WaitingForReplicatedJob waiting for replicated job prep to be Complete \(dependsOn\)" \
  $K get pod emu-staged-prep-0-0 emu-staged-main-0-0 -o 'jsonpath={.items[*].status.phase} {.items[1].status.containerStatuses[0].state.waiting.reason} {.items[1].status.containerStatuses[0].state.waiting.message}'
eventually "then it runs and the JobSet completes (emulated)" "^True AllJobsCompleted$" \
  $K get jobset emu-staged -o 'jsonpath={.status.conditions[?(@.type=="Completed")].status} {.status.conditions[?(@.type=="Completed")].reason}'
prep_end=$($K get pod emu-staged-prep-0-0 -o 'jsonpath={.status.containerStatuses[0].state.terminated.finishedAt}')
main_start=$($K get pod emu-staged-main-0-0 -o 'jsonpath={.status.startTime}')
check "main started once prep had ended ($prep_end)" "ok" \
  bash -c "[[ -n '$prep_end' && ! '$main_start' < '$prep_end' ]] && echo ok"

check "an emulated JobSet whose workers fail applies" "jobset.jobset.x-k8s.io/emu-failing created" \
  $K apply -f - <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: emu-failing
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  failurePolicy:
    maxRestarts: 3
    rules: [{name: workers-fail, action: FailJobSet, targetReplicatedJobs: [workers]}]
  replicatedJobs:
$(emu_set leader)
$(emu_set workers 'sim.muster.dev/fail-after: "1s"')
EOF
eventually "its failurePolicy rule fails it at once, no restart (emulated)" \
  "^True FailJobSetFailurePolicyAction 0$" \
  $K get jobset emu-failing -o 'jsonpath={.status.conditions[?(@.type=="Failed")].status} {.status.conditions[?(@.type=="Failed")].reason} {.status.restarts}'
check "the worker failed with exit code 1 and nothing ran" "Failed 1" \
  $K get pod emu-failing-workers-0-0 -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.terminated.exitCode}'
finish
