#!/usr/bin/env bash
# Runs every test binary of an ASan + UBSan tree:
#   scripts/build.sh build-asan -DMUSTER_SANITIZE=ON -DMUSTER_BENCH=OFF \
#     -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1
# Usage: scripts/asan-tests.sh [build-dir]   (default build-asan)
# One process per gtest shard, not per test (ctest starts one per test: ~580 starts of
# large ASan binaries cost minutes), four at a time. Each binary runs as two shards: the
# slowest binary bounds the stage, and sim_test alone took 230 s in one process (its
# two CohortChurn seed sweeps ~100 s each under ASan), against ~60 s for the next.
# A failing shard's log is printed, then its first report again (a log tail shows only
# the legend).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-asan}"
shards=2
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1 ${UBSAN_OPTIONS:-}"

run_shard() {
  local bin=$1 shard=$2 total=$3
  local log="$bin.shard$shard.log"
  if GTEST_TOTAL_SHARDS=$total GTEST_SHARD_INDEX=$shard "$bin" >"$log" 2>&1; then
    echo "ok   $(basename "$bin") shard $shard/$total: $(grep -o "PASSED.*" "$log")"
  else
    cat "$log"
    echo "FAIL $(basename "$bin") shard $shard/$total; the first report again:"
    grep -m1 -A24 -E "ERROR: (Address|Leak)Sanitizer|runtime error|\[  FAILED  \]" "$log" | cut -c1-220
    return 1
  fi
}
export -f run_shard

for bin in "$dir"/*_test; do
  for ((shard = 0; shard < shards; ++shard)); do echo "$bin $shard $shards"; done
done | xargs -P4 -L1 bash -c 'run_shard "$@"' _
echo "sanitizer tests passed"
