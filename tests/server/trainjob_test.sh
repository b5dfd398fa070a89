#!/usr/bin/env bash
# Kubeflow Trainer v2 in `muster serve` with the real kubectl: a ClusterTrainingRuntime
# (torch) and a TrainJob with numNodes 2 run as one gang of two node pods through a
# Kueue LocalQueue; each pod sees torchrun's PET_* env; the TrainJob ends Complete. A
# TrainJob naming a missing runtime waits with condition Created=False naming it, and
# runs once the runtime is created. Bad fields are refused naming the field; ignored
# ones come back as kubectl warnings.
# Usage: bash tests/server/trainjob_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl
serve_tmp

start_serve

check "the queues apply" "localqueue.kueue.x-k8s.io/lq created" $K apply -f - <<<"$(kueue_queues 1 1Gi)"

# runtime NAME: a torch ClusterTrainingRuntime whose trainer step is "node".
runtime() {
  cat <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: $1}
spec:
  mlPolicy:
    numNodes: 1
    torch: {numProcPerNode: auto}
  podGroupPolicy:
    coscheduling: {scheduleTimeoutSeconds: 120}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: busybox
                  command: [sh, -c, "echo runtime command"]
EOF
}
runtime torch-distributed >"$TMP/runtime.yaml"
check "a ClusterTrainingRuntime applies" "clustertrainingruntime.trainer.kubeflow.org/torch-distributed created" \
  $K apply -f "$TMP/runtime.yaml"
check "kubectl get clustertrainingruntimes lists it" "torch-distributed" $K get clustertrainingruntimes

check "a TrainJob applies" "trainjob.trainer.kubeflow.org/mnist created" $K apply -f - <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mnist
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    command: [sh, -c, 'echo "rank=$PET_NODE_RANK nnodes=$PET_NNODES master=$PET_MASTER_ADDR:$PET_MASTER_PORT"']
    resourcesPerNode:
      requests: {cpu: 100m, memory: 64Mi}
EOF
eventually "the TrainJob ends Complete" "Complete" \
  $K get trainjob mnist -o 'jsonpath={.status.conditions[?(@.status=="True")].type}'
check "its jobsStatus counts the node Job as succeeded" "node 1 0" \
  $K get trainjob mnist -o 'jsonpath={.status.jobsStatus[0].name} {.status.jobsStatus[0].succeeded} {.status.jobsStatus[0].active}'
check "kubectl get trainjobs shows its state" "mnist +Complete" $K get trainjobs
check "both node pods ran" "mnist-node-0-0 mnist-node-0-1" \
  $K get pods -l jobset.sigs.k8s.io/jobset-name=mnist -o 'jsonpath={.items[*].metadata.name}'
check "node 0 saw its torch env" "rank=0 nnodes=2 master=[^:]+:[0-9]+" $K logs mnist-node-0-0
check "node 1 saw its torch env" "rank=1 nnodes=2 master=[^:]+:[0-9]+" $K logs mnist-node-0-1
check "one Workload of both pods" "node 2" \
  $K get workload trainjob-mnist -o 'jsonpath={.spec.podSets[0].name} {.spec.podSets[0].count}'

check "a TrainJob on a missing runtime is accepted" "trainjob.trainer.kubeflow.org/orphan created" \
  $K apply -f - <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: orphan
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  runtimeRef: {name: torch-later}
  trainer:
    numNodes: 1
    command: [sh, -c, 'echo late rank=$PET_NODE_RANK']
    resourcesPerNode:
      requests: {cpu: 100m, memory: 64Mi}
EOF
eventually "it waits with a condition naming the runtime" \
  'False TrainingRuntimeNotFound ClusterTrainingRuntime "torch-later" not found' \
  $K get trainjob orphan -o 'jsonpath={.status.conditions[?(@.type=="Created")].status} {.status.conditions[?(@.type=="Created")].reason} {.status.conditions[?(@.type=="Created")].message}'
runtime torch-later >"$TMP/later.yaml"
check "the missing runtime is created" "created" $K apply -f "$TMP/later.yaml"
eventually "then the TrainJob runs to Complete" "Complete" \
  $K get trainjob orphan -o 'jsonpath={.status.conditions[?(@.status=="True")].type}'

check_fails "a bad numProcPerNode is refused naming the field" \
  "spec.trainer.numProcPerNode: must be an integer or one of auto, cpu, gpu" $K apply -f - <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: bad}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numProcPerNode: lots}
EOF
check "ignored fields come back as warnings" "Warning: .*spec.initializer: not acted on" \
  $K apply -f - <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: warned}
spec:
  runtimeRef: {name: torch-distributed}
  initializer:
    dataset: {storageUri: "hf://tiny"}
  trainer:
    numNodes: 1
    command: [sh, -c, "true"]
    resourcesPerNode:
      requests: {cpu: 100m, memory: 64Mi}
EOF
check_fails "its trainer is immutable" "spec.trainer.*field is immutable" \
  $K patch trainjob warned --type=merge -p '{"spec":{"trainer":{"numNodes":3}}}'
check "a TrainJob deletes" "deleted" $K delete trainjob mnist
finish
