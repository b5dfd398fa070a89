#!/usr/bin/env bash
# The core kinds of `muster serve` with the real kubectl: namespaces, ConfigMaps,
# Secrets, ResourceQuotas (kubectl's typed create commands, protobuf bodies), seed
# 001's headless Service, a PersistentVolumeClaim bound by the local provisioner,
# upstream's 422 and 403 texts, kubectl's columns, and a Job whose pod reads a
# ConfigMap, a Secret and a claim under the local executor (the ConfigMap also at a
# mountPath below /etc, created for the pod only); a LimitRange's defaults and bounds.
# Usage: bash tests/server/core_kinds_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
require_commands kubectl
serve_tmp

start_serve

check "kubectl create namespace" "namespace/team-a created" $K create namespace team-a
# kubectl's typed create commands send protobuf: a PriorityClass (value 0 included,
# which Go writes and JSON would drop), and a kind serve does not serve is a 404.
check "kubectl create priorityclass" "priorityclass.scheduling.k8s.io/batch-low created" \
  $K create priorityclass batch-low --value=0 --description="low" --preemption-policy=Never
check "stored with its value 0 and policy" "^batch-low 0 Never low$" \
  $K get priorityclass batch-low -o 'jsonpath={.metadata.name} {.value} {.preemptionPolicy} {.description}'
check "a pod naming it gets its priority and policy (Priority admission)" "^0 Never$" \
  $K run prio --image=busybox --restart=Never --overrides='{"spec":{"priorityClassName":"batch-low"}}' \
  --dry-run=server -o 'jsonpath={.spec.priority} {.spec.preemptionPolicy}'
check "the system PriorityClasses every cluster has" \
  "^system-cluster-critical 2000000000 system-node-critical 2000001000 $" \
  $K get priorityclass system-cluster-critical system-node-critical -o 'jsonpath={range .items[*]}{.metadata.name} {.value} {end}'
check_fails "a pod naming a class that does not exist is forbidden" \
  "no PriorityClass with name nosuch was found" \
  $K run prio --image=busybox --restart=Never --overrides='{"spec":{"priorityClassName":"nosuch"}}'
check_fails "kubectl create deployment: not served, said as such" \
  "could not find the requested resource" $K create deployment web --image=nginx
eventually "a namespace gets ServiceAccount default" "^default +0 " \
  $K get sa -n team-a --no-headers
check "kubectl create configmap --from-literal" "configmap/settings created" \
  $K create configmap settings -n team-a --from-literal=greeting=hello --from-literal=level=3
check "kubectl create secret generic" "secret/creds created" \
  $K create secret generic creds -n team-a --from-literal=token=s3cret
check "a Secret's data is base64 of the literal" "^czNjcmV0$" \
  $K get secret creds -n team-a -o 'jsonpath={.data.token}'
check_fails "a bad ConfigMap key is 422 with upstream's message" \
  "data\[a b\]: Invalid value: \"a b\": a valid config key must consist of alphanumeric" \
  $K apply -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: bad, namespace: team-a}
data: {"a b": "1"}
EOF
check "kubectl create quota" "resourcequota/gpu-fence created" \
  $K create quota gpu-fence -n team-a --hard=requests.nvidia.com/gpu=4,configmaps=3,pods=10

cat >"$TMP/svc.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: pytorch-ddp-svc
  namespace: default
spec:
  clusterIP: None
  selector:
    job-name: pytorch-ddp
EOF
check "seed 001's headless Service applies" "service/pytorch-ddp-svc created" \
  $K apply -f "$TMP/svc.yaml"
check "kubectl get svc shows it headless" "^pytorch-ddp-svc +ClusterIP +None +<none> +<none> +" \
  $K get svc pytorch-ddp-svc --no-headers
check "re-applying it changes nothing" "service/pytorch-ddp-svc unchanged" $K apply -f "$TMP/svc.yaml"
check "a ClusterIP Service gets an address of 10.96.0.0/12, with a warning" \
  "Warning: spec.clusterIP is not routed" \
  $K create service clusterip web -n team-a --tcp=80:8080
check "its columns" "^web +ClusterIP +10\.(9[6-9]|10[0-9]|11[01])\.[0-9]+\.[0-9]+ +<none> +80/TCP +" \
  $K get svc web -n team-a --no-headers
check_fails "a clusterIP cannot change" "spec.clusterIP: Invalid value: \"None\": field is immutable" \
  $K patch svc web -n team-a --type=merge -p '{"spec":{"clusterIP":"None"}}'

cat >"$TMP/pvc.yaml" <<'EOF'
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: scratch
  namespace: team-a
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
EOF
check "a PVC applies" "persistentvolumeclaim/scratch created" $K apply -f "$TMP/pvc.yaml"
check "it is Bound by the local provisioner" "^scratch +Bound +pvc-[0-9a-f-]+ +1Gi +RWO +local +" \
  $K get pvc scratch -n team-a --no-headers
check_fails "a PVC without access modes is 422" \
  "spec.accessModes: Required value: at least 1 access mode is required" \
  $K apply -f - <<'EOF'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: nomodes, namespace: team-a}
spec: {resources: {requests: {storage: 1Gi}}}
EOF

check "the quota counts what is there" "requests.nvidia.com/gpu: 0/4" \
  $K get quota gpu-fence -n team-a --no-headers
eventually "status.used counts the ConfigMap" '^1$' \
  $K get quota gpu-fence -n team-a -o 'jsonpath={.status.used.configmaps}'
cat >"$TMP/gpu-pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: greedy, namespace: team-a}
spec:
  restartPolicy: Never
  nodeName: nowhere
  containers:
  - name: main
    image: busybox
    resources: {limits: {nvidia.com/gpu: 8}}
EOF
check_fails "a Pod past the GPU quota is 403 with upstream's text" \
  'pods "greedy" is forbidden: exceeded quota: gpu-fence, requested: requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=4' \
  $K apply -f "$TMP/gpu-pod.yaml"
$K create configmap two -n team-a --from-literal=a=1 >/dev/null 2>&1
$K create configmap three -n team-a --from-literal=a=1 >/dev/null 2>&1
check_fails "a fourth ConfigMap is past configmaps=3" \
  'exceeded quota: gpu-fence, requested: configmaps=1, used: configmaps=3, limited: configmaps=3' \
  $K create configmap four -n team-a --from-literal=a=1

check "kubectl get cm,secret,svc,pvc,quota" \
  "configmap/settings +2 .*secret/creds +Opaque +1 .*service/web +ClusterIP .*persistentvolumeclaim/scratch +Bound .*resourcequota/gpu-fence +[0-9]+s +configmaps: 3/3" \
  bash -c "$K get cm,secret,svc,pvc,quota -n team-a 2>&1 | tr '\n' ' '"
check "the headers are kubectl's" \
  "NAME +DATA +AGE .*NAME +TYPE +DATA +AGE .*NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE .*NAME +STATUS +VOLUME +CAPACITY +ACCESS MODES +STORAGECLASS +VOLUMEATTRIBUTESCLASS +AGE .*NAME +AGE +REQUEST +LIMIT" \
  bash -c "$K get cm,secret,svc,pvc,quota -n team-a 2>&1 | tr '\n' ' '"

# A Job whose pod reads a ConfigMap key (env), a Secret (volume) and the claim, run by
# the local executor: its log shows the values.
cat >"$TMP/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: reader, namespace: team-a}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: [sh, -c, 'echo "greeting=$GREETING"; echo "token=$(cat /creds/token)"; echo kept >/scratch/f; echo "claim=$(cat /scratch/f)"; echo "below-etc=$(cat /etc/muster-core-kinds-test/settings/level)"']
        env:
        - name: GREETING
          valueFrom: {configMapKeyRef: {name: settings, key: greeting}}
        volumeMounts:
        - {name: creds, mountPath: /creds}
        - {name: scratch, mountPath: /scratch}
        - {name: settings, mountPath: /etc/muster-core-kinds-test/settings}
      volumes:
      - name: settings
        configMap: {name: settings}
      - name: creds
        secret: {secretName: creds}
      - name: scratch
        persistentVolumeClaim: {claimName: scratch}
EOF
check "the Job applies" "job.batch/reader created" $K apply -f "$TMP/job.yaml"
eventually "its pod ran with the ConfigMap, Secret and claim" "greeting=hello.*token=s3cret.*claim=kept" \
  bash -c "$K logs -n team-a -l job-name=reader 2>&1 | tr '\n' ' '"
# A mountPath below an existing directory of the machine (/etc): made for the pod only.
check "a ConfigMap mounted below /etc (a directory that exists) is there for the pod" \
  "below-etc=3" bash -c "$K logs -n team-a -l job-name=reader 2>&1 | tr '\n' ' '"
check "and not on the machine" "^absent$" \
  bash -c "[ -e /etc/muster-core-kinds-test ] || echo absent"

# LimitRange: stored with upstream's defaults, refused as upstream refuses, and read
# where a Job becomes a workload (Kueue's defaults and bounds).
check "kubectl create namespace team-b" "namespace/team-b created" $K create namespace team-b
check "a LimitRange applies" "limitrange/defaults created" $K apply -f - <<'EOF'
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: team-b}
spec:
  limits:
  - type: Container
    max: {cpu: "2"}
    defaultRequest: {cpu: 250m}
EOF
check "its Container item is defaulted as upstream's (default from max)" '^\{"cpu":"2"\}$' \
  $K get limits defaults -n team-b -o 'jsonpath={.spec.limits[0].default}'
check_fails "min above max is 422 with upstream's message" \
  'spec.limits\[0\].min\[cpu\]: Invalid value: "4": min value 4 is greater than max value 2' \
  $K apply -f - <<'EOF'
apiVersion: v1
kind: LimitRange
metadata: {name: bad, namespace: team-b}
spec:
  limits:
  - {type: Container, max: {cpu: "2"}, min: {cpu: "4"}}
EOF
for job in plain:0 wide:3; do
  name=${job%%:*} cpu=${job##*:}
  requests="{}"
  [ "$cpu" = 0 ] || requests="{cpu: \"$cpu\"}"
  $K apply -f - >/dev/null <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: $name, namespace: team-b}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: ["true"], resources: {requests: $requests}}
EOF
done
eventually "a Job without a cpu request is charged the range's default request" "^250m$" \
  $K get workload job-plain -n team-b \
  -o 'jsonpath={.spec.podSets[0].template.spec.containers[0].resources.requests.cpu}'
eventually "a Job above the range's max waits with Kueue's message" \
  "didn't satisfy LimitRange constraints: podSets.main.containers\[0\]: .*requests must not be above the limitRange max" \
  $K get workload job-wide -n team-b \
  -o 'jsonpath={.status.conditions[?(@.type=="QuotaReserved")].message}'

kill -TERM "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=""
finish
