#!/usr/bin/env bash
# Bare Pods as workloads in `muster serve` with the real kubectl: a Pod labelled with a
# Kueue LocalQueue runs as a one-pod Workload under that queue's quota and its own
# status reaches Succeeded; a Kueue pod group of 2 waits (PodScheduled=False with the
# reason, an Event) while only one pod exists and while only one fits, then runs both
# at once; deleting a running pod stops it and frees its quota; a pod of a group
# without its total count says why it never runs; a pod without a queue label runs as
# a Job without one does; a Volcano standalone PodGroup and its pods are one gang
# whose phase `kubectl get podgroups` shows; a Job deleted with --cascade=orphan
# leaves its running pods running, each a workload of its own. `kubectl wait
# --for=condition=Ready` works on bare and Job pods, whose specs carry their limits.
# Usage: bash tests/server/bare_pods_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl
serve_tmp
# stays NAME PATTERN CMD...: CMD's output still matches after 2 s.
stays() {
  sleep 2
  check "$@"
}

start_serve

# One flavor, a ClusterQueue of 1Gi of memory (memory: every machine has that much;
# a CPU count would depend on the machine the test runs on) and its LocalQueue.
check "the queues apply" "localqueue.kueue.x-k8s.io/lq created" $K apply -f - <<<"$(kueue_queues 1 1Gi)"

# pod NAME MEMORY COMMAND [GROUP TOTAL]: a bare Pod in queue lq.
pod() {
  local name=$1 mem=$2 cmd=$3 group=${4:-} total=${5:-}
  local meta="{name: $name, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq"
  [ -n "$group" ] && meta="$meta, kueue.x-k8s.io/pod-group-name: $group"
  meta="$meta}"
  [ -n "$total" ] && meta="$meta, annotations: {kueue.x-k8s.io/pod-group-total-count: \"$total\"}"
  $K apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: $meta}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: [sh, -c, '$cmd']
    resources: {requests: {cpu: 10m, memory: "$mem"}}
EOF
}

# (1) One pod, one Workload: it runs under lq's quota and its own status follows.
check "a queued bare pod is accepted" "pod/solo created" pod solo 100Mi 'echo hello-from-solo; sleep 1'
eventually "its status reaches Succeeded" "^solo +0/1 +Completed " $K get pod solo --no-headers
check "it ran the pod's own command" "hello-from-solo" $K logs solo
check "its Workload is in lq and Finished" "^pod-solo +lq +cq +True +True" $K get workloads pod-solo --no-headers
check "the pod's Events say it was admitted and started" "Admitted +Pod/solo.*Started +Pod/solo" \
  bash -c "$K get events --sort-by=.metadata.creationTimestamp 2>&1 | tr '\n' ' '"
check "the pod kept its name, labels and node" "vm.*lq" \
  $K get pod solo -o 'jsonpath={.spec.nodeName} {.metadata.labels.kueue\.x-k8s\.io/queue-name}'

# (1b) What scripts wait on: the kubelet's conditions, on a bare pod and on a Job's pod,
# whose spec carries its limits and the Job controller's completion index.
check "a long bare pod is accepted" "pod/waiter created" pod waiter 100Mi 'sleep 30'
check "kubectl wait --for=condition=Ready on a bare pod" "pod/waiter condition met" \
  $K wait --for=condition=Ready pod/waiter --timeout=30s
check "an indexed Job is accepted" "job.batch/wjob created" $K apply -f - <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: wjob, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  completionMode: Indexed
  completions: 1
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox:1.36
        command: [sh, -c, 'sleep 30']
        resources: {limits: {cpu: 10m, memory: 100Mi}}
EOF
check "kubectl wait --for=condition=Ready on a Job's pod" "condition met" \
  $K wait --for=condition=Ready pod -l job-name=wjob --timeout=30s
check "its spec has the limits, requests defaulted from them, and the index in env" \
  '^\{"cpu":"10m","memory":"100Mi"\} \{"cpu":"10m","memory":"100Mi"\} JOB_COMPLETION_INDEX=0 Guaranteed$' \
  $K get pod -l job-name=wjob -o 'jsonpath={.items[0].spec.containers[0].resources.limits} {.items[0].spec.containers[0].resources.requests} {range .items[0].spec.containers[0].env[*]}{.name}={.value}{end} {.items[0].status.qosClass}'
check "the Job and the pod are deleted" "deleted" $K delete job/wjob pod/waiter --wait=true

# (2) A group of 2: one pod alone waits, saying why.
check "the first pod of group g is accepted" "pod/g-a created" pod g-a 100Mi 'echo g-a-ran; sleep 1' g 2
eventually "it waits for the rest of its group (PodScheduled=False)" \
  "False SchedulingGated waiting for the pods of group g: 1 of 2 exist" \
  $K get pod g-a -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason} {.status.conditions[?(@.type=="PodScheduled")].message}'
check "an Event on the pod says why" "WaitingForAdmission +Pod/g-a +waiting for the pods of group g" $K get events
stays "it is not started" "^g-a +0/1 +(Pending|SchedulingGated) " $K get pod g-a --no-headers
check "the second pod completes group g" "pod/g-b created" pod g-b 100Mi 'echo g-b-ran; sleep 1' g 2
eventually "both pods of the group ran" "g-a +0/1 +Completed .*g-b +0/1 +Completed " \
  bash -c "$K get pods --no-headers 2>&1 | tr '\n' ' '"
check "one Workload for the group, Finished" "^pod-g +lq +cq +True +True" $K get workloads pod-g --no-headers
check "the group's Workload has a pod set per pod" "g-a g-b" \
  $K get workload pod-g -o 'jsonpath={.spec.podSets[*].name}'

# A group of 2 whose pods fit the queue's quota only one at a time: all or nothing.
pod h-a 600Mi 'echo h-a-ran' h 2 >/dev/null
pod h-b 600Mi 'echo h-b-ran' h 2 >/dev/null
eventually "a group that does not fit waits with the quota's reason" \
  "False SchedulingGated .*memory" \
  $K get pod h-a -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason} {.status.conditions[?(@.type=="PodScheduled")].message}'
stays "neither pod of it started" "h-a +0/1 +(Pending|SchedulingGated) .*h-b +0/1 +(Pending|SchedulingGated) " \
  bash -c "$K get pods --no-headers 2>&1 | tr '\n' ' '"
check "more quota" "clusterqueue.kueue.x-k8s.io/cq patched" \
  $K patch clusterqueue cq --type=merge -p '{"spec":{"resourceGroups":[{"coveredResources":["cpu","memory"],"flavors":[{"name":"default-flavor","resources":[{"name":"cpu","nominalQuota":"1"},{"name":"memory","nominalQuota":"2Gi"}]}]}]}}'
eventually "then both run at once" "h-a +0/1 +Completed .*h-b +0/1 +Completed " \
  bash -c "$K get pods --no-headers 2>&1 | tr '\n' ' '"

# Deleting a running pod stops it and frees its quota.
pod long 1500Mi 'sleep 60' >/dev/null
eventually "a pod that holds the whole quota runs" "^long +1/1 +Running " $K get pod long --no-headers
pod next 1Gi 'echo next-ran' >/dev/null
stays "the next pod waits for quota" "^next +0/1 +(Pending|SchedulingGated) " $K get pod next --no-headers
check "the running pod is deleted" 'pod "long" deleted' $K delete pod long --wait=false
eventually "its Workload is gone" "NotFound|not found" bash -c "$K get workload pod-long 2>&1 || true"
eventually "the freed quota runs the next pod" "^next +0/1 +Completed " $K get pod next --no-headers

# Graceful deletion, as kube-apiserver and the kubelet do it: a running pod deleted
# stays Terminating while its process stops (this one traps SIGTERM and takes two
# seconds), with its grace period on it, and goes once it has.
$K apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: slowstop, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 30
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'trap "sleep 2; exit 0" TERM; while true; do sleep 0.1; done']
    resources: {requests: {cpu: 10m, memory: 10Mi}}
EOF
eventually "a pod that traps SIGTERM runs" "^slowstop +1/1 +Running " $K get pod slowstop --no-headers
check "deleted, it is marked" 'pod "slowstop" deleted' $K delete pod slowstop --wait=false
check "kubectl shows it Terminating while it stops" "^slowstop +[01]/1 +Terminating " \
  $K get pod slowstop --no-headers
check "with its grace period" "^30$" $K get pod slowstop -o 'jsonpath={.metadata.deletionGracePeriodSeconds}'
eventually "once stopped it is gone" "NotFound|not found" bash -c "$K get pod slowstop 2>&1 || true"

# Never silent: a group pod without its total count.
pod bad-a 10Mi 'true' bad >/dev/null
eventually "a group pod without its total count says why" \
  "False Unschedulable .*pod-group-total-count" \
  $K get pod bad-a -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason} {.status.conditions[?(@.type=="PodScheduled")].message}'

# A pod with no queue label runs as a batch Job without one does in serve (muster
# is the only scheduler): its Workload names no queue.
check "a pod without a queue label is accepted" "pod/free created" $K apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: free, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, command: [sh, -c, 'echo free-ran'], resources: {requests: {cpu: 10m, memory: 10Mi}}}
EOF
eventually "it runs like a Job without a queue label" "^free +0/1 +Completed " $K get pod free --no-headers
check "its Workload names no queue and is Finished" "^pod-free True True $" \
  $K get workload pod-free -o 'jsonpath={.metadata.name} {.status.conditions[?(@.type=="Admitted")].status} {.status.conditions[?(@.type=="Finished")].status} {.spec.queueName}'

# `kubectl run` writes no restartPolicy (Always, the default): the kubelet restarts
# the container in place whenever it exits, at once and then with its back-off.
check "kubectl run" "pod/runner created" \
  $K run runner --image=busybox --command -- sh -c 'echo runner-ran-$(date +%s%N); exit 3'
eventually "its container exits and waits in CrashLoopBackOff, the pod Running" \
  "^Running CrashLoopBackOff [1-9]+ 3$" \
  $K get pod runner -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.reason} {.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].lastState.terminated.exitCode}'
check "its log is its current container's" "runner-ran-" $K logs runner
check "the previous container's log is another" "runner-ran-" $K logs runner --previous
eventually "a BackOff Event as the kubelet's" \
  "Back-off restarting failed container runner in pod runner_default" \
  $K get events --field-selector involvedObject.name=runner,reason=BackOff -o 'jsonpath={.items[0].message}'
check "its Workload stays admitted, not finished" "^True $" \
  $K get workload pod-runner -o 'jsonpath={.status.conditions[?(@.type=="Admitted")].status} {.status.conditions[?(@.type=="Finished")].status}'
check "deleted in back-off, it goes" 'pod "runner" deleted' $K delete pod runner
eventually "and its Workload with it" "^$" $K get workload pod-runner --ignore-not-found
check "OnFailure: a container that succeeded is not restarted" "pod/once created" \
  $K run once --image=busybox --restart=OnFailure --command -- sh -c 'echo once-ran'
eventually "it ends Completed" "^once +0/1 +Completed +0 " $K get pod once --no-headers

# (3) Volcano: a standalone PodGroup and pods that name it are one gang; the
# PodGroup's phase follows (Pending, then Running, then Completed).
vpod() {
  $K apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  annotations: {scheduling.k8s.io/group-name: vg}
spec:
  schedulerName: volcano
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'echo $1-ran; sleep 3']
    resources: {requests: {cpu: 10m, memory: 10Mi}}
EOF
}
check "a Volcano Queue" "queue.scheduling.volcano.sh/default created" $K apply -f - <<'EOF'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1}
EOF
check "a standalone PodGroup of minMember 2" "podgroup.scheduling.volcano.sh/vg created" $K apply -f - <<'EOF'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: vg, namespace: default}
spec: {minMember: 2, queue: default}
EOF
vpod vg-a >/dev/null
eventually "with one pod it is Pending" "^vg +Pending +2 +default" $K get podgroups --no-headers
stays "its pod waits for the gang" "^vg-a +0/1 +(Pending|SchedulingGated) " $K get pod vg-a --no-headers
vpod vg-b >/dev/null
eventually "with both pods it is Running" "^vg +Running +2 +default" $K get podgroups --no-headers
check "its status counts the running pods" "^2 0 0$" \
  $K get podgroup vg -o 'jsonpath={.status.running} {.status.succeeded} {.status.failed}'
eventually "then Completed" "^vg +Completed +2" $K get podgroups --no-headers
check "both pods succeeded" "vg-a +0/1 +Completed .*vg-b +0/1 +Completed " \
  bash -c "$K get pods --no-headers 2>&1 | tr '\n' ' '"
check "the counts say so" "^0 2 0$" \
  $K get podgroup vg -o 'jsonpath={.status.running} {.status.succeeded} {.status.failed}'
$K get podgroup vg -o yaml >"$TMP/vg.yaml" 2>&1
check "muster summary shows the PodGroup's phase" \
  "default/vg +minMember=2 queue=default phase=Completed \(running 0, succeeded 2, failed 0\) standalone" \
  "$MUSTER" summary -f "$TMP/vg.yaml"

# (4) kubectl delete job --cascade=orphan: as a kubelet runs an unowned pod on, the
# Job's running pods run on, unowned, each a one-pod workload of its own adopted where
# it runs (the Job's workload and its quota go with the Job); deleting one stops it
# alone; a restarted server adopts the other again.
check "a queued Job of two pods" "job.batch/orph created" $K apply -f - <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: orph, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - {name: main, image: busybox, command: [sh, -c, 'sleep 300'], resources: {requests: {cpu: 10m, memory: 10Mi}}}
EOF
orph_pods() { $K get pods --no-headers 2>&1 | { grep '^orph-' || true; } | tr '\n' ' '; }
orph_workloads() {
  $K get workloads -o 'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Admitted")].status}{"\n"}{end}' |
    grep orph | tr '\n' ' '
}
eventually "its pods run" "orph-0 +1/1 +Running +0 .*orph-1 +1/1 +Running +0 " orph_pods
STARTED=$($K get pod orph-1 -o 'jsonpath={.status.containerStatuses[0].state.running.startedAt}')
check "deleted with --cascade=orphan" 'job.batch "orph" deleted' $K delete job orph --cascade=orphan
eventually "the Job is gone" "NotFound|not found" bash -c "$K get job orph 2>&1 || true"
stays "its pods run on" "orph-0 +1/1 +Running +0 .*orph-1 +1/1 +Running +0 " orph_pods
check "the same containers, not restarted" "^$STARTED$" \
  $K get pod orph-1 -o 'jsonpath={.status.containerStatuses[0].state.running.startedAt}'
check "unowned" "^orph-1 $" $K get pod orph-1 -o 'jsonpath={.metadata.name} {.metadata.ownerReferences}'
eventually "each is an admitted workload of its own; the Job's is gone" \
  "^pod-orph-0=True pod-orph-1=True $" orph_workloads
check "an orphaned pod deleted" 'pod "orph-0" deleted' $K delete pod orph-0 --wait=false
eventually "goes alone" "^orph-1 +1/1 +Running +0 +[0-9a-z]+ $" orph_pods
restart_serve
eventually "a restarted server runs the other on" "^orph-1 +1/1 +Running +0 +[0-9a-z]+ $" orph_pods
check "where it ran" "^$STARTED$" \
  $K get pod orph-1 -o 'jsonpath={.status.containerStatuses[0].state.running.startedAt}'
check "the last orphaned pod deleted" 'pod "orph-1" deleted' $K delete pod orph-1 --wait=false
eventually "and gone" "^$" orph_pods

kill -TERM "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=""
finish
