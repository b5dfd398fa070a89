#!/usr/bin/env bash
# An MPIJob (kubeflow.org/v2beta1) launched by Debian's OpenMPI mpirun under `muster
# serve`, with the real kubectl: a launcher and two workers (slotsPerWorker 2) in one
# gang through a Kueue LocalQueue. The launcher's mpirun reads the hostfile muster
# wrote (/etc/mpi/hostfile, "<job>-worker-<i>.<job>.<ns>.svc slots=2") and starts
# its 4 ranks through muster's rsh agent; every rank reports and the MPIJob ends
# Succeeded (the launcher decides, as in mpi-operator). An mpirun that exits non-zero
# fails the MPIJob. Skips when mpirun (openmpi-bin) is not installed.
# Usage: bash tests/server/mpijob_test.sh build/muster
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/serve.sh"

MUSTER=$(realpath "${1:-build/muster}")
if ! command -v mpirun >/dev/null 2>&1 || ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  echo "SKIP: Open MPI's mpirun not installed (apt-get install openmpi-bin)"
  echo "0 passed, 0 failed"
  exit 0
fi
require_commands kubectl
serve_tmp

start_serve

check "the queues apply" "localqueue.kueue.x-k8s.io/lq created" $K apply -f - <<<"$(kueue_queues 4 4Gi)"

# mpijob NAME LAUNCHER_SCRIPT [BACKOFF_LIMIT [LAUNCHER_CREATION_POLICY]]: an MPIJob of a
# launcher running LAUNCHER_SCRIPT (sh -c) and two workers with two slots each. The workers only stay up while the launcher
# runs (mpi-operator's workers run sshd); mpirun may run as root only when told so.
mpijob() {
  cat <<YAML
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: $1
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  slotsPerWorker: 2
  launcherCreationPolicy: ${4:-AtStartup}
  runPolicy: {cleanPodPolicy: Running${3:+, backoffLimit: $3}}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/openmpi
            env:
            - {name: OMPI_ALLOW_RUN_AS_ROOT, value: "1"}
            - {name: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, value: "1"}
            # Open MPI 4.1's orted maps hwloc's topology at an address it guesses is
            # free in its own address space; here that crashed orted once (a segfault
            # in hwloc_shmem_topology_write, nothing of muster's). "none" skips that
            # shared copy; each process reads the topology itself.
            - {name: OMPI_MCA_rtc_hwloc_vmhole, value: none}
            command: [sh, -c, '$2']
            resources:
              requests: {cpu: 100m, memory: 64Mi}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: mpioperator/openmpi
            command: [sleep, "300"]
            resources:
              requests: {cpu: 100m, memory: 64Mi}
YAML
}

# Each rank: its world rank and the orted that started it (the daemon's vpid in
# orte_local_daemon_uri: daemon k serves the k-th host of the hostfile).
RANK_CMD='echo rank=\$OMPI_COMM_WORLD_RANK/\$OMPI_COMM_WORLD_SIZE daemon=\${OMPI_MCA_orte_local_daemon_uri%%;*} local=\$OMPI_COMM_WORLD_LOCAL_RANK'
mpijob pi "cat \$OMPI_MCA_orte_default_hostfile; mpirun -np 4 sh -c \"$RANK_CMD\"" "" \
  WaitForWorkersReady >"$TMP/pi.yaml"
check "an MPIJob applies" "mpijob.kubeflow.org/pi created" $K apply -f "$TMP/pi.yaml"
eventually "the MPIJob ends Succeeded" "Succeeded" \
  $K get mpijob pi -o 'jsonpath={.status.conditions[?(@.status=="True")].type}'
check "its launcher and two workers ran" "pi-launcher-0 pi-worker-0 pi-worker-1" \
  $K get pods -o 'jsonpath={.items[*].metadata.name}'
LOG=$($K logs pi-launcher-0 2>&1)
# Root runs each pod in its own mount namespace, its /etc/hosts resolving the workers'
# Service names: the hostfile names them, as mpi-operator's does. Without root the
# launcher shares the machine's /etc/hosts, so the hostfile gives the workers'
# addresses (and lives in the pod's directory, OMPI_MCA_orte_default_hostfile says).
if [ "$(id -u)" -eq 0 ]; then W0='pi-worker-0\.pi\.default\.svc' W1='pi-worker-1\.pi\.default\.svc'; else
  W0='127\.[0-9.]+' W1='127\.[0-9.]+'; fi
check "the launcher's hostfile names worker 0 with 2 slots" "^$W0 slots=2$" echo "$(head -1 <<<"$LOG")"
check "... and worker 1" "^$W1 slots=2$" echo "$(sed -n 2p <<<"$LOG")"
H0=$(head -1 <<<"$LOG" | cut -d' ' -f1) H1=$(sed -n 2p <<<"$LOG" | cut -d' ' -f1)
check "mpirun asked the rsh agent for worker 0" "rsh-agent: ${H0//./\\.}: " echo "$LOG"
check "mpirun asked the rsh agent for worker 1" "rsh-agent: ${H1//./\\.}: " echo "$LOG"
# By slot (mpirun's default): ranks 0,1 on the first host's daemon, 2,3 on the second's.
RANKS=$(grep -o 'rank=.*' <<<"$LOG" | sed 's/daemon=[0-9]*\./daemon=/' | sort)
check "all 4 ranks ran, 2 per hostfile host" \
  "^rank=0/4 daemon=1 local=0
rank=1/4 daemon=1 local=1
rank=2/4 daemon=2 local=0
rank=3/4 daemon=2 local=1$" echo "$RANKS"
check "the launcher exited 0" "^0$" \
  $K get pod pi-launcher-0 -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}'
# WaitForWorkersReady: the launcher started once both workers ran (an order, in whole
# seconds: RFC 3339 times compare as strings).
STARTS=$($K get pods -o 'jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[0].state.terminated.startedAt}{"\n"}{end}')
L=$(sed -n 's/^pi-launcher-0 //p' <<<"$STARTS")
ORDER=ok
for w in 0 1; do
  S=$(sed -n "s/^pi-worker-$w //p" <<<"$STARTS")
  if [ -z "$L" ] || [ -z "$S" ] || [[ "$L" < "$S" ]]; then ORDER="launcher $L, worker $w $S"; fi
done
check "the launcher started after the workers (WaitForWorkersReady)" "^ok$" echo "$ORDER"

# An mpirun whose ranks fail exits non-zero: the launcher fails, so does the MPIJob.
# backoffLimit 0: the launcher's restartPolicy is OnFailure (mpi-operator's default),
# so without it the launcher would be retried.
mpijob broken 'mpirun -np 4 sh -c "exit 3"' 0 >"$TMP/broken.yaml"
check "a failing MPIJob applies" "mpijob.kubeflow.org/broken created" $K apply -f "$TMP/broken.yaml"
eventually "the MPIJob ends Failed" "Failed" \
  $K get mpijob broken -o 'jsonpath={.status.conditions[?(@.status=="True")].type}'
check "its launcher exited non-zero" "^[1-9][0-9]*$" \
  $K get pod broken-launcher-0 -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}'
check "mpirun said why" "mpirun detected that one or more processes exited with non-zero status" $K logs broken-launcher-0
finish
