#!/usr/bin/env bash
# Stands in for start_peer.sh next to run_peer.sh (bench/peers/run.sh links it there):
# runs ../shared/peers/slurm/start_peer.sh unchanged, then records the CPU seconds the
# daemons spent starting up, so the benchmark counts only what they spend afterwards.
# Usage (as start_peer.sh): slurm_start.sh RUNDIR NODES; SLURM_SHARED names the
# directory of the real scripts.
set -euo pipefail
RUN=$1
"${SLURM_SHARED:?}/start_peer.sh" "$@"
cpu() { awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz}' "/proc/$1/stat"; }
ctld=$(cpu "$(cat "$RUN/slurmctld.pid")")
nodes=0
for f in "$RUN"/spool/*/slurmd.pid; do
  nodes=$(echo "$nodes + $(cpu "$(cat "$f")")" | bc)
done
echo "$ctld $nodes" >"$RUN/cpu_at_start"
