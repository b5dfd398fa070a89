#!/usr/bin/env bash
# Durable creates per second of `muster serve` with 1 and with 32 keep-alive clients,
# for each binary given, alternating them round by round in one run (so their ratio
# is measured under the same load): bench/serve_creates.py does the POSTs.
# Usage: bench/serve_creates.sh [--rounds 2] [--seconds 10] MUSTER...
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=2
SECONDS_=10
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--rounds N] [--seconds S] MUSTER..." >&2; exit 2; }
TMP=$(mktemp -d /tmp/muster-creates.XXXXXX)
PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
for round in $(seq 1 "$ROUNDS"); do
  for muster in "$@"; do
    for clients in 1 32; do
      rm -rf "$TMP/data" "$TMP/server.log"
      "$muster" serve --executor emulated --no-local-node --data "$TMP/data" \
        --listen 127.0.0.1:0 >"$TMP/server.log" 2>&1 &
      PID=$!
      for _ in $(seq 1 100); do grep -q "listening on" "$TMP/server.log" 2>/dev/null && break; sleep 0.1; done
      PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.log")
      echo "round $round $muster $(/usr/bin/python3 "$ROOT/bench/serve_creates.py" --port "$PORT" \
        --clients "$clients" --seconds "$SECONDS_")"
      kill "$PID"; wait "$PID" 2>/dev/null || true
      PID=""
    done
  done
done
