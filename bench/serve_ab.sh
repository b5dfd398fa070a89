#!/usr/bin/env bash
# Durable creates per second of `muster serve` measured with ApacheBench (`ab -k`, a C
# client, so that on a small machine the figure is the server's and not a Python
# client's): --requests POSTs of one small ConfigMap with metadata.generateName (so
# every POST creates a new object; each is acknowledged only once on disk) over
# --clients keep-alive connections. For each binary given, alternating them round by
# round in one run (their ratio is then measured under the same load), prints one line:
# creates/s, failed and non-201 responses, and the latency percentiles ab reports.
# With --perf SECONDS, the last binary's server of the last round is also sampled by
# `perf record -g` (or $PERF_ARGS) for that long (from one second into the run) into perf.data here.
#
# Usage: bench/serve_ab.sh [--rounds 2] [--requests 20000] [--clients 32] [--perf S]
#                          MUSTER...
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=2
REQUESTS=20000
CLIENTS=32
PERF=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --perf) PERF=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--rounds N] [--requests N] [--clients N] [--perf S] MUSTER..." >&2; exit 2; }
command -v ab >/dev/null || { echo "ab not found (apt-get install apache2-utils)" >&2; exit 2; }
. "$ROOT/bench/serve_lib.sh"
TMP=$(mktemp -d /tmp/muster-ab.XXXXXX)
cleanup() {
  serve_stop
  rm -rf "$TMP"
}
trap cleanup EXIT
printf '%s' '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"cm-"},"data":{"k":"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"}}' \
  >"$TMP/body.json"
last="${*: -1}"
for round in $(seq 1 "$ROUNDS"); do
  for muster in "$@"; do
    rm -rf "$TMP/data" "$TMP/server.log"
    serve_start "$muster" "$TMP/server.log" "$TMP/data"
    perf_pid=""
    if [ "$PERF" != 0 ] && [ "$round" = "$ROUNDS" ] && [ "$muster" = "$last" ]; then
      (sleep 1; exec perf record ${PERF_ARGS:--g} -o perf.data -p "$SERVE_PID" -- sleep "$PERF") \
        >"$TMP/perf.log" 2>&1 &
      perf_pid=$!
    fi
    ab -k -q -c "$CLIENTS" -n "$REQUESTS" -p "$TMP/body.json" -T application/json \
      "http://127.0.0.1:$SERVE_PORT/api/v1/namespaces/default/configmaps" >"$TMP/ab.txt" 2>&1 ||
      { cat "$TMP/ab.txt" >&2; exit 1; }
    [ -z "$perf_pid" ] || wait "$perf_pid" || true
    awk -v round="$round" -v muster="$muster" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
      /^Requests per second/ { rps = $4 }
      /^Failed requests/ { failed = $3 }
      /^Non-2xx responses/ { non2xx = $3 }
      /^  50%/ { p50 = $2 } /^  90%/ { p90 = $2 } /^  99%/ { p99 = $2 } /^ 100%/ { pmax = $2 }
      END { printf "round %s %s load %s: %s creates/s, failed %d, non-2xx %d, ms p50 %s p90 %s p99 %s max %s\n",
              round, muster, load, rps, failed, non2xx, p50, p90, p99, pmax }' "$TMP/ab.txt"
    serve_stop
  done
done
