#!/usr/bin/env bash
# Side-by-side peer benchmark: the same generated GPU job list submitted to
# `muster serve --executor emulated` and to Slurm (Debian's slurmctld plus one slurmd
# per emulated node, run by ../shared/peers/slurm/run_peer.sh), alternating the two
# peers (muster, slurm, muster, slurm...) for --rounds rounds.
#
# The job list is run_peer.sh's own seeded generator (extracted from it and run with
# the same arguments; checked identical to what run_peer.sh submitted): 60% 1-GPU,
# 15% 4-GPU, 15% full-node 8-GPU, 10% gangs of 2/4/4/8 full nodes, accounts teamA and
# teamB, 20% in the high tier (Slurm partition prio, PriorityTier 10; muster
# WorkloadPriorityClass high). For muster each job is a batch/v1 Job (Indexed,
# parallelism = nodes) in the Kueue LocalQueue of its team; ClusterQueues teamA and
# teamB own half the GPUs each in one cohort and may borrow all of the other's
# (bench/peers/peers.py). Nodes: 64 CPUs, 512000 MB, 8 GPUs each on both peers.
#
# Measured the same way on both (run_peer.sh's MODE=online): --par parallel
# submitters (sbatch processes for Slurm, persistent HTTP connections for muster);
# sched_s is the time from the first submission until the count of started jobs
# (Slurm: sdiag "Jobs started"; muster: the ClusterQueues' admitted workloads) first
# reached its final value, final meaning unchanged for --quiet seconds after every
# job was submitted. GPUs busy at that point. Scheduler CPU seconds and peak RSS:
# muster serve's process (API, store, scheduler and emulated nodes) from before its
# first submission; slurmctld's from after every slurmd registered; the slurmd
# daemons' CPU and RSS summed are printed apart (node_*; slurmstepd and the jobs'
# sleep processes are not counted). Jobs run --duration seconds, far longer than a run.
#
# Usage: bench/peers/run.sh [--nodes 64] [--jobs 500] [--rounds 1] [--muster PATH]
#          [--par 4] [--seed 1] [--quiet 15] [--duration 3000] [--slurm-dir DIR]
#          [--out FILE] [--keep] [--only muster|slurm]
# Prints MUSTERPEER / SLURMPEER key=value lines per run, a table, medians and the
# ratios muster/Slurm of each round, and ends with one "PEERS peer=..." line per peer
# (medians). Needs root for Slurm (installs slurmctld slurmd slurm-client if missing).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/bench/peers"
MUSTER="$ROOT/build/muster"
NODES=64
JOBS=500
ROUNDS=1
PAR=4
SEED=1
QUIET=15
DUR=3000
# ../shared/peers/slurm next to the repository (the main checkout's, from a worktree).
SLURM_SHARED="$ROOT/../shared/peers/slurm"
if [ ! -d "$SLURM_SHARED" ] && common=$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
  SLURM_SHARED="$(dirname "$common")/../shared/peers/slurm"
fi
OUT=""
KEEP=0
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) NODES=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --muster) MUSTER=$2; shift 2 ;;
    --par) PAR=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --quiet) QUIET=$2; shift 2 ;;
    --duration) DUR=$2; shift 2 ;;
    --slurm-dir) SLURM_SHARED=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
MUSTER=$(cd "$(dirname "$MUSTER")" && pwd)/$(basename "$MUSTER")
SLURM_SHARED=$(cd "$SLURM_SHARED" && pwd)
[ "$ONLY" = slurm ] || [ -x "$MUSTER" ] || { echo "no muster binary at $MUSTER (--muster)" >&2; exit 1; }
for f in run_peer.sh start_peer.sh stop_peer.sh gen_conf.sh; do
  [ -x "$SLURM_SHARED/$f" ] || { echo "no $f in $SLURM_SHARED (--slurm-dir)" >&2; exit 1; }
done
log() { echo "[$(date +%T)] $*" >&2; }

# Slurm from Debian, as scripts/install-deps.sh installs packages.
if [ ! -x /usr/sbin/slurmctld ] || [ ! -x /usr/sbin/slurmd ] || ! command -v sbatch >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  log "installing slurmctld slurmd slurm-client"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client >/dev/null
fi
[ "$(id -u)" -eq 0 ] || { echo "run_peer.sh's Slurm runs as root (SlurmUser=root)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/muster-peers.XXXXXX)
[ -n "$OUT" ] || OUT="$WORK/results.txt"
: >"$OUT"
SERVER_PID=""
SLURM_RUN=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -n "$SLURM_RUN" ] && [ -d "$SLURM_RUN" ]; then
    bash "$SLURM_SHARED/stop_peer.sh" "$SLURM_RUN" || true
  fi
  if [ "$KEEP" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run_peer.sh runs from a directory of links to the shared scripts, so that its
# runs/ directory is ours; start_peer.sh is our wrapper recording start-up CPU.
mkdir -p "$WORK/slurm"
for f in run_peer.sh stop_peer.sh gen_conf.sh; do ln -s "$SLURM_SHARED/$f" "$WORK/slurm/$f"; done
ln -s "$HERE/slurm_start.sh" "$WORK/slurm/start_peer.sh"
export SLURM_SHARED
# Ports away from run_peer.sh's defaults, in case someone runs it by hand meanwhile.
export PORT_CTLD=${PORT_CTLD:-26817} PORT_D=${PORT_D:-26818} PORT_BASE=${PORT_BASE:-27000}

# The job list: run_peer.sh's generator (its python heredoc), same arguments.
awk '/<<.EOF.$/ {f = 1; next} /^EOF$/ {f = 0} f' "$SLURM_SHARED/run_peer.sh" >"$WORK/gen_jobs.py"
[ -s "$WORK/gen_jobs.py" ] || { echo "no job generator found in run_peer.sh" >&2; exit 1; }
python3 - "$JOBS" "$SEED" "$DUR" online <"$WORK/gen_jobs.py" >"$WORK/jobs.txt"
/usr/bin/python3 "$HERE/peers.py" manifests "$WORK/jobs.txt" "$NODES" "$DUR" \
  "$WORK/cluster.yaml" "$WORK/jobs.jsonl"
log "$NODES nodes x 8 GPUs, $JOBS jobs ($(awk '{print $2}' "$WORK/jobs.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')), $ROUNDS round(s), $PAR submitters; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz}' "/proc/$1/stat"; }

run_muster() {
  local round=$1 data="$WORK/muster-data-$1" port="" t0
  log "muster round $round: starting serve"
  : >"$WORK/server-$round.log"
  "$MUSTER" serve --executor emulated --no-local-node --data "$data" --listen 127.0.0.1:0 \
    -f "$WORK/cluster.yaml" >"$WORK/server-$round.log" 2>&1 &
  SERVER_PID=$!
  t0=$SECONDS
  while [ -z "$port" ]; do
    port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/server-$round.log" | head -1)
    if ! kill -0 "$SERVER_PID" 2>/dev/null || [ $((SECONDS - t0)) -gt 300 ]; then
      echo "muster serve did not start:" >&2
      tail -20 "$WORK/server-$round.log" >&2
      exit 1
    fi
    [ -z "$port" ] && sleep 0.2
  done
  log "muster round $round: serve up in $((SECONDS - t0)) s; submitting (load $(cut -d' ' -f1-3 /proc/loadavg))"
  /usr/bin/python3 "$HERE/peers.py" muster --port "$port" --pid "$SERVER_PID" \
    --jobs "$WORK/jobs.jsonl" --par "$PAR" --nodes "$NODES" --settle "$QUIET" \
    --tag "r$round" | tee -a "$OUT"
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  [ "$KEEP" = 1 ] || rm -rf "$data"
}

run_slurm() {
  local round=$1 tag="r$1" line ctld node0 nodes rss
  SLURM_RUN="$WORK/slurm/runs/$tag"
  log "slurm round $round: run_peer.sh $NODES $JOBS (load $(cut -d' ' -f1-3 /proc/loadavg))"
  line=$(cd "$WORK/slurm" && MODE=online PAR=$PAR SEED=$SEED QUIET=$QUIET DUR=$DUR KEEP=1 \
    ./run_peer.sh "$NODES" "$JOBS" "$tag" | grep '^SLURMPEER ') || {
    echo "run_peer.sh failed" >&2
    exit 1
  }
  cmp -s "$SLURM_RUN/jobs.txt" "$WORK/jobs.txt" || {
    echo "run_peer.sh submitted a different job list than muster got" >&2
    exit 1
  }
  read -r ctld node0 <"$SLURM_RUN/cpu_at_start"
  # One awk over every slurmd's /proc files (a process per node takes minutes at 1,024).
  # shellcheck disable=SC2016  # awk's program, run by xargs
  nodes=$(sed 's|^\(.*\)$|/proc/\1/stat|' "$SLURM_RUN"/spool/*/slurmd.pid | xargs awk -v hz="$(getconf CLK_TCK)" \
    '{sub(/^.*\) /, ""); s += $12 + $13} END {printf "%.2f", s / hz}')
  # shellcheck disable=SC2016  # awk's program, run by xargs
  rss=$(sed 's|^\(.*\)$|/proc/\1/status|' "$SLURM_RUN"/spool/*/slurmd.pid | xargs awk '/VmHWM/ {s += $2} END {print s + 0}')
  line="$line cpu_s=$(printf "%.2f" "$(echo "$(cpu_s "$(cat "$SLURM_RUN/slurmctld.pid")") - $ctld" | bc)")"
  line="$line node_cpu_s=$(printf "%.2f" "$(echo "$nodes - $node0" | bc)") node_rss_mb=$((rss / 1024))"
  line="$line load1=$(cut -d" " -f1 /proc/loadavg)"
  echo "$line" | sed 's/ctld_peak_rss_mb=/peak_rss_mb=/' | tee -a "$OUT"
  bash "$SLURM_SHARED/stop_peer.sh" "$SLURM_RUN"
  SLURM_RUN=""
}

for ((r = 1; r <= ROUNDS; r++)); do
  [ "$ONLY" = slurm ] || run_muster "$r"
  [ "$ONLY" = muster ] || run_slurm "$r"
done

/usr/bin/python3 "$HERE/peers.py" report "$OUT"
