#!/usr/bin/env bash
# Runs the test binaries of the threaded code (serve's HTTP server, scheduler
# controller, garbage collector, store health monitor; kube's controller, reflectors,
# leader election, webhook and dashboard servers) from a ThreadSanitizer tree:
#   scripts/build.sh build-tsan -DMUSTER_SANITIZE=thread -DMUSTER_BENCH=OFF \
#     -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"   (NINJA_TARGETS="server_test kube_test")
# Usage: scripts/tsan-tests.sh [build-dir]   (default build-tsan)
# A failing binary's first report is printed again after its log (a log tail shows
# only TSan's summary).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-tsan}"

# halt_on_error=0: every report of a run is in its log, the exit status is still 66.
# die_after_fork=0: the executors fork from a threaded process and the child only
# sets itself up and execs (process_launch.cc), which TSan does not need to follow.
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 die_after_fork=0 ${TSAN_OPTIONS:-}"

# Tests left out, and why (the ASan + UBSan tree and the plain one still run them):
# - HttpFuzzReplayTest: 20,000 requests through the parser and handler on one thread
#   (no thread of ours runs), ~3 minutes under TSan.
server_filter='-HttpFuzzReplayTest.*'
kube_filter='*'

run() {
  local bin=$1 filter=$2
  local log="$bin.tsan.log"
  # setarch -R: no address randomisation, so TSan's fixed shadow layout always fits
  # (kernels with high vm.mmap_rnd_bits otherwise fail with "unexpected memory mapping").
  if setarch "$(uname -m)" -R "$bin" --gtest_filter="$filter" >"$log" 2>&1; then
    echo "ok   $(basename "$bin") (TSan): $(grep -o "PASSED.*" "$log")"
  else
    cat "$log"
    echo "FAIL $(basename "$bin") (TSan); the first report again (a log tail shows only the summary):"
    grep -m1 -A40 -E "WARNING: ThreadSanitizer|ThreadSanitizer:|\[  FAILED  \]" "$log" | cut -c1-220
    return 1
  fi
}

# One after the other: side by side on two cores, HttpServerTest's 5 s client
# timeouts were reached under TSan's slowdown (load, not a race).
status=0
run "$dir/server_test" "$server_filter" || status=1
run "$dir/kube_test" "$kube_filter" || status=1
[ "$status" = 0 ] && echo "TSan tests passed"
exit "$status"
