#!/usr/bin/env bash
# The seed documents' manifests (../shared/seeds), applied unchanged with the real
# kubectl to `muster serve`, one fresh server per seed, on an emulated GPU cluster
# (tests/seeds/cluster.yaml: nodes labelled as the seeds' ResourceFlavors select them;
# `--executor emulated` marks bound pods Running). tests/seeds/extract_seeds.py takes
# each manifest out of the seed's text; the few that seeds 001 and 002 print with their
# line breaks or indentation lost are in tests/seeds/restored/ with only those put back.
# Checks what each seed says should happen: every object is created or refused with
# upstream's message, each job runs as one gang on the queue it names, the lab's
# oversized job waits whole, and the seed's own kubectl commands work. Ends with how many
# seed manifests apply unchanged.
# Usage: bash tests/server/seeds_test.sh build/muster [SHARED_DIR]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=${2:-${MUSTER_SHARED:-$ROOT/../shared}}
require_commands kubectl
if [ ! -d "$SHARED/seeds" ]; then
  echo "$SHARED/seeds not found; skipping"
  echo "0 passed, 0 failed"
  exit 0
fi
serve_tmp

/usr/bin/python3 "$ROOT/tests/seeds/extract_seeds.py" "$SHARED/seeds" "$TMP/manifests" >"$TMP/list"
sed 's/^/  /' "$TMP/list"

# A fresh server per seed: the seeds reuse names (ml-research-queue in 000 and 004).
start_server() { start_serve --executor emulated -f "$ROOT/tests/seeds/cluster.yaml"; }

applied=0
refused=0
total=0
# applies FILE PATTERN: `kubectl apply -f` of the seed manifest FILE succeeds and says PATTERN.
applies() {
  local f="$TMP/manifests/$1"
  total=$((total + 1))
  local out
  # One line: a manifest of several objects answers one line per object.
  if out=$($K apply -f "$f" 2>&1) && grep -qE -- "$2" <<<"$(tr '\n' ' ' <<<"$out")"; then
    applied=$((applied + 1))
    ok "$1 applies: $(tr '\n' ' ' <<<"$out" | cut -c1-120)"
  else
    bad "$1 applies" "$out"
  fi
}
# refused FILE PATTERN: kubectl apply fails, saying PATTERN (what upstream says).
refused() {
  local f="$TMP/manifests/$1"
  total=$((total + 1))
  local out
  if ! out=$($K apply -f "$f" 2>&1) && grep -qE -- "$2" <<<"$(tr '\n' ' ' <<<"$out")"; then
    refused=$((refused + 1))
    ok "$1 is refused as upstream refuses it: $(tr '\n' ' ' <<<"$out" | cut -c1-140)"
  else
    bad "$1 is refused" "$out"
  fi
}
# running NS COUNT PREFIX: COUNT pods whose names start with PREFIX are Running in NS.
running() {
  local ns=$1 count=$2 prefix=$3
  eventually "$count pods of $prefix run in $ns" "^$count\$" \
    sh -c "$K get pods -n $ns --no-headers 2>/dev/null | grep -c '^$prefix.* Running ' || true"
}

echo "-- seed 000: Volcano, the training operator's job kinds, Kueue"
start_server
applies 000-0047.yaml "queue.scheduling.volcano.sh/ml-research-queue created"
eventually "the Volcano Queue is Open" '^Open$' \
  $K get queue ml-research-queue -o 'jsonpath={.status.state}'
applies 000-0066.yaml "podgroup.scheduling.volcano.sh/pytorch-training-pg created"
applies 000-0118.yaml "job.batch.volcano.sh/pytorch-ddp-training created"
running default 5 pytorch-ddp-training-
applies 000-0227.yaml "pytorchjob.kubeflow.org/pytorch-ddp-mnist created"
running ml-training 3 pytorch-ddp-mnist-
applies 000-0338.yaml "mpijob.kubeflow.org/horovod-training created"
running default 5 horovod-training-
applies 000-0390.yaml "tfjob.kubeflow.org/tf-ps-training created"
running default 6 tf-ps-training-
# The claims name storage classes this machine has not: bound to local directories,
# with a warning that says so.
applies 000-0512.yaml "Warning: spec.storageClassName nfs-storage.*persistentvolumeclaim/training-data-pvc created"
applies 000-0529.yaml "persistentvolumeclaim/checkpoints-pvc created"
eventually "the seed's claims are Bound" '^Bound Bound$' \
  $K get pvc -n ml-training -o 'jsonpath={.items[*].status.phase}'
applies 000-0583.yaml "resourceflavor.kueue.x-k8s.io/gpu-a100 created.*gpu-t4-spot created"
applies 000-0611.yaml "clusterqueue.kueue.x-k8s.io/ml-cluster-queue created"
applies 000-0660.yaml "localqueue.kueue.x-k8s.io/ml-research-queue created"
# The seed prints this one as a fragment ("# ... PyTorchJob spec"): no replica specs.
refused 000-0670.yaml 'PyTorchJob "my-training-job" is invalid: spec.pytorchReplicaSpecs'
applies 000-0736.yaml "pytorchjob.kubeflow.org/elastic-training created"
running default 4 elastic-training-worker-

echo "-- seed 001: the Kueue hands-on lab"
start_server
# Multus is not part of muster: kubectl says what it says on a cluster without the CRD.
refused 001-0063.yaml 'no matches for kind "NetworkAttachmentDefinition".*|ensure CRDs are installed first'
applies 001-0310.yaml "resourceflavor.kueue.x-k8s.io/default-flavor created.*clusterqueue.kueue.x-k8s.io/cluster-queue created.*localqueue.kueue.x-k8s.io/user-queue created"
check "the lab's queues exist (step 2's kubectl get)" "cluster-queue" $K get clusterqueue
applies 001-0319.yaml "service/pytorch-ddp-svc created"
check "the Service is headless (CLUSTER-IP None)" "pytorch-ddp-svc +ClusterIP +None" \
  $K get svc pytorch-ddp-svc
applies 001-0327.yaml "job.batch/pytorch-ddp created"
eventually "the lab's Job is admitted by cluster-queue (step 4)" "^cluster-queue\$" \
  $K get workload job-pytorch-ddp -o 'jsonpath={.status.admission.clusterQueue}'
running default 2 pytorch-ddp-
applies 001-0351.yaml "job.batch/pytorch-ddp-too-large created"
eventually "the oversized Job waits whole with a reason (step 7)" "insufficient|quota|exceeds" \
  $K get workload job-pytorch-ddp-too-large \
  -o 'jsonpath={.status.conditions[?(@.type=="QuotaReserved")].message}'
check "no pod of the oversized Job starts" "^0\$" \
  sh -c "$K get pods --no-headers 2>/dev/null | grep -c '^pytorch-ddp-too-large' || true"

echo "-- seed 002: priority classes, Karpenter"
start_server
# Upstream refuses this Job too: a Job's pods default to restartPolicy Always.
refused 002-0022.yaml 'priorityclass.scheduling.k8s.io/training-high created.*spec.template.spec.restartPolicy: Unsupported value: "Always"'
refused 002-0119.yaml 'no matches for kind "NodePool"'

echo "-- seed 003: a JobSet fenced by a ClusterQueue and a ResourceQuota"
start_server
applies 003-0212.yaml "bookstore-ml-flavor created.*bookstore-ml-cq created.*bookstore-ml-lq created"
applies 003-0236.yaml "jobset.jobset.x-k8s.io/recommender-train created"
eventually "the JobSet is admitted by bookstore-ml-cq as one gang" "^bookstore-ml-cq\$" \
  $K get workload -n bookstore-ml jobset-recommender-train \
  -o 'jsonpath={.status.admission.clusterQueue}'
running bookstore-ml 2 recommender-train-worker-0-
check "the seed's kubectl create quota works" "resourcequota/gpu-quota created" \
  $K create -n bookstore-ml quota gpu-quota --hard=requests.nvidia.com/gpu=4
check "the seed's kubectl get clusterqueue -o wide works" "bookstore-ml-cq" \
  $K get clusterqueue bookstore-ml-cq -o wide

echo "-- seed 004: GPU flavors, a shared ClusterQueue, a Volcano job"
start_server
applies 004-0072.yaml "nvidia-a100 created.*nvidia-h100 created.*nvidia-l4 created"
applies 004-0098.yaml "clusterqueue.kueue.x-k8s.io/gpu-cluster created"
applies 004-0134.yaml "localqueue.kueue.x-k8s.io/ml-research-queue created"
applies 004-0143.yaml "localqueue.kueue.x-k8s.io/ml-production-queue created"
applies 004-0153.yaml "job.batch/distributed-training created"
eventually "the 4 x 8-GPU Job is admitted on the A100 flavor of gpu-cluster" "^nvidia-a100\$" \
  $K get workload -n ml-research job-distributed-training \
  -o 'jsonpath={.status.admission.podSetAssignments[0].flavors.nvidia\.com/gpu}'
running ml-research 4 distributed-training-
applies 004-0226.yaml "job.batch.volcano.sh/pytorch-distributed created"
running ml-research 4 pytorch-distributed-
check "the seed's kubectl describe localqueue works" "ml-research-queue" \
  $K describe localqueue ml-research-queue -n ml-research

echo "seed manifests: $applied of $total apply unchanged, $refused refused with upstream's message" \
  "($(ls "$ROOT/tests/seeds/restored" | wc -l) with line breaks or indentation restored)"
finish
