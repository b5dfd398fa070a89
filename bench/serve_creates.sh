#!/usr/bin/env bash
# Durable creates per second of `muster serve` with 1 and with 32 keep-alive clients,
# for each binary given, alternating them round by round in one run (so their ratio
# is measured under the same load): bench/serve_creates.py does the POSTs. Each line
# also gives the server's CPU seconds over the run and per 10,000 creates.
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
HZ=$(getconf CLK_TCK)
# The server's CPU time so far (user + system, in clock ticks): what a create costs
# it, whatever the machine's other load does to the wall-clock figures.
server_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$SERVE_PID/stat"; }
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
      cpu_before=$(server_cpu_ticks)
      result=$(/usr/bin/python3 "$ROOT/bench/serve_creates.py" \
        --port "$SERVE_PORT" --clients "$clients" --seconds "$SECONDS_")
      cpu=$(($(server_cpu_ticks) - cpu_before))
      creates=$(sed -n 's/.*"creates": \([0-9]*\).*/\1/p' <<<"$result")
      echo "round $round $muster $result server_cpu_s $(awk -v t="$cpu" -v h="$HZ" \
        -v n="$creates" 'BEGIN { printf "%.2f per_10k_creates %.2f", t / h,
                                 (n > 0 ? t / h * 10000 / n : 0) }') load $(cut -d' ' -f1 /proc/loadavg)"
      serve_stop
    done
  done
done
