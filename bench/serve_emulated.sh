#!/usr/bin/env bash
# The whole `muster serve` path (HTTP API, durable store, engine, status write-back)
# at cluster scale on one machine: an emulated cluster (`--executor emulated`: bound
# pods are Running at once, no processes) of --nodes nodes x --gpus GPUs and one
# ClusterQueue owning all of it; --jobs jobs from `muster gen workload` are POSTed
# through the API over --concurrency persistent connections by build/serve_load (C++,
# bench/serve_load/main.cc; --client python: serve_emulated.py's threads, which on two
# cores limit the figure themselves). Prints submissions/s, create latency,
# the time from the last submission until every job that fits is running (how "fits"
# is decided: bench/serve_emulated.py), server RSS per node and per job, and the time
# from SIGTERM to exit, loaded and after a restart on the same data.
# The same measurement as the Slurm figure in issue #6 (1,024 emulated nodes of 8
# GPUs, 10,000 queued jobs). Jobs keep running: gen's durations are thousands of
# seconds, far longer than the run.
#
# Usage: bench/serve_emulated.sh [--muster PATH] [--nodes 1024] [--gpus 8] [--jobs 10000]
#                                [--concurrency 32] [--mix small:1] [--seed 1] [--keep]
#                                [--client cpp|python] [--serve-load PATH] [--no-restart]
#                                [--body yaml|json]
# --no-restart skips the shutdown and restart figures (for rounds that compare
# submissions: the restart of a 10,000-job store takes minutes on a loaded machine).
# --body json (the default) sends each job as JSON (application/json), as kubectl and
# client-go do; it needs PyYAML to convert gen's YAML. --body yaml sends gen's YAML
# as it is (application/yaml): the figures of stops before 26 were measured so.
# Smoke test: bench/serve_emulated.sh --nodes 128 --jobs 1000
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MUSTER="$ROOT/build/muster"
NODES=1024
GPUS=8
JOBS=10000
CONCURRENCY=32
CLIENT=cpp
SERVE_LOAD="$ROOT/build/serve_load"
# One pod of 1-8 GPUs per job, like the Slurm run's single-node jobs.
MIX="small:1"
SEED=1
KEEP=0
RESTART=1
BODY=json
while [ $# -gt 0 ]; do
  case "$1" in
    --muster) MUSTER=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --gpus) GPUS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --mix) MIX=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --no-restart) RESTART=0; shift ;;
    --body) BODY=$2; shift 2 ;;
    --client) CLIENT=$2; shift 2 ;;
    --serve-load) SERVE_LOAD=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

. "$ROOT/bench/serve_lib.sh"
# Debian's python3-yaml installs for /usr/bin/python3; PYTHON names another one.
PYTHON=${PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d /tmp/muster-serve-bench.XXXXXX)
cleanup() {
  serve_stop
  if [ "$KEEP" = 1 ]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

"$MUSTER" gen cluster --nodes "$NODES" --gpus-per-node "$GPUS" --cluster-queues 1 \
  --seed "$SEED" -o "$TMP/cluster.yaml"
"$MUSTER" gen workload --jobs "$JOBS" --mix "$MIX" --queues 1 --gpus-per-node "$GPUS" \
  --seed "$SEED" -o "$TMP/workload.yaml"
"$PYTHON" "$ROOT/bench/serve_emulated.py" split "$TMP/workload.yaml" \
  "$TMP/priorities.yaml" "$TMP/jobs.jsonl" "$BODY"

STARTED=$SECONDS
serve_start "$MUSTER" "$TMP/server.log" "$TMP/data" -f "$TMP/cluster.yaml" -f "$TMP/priorities.yaml"
echo "server up in $((SECONDS - STARTED)) s: $NODES nodes x $GPUS GPUs, $JOBS jobs ($MIX)," \
  "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

client_args=()
case "$CLIENT" in
  cpp) client_args=(--client "$SERVE_LOAD") ;;
  python) ;;
  *) echo "--client is cpp or python" >&2; exit 2 ;;
esac
status=0
"$PYTHON" "$ROOT/bench/serve_emulated.py" run --port "$SERVE_PORT" --pid "$SERVE_PID" \
  --jobs "$TMP/jobs.jsonl" --concurrency "$CONCURRENCY" --nodes "$NODES" --gpus "$GPUS" --body "$BODY" \
  "${client_args[@]}" || status=$?

# Shutdown at this scale: SIGTERM to exit (issue 13 asks for at most 1 s), then the
# same after a restart on the same data (start-up loads every object; the scheduler
# adopts what runs).
stop_server() {
  local begin end
  begin=$(date +%s.%N)
  serve_stop TERM
  end=$(date +%s.%N)
  echo "$1: SIGTERM to exit $(awk "BEGIN { printf \"%.2f\", $end - $begin }") s"
}
[ "$RESTART" = 1 ] || exit "$status"
stop_server "loaded server"
STARTED=$(date +%s.%N)
serve_start "$MUSTER" "$TMP/server.log" "$TMP/data"
echo "restarted in $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $STARTED }") s"
sleep 5  # the scheduler's first steps after start-up
stop_server "restarted server"
exit "$status"
