#!/usr/bin/env bash
# batch/v1 CronJobs on `muster serve` with the real kubectl and the process runtime:
# `kubectl create cronjob` validates and defaults as upstream, `kubectl get` prints
# upstream's columns, the schedule's next minute makes a Job named after its
# scheduled minute that runs and completes (its pod's log is the command's), the
# CronJob's status follows it with Events, `kubectl create job --from=cronjob/...`
# works, suspend stops new Jobs, and deleting the CronJob takes its Jobs with it.
# Waits for one minute boundary (at most ~70 s).
# Usage: bash tests/server/cronjob_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl
serve_tmp

start_serve

check_fails "a schedule with a minute of 61 is refused, naming the field" \
  "spec.schedule.*end of range \(61\) above maximum \(59\)" \
  $K create cronjob bad --image=busybox --schedule="61 * * * *" -- true
check_fails "an unknown time zone is refused" "spec.timeZone.*unknown time zone Mars/Olympus" \
  bash -c "$K create cronjob bad --image=busybox --schedule='@daily' --dry-run=client -o json -- true |
    sed 's/\"schedule\": \"@daily\"/\"schedule\": \"@daily\", \"timeZone\": \"Mars\/Olympus\"/' |
    $K create -f -"

check "kubectl create cronjob every minute" "cronjob.batch/hello created" \
  $K create cronjob hello --image=busybox --schedule="* * * * *" -- sh -c 'echo hello from cron'
check "its defaults are upstream's" "^Allow false 3 1$" \
  $K get cronjob hello -o 'jsonpath={.spec.concurrencyPolicy} {.spec.suspend} {.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit}'
check "kubectl get prints its schedule and state" "^hello +\* \* \* \* \* +<none> +False +0 +<none> +" \
  $K get cronjobs --no-headers

check "kubectl create job --from=cronjob makes a Job from its template" "job.batch/by-hand created" \
  $K create job by-hand --from=cronjob/hello
eventually "that Job completes" "^True$" \
  $K get job by-hand -o 'jsonpath={.status.conditions[?(@.type=="Complete")].status}'

EVENTUALLY_TRIES=400 eventually "at the next minute a Job named after its scheduled minute appears" \
  "^hello-[0-9]+ " $K get jobs --no-headers
job=$($K get jobs --no-headers -o custom-columns=N:.metadata.name | grep '^hello-' | head -1)
check "it is the CronJob's, with its scheduled time" "^CronJob hello [0-9T:-]+Z$" \
  $K get job "$job" -o 'jsonpath={.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.annotations.batch\.kubernetes\.io/cronjob-scheduled-timestamp}'
eventually "it completes" "^True$" \
  $K get job "$job" -o 'jsonpath={.status.conditions[?(@.type=="Complete")].status}'
check "its pod ran the command" "hello from cron" \
  bash -c "$K logs \$($K get pods -l batch.kubernetes.io/job-name=$job -o name | head -1)"
eventually "the CronJob's status says when it last ran and succeeded" "^[0-9T:-]+Z [0-9T:-]+Z$" \
  $K get cronjob hello -o 'jsonpath={.status.lastScheduleTime} {.status.lastSuccessfulTime}'
check "its Events say what the controller did" "SuccessfulCreate.*Created job $job" \
  $K describe cronjob hello

check "suspend is a spec update" "cronjob.batch/hello patched" \
  $K patch cronjob hello --type=merge -p '{"spec":{"suspend":true}}'
check "kubectl get shows it suspended" "^hello +\* \* \* \* \* +<none> +True +" \
  $K get cronjobs --no-headers

check "deleting the CronJob" "cronjob.batch \"hello\" deleted" $K delete cronjob hello
eventually "takes the Jobs it made with it" "^$" \
  bash -c "$K get jobs --no-headers -o custom-columns=N:.metadata.name | grep '^hello-' || true"

finish
