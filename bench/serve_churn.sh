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
TMP=$(mktemp -d /tmp/muster-churn.XXXXXX)
PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
"$MUSTER" gen cluster --nodes "$NODES" --gpus-per-node 8 --cluster-queues 1 --seed 1 -o "$TMP/cluster.yaml"
"$MUSTER" serve --executor emulated --no-local-node --data "$TMP/data" --listen 127.0.0.1:0 \
  -f "$TMP/cluster.yaml" "${SERVE_ARGS[@]}" >"$TMP/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do grep -q "listening on" "$TMP/server.log" 2>/dev/null && break; sleep 0.2; done
PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.log")
/usr/bin/python3 "$ROOT/bench/serve_churn.py" --port "$PORT" --pid "$PID" --data "$TMP/data" \
  --seconds "$SECONDS_" --writers "$WRITERS"
