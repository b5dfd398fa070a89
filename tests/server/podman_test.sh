#!/usr/bin/env bash
# Pods as podman containers, end to end and offline: the test builds a busybox image
# locally (`podman import` of a tarball: no registry), starts `muster serve
# --container-runtime=podman` and checks through kubectl that a Job's pods run from
# that image as their owner (not root), with their hostname, ConfigMap env, a mounted
# Secret, the other pod's name in /etc/hosts (an Indexed Job with a subdomain and a
# headless Service); that imagePullPolicy Never with a missing image ends with
# ErrImageNeverPull, an unreachable registry with ErrImagePull and a command missing from
# the image with StartError; that images are pulled in a step of their own with the
# kubelet's Events (Pulled "already present", Pulling) and the pod ContainerCreating
# meanwhile; that a pod whose image is missing or cannot be pulled
# waits Pending in ErrImageNeverPull / ErrImagePull / ImagePullBackOff with the
# kubelet's Events and starts once the image is there, that it waits still after a
# kill -9 of the server, and that deleting its job ends the retries; that a container killed at its memory limit is OOMKilled where podman
# can tell; that a server killed with -9 adopts a running container; and that
# deleting a running job removes it.
# Skips (exit 0) without root, kubectl, podman or busybox, or where `podman run` fails.
# Usage: bash tests/server/podman_test.sh build/muster
set -uo pipefail
HARNESS_DETAIL_LINES=30
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

MUSTER=$(realpath "${1:-build/muster}")
skip() {
  echo "SKIP: $1"
  echo "0 passed, 0 failed"
  exit 0
}
[ "$(id -u)" = 0 ] || skip "not root (podman containers need a root server)"
for tool in kubectl podman tar; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
BUSYBOX=""
for b in /bin/busybox /usr/bin/busybox; do
  # The image holds busybox alone: it must be the static one.
  if [ -x "$b" ] && grep -q "not a dynamic" <<<"$(ldd "$b" 2>&1)"; then BUSYBOX=$b; break; fi
done
[ -n "$BUSYBOX" ] || skip "no busybox (Debian: busybox-static)"

TMP=$(mktemp -d)
chmod 0755 "$TMP"
export KUBECACHEDIR="$TMP/cache"
IMAGE=localhost/muster-test:1
LABEL=muster.dev/pod
# Images this run tags while its pods wait for them (unique: podman's store is shared).
NEVER_IMAGE=localhost/muster-never-$$:1
LATE_IMAGE=127.0.0.1:9/muster-late-$$:1
PID=""
SLOW_PID=""
cleanup() {
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
  [ -n "$SLOW_PID" ] && kill -9 "$SLOW_PID" 2>/dev/null
  # Only this test's containers (its image), not those of a real server here.
  podman ps -aq --filter "label=$LABEL" --filter "ancestor=$IMAGE" | xargs -r podman rm -f >/dev/null 2>&1
  podman untag "$IMAGE" "$NEVER_IMAGE" "$LATE_IMAGE" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
RUNTIME=(--runtime runc)
command -v runc >/dev/null 2>&1 || RUNTIME=()
ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1000:1000)

# The image: busybox and its applets, an /etc/passwd with nobody.
ROOTFS="$TMP/rootfs"
mkdir -p "$ROOTFS/bin" "$ROOTFS/etc" "$ROOTFS/tmp"
chmod 1777 "$ROOTFS/tmp"
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
for applet in $("$BUSYBOX" --list); do
  [ -e "$ROOTFS/bin/$applet" ] || ln -s busybox "$ROOTFS/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' \
  >"$ROOTFS/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOTFS/etc/group"
tar -C "$ROOTFS" -cf "$TMP/rootfs.tar" . || skip "cannot pack the image"
podman import --change 'CMD ["/bin/sh"]' "$TMP/rootfs.tar" "$IMAGE" >/dev/null 2>&1 ||
  skip "podman import failed"
PROBE=$(timeout 120 podman "${RUNTIME[@]}" run --rm --network host "${ULIMITS[@]}" --pull=never \
  "$IMAGE" /bin/sh -c 'echo probe-ok' 2>&1)
grep -q probe-ok <<<"$PROBE" || skip "podman run cannot run containers here: $(tail -1 <<<"$PROBE")"

# Pods run as their owners: the test's user "nobody" (a token with system:masters;
# kubectl sends tokens over TLS only).
echo "tok-nobody,nobody,65534,system:masters" >"$TMP/tokens.csv"
start_server() {
  rm -f "$TMP/server.log" # the previous server's "listening on" line must not be read
  # A short image pull back-off (1 s doubling to 4 s) instead of the kubelet's 10 s / 300 s.
  "$MUSTER" serve --data "$TMP/data" --listen 127.0.0.1:0 --container-runtime=podman \
    --image-pull-backoff=1s,4s --auto-tls --token-auth-file "$TMP/tokens.csv" >"$TMP/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 300); do
    grep -q "listening on" "$TMP/server.log" 2>/dev/null && break
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  URL=$(sed -n 's/.*listening on \(https:\/\/127.0.0.1:[0-9]*\).*/\1/p' "$TMP/server.log")
  [ -n "$URL" ] || { echo "server did not start:"; cat "$TMP/server.log"; exit 1; }
  K="kubectl --request-timeout=20s --server $URL --token tok-nobody"
  K="$K --certificate-authority $TMP/data/pki/ca.crt"
}
start_server
check "the server says pods run in podman containers" "pods run in podman containers" \
  cat "$TMP/server.log"
# eventually NAME PATTERN CMD...: CMD's output matches within 60 s.
eventually() {
  local name=$1 pattern=$2
  shift 2
  local out=""
  for _ in $(seq 1 300); do
    if out=$("$@" 2>&1) && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; return; fi
    sleep 0.2
  done
  bad "$name" "$out"
}

check "a ConfigMap" "created" $K create configmap settings --from-literal=greeting=hello
check "a Secret" "created" $K create secret generic creds --from-literal=token=s3cret
check "a headless Service" "created" $K apply -f - <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: peers}
spec:
  clusterIP: None
  selector: {job-name: pair}
EOF
# Each pod reports who and where it is; the first finds the second by name.
check "an Indexed Job of two pods from the local image" "job.batch/pair created" $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: pair}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      subdomain: peers
      restartPolicy: Never
      containers:
      - name: main
        image: $IMAGE
        imagePullPolicy: IfNotPresent
        command: [sh, -c]
        args:
        - |
          echo "uid=\$(id -u) host=\$(hostname) greeting=\$GREETING token=\$(cat /creds/token)"
          echo "index=\$JOB_COMPLETION_INDEX"
          nc -w 2 pair-1.peers 1 </dev/null 2>&1 | sed 's/^/peer: /'
          grep -qw 'pair-1' /etc/hosts && echo "hosts-has-peer"
          sleep 2
        env:
        - name: GREETING
          valueFrom: {configMapKeyRef: {name: settings, key: greeting}}
        volumeMounts:
        - {name: creds, mountPath: /creds}
      volumes:
      - name: creds
        secret: {secretName: creds}
EOF
eventually "both pods succeed" "^pair-0 Succeeded pair-1 Succeeded $" \
  bash -c "$K get pods -l job-name=pair -o 'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {end}' | sort"
LOG0=$($K logs pair-0 2>&1)
check "pair-0 ran as its owner (nobody), with its hostname, ConfigMap env and Secret" \
  "^uid=65534 host=pair-0 greeting=hello token=s3cret$" echo "$LOG0"
check "pair-0 got its completion index" "^index=0$" echo "$LOG0"
PEER_IP=$($K get pod pair-1 -o 'jsonpath={.status.podIP}')
check "pair-0 resolved pair-1.peers to pair-1's pod address" "\($PEER_IP\)" echo "$LOG0"
check "pair-0's /etc/hosts names its peer" "^hosts-has-peer$" echo "$LOG0"
check "pair-1 ran as nobody in its own hostname" "^uid=65534 host=pair-1 " $K logs pair-1
check "an Event Pulled: the IfNotPresent image was already here (no pull)" \
  "Normal +Pulled +[Pp]od/pair-0 +Container image \"$IMAGE\" already present on machine" \
  $K get events

# A registry that accepts connections and never answers: the pull hangs, and the pod
# waits in ContainerCreating meanwhile (not Running) while the server goes on.
python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
' >"$TMP/slow.port" &
SLOW_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/slow.port" ] && break; sleep 0.1; done
SLOW_IMAGE=127.0.0.1:$(cat "$TMP/slow.port")/muster-slow-$$:1
check "a Job whose image pull hangs" "created" $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: slow}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: $SLOW_IMAGE, imagePullPolicy: Always, command: [true]}
EOF
eventually "its pod is Pending in ContainerCreating while the image is pulled" \
  "^Pending ContainerCreating $" \
  $K get pods -l job-name=slow -o 'jsonpath={.items[0].status.phase} {.items[0].status.containerStatuses[0].state.*.reason} {.items[0].status.containerStatuses[0].state.*.message}'
eventually "an Event Pulling" "Normal +Pulling +[Pp]od/slow-.*Pulling image \"$SLOW_IMAGE\"" \
  $K get events
check "the server answers meanwhile" "^pair$" $K get job pair -o 'jsonpath={.metadata.name}'
check "deleting the Job" "deleted" $K delete job slow
eventually "its pull is stopped" "^none$" \
  bash -c "pgrep -f '[p]ull --quiet -- $SLOW_IMAGE' >/dev/null || echo none"
kill -9 "$SLOW_PID" 2>/dev/null
wait "$SLOW_PID" 2>/dev/null
SLOW_PID=""

check "a Job whose image is missing under imagePullPolicy Never" "created" $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: never}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: $NEVER_IMAGE, imagePullPolicy: Never, command: [sh, -c, 'echo started']}
EOF
STATE='jsonpath={.items[0].status.phase} {.items[0].status.containerStatuses[0].state.*.reason} {.items[0].status.containerStatuses[0].state.*.message}'
eventually "its pod waits, Pending, in ErrImageNeverPull with upstream's message" \
  "^Pending ErrImageNeverPull Container image \"$NEVER_IMAGE\" is not present with pull policy of Never$" \
  $K get pods -l job-name=never -o "$STATE"
eventually "the pod's Event says why" \
  "Warning +ErrImageNeverPull +[Pp]od/never-.*is not present with pull policy of Never" $K get events
check "the image appears under that name" "" podman tag "$IMAGE" "$NEVER_IMAGE"
eventually "the pod starts from it at its next look and succeeds" "^Succeeded" \
  $K get pods -l job-name=never -o "$STATE"
check "it did not count as a restart" "^0$" \
  $K get pods -l job-name=never -o 'jsonpath={.items[0].status.containerStatuses[0].restartCount}'

check "a long-running Job" "created" $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: long}
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 3
      restartPolicy: Never
      containers:
      - {name: main, image: $IMAGE, command: [sh, -c, 'echo started; exec sleep 600']}
EOF
eventually "its container runs" "^started$" bash -c "$K logs -l job-name=long"
eventually "podman lists its container with muster's label" "^default/long-" \
  podman ps --filter "label=$LABEL" --format '{{index .Labels "muster.dev/pod"}}'
CONTAINER=$(podman ps --filter "label=$LABEL" --format '{{.Names}}' | grep long)
# kubectl exec into it is podman's exec: the container's user, hostname and files.
LONG_POD=$($K get pods -l job-name=long -o 'jsonpath={.items[0].metadata.name}')
check "kubectl exec runs in the container (podman exec)" "^$LONG_POD$" $K exec "$LONG_POD" -- hostname
check "kubectl exec -i feeds its stdin" "^into-container$" \
  bash -c "echo into-container | $K exec -i $LONG_POD -- cat"
check_exit "kubectl exec's exit code from the container" 5 "command terminated with exit code 5" \
  $K exec "$LONG_POD" -- sh -c 'exit 5'

# A server killed with -9 adopts the running container when it comes back.
kill -9 "$PID"
wait "$PID" 2>/dev/null
start_server
check "after a kill -9 of the server its container still runs" "^$CONTAINER$" \
  podman ps --filter "label=$LABEL" --format '{{.Names}}'
eventually "the restarted server still shows the pod Running" "^Running$" \
  $K get pods -l job-name=long -o 'jsonpath={.items[0].status.phase}'
check "deleting the Job" "deleted" $K delete job long
eventually "its container is gone" "^none$" \
  bash -c "n=\$(podman ps -a --filter label=$LABEL --format '{{.Names}}' | grep -c long); [ \"\$n\" = 0 ] && echo none"

# A pull that cannot reach its registry (nothing listens on port 9): the pod waits in
# back-off; once the image is here (tagged locally: IfNotPresent), the next try runs it.
check "a Job whose image's registry is unreachable" "created" $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: unpullable}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: $LATE_IMAGE, command: [sh, -c, 'echo pulled-late']}
EOF
eventually "its pod waits, Pending, in ImagePullBackOff" \
  "^Pending ImagePullBackOff Back-off pulling image \"$LATE_IMAGE\"$" \
  $K get pods -l job-name=unpullable -o "$STATE"
EVENTS=$($K get events 2>&1)
check "an Event Failed with podman's pull error" \
  "Warning +Failed +[Pp]od/unpullable-.*Failed to pull image \"$LATE_IMAGE\": .*127.0.0.1:9" \
  echo "$EVENTS"
check "an Event Failed: Error: ErrImagePull" "Warning +Failed +[Pp]od/unpullable-.*Error: ErrImagePull" \
  echo "$EVENTS"
check "an Event BackOff" "Normal +BackOff +[Pp]od/unpullable-.*Back-off pulling image \"$LATE_IMAGE\"" \
  echo "$EVENTS"
check "an Event Pulling before the pull" "Normal +Pulling +[Pp]od/unpullable-.*Pulling image \"$LATE_IMAGE\"" \
  echo "$EVENTS"
check "the Job has not failed" "^ok$" \
  bash -c "f=\$($K get job unpullable -o 'jsonpath={.status.failed}'); [ -z \"\$f\" ] || [ \"\$f\" = 0 ] && echo ok"
# The back-off outlives the server: saved in its data directory, and the pod adopted
# waiting for its image (not failed for want of a process).
check "the back-off is saved in the data directory" "default_unpullable-.*$LATE_IMAGE" \
  cat "$TMP/data/image-pull-backoff.json"
kill -9 "$PID"
wait "$PID" 2>/dev/null
start_server
eventually "after a kill -9 the restarted server shows the pod waiting for its image still" \
  "^Pending (ImagePullBackOff|ErrImagePull) " $K get pods -l job-name=unpullable -o "$STATE"
check "the Job has still not failed" "^ok$" \
  bash -c "f=\$($K get job unpullable -o 'jsonpath={.status.failed}'); [ -z \"\$f\" ] || [ \"\$f\" = 0 ] && echo ok"
check "the image appears under that name" "" podman tag "$IMAGE" "$LATE_IMAGE"
eventually "the pod runs it at its next try and succeeds" "^Succeeded" \
  $K get pods -l job-name=unpullable -o "$STATE"
check "its log is the container's" "^pulled-late$" $K logs -l job-name=unpullable

# Deleting a job whose pod waits for its image ends the retries.
check "a second Job with an unreachable image" "created" $K apply -f - <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: stuck}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: 127.0.0.1:9/muster-never-there:1, command: [true]}
EOF
eventually "its pod is in back-off" "^Pending ImagePullBackOff" \
  $K get pods -l job-name=stuck -o "$STATE"
check "deleting the Job" "deleted" $K delete job stuck
eventually "its pod is gone" "^none$" \
  bash -c "$K get pods -l job-name=stuck -o name | grep -q . || echo none"
# Longer than the 4 s back-off: a retry would start its process (and its directory) again.
sleep 5
check "no pull is tried after the deletion" "^none$" \
  bash -c "ls -d $TMP/data/pods/default_stuck-* >/dev/null 2>&1 || echo none"

# A container killed by the kernel at its memory limit: dd's 60 MB buffer in 20Mi;
# started twice (backoffLimit 1), the second shows how the first ended in lastState.
check "a Job whose container outgrows its 20Mi memory limit" "created" $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: oom}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: main
        image: $IMAGE
        command: [dd, if=/dev/zero, of=/dev/null, bs=60M, count=1]
        resources: {limits: {memory: 20Mi}}
EOF
TERMINATED='jsonpath={.items[0].status.phase} {.items[0].status.containerStatuses[0].state.terminated.exitCode} {.items[0].status.containerStatuses[0].state.terminated.reason}'
eventually "it is killed twice and the Job fails" "^Failed$" \
  $K get job oom -o 'jsonpath={.status.conditions[?(@.status=="True")].type}'
check "its pod's container ended with exit code 137" "^Failed 137 " \
  $K get pods -l job-name=oom -o "$TERMINATED"
# Whether podman here can tell an OOM kill: conmon's `oom` file in its working
# directory, or podman's State.OOMKilled (which said false on a cgroup v1 hybrid
# machine with runc, where the file was written).
mkdir -p "$TMP/probe"
(cd "$TMP/probe" && podman "${RUNTIME[@]}" run --name "muster-oom-probe-$$" --network host \
  "${ULIMITS[@]}" --pull=never --memory 20m --memory-swap 20m "$IMAGE" \
  dd if=/dev/zero of=/dev/null bs=60M count=1 >/dev/null 2>&1)
PODMAN_OOM=$(podman inspect --format '{{.State.OOMKilled}}' "muster-oom-probe-$$" 2>/dev/null)
podman rm -f "muster-oom-probe-$$" >/dev/null 2>&1
if [ "$PODMAN_OOM" = true ] || [ -e "$TMP/probe/oom" ]; then
  check "its reason is OOMKilled, as the kubelet reports it" "^Failed 137 OOMKilled$" \
    $K get pods -l job-name=oom -o "$TERMINATED"
else
  echo "note: podman here does not report OOM kills: OOMKilled not checked"
  check "without podman's word it is reason Error" "^Failed 137 Error$" \
    $K get pods -l job-name=oom -o "$TERMINATED"
fi
OOM_REASON=$($K get pods -l job-name=oom -o 'jsonpath={.items[0].status.containerStatuses[0].state.terminated.reason}')
check "restarted once, its lastState is the first container's end" "^1 137 $OOM_REASON$" \
  $K get pods -l job-name=oom -o 'jsonpath={.items[0].status.containerStatuses[0].restartCount} {.items[0].status.containerStatuses[0].lastState.terminated.exitCode} {.items[0].status.containerStatuses[0].lastState.terminated.reason}'

check "a Job whose command is not in the image" "created" $K apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: noexec}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: $IMAGE, command: [/no/such/program]}
EOF
eventually "its pod ends with StartError and runc's message" "^StartError .*/no/such/program" \
  $K get pods -l job-name=noexec \
  -o 'jsonpath={.items[0].status.containerStatuses[0].state.*.reason} {.items[0].status.containerStatuses[0].state.*.message}'

kill -TERM "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=""

# --container-runtime=auto picks podman here and says so.
"$MUSTER" serve --data "$TMP/auto" --listen 127.0.0.1:0 --container-runtime=auto \
  >"$TMP/auto.log" 2>&1 &
PID=$!
for _ in $(seq 1 300); do
  grep -q "listening on" "$TMP/auto.log" 2>/dev/null && break
  sleep 0.1
done
check "auto runs pods in podman containers where podman works" "pods run in podman containers" \
  cat "$TMP/auto.log"
kill -TERM "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=""
finish
