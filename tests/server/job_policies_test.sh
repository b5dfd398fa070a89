#!/usr/bin/env bash
# A batch/v1 Job's own failure and clean-up rules on `muster serve` with the real
# kubectl and the process runtime: activeDeadlineSeconds fails a running Job with
# DeadlineExceeded, ttlSecondsAfterFinished deletes a finished one (its pods go with
# it), a podFailurePolicy FailJob rule fails at once whatever the backoffLimit, an
# Ignore rule's failure does not count, and what muster does not act on per index is
# a Warning on apply and a `muster validate` line.
# Usage: bash tests/server/job_policies_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl
serve_tmp

start_serve

# job NAME SPEC-LINES COMMAND: a one-pod Job (restartPolicy Never) in default.
job() {
  $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: default}
spec:
$2
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: [sh, -c, '$3']
EOF
}

check "a Job with activeDeadlineSeconds 2 applies" "job.batch/slow created" \
  job slow "  activeDeadlineSeconds: 2
  backoffLimit: 6" 'sleep 60'
eventually "it fails with DeadlineExceeded" "DeadlineExceeded Job was active longer than specified deadline" \
  $K get job slow -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason} {.status.conditions[?(@.type=="Failed")].message}'
eventually "its one pod was stopped, not started again" "^slow-[a-z0-9-]+ +(0/1 +)?(Failed|Error) " \
  $K get pods -l job-name=slow --no-headers

check "a Job with ttlSecondsAfterFinished 1 applies" "job.batch/brief created" \
  job brief "  ttlSecondsAfterFinished: 1" 'echo done'
eventually "it completes and then disappears" "NotFound" bash -c "$K get job brief 2>&1 || true"
eventually "its pods are collected" "No resources found" $K get pods -l job-name=brief

check "a Job whose FailJob rule matches exit code 42 applies" "job.batch/fatal created" \
  job fatal "  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}" 'exit 42'
eventually "it fails at once with reason PodFailurePolicy" \
  "PodFailurePolicy Container main for pod default/fatal-[a-z0-9-]+ failed with exit code 42 matching FailJob rule at index 0" \
  $K get job fatal -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason} {.status.conditions[?(@.type=="Failed")].message}'
check "one pod failed, none was started again" "^1 1$" \
  bash -c "echo \$($K get job fatal -o 'jsonpath={.status.failed}') \$($K get pods -l job-name=fatal --no-headers | wc -l)"

# The first run exits 3 (ignored), the second succeeds: with backoffLimit 0 a
# counted failure would have failed the Job.
check "a Job whose Ignore rule matches exit code 3 applies" "job.batch/flaky created" \
  job flaky "  backoffLimit: 0
  podFailurePolicy:
    rules:
    - action: Ignore
      onExitCodes: {operator: In, values: [3]}" "if [ -e $TMP/flaky-ran ]; then echo second; else touch $TMP/flaky-ran; exit 3; fi"
eventually "its ignored failure did not count: it completes" "^True$" \
  $K get job flaky -o 'jsonpath={.status.conditions[?(@.type=="Complete")].status}'

cat >"$TMP/per-index.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: per-index, namespace: default}
spec:
  suspend: true
  completions: 2
  parallelism: 2
  completionMode: Indexed
  backoffLimitPerIndex: 1
  maxFailedIndexes: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, 'true']}]
EOF
check "apply warns about the per-index fields" \
  "Warning: spec.backoffLimitPerIndex: not acted on per index.*Warning: spec.maxFailedIndexes: not acted on" \
  bash -c "$K apply -f $TMP/per-index.yaml 2>&1 | tr '\n' ' '"
check "muster validate names them too" \
  "spec.backoffLimitPerIndex: warning: not acted on per index" \
  "$MUSTER" validate -f "$TMP/per-index.yaml"

kill -TERM "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=""
finish
