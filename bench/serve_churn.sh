#!/usr/bin/env bash
# Memory and disk of `muster serve` (emulated executor) under 10 minutes of
# create/finish/delete churn: bench/serve_churn.py does the churn and the sampling.
# Usage: bench/serve_churn.sh [--muster PATH] [--seconds 600] [--writers 4] [--nodes 8]
#          [--serve-arg ARG]...   (passed to muster serve, e.g. --serve-arg --max-events=0)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MUSTER="$ROOT/build/muster"
SECONDS_=600
WRITERS=4
NODES=8
SERVE_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --muster) MUSTER=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    --writers) WRITERS=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --serve-arg) SERVE_ARGS+=("$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
. "$ROOT/bench/serve_lib.sh"
TMP=$(mktemp -d /tmp/muster-churn.XXXXXX)
cleanup() {
  serve_stop
  rm -rf "$TMP"
}
trap cleanup EXIT
"$MUSTER" gen cluster --nodes "$NODES" --gpus-per-node 8 --cluster-queues 1 --seed 1 -o "$TMP/cluster.yaml"
serve_start "$MUSTER" "$TMP/server.log" "$TMP/data" -f "$TMP/cluster.yaml" "${SERVE_ARGS[@]}"
/usr/bin/python3 "$ROOT/bench/serve_churn.py" --port "$SERVE_PORT" --pid "$SERVE_PID" \
  --data "$TMP/data" --seconds "$SECONDS_" --writers "$WRITERS"
