#!/usr/bin/env bash
# Authorization (RBAC) of `muster serve` with the real kubectl over HTTPS and static
# tokens: the default roles, RoleBindings of edit and view in one namespace, upstream's
# 403 wording, status subresources and cluster-scoped objects for cluster admins only,
# `kubectl auth can-i` (SelfSubjectAccessReview, SelfSubjectRulesReview), validation
# of the RBAC kinds and discovery for any authenticated user.
# Usage: bash tests/server/rbac_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
require_commands kubectl openssl
serve_tmp
serve_test_ca
cat >"$TMP/tokens.csv" <<'EOF'
tok-root,root-admin,1000,system:masters
tok-alice,alice,1001,dev
tok-bob,bob,1002
tok-eve,eve,1003
tok-dana,dana,1004
EOF
start_serve --no-local-node --executor emulated \
  --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/tls.key" \
  --token-auth-file "$TMP/tokens.csv"
ROOT_K="$K --token tok-root"
ALICE="$K --token tok-alice"
BOB="$K --token tok-bob"
EVE="$K --token tok-eve"

job() {
  cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
EOF
}
job train >"$TMP/job.yaml"

# The default roles and bindings exist from the start.
check "bootstrap cluster roles" "cluster-admin" $ROOT_K get clusterroles
check "view is a default role" "^view " $ROOT_K get clusterroles --no-headers
check "system:masters is bound to cluster-admin" "ClusterRole/cluster-admin" \
  $ROOT_K get clusterrolebinding cluster-admin

# system:masters sets up the teams.
check "masters create namespaces" "created" $ROOT_K create namespace team-a
check "masters create namespaces (2)" "created" $ROOT_K create namespace team-b
check "masters create a ClusterQueue" "created" $ROOT_K apply -f "$ROOT/examples/serve/queues.yaml"
check "alice is bound edit in team-a" "created" \
  $ROOT_K create rolebinding alice-edit --clusterrole=edit --user=alice -n team-a
check "bob is bound view in team-a" "created" \
  $ROOT_K create rolebinding bob-view --clusterrole=view --user=bob -n team-a

# alice: edit in team-a only.
check "alice creates a Job in team-a" "created" $ALICE apply -n team-a -f "$TMP/job.yaml"
check_fails "alice cannot create a Job in team-b" \
  'jobs.batch is forbidden: User "alice" cannot create resource "jobs" in API group "batch" in the namespace "team-b"' \
  $ALICE create -n team-b -f "$TMP/job.yaml"
# kubectl patch reads the object first (a get alice lacks too): curl sends the patch.
curl_as() {
  local token=$1
  shift
  curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $token" "$@"
}
check "alice cannot patch a ClusterQueue" \
  'clusterqueues.kueue.x-k8s.io \\"team-a\\" is forbidden: User \\"alice\\" cannot patch resource \\"clusterqueues\\" in API group \\"kueue.x-k8s.io\\" at the cluster scope' \
  curl_as tok-alice -X PATCH -H Content-Type:application/merge-patch+json \
  --data '{"spec":{"cohort":"x"}}' "$URL/apis/kueue.x-k8s.io/v1beta1/clusterqueues/team-a"
check "alice cannot write a Job's status" \
  'cannot patch resource \\"jobs/status\\" in API group \\"batch\\" in the namespace \\"team-a\\"' \
  curl_as tok-alice -X PATCH -H Content-Type:application/merge-patch+json \
  --data '{"status":{"active":3}}' "$URL/apis/batch/v1/namespaces/team-a/jobs/train/status"
check "alice may read a Job's status" '"kind":"Job"' \
  curl_as tok-alice "$URL/apis/batch/v1/namespaces/team-a/jobs/train/status"
check_fails "alice cannot bind roles (edit has no rolebindings)" "forbidden" \
  $ALICE create rolebinding self-admin --clusterrole=admin --user=alice -n team-a
check "alice lists pods in team-a" "No resources found|NAME" $ALICE get pods -n team-a

# bob: view in team-a.
check "bob gets the Job" "^train" $BOB get job train -n team-a --no-headers
check_fails "bob cannot delete the Job" \
  'jobs.batch "train" is forbidden: User "bob" cannot delete resource "jobs" in API group "batch" in the namespace "team-a"' \
  $BOB delete job train -n team-a
check_fails "bob cannot list Jobs in team-b" 'cannot list resource "jobs"' $BOB get jobs -n team-b
check_fails "bob cannot read Secrets (view leaves them out)" "^no" \
  $BOB auth can-i list secrets -n team-a

# kubectl auth can-i.
check "can-i: alice create jobs in team-a" "^yes" $ALICE auth can-i create jobs -n team-a
check_fails "can-i: alice create jobs in team-b" "^no" $ALICE auth can-i create jobs -n team-b
check_fails "can-i: bob delete jobs in team-a" "^no" $BOB auth can-i delete jobs -n team-a
check "can-i: bob get jobs in team-a" "^yes" $BOB auth can-i get jobs -n team-a
check "can-i: alice may exec into pods in team-a (edit)" "^yes" \
  $ALICE auth can-i create pods --subresource=exec -n team-a
check_fails "can-i: bob may not exec (view)" "^no" \
  $BOB auth can-i create pods --subresource=exec -n team-a
# A WebSocket exec is a GET, authorized as create (upstream's rule): bob's view is not enough.
check "bob's exec upgrade is refused as a create of pods/exec" \
  'cannot create resource \\"pods/exec\\" in API group \\"\\" in the namespace \\"team-a\\"' \
  curl_as tok-bob -H "Connection: Upgrade" -H "Upgrade: websocket" -H "Sec-WebSocket-Version: 13" \
  -H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" -H "Sec-WebSocket-Protocol: v5.channel.k8s.io" \
  "$URL/api/v1/namespaces/team-a/pods/any/exec?command=true&stdout=true"
check "can-i: masters anything" "^yes" $ROOT_K auth can-i '*' '*'
check "can-i --list: bob's rules in team-a" "jobs.batch .*\[get list watch\]" \
  $BOB auth can-i --list -n team-a
check "can-i --list: discovery for everyone" "/api/\*" $EVE auth can-i --list

# eve: authenticated, no binding.
check_fails "eve gets 403 with upstream's message" \
  'pods is forbidden: User "eve" cannot list resource "pods" in API group "" in the namespace "team-a"' \
  $EVE get pods -n team-a
check "eve may do discovery" "clusterqueues" $EVE api-resources
check "eve may read /version" "Server Version" $EVE version
code=$(curl -s -o "$TMP/403.json" -w '%{http_code}' --cacert "$TMP/ca.crt" \
  -H "Authorization: Bearer tok-eve" "$URL/apis/batch/v1/namespaces/team-a/jobs?watch=true")
if [ "$code" = 403 ] && grep -q '"reason":"Forbidden"' "$TMP/403.json" &&
  grep -q 'cannot watch resource' "$TMP/403.json"; then
  ok "a watch is authorized as watch (403 Status)"
else
  bad "a watch is authorized as watch (403 Status)" "$code $(cat "$TMP/403.json")"
fi
check_fails "eve cannot read /metrics" 'forbidden: User "eve" cannot get path "/metrics"' \
  $EVE get --raw /metrics

# A binding takes effect at once, and its removal too.
check "eve is bound view cluster-wide" "created" \
  $ROOT_K create clusterrolebinding eve-view --clusterrole=view --user=eve
check "eve now lists ClusterQueues" "team-a" $EVE get clusterqueues
check "eve is unbound" "deleted" $ROOT_K delete clusterrolebinding eve-view
check_fails "eve lists nothing again" "forbidden" $EVE get clusterqueues

# A binding to a missing role says so in the reason, as upstream.
check "a binding to a missing role" "created" \
  $ROOT_K create rolebinding eve-ghost --clusterrole=ghost --user=eve -n team-b
check_fails "the 403 names the missing role" \
  'RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found' $EVE get pods -n team-b

# resourceNames in a Role.
cat >"$TMP/role.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: one-job, namespace: team-a}
rules:
- apiGroups: ["batch"]
  resources: ["jobs"]
  resourceNames: ["train"]
  verbs: ["get", "delete"]
EOF
check "a Role with resourceNames" "created" $ROOT_K apply -f "$TMP/role.yaml"
check "eve is bound the Role" "created" \
  $ROOT_K create rolebinding eve-one --role=one-job --user=eve -n team-a
check "eve gets that Job" "^train" $EVE get job train -n team-a --no-headers
check_fails "eve cannot list Jobs" 'cannot list resource "jobs"' $EVE get jobs -n team-a

# No granting more than one holds: dana is admin of team-a.
DANA="$K --token tok-dana"
check "dana is bound admin in team-a" "created" \
  $ROOT_K create rolebinding dana-admin --clusterrole=admin --user=dana -n team-a
check "dana binds carol edit in team-a" "created" \
  $DANA create rolebinding carol-edit --clusterrole=edit --user=carol -n team-a
check_fails "dana cannot bind herself cluster-admin" \
  "is attempting to grant RBAC permissions not currently held" \
  $DANA create rolebinding dana-root --clusterrole=cluster-admin --user=dana -n team-a

# The scheduler's views follow RBAC (docs/authorization.md): a list of WorkloadViews
# across namespaces holds the namespaces the user may read, and other namespaces'
# workloads are counted and shown without their names.
check "masters create a Job in team-b" "created" $ROOT_K apply -n team-b -f "$TMP/job.yaml"
for _ in $(seq 1 100); do
  [ "$($ROOT_K get workloadviews -A --no-headers 2>/dev/null | grep -c .)" -ge 2 ] && break
  sleep 0.2
done
check "masters list every namespace's WorkloadViews" "^team-b " $ROOT_K get workloadviews -A --no-headers
only_team_a() {
  local name=$1 out
  shift
  out=$("$@" 2>&1)
  if grep -q "^team-a " <<<"$out" && ! grep -q "team-b" <<<"$out"; then ok "$name"; else bad "$name" "$out"; fi
}
only_team_a "alice's list across namespaces holds team-a's only" $ALICE get workloadviews -A --no-headers
only_team_a "bob's (view in team-a) too" $BOB get workloadviews -A --no-headers
check "eve's holds nothing" "No resources found" $EVE get workloadviews -A
check_fails "alice cannot list WorkloadViews in team-b" 'cannot list resource "workloadviews"' \
  $ALICE get workloadviews -n team-b
check_fails "alice cannot read the nodes' views" 'cannot list resource "nodeviews"' $ALICE get nodeviews
check "alice cannot read the ClusterView" '"code":403' \
  curl_as tok-alice "$URL/apis/muster.dev/v1alpha1/clusterviews/cluster"
check "the ClusterView counts every namespace for masters" '"workloads":\{"Pending":2\}' \
  curl_as tok-root "$URL/apis/muster.dev/v1alpha1/clusterviews/cluster"
cat >"$TMP/cluster-views.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: muster-cluster-views}
rules:
- apiGroups: [muster.dev]
  resources: [queueviews, nodeviews, clusterviews, clusterviews/timeline, clusterviews/utilization]
  verbs: [get, list]
EOF
check "a ClusterRole for the cluster views" "created" $ROOT_K apply -f "$TMP/cluster-views.yaml"
check "bound to every signed-in user" "created" \
  $ROOT_K create clusterrolebinding everyone-cluster-views --clusterrole=muster-cluster-views \
  --group=system:authenticated
check "alice's ClusterView counts team-a's workloads" '"workloads":\{"Pending":1\}' \
  curl_as tok-alice "$URL/apis/muster.dev/v1alpha1/clusterviews/cluster"
timeline=$(curl_as tok-alice "$URL/apis/muster.dev/v1alpha1/clusterviews/cluster/timeline")
if grep -q '"kind":"ClusterTimeline"' <<<"$timeline" && ! grep -q "team-b" <<<"$timeline"; then
  ok "alice's timeline names no workload of team-b"
else
  bad "alice's timeline names no workload of team-b" "$timeline"
fi

# Validation of the RBAC kinds.
cat >"$TMP/bad-role.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: bad, namespace: team-a}
rules:
- apiGroups: [""]
  resources: ["pods"]
- nonResourceURLs: ["/healthz"]
  verbs: ["get"]
EOF
check_fails "a rule without verbs is invalid" "verbs must contain at least one value" \
  $ROOT_K apply -f "$TMP/bad-role.yaml"
check_fails "a Role cannot name non-resource URLs" \
  "namespaced rules cannot apply to non-resource URLs" $ROOT_K apply -f "$TMP/bad-role.yaml"
check_fails "roleRef cannot change" "cannot change roleRef" \
  $ROOT_K patch rolebinding bob-view -n team-a --type=merge -p '{"roleRef":{"name":"edit"}}'
check_fails "a subject kind must be User, Group or ServiceAccount" \
  'supported values: "ServiceAccount", "User", "Group"' \
  $ROOT_K patch rolebinding bob-view -n team-a --type=merge \
  -p '{"subjects":[{"kind":"Robot","name":"r2"}]}'

kill -TERM "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=""
finish
