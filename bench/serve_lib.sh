# Sourced by the `muster serve` benchmarks (serve_creates.sh, serve_churn.sh,
# serve_emulated.sh): start a server with the emulated executor on a free port and
# stop it again. SERVE_PID is the running server (empty when none), SERVE_PORT its port.

SERVE_PID=""
SERVE_PORT=""

# serve_start MUSTER LOG DATA [serve args...]: starts `MUSTER serve` on data directory
# DATA, its output in LOG, and waits until it listens (5 minutes at most: loading a
# large store takes a while); on failure prints the log's tail and exits.
serve_start() {
  local muster=$1 log=$2 data=$3 started=$SECONDS
  shift 3
  "$muster" serve --executor emulated --no-local-node --data "$data" --listen 127.0.0.1:0 \
    "$@" >"$log" 2>&1 &
  SERVE_PID=$!
  SERVE_PORT=""
  while [ -z "$SERVE_PORT" ]; do
    SERVE_PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$log" 2>/dev/null |
      head -1 || true)
    if ! kill -0 "$SERVE_PID" 2>/dev/null || [ $((SECONDS - started)) -gt 300 ]; then
      echo "the server did not start:" >&2
      tail -20 "$log" >&2
      exit 1
    fi
    if [ -z "$SERVE_PORT" ]; then sleep 0.1; fi
  done
}

# serve_stop [SIGNAL]: stops the running server (SIGTERM by default) and waits for it.
serve_stop() {
  [ -n "$SERVE_PID" ] || return 0
  kill "-${1:-TERM}" "$SERVE_PID" 2>/dev/null || true
  wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=""
}
