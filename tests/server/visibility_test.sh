#!/usr/bin/env bash
# Kueue's visibility API, CustomResourceDefinitions and `kubectl explain` on `muster
# serve`, with the real kubectl over HTTPS and static tokens: pending workloads of a
# ClusterQueue and of LocalQueues in queue order (priority first) with limit/offset,
# 404 for unknown queues, 403 for users without the rights; `kubectl get crd`; explain
# of built-in and custom kinds.
# Usage: bash tests/server/visibility_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl openssl
serve_tmp
serve_test_ca
cat >"$TMP/tokens.csv" <<'EOF'
tok-root,root-admin,1000,system:masters
tok-alice,alice,1001
tok-bob,bob,1002
EOF
# No node: nothing fits, so every job stays pending in queue order.
start_serve --no-local-node --executor emulated \
  --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/tls.key" \
  --token-auth-file "$TMP/tokens.csv"
ROOT_K="$K --token tok-root"
ALICE="$K --token tok-alice"
BOB="$K --token tok-bob"
V=/apis/visibility.kueue.x-k8s.io/v1beta1

$ROOT_K create namespace research >/dev/null
$ROOT_K apply -f - >/dev/null <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: "1"}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 2000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team, namespace: default}
spec: {clusterQueue: team-cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team, namespace: research}
spec: {clusterQueue: team-cq}
EOF

# job NAME NAMESPACE [PRIORITY-CLASS]: asks for more cpu than the queue's quota.
job() {
  cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $2
  labels:
    kueue.x-k8s.io/queue-name: team
${3:+    kueue.x-k8s.io/priority-class: $3}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sleep", "60"]
        resources: {requests: {cpu: "2"}}
EOF
}
# Creation times a second apart: equal priorities are ordered by creation time.
job first default | $ROOT_K apply -f - >/dev/null
sleep 1.1
job second research | $ROOT_K apply -f - >/dev/null
sleep 1.1
job urgent default urgent | $ROOT_K apply -f - >/dev/null

# Names and positions of a PendingWorkloadsSummary, one line per item.
summary() {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["kind"] == "PendingWorkloadsSummary", d
for i in d["items"]:
    m = i["metadata"]
    print(m["namespace"], m["name"], i["priority"], i["localQueueName"],
          i["positionInClusterQueue"], i["positionInLocalQueue"], m.get("creationTimestamp", "-"))
'
}
pending() { $ROOT_K get --raw "$1" | summary; }

want_cq=$'default job-urgent 2000 team 0 0\ndefault job-first 0 team 1 1\nresearch job-second 0 team 2 0'
for _ in $(seq 1 50); do
  [ "$(pending "$V/clusterqueues/team-cq/pendingworkloads" 2>/dev/null | cut -d' ' -f1-6)" = "$want_cq" ] && break
  sleep 0.2
done
got=$(pending "$V/clusterqueues/team-cq/pendingworkloads" 2>&1)
if [ "$(cut -d' ' -f1-6 <<<"$got")" = "$want_cq" ]; then
  ok "ClusterQueue pending workloads: 3, higher priority first, positions 0 1 2"
else
  bad "ClusterQueue pending workloads: 3, higher priority first, positions 0 1 2" "$got"
fi
check "items carry the Workload's creationTimestamp" ' [0-9]{4}-[0-9]{2}-[0-9]{2}T' \
  pending "$V/clusterqueues/team-cq/pendingworkloads"
check "v1beta2 serves the same" '^default job-urgent 2000 team 0 0' \
  pending "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team-cq/pendingworkloads"
check "limit and offset window the ClusterQueue" '^default job-first 0 team 1 1 [^ ]+$' \
  pending "$V/clusterqueues/team-cq/pendingworkloads?limit=1&offset=1"
check "offset past the end is empty" '^$' \
  pending "$V/clusterqueues/team-cq/pendingworkloads?offset=5"
check "LocalQueue form: its own workloads, positions in both queues" \
  $'^default job-urgent 2000 team 0 0 .*\ndefault job-first 0 team 1 1 ' \
  pending "$V/namespaces/default/localqueues/team/pendingworkloads"
check "a same-named LocalQueue elsewhere counts its own positions" \
  '^research job-second 0 team 2 0 ' \
  pending "$V/namespaces/research/localqueues/team/pendingworkloads"
check "LocalQueue limit/offset" '^default job-first 0 team 1 1 [^ ]+$' \
  pending "$V/namespaces/default/localqueues/team/pendingworkloads?limit=1&offset=1"
check_fails "unknown ClusterQueue is a 404 naming it" \
  'clusterqueue.visibility.kueue.x-k8s.io "nope" not found' \
  $ROOT_K get --raw "$V/clusterqueues/nope/pendingworkloads"
check_fails "unknown LocalQueue is a 404 naming it" \
  'localqueue.visibility.kueue.x-k8s.io "nope" not found' \
  $ROOT_K get --raw "$V/namespaces/default/localqueues/nope/pendingworkloads"
check_fails "a limit that is not a number is a 400" 'for query parameter limit' \
  $ROOT_K get --raw "$V/clusterqueues/team-cq/pendingworkloads?limit=ten"
check "discovery lists the subresources" '"clusterqueues/pendingworkloads"' \
  $ROOT_K get --raw "$V"
check "the group is in the group list" 'visibility.kueue.x-k8s.io' \
  $ROOT_K api-versions

# RBAC: view in one namespace reads that namespace's LocalQueues only.
$ROOT_K create rolebinding alice-view -n default --clusterrole view --user alice >/dev/null
pending_as_alice() { $ALICE get --raw "$1" | summary; }
check "view in a namespace reads its LocalQueue's pending workloads" '^default job-urgent' \
  pending_as_alice "$V/namespaces/default/localqueues/team/pendingworkloads"
check_fails "not another namespace's" 'forbidden: User "alice" cannot get resource "localqueues/pendingworkloads" in API group "visibility.kueue.x-k8s.io" in the namespace "research"' \
  $ALICE get --raw "$V/namespaces/research/localqueues/team/pendingworkloads"
check_fails "nor a ClusterQueue's (cluster-scoped)" 'forbidden: User "alice" cannot get resource "clusterqueues/pendingworkloads"' \
  $ALICE get --raw "$V/clusterqueues/team-cq/pendingworkloads"
check_fails "a user without bindings gets 403" 'forbidden: User "bob"' \
  $BOB get --raw "$V/namespaces/default/localqueues/team/pendingworkloads"

# CustomResourceDefinitions of the custom kinds, read-only.
check "kubectl get crd lists clusterqueues.kueue.x-k8s.io" \
  '^clusterqueues\.kueue\.x-k8s\.io +[0-9]{4}-' $ROOT_K get crd
check "CREATED AT column" '^NAME +CREATED AT' $ROOT_K get crd
check "built-in kinds have no CRD" '^$' bash -c "$ROOT_K get crd --no-headers | grep -E '^jobs\.batch |^pods' || true"
check "get by name: names, scope, versions" 'cq Cluster v1beta1=true,v1beta2=false, True' \
  $ROOT_K get crd clusterqueues.kueue.x-k8s.io -o \
  'jsonpath={.spec.names.shortNames[0]} {.spec.scope} {range .spec.versions[*]}{.name}={.storage}{","}{end} {.status.conditions[?(@.type=="Established")].status}'
check "pytorchjobs are namespaced" '^Namespaced$' \
  $ROOT_K get crd pytorchjobs.kubeflow.org -o 'jsonpath={.spec.scope}'
check_fails "an unknown CRD is a 404" 'customresourcedefinitions.apiextensions.k8s.io "foos.example.com" not found' \
  $ROOT_K get crd foos.example.com
check_fails "deleting a CRD is refused: the kinds are built in" 'built in' \
  $ROOT_K delete crd clusterqueues.kueue.x-k8s.io
cat >"$TMP/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.com}
spec:
  group: example.com
  names: {plural: foos, singular: foo, kind: Foo}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
EOF
check_fails "creating a CRD is refused" 'built in' $ROOT_K create -f "$TMP/crd.yaml"

# kubectl explain over /openapi/v3.
check "explain clusterqueue.spec describes cohort" '^  cohort\s+<string>' \
  $ROOT_K explain clusterqueue.spec
check "v1beta2 describes cohortName" '^  cohortName\s+<string>' \
  $ROOT_K explain clusterqueue.spec --api-version=kueue.x-k8s.io/v1beta2
check "explain job (batch/v1)" 'KIND: +Job' $ROOT_K explain job
check "explain job.spec.suspend" 'held suspended until' $ROOT_K explain job.spec.suspend
check "explain pytorchjob" 'Master and Workers' $ROOT_K explain pytorchjob
check "explain pytorchjob.spec" 'pytorchReplicaSpecs' $ROOT_K explain pytorchjob.spec
check "explain metadata is ObjectMeta" 'metadata\s+<ObjectMeta>' $ROOT_K explain localqueue

finish
