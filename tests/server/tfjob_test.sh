#!/usr/bin/env bash
# Addresses that work, end to end, in `muster serve` with the real kubectl: a TFJob
# (chief 1, worker 2, ps 1) queued through Kueue and a Volcano Job (plugins env and
# svc) whose tasks, plain python (tests/server/peers/peer_check.py, from a ConfigMap
# volume), read what their controller gives them (TF_CONFIG; VC_<TASK>_HOSTS,
# VC_<TASK>_NUM and /etc/volcano/<task>.host), check their own task and that every
# address resolves to a distinct IP, listen on their own address and reach every
# other task there, each peer answering with its identity. The TFJob then ends
# Succeeded (upstream's default success policy: the chief succeeded), the Volcano
# Job Completed. Per-pod /etc/hosts and volumes need the private mount namespace
# muster gives pods only when it runs as root: skips otherwise.
# Usage: bash tests/server/tfjob_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
PEERS="$(dirname "${BASH_SOURCE[0]}")/peers/peer_check.py"
require_commands kubectl /usr/bin/python3
if [ "$(id -u)" -ne 0 ]; then
  echo "not root: muster gives pods no private /etc/hosts or volumes, so the task names do not resolve; skipping"
  echo "0 passed, 0 failed"
  exit 0
fi
serve_tmp

start_serve

check "the queues apply" "localqueue.kueue.x-k8s.io/lq created" $K apply -f - <<<"$(kueue_queues 2 2Gi)"
check "the task script is a ConfigMap" "configmap/peers created" \
  $K create configmap peers --from-file=peer_check.py="$PEERS"

# replica TYPE COUNT [STAY]: a TFJob replica spec running the task script; with STAY
# the task then serves on, as a real parameter server does until it is stopped.
replica() {
  cat <<EOF2
    $1:
      replicas: $2
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: tensorflow
            image: python:3
            command: [/usr/bin/python3, -u, /peers/peer_check.py, tf]
            env: [{name: PEER_STAY, value: "${3:-}"}]
            resources:
              requests: {cpu: 100m, memory: 64Mi}
            volumeMounts: [{name: peers, mountPath: /peers}]
          volumes: [{name: peers, configMap: {name: peers}}]
EOF2
}
{
  cat <<'EOF2'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: tf
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  tfReplicaSpecs:
EOF2
  replica Chief 1
  replica Worker 2
  replica PS 1 stay
} >"$TMP/tfjob.yaml"
check "a TFJob (chief 1, worker 2, ps 1) applies" "tfjob.kubeflow.org/tf created" $K apply -f "$TMP/tfjob.yaml"
# within NAME PATTERN CMD...: like eventually, with room for four python tasks that
# wait on each other on a loaded machine (a bound against hangs, not a timing check).
within() {
  local name=$1 pattern=$2
  shift 2
  local out="" deadline=$((SECONDS + ${MUSTER_TFJOB_WAIT_S:-180}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if out=$("$@" 2>&1) && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; return 0; fi
    sleep 0.5
  done
  bad "$name" "$out"
  return 1
}
# logs PREFIX...: each pod's name and log, for a failure's detail.
logs() {
  local pod
  for pod in "$@"; do echo "== $pod"; $K logs "$pod" 2>&1 | tail -5; done
}

TF_PODS="tf-chief-0 tf-ps-0 tf-worker-0 tf-worker-1"
check "kubectl get tfjobs lists it" "^tf " $K get tfjobs --no-headers
eventually "it is queued as one Workload of its 4 pods" "Chief 1 PS 1 Worker 2|chief 1 ps 1 worker 2" \
  $K get workload tfjob-tf -o 'jsonpath={range .spec.podSets[*]}{.name} {.count} {end}'
# Upstream's default success policy: the chief's success is the job's, though the
# parameter server still runs (the operator then stops it).
if ! within "the TFJob ends Succeeded (the chief succeeded; the ps still served)" "^True$" \
  $K get tfjob tf -o 'jsonpath={.status.conditions[?(@.type=="Succeeded")].status}'; then
  logs $TF_PODS
  tail -20 "$TMP/server.log"
fi
check "its Succeeded condition has upstream's reason" "^TFJobSucceeded .*successfully completed" \
  $K get tfjob tf -o 'jsonpath={.status.conditions[?(@.type=="Succeeded")].reason} {.status.conditions[?(@.type=="Succeeded")].message}'
for pod in $TF_PODS; do
  task=${pod#tf-}
  task=${task%-*}:${task##*-}
  check "$pod saw its own task in TF_CONFIG and reached its 3 peers at distinct addresses" \
    "^ok $task at tf-${pod#tf-}\.default\.svc \(127\.[0-9.]+\) reached 3 peers, 4 distinct addresses" \
    $K logs "$pod"
done
check "the chief's and the workers' pods Succeeded" "^(Succeeded ){3}$" \
  $K get pods tf-chief-0 tf-worker-0 tf-worker-1 -o 'jsonpath={range .items[*]}{.status.phase} {end}'

# A Volcano Job with the env and svc plugins: task names with a dash check the
# svc plugin's key forms (VC_PARAM_SERVER_HOSTS, /etc/volcano/param_server.host).
vtask() {
  cat <<EOF2
  - name: $1
    replicas: $2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: python:3
          command: [/usr/bin/python3, -u, /peers/peer_check.py, volcano, param-server, trainer]
          resources:
            requests: {cpu: 100m, memory: 64Mi}
          volumeMounts: [{name: peers, mountPath: /peers}]
        volumes: [{name: peers, configMap: {name: peers}}]
EOF2
}
{
  cat <<'EOF2'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: vc
spec:
  schedulerName: volcano
  minAvailable: 3
  plugins:
    env: []
    svc: []
  tasks:
EOF2
  vtask param-server 1
  vtask trainer 2
} >"$TMP/vcjob.yaml"
VC_PODS="vc-param-server-0 vc-trainer-0 vc-trainer-1"
check "a Volcano Job (plugins env and svc) applies" "job.batch.volcano.sh/vc created" $K apply -f "$TMP/vcjob.yaml"
if ! within "the Volcano Job ends Completed" "^Completed$" $K get vcjob vc -o 'jsonpath={.status.state.phase}'; then
  logs $VC_PODS
  tail -20 "$TMP/server.log"
fi
for pod in $VC_PODS; do
  task=${pod#vc-}
  task=${task%-*}:${task##*-}
  check "$pod read its hosts (env and /etc/volcano) and reached its 2 peers at distinct addresses" \
    "^ok $task at ${pod}\.vc \(127\.[0-9.]+\) reached 2 peers, 3 distinct addresses" $K logs "$pod"
done
check "every task's pod Succeeded" "^(Succeeded ){3}$" \
  $K get pods $VC_PODS -o 'jsonpath={range .items[*]}{.status.phase} {end}'
finish
