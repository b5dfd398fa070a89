#!/usr/bin/env bash
# `kubectl exec` against `muster serve` with the real kubectl (WebSocket,
# v5.channel.k8s.io): a command runs in a running pod with the pod's environment, and
# as root in its hostname, /etc/hosts, cgroup and account; its output, exit code and
# stdin as upstream (`command terminated with exit code N`); `kubectl cp` (tar through
# exec); a terminal with -t; a command that does not exist exits 127 with runc's
# words; a completed pod and a container the pod lacks are refused with
# kube-apiserver's messages; a dropped connection kills its command. The podman
# runtime's `podman exec` is podman_test.sh's. `kubectl top pod|node` (metrics.k8s.io)
# from the pods' cgroups.
# Usage: bash tests/server/exec_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl
serve_tmp
start_serve

check "the queues apply" "localqueue.kueue.x-k8s.io/lq created" $K apply -f - <<<"$(kueue_queues 1 1Gi)"
check "a long-running pod is accepted" "pod/box created" $K apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: box, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'echo started; sleep 600']
    env: [{name: TEAM, value: vision}]
    resources: {requests: {cpu: 10m, memory: 50Mi}}
EOF
check "it runs" "pod/box condition met" $K wait --for=condition=Ready pod/box --timeout=30s

# Output, environment, exit codes.
check "a command's output" "^hello exec$" $K exec box -- echo hello exec
check "the pod's environment" "^vision$" $K exec box -- sh -c 'echo $TEAM'
check "stderr too" "to-stderr" $K exec box -- sh -c 'echo to-stderr >&2'
check_exit "a non-zero exit is kubectl's exit code" 7 "command terminated with exit code 7" \
  $K exec box -- sh -c 'exit 7'
check_exit "a command that does not exist exits 127" 127 \
  'exec: "no-such-tool": executable file not found in \$PATH' $K exec box -- no-such-tool
check "stdin with -i (v5 closes it at its end)" "^piped line$" \
  bash -c "echo 'piped line' | $K exec -i box -- cat"
check "-c names the container" "^ok$" $K exec box -c main -- echo ok
if command -v script >/dev/null; then
  check "-t gets a terminal" "/dev/pts/" script -qec "$K exec -it box -- tty" /dev/null
fi
check "the working directory is the pod's" "/pods/default_box/work" $K exec box -- pwd
# kubectl cp is tar through exec (stdin one way, stdout the other).
echo "copied in" >"$TMP/in.txt"
check "kubectl cp into the pod" "" $K cp "$TMP/in.txt" default/box:in.txt
check "the file is there" "^copied in$" $K exec box -- cat in.txt
check "kubectl cp out of the pod" "" $K cp default/box:in.txt "$TMP/out.txt"
check "the file came back" "^copied in$" cat "$TMP/out.txt"

if [ "$(id -u)" = 0 ]; then
  check "the pod's hostname (its UTS namespace)" "^box$" $K exec box -- hostname
  check "the pod's /etc/hosts (its mount namespace)" "box" $K exec box -- cat /etc/hosts
  check_fails "the data directory is hidden (the pod's view)" "No such file" \
    $K exec box -- ls "$TMP/data/muster.db"
  if grep -q default_box /proc/"$(pgrep -f 'echo started; sleep 600' | head -1)"/cgroup 2>/dev/null; then
    check "the command joins the pod's cgroup" "default_box" $K exec box -- cat /proc/self/cgroup
  fi
fi

# kubectl top: metrics.k8s.io from the pod's cgroup (pod_metrics.h; root, cgroups).
if [ "$(id -u)" = 0 ] && grep -q default_box /proc/"$(pgrep -f 'echo started; sleep 600' | head -1)"/cgroup 2>/dev/null; then
  check "kubectl top pod" "^box +[0-9]+m +[0-9]+Mi" $K top pod box --no-headers
  check "kubectl top pod lists the namespace's running pods" "^box " $K top pod --no-headers
  check "kubectl top node" "^[^ ]+ +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+%" $K top node --no-headers
  check "a busy pod is accepted" "pod/spin created" $K apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: spin, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: busybox, command: [sh, -c, 'while :; do :; done'], resources: {requests: {cpu: 10m, memory: 50Mi}}}
EOF
  check "it runs" "pod/spin condition met" $K wait --for=condition=Ready pod/spin --timeout=30s
  eventually "its CPU shows in kubectl top (hundreds of millicores)" "^spin +[1-9][0-9]{2,}m " \
    $K top pod spin --no-headers
  check "deleting it" "deleted" $K delete pod spin
fi

# A dropped connection ends its command (the kubelet's runtime kills it).
timeout 3 $K exec box -- sleep 4242 >/dev/null 2>&1
sleep 1
if pgrep -f "sleep 4242" >/dev/null; then bad "a dropped exec's command is killed" "$(pgrep -af 'sleep 4242')"; else ok "a dropped exec's command is killed"; fi

# Refusals with kube-apiserver's words.
check_fails "a container the pod lacks" "container nope is not valid for pod box" \
  $K exec box -c nope -- true
check_fails "a pod that does not exist" 'pods "ghost" not found' $K exec ghost -- true
check "a short pod is accepted" "pod/brief created" $K apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: brief, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: 10m, memory: 50Mi}}}
EOF
eventually "it completes" "Completed" $K get pod brief --no-headers
check_fails "a completed pod" "cannot exec into a container in a completed pod; current phase is Succeeded" \
  $K exec brief -- true
check "the server is still up" "box" $K get pods

finish
