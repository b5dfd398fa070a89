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
# shellcheck disable=SC2016  # awk's program, run by xargs
nodes=$(sed 's|^\(.*\)$|/proc/\1/stat|' "$RUN"/spool/*/slurmd.pid | xargs awk -v hz="$(getconf CLK_TCK)" \
  '{sub(/^.*\) /, ""); s += $12 + $13} END {printf "%.2f", s / hz}')
echo "$ctld $nodes" >"$RUN/cpu_at_start"
