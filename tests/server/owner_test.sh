#!/usr/bin/env bash
# Pods run as their owners, end to end: two local accounts (muster-alice with a static
# token, muster-bob with a client certificate) each bound `edit` in their own
# namespace submit a batch Job to `muster serve` with the local executor (processes),
# and `kubectl logs` shows what the pod saw: its owner's uid, gid, HOME and USER, none
# of the server's environment, no store and no other user's files. RBAC keeps bob
# from alice's logs; a forged owner annotation does not make alice root; an owner
# without an account never runs; root's job runs as root only when root submits it.
# Needs root (it creates the two accounts when missing and removes only those it
# created); skips otherwise.
# Usage: bash tests/server/owner_test.sh build/muster
set -uo pipefail
HARNESS_DETAIL_LINES=30
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
skip() {
  echo "$1; skipping"
  echo "0 passed, 0 failed"
  exit 0
}
[ "$(id -u)" = 0 ] || skip "not root (pods run as their owners only under a root server)"
for tool in kubectl openssl useradd userdel runuser; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done

serve_tmp
# The pods' users must be able to reach their work dirs under the data directory
# (which itself is 0700, its pods' directories 0711).
chmod 0755 "$TMP"
DATA="$TMP/data"
# Must not reach any pod: the server inherits it.
export MUSTER_OWNER_TEST_SERVER_SECRET="server-env-$$"
ALICE_ACCOUNT=muster-alice
BOB_ACCOUNT=muster-bob
GHOST=muster-no-such-account-$$
CREATED=()
cleanup() {
  serve_cleanup
  for a in "${CREATED[@]}"; do userdel -r "$a" >/dev/null 2>&1 || userdel "$a" >/dev/null 2>&1; done
}
trap cleanup EXIT
# check_not NAME PATTERN TEXT: TEXT must not match PATTERN.
check_not() {
  if grep -qE -- "$2" <<<"$3"; then bad "$1" "$(grep -E -- "$2" <<<"$3")"; else ok "$1"; fi
}

for a in "$ALICE_ACCOUNT" "$BOB_ACCOUNT"; do
  if ! getent passwd "$a" >/dev/null; then
    useradd --create-home --shell /bin/sh "$a" || { echo "useradd $a failed"; exit 1; }
    CREATED+=("$a")
  fi
done
getent passwd "$GHOST" >/dev/null && { echo "$GHOST exists"; exit 1; }
uid_of() { id -u "$1"; }
gid_of() { id -g "$1"; }
home_of() { getent passwd "$1" | cut -d: -f6; }

# A CA, the serving certificate, and bob's client certificate (CN = user).
serve_test_ca
serve_client_cert bob "/O=team-b/CN=$BOB_ACCOUNT"
cat >"$TMP/tokens.csv" <<EOF
tok-root,root,0,system:masters
tok-alice,$ALICE_ACCOUNT,2001,dev
tok-ghost,$GHOST,2003
EOF

# The local executor (the default) on the example workstation's Node: pods are
# processes on this machine.
start_serve -f "$ROOT/examples/serve/cluster.yaml" \
  --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/tls.key" \
  --client-ca-file "$TMP/ca.crt" --token-auth-file "$TMP/tokens.csv"
check "the server says pods run as their owners" "pods run as their owners" cat "$TMP/server.log"
ROOT_K="$K --token tok-root"
ALICE="$K --token tok-alice"
BOB="$K --client-certificate $TMP/bob.crt --client-key $TMP/bob.key"
GHOST_K="$K --token tok-ghost"

for ns in team-a team-b team-g; do check "root creates namespace $ns" "created" $ROOT_K create namespace $ns; done
check "alice is bound edit in team-a" "created" \
  $ROOT_K create rolebinding alice-edit --clusterrole=edit --user=$ALICE_ACCOUNT -n team-a
check "bob is bound edit in team-b" "created" \
  $ROOT_K create rolebinding bob-edit --clusterrole=edit --user=$BOB_ACCOUNT -n team-b
check "the ghost is bound edit in team-g" "created" \
  $ROOT_K create rolebinding ghost-edit --clusterrole=edit --user=$GHOST -n team-g

# job NAME OWNER-ANNOTATION OTHER: a Job (no queue: serve admits every job) whose pod
# reports who it runs as and what it can reach; OTHER is a path it must not read.
job() {
  cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  annotations: {muster.dev/owner: "$2"}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        env:
        - {name: STORE, value: "$DATA/muster.db"}
        - {name: OTHER, value: "$3"}
        - {name: LD_PRELOAD, value: /nonexistent/inject.so}
        command: ["/bin/sh", "-c"]
        args:
        - |
          echo "uid=\$(id -u) gid=\$(id -g)"
          echo "home=\$HOME user=\$USER logname=\$LOGNAME"
          echo "pwd=\$(pwd)"
          env | sort | sed 's/^/env /'
          if cat "\$STORE" >/dev/null 2>&1; then echo store=readable; else echo store=denied; fi
          if ls "\$OTHER" >/dev/null 2>&1 || cat "\$OTHER/secret" >/dev/null 2>&1; then
            echo other=readable; else echo other=denied; fi
          if touch "$DATA/written-by-pod" 2>/dev/null; then echo data=written; else echo data=denied; fi
          echo "secret of \$USER" >secret && chmod 0644 secret && echo wrote=secret
EOF
}

# wait_pod NS JOB: the name of the job's pod once it has finished.
wait_pod() {
  local phase name
  for _ in $(seq 1 300); do
    name=$($ROOT_K get pods -n "$1" -l "job-name=$2" -o 'jsonpath={.items[0].metadata.name}' 2>/dev/null)
    phase=$($ROOT_K get pods -n "$1" -l "job-name=$2" -o 'jsonpath={.items[0].status.phase}' 2>/dev/null)
    if [ "$phase" = Succeeded ] || [ "$phase" = Failed ]; then
      echo "$name"
      return 0
    fi
    sleep 0.2
  done
  echo "no finished pod of $1/$2: $($ROOT_K get pods -n "$1" -o wide 2>&1)" >&2
  return 1
}

# alice (token) forges root as the owner: the server overwrites it, her pod is hers.
job who root /nonexistent >"$TMP/alice.yaml"
check "alice applies a Job in team-a (token)" "created" $ALICE apply -n team-a -f "$TMP/alice.yaml"
check_fails "alice cannot create in team-b" 'User "muster-alice" cannot create resource "jobs"' \
  $ALICE create -n team-b -f "$TMP/alice.yaml"
ALICE_POD=$(wait_pod team-a who) || bad "alice's pod finished"
check "the owner of alice's Job is alice, not the forged root" "^$ALICE_ACCOUNT$" \
  $ROOT_K get job who -n team-a -o 'jsonpath={.metadata.annotations.muster\.dev/owner}{"\n"}'
ALICE_LOG=$($ALICE logs -n team-a "$ALICE_POD" 2>&1)
check "alice reads her own pod's log" "^uid=" echo "$ALICE_LOG"
check "alice's pod runs as her uid and gid" \
  "^uid=$(uid_of $ALICE_ACCOUNT) gid=$(gid_of $ALICE_ACCOUNT)$" echo "$ALICE_LOG"
check "alice's pod has her HOME, USER and LOGNAME" \
  "^home=$(home_of $ALICE_ACCOUNT) user=$ALICE_ACCOUNT logname=$ALICE_ACCOUNT$" echo "$ALICE_LOG"
ALICE_WORK="$DATA/pods/team-a_$ALICE_POD/work"
check "alice's pod starts in its own work dir" "^pwd=$ALICE_WORK$" echo "$ALICE_LOG"
check "alice's pod has the default PATH, not the server's" \
  "^env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin$" echo "$ALICE_LOG"
check_not "nothing of the server's environment leaks into alice's pod" \
  "MUSTER_OWNER_TEST_SERVER_SECRET|server-env-|KUBECACHEDIR|^env (SUDO_|SSH_|MAIL=|OLDPWD=|TERM=)" \
  "$ALICE_LOG"
check_not "LD_PRELOAD from the manifest is dropped" "LD_PRELOAD" "$ALICE_LOG"
check "alice's pod cannot read the store" "^store=denied$" echo "$ALICE_LOG"
check "alice's pod cannot write into the data directory" "^data=denied$" echo "$ALICE_LOG"
check "alice's pod writes into its work dir" "^wrote=secret$" echo "$ALICE_LOG"
[ -e "$DATA/written-by-pod" ] && bad "no pod wrote into the data directory" || ok "no pod wrote into the data directory"
check "alice's work dir is hers, 0700" "^$ALICE_ACCOUNT 700$" stat -c '%U %a' "$ALICE_WORK"
check "the secret in it is hers" "^$ALICE_ACCOUNT$" stat -c '%U' "$ALICE_WORK/secret"

# bob (client certificate) runs in team-b and tries alice's work dir.
job peek "" "$ALICE_WORK" >"$TMP/bob.yaml"
check "bob applies a Job in team-b (client certificate)" "created" $BOB apply -n team-b -f "$TMP/bob.yaml"
BOB_POD=$(wait_pod team-b peek) || bad "bob's pod finished"
check "the owner of bob's Job is bob (the certificate's CN)" "^$BOB_ACCOUNT$" \
  $ROOT_K get job peek -n team-b -o 'jsonpath={.metadata.annotations.muster\.dev/owner}{"\n"}'
BOB_LOG=$($BOB logs -n team-b "$BOB_POD" 2>&1)
check "bob's pod runs as his uid and gid" "^uid=$(uid_of $BOB_ACCOUNT) gid=$(gid_of $BOB_ACCOUNT)$" \
  echo "$BOB_LOG"
check "bob's pod has his HOME and USER" "^home=$(home_of $BOB_ACCOUNT) user=$BOB_ACCOUNT " \
  echo "$BOB_LOG"
check "bob's pod cannot read alice's work dir" "^other=denied$" echo "$BOB_LOG"
check "bob's pod cannot read the store" "^store=denied$" echo "$BOB_LOG"
check_not "nothing of the server's environment leaks into bob's pod" \
  "MUSTER_OWNER_TEST_SERVER_SECRET|server-env-|KUBECACHEDIR" "$BOB_LOG"
# kubectl reads the pod before its log: the pods/log subresource itself is asked with curl.
check_fails "bob cannot read alice's pod (kubectl logs: 403)" \
  "pods \"$ALICE_POD\" is forbidden: User \"$BOB_ACCOUNT\" cannot get resource \"pods\" in API group \"\" in the namespace \"team-a\"" \
  $BOB logs -n team-a "$ALICE_POD"
# log_forbidden NAME CURL-CREDENTIALS... -- NS POD USER: GET the pod's log subresource
# must be a 403 Status saying USER cannot get pods/log in NS.
log_forbidden() {
  local name=$1 args=() code
  shift
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  local ns=$2 pod=$3 user=$4
  code=$(curl -s -o "$TMP/403.json" -w '%{http_code}' --cacert "$TMP/ca.crt" "${args[@]}" \
    "$URL/api/v1/namespaces/$ns/pods/$pod/log")
  if [ "$code" = 403 ] && grep -qF "\"kind\":\"Status\"" "$TMP/403.json" &&
    grep -qF "User \\\"$user\\\" cannot get resource \\\"pods/log\\\" in API group \\\"\\\" in the namespace \\\"$ns\\\"" "$TMP/403.json"; then
    ok "$name"
  else
    bad "$name" "$code $(cat "$TMP/403.json")"
  fi
}
log_forbidden "bob cannot read alice's pod log (pods/log: 403)" \
  --cert "$TMP/bob.crt" --key "$TMP/bob.key" -- team-a "$ALICE_POD" "$BOB_ACCOUNT"
log_forbidden "alice cannot read bob's pod log (pods/log: 403)" \
  -H "Authorization: Bearer tok-alice" -- team-b "$BOB_POD" "$ALICE_ACCOUNT"
# Outside the pods' private view too, the files are the owner's and the server's.
check_fails "bob's account cannot read alice's files on the machine" "Permission denied" \
  runuser -u "$BOB_ACCOUNT" -- cat "$ALICE_WORK/secret"
check_fails "bob's account cannot read the store on the machine" "Permission denied" \
  runuser -u "$BOB_ACCOUNT" -- cat "$DATA/muster.db"
check "the store is 0600 in a 0700 data directory" "^600 700$" \
  sh -c "echo \$(stat -c %a '$DATA/muster.db') \$(stat -c %a '$DATA')"
check "pod logs are the server's, 0600" "^root 600$" \
  stat -c '%U %a' "$(find "$DATA/pods/team-a_$ALICE_POD" -name log | head -1)"

# A workingDir the owner may not enter fails the pod, as in a container.
job wd "" /nonexistent | sed 's|^        image: busybox|        image: busybox\n        workingDir: /root|' >"$TMP/wd.yaml"
check "alice applies a Job whose workingDir is /root" "created" $ALICE apply -n team-a -f "$TMP/wd.yaml"
WD_POD=$(wait_pod team-a wd) || bad "the workingDir pod finished"
check "alice's pod cannot work in /root" "cannot change to working directory /root" \
  $ALICE logs -n team-a "$WD_POD"
check "the pod failed" "^Failed$" $ROOT_K get pod -n team-a "$WD_POD" -o 'jsonpath={.status.phase}{"\n"}'
# A relative workingDir is under the pod's own work dir, created as its owner.
job rel "" /nonexistent | sed 's|^        image: busybox|        image: busybox\n        workingDir: sub/dir|' >"$TMP/rel.yaml"
check "alice applies a Job whose workingDir is relative" "created" $ALICE apply -n team-a -f "$TMP/rel.yaml"
REL_POD=$(wait_pod team-a rel) || bad "the relative workingDir pod finished"
check "a relative workingDir is in the pod's work dir" \
  "^pwd=$DATA/pods/team-a_$REL_POD/work/sub/dir$" $ALICE logs -n team-a "$REL_POD"
check "and belongs to alice" "^$ALICE_ACCOUNT$" stat -c %U "$DATA/pods/team-a_$REL_POD/work/sub/dir"

# An authenticated user with no local account: the pod fails, nothing runs as root.
job ghost "" /nonexistent >"$TMP/ghost.yaml"
check "the ghost applies a Job in team-g" "created" $GHOST_K apply -n team-g -f "$TMP/ghost.yaml"
GHOST_POD=$(wait_pod team-g ghost) || bad "the ghost's pod finished"
check "an owner without an account fails with CreateContainerConfigError" \
  "^Failed CreateContainerConfigError .*owner \"$GHOST\" has no local account" \
  $ROOT_K get pod -n team-g "$GHOST_POD" \
  -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.terminated.reason} {.status.containerStatuses[0].state.terminated.message}{"\n"}'
check_not "the ghost's command never ran" "^uid=" "$($ROOT_K logs -n team-g "$GHOST_POD" 2>&1)"

# root's own job runs as root.
job mine "" /nonexistent >"$TMP/root.yaml"
check "root applies a Job" "created" $ROOT_K apply -n default -f "$TMP/root.yaml"
ROOT_POD=$(wait_pod default mine) || bad "root's pod finished"
check "root's pod runs as root" "^uid=0 gid=0$" $ROOT_K logs -n default "$ROOT_POD"
check_not "no pod but root's ran as root" "^uid=0 " "$ALICE_LOG
$BOB_LOG"

# kubectl exec runs as the pod's owner (its main process's account), and only for
# those RBAC lets create pods/exec in the pod's namespace.
check "alice runs a long pod in team-a" "created" $ALICE apply -n team-a -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: shell}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: busybox, command: [sleep, "300"]}
EOF
check "it runs" "pod/shell condition met" $ALICE wait -n team-a --for=condition=Ready pod/shell --timeout=30s
check "alice's exec runs as her uid and gid" \
  "^uid=$(uid_of $ALICE_ACCOUNT) gid=$(gid_of $ALICE_ACCOUNT)$" \
  $ALICE exec -n team-a shell -- sh -c 'echo "uid=$(id -u) gid=$(id -g)"'
check "alice's exec has her pod's USER, not the server's environment" "^user=$ALICE_ACCOUNT$" \
  $ALICE exec -n team-a shell -- sh -c 'echo "user=$USER"'
check "alice's exec cannot read the store" "^denied$" \
  $ALICE exec -n team-a shell -- sh -c "cat '$DATA/muster.db' >/dev/null 2>&1 && echo readable || echo denied"
check_fails "bob cannot exec into alice's pod (403)" "forbidden|Forbidden" \
  $BOB exec -n team-a shell -- true
check "alice deletes her pod" "deleted" $ALICE delete pod shell -n team-a
# A pod root owns runs as root: namespace RBAC alone does not open it to exec.
check "root runs a long pod in team-a" "created" $ROOT_K apply -n team-a -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: rootshell}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: busybox, command: [sleep, "300"]}
EOF
check "it runs" "pod/rootshell condition met" \
  $ROOT_K wait -n team-a --for=condition=Ready pod/rootshell --timeout=30s
check_fails "alice (edit in team-a) cannot exec into a root pod" \
  "its container runs as root.*only system:masters may exec into it" \
  $ALICE exec -n team-a rootshell -- id -u
check "system:masters can" "^0$" $ROOT_K exec -n team-a rootshell -- id -u
check "root deletes it" "deleted" $ROOT_K delete pod rootshell -n team-a

# Deleting the Job removes its pod's directory (garbage collection of its Pods).
check "alice deletes her Job" "deleted" $ALICE delete job who -n team-a
for _ in $(seq 1 100); do [ -e "$ALICE_WORK" ] || break; sleep 0.2; done
[ -e "$ALICE_WORK" ] && bad "alice's pod directory is removed with her Job" "$(ls -la "$ALICE_WORK")" ||
  ok "alice's pod directory is removed with her Job"

kill -TERM "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=""
finish
