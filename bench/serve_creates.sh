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
. "$ROOT/bench/serve_lib.sh"
TMP=$(mktemp -d /tmp/muster-creates.XXXXXX)
cleanup() {
  serve_stop
  rm -rf "$TMP"
}
trap cleanup EXIT
for round in $(seq 1 "$ROUNDS"); do
  for muster in "$@"; do
    for clients in 1 32; do
      rm -rf "$TMP/data" "$TMP/server.log"
      serve_start "$muster" "$TMP/server.log" "$TMP/data"
      echo "round $round $muster $(/usr/bin/python3 "$ROOT/bench/serve_creates.py" \
        --port "$SERVE_PORT" --clients "$clients" --seconds "$SECONDS_")"
      serve_stop
    done
  done
done
