#!/usr/bin/env bash
# Same decisions, byte for byte: runs a muster build over a fixed set of inputs and
# compares what it decided with the golden digests in bench/golden/decisions.sha256
# (recorded from the build named in that file's header). Every engine optimisation
# must leave this unchanged.
#
# Inputs: the examples (cluster + queues + jobs, with and without examples/config),
# every conformance case (../shared/conformance/cases and tests/conformance/cases,
# with their args), `muster gen` clusters and workloads (seeds, cohorts, priorities
# that preempt, gangs, rack/block topology, NUMA, no queues), the openb and Philly
# traces (bounded), and the engine scenarios of `muster bench` at small
# scales (--decisions: decision log, final workload states, plans), admission-1k-cq
# among them. Each simulate output is the -o json result plus --log-decisions.
#
# Usage: bench/decisions_check.sh [--muster PATH] [--out DIR] [--record] [--only REGEX]
#                                  [--no-shortcuts-too]
#   --out DIR   keep the outputs there (default: a temporary directory, removed);
#               diff two such directories to see what changed
#   --record    write bench/golden/decisions.sha256 instead of comparing
#   --only RE   run only the cases whose name matches RE (compare those only)
#   --no-shortcuts-too
#               also run every input with --no-shortcuts (admission without the
#               shortcuts that must not change a decision: sleeping queues, shared
#               flavor assignments, caches; outputs under DIR/no-shortcuts/, not
#               digested) and check it decided the same: results byte for byte, each
#               workload's decisions at each instant and every line but Pending in
#               the same order (pending decisions of different workloads within an
#               instant may come in another order). Listed as SHORTCUT when not.
# Exit 0 when every digest matches (and every --no-shortcuts run agrees), 1 otherwise
# (the differing cases are listed).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${MUSTER_SHARED_DIR:-$ROOT/../shared}
MUSTER="$ROOT/build/muster"
OUT=""
RECORD=0
ONLY=""
NO_SHORTCUTS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --muster) MUSTER=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --record) RECORD=1; shift ;;
    --only) ONLY=$2; shift 2 ;;
    --no-shortcuts-too) NO_SHORTCUTS=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
MUSTER=$(cd "$(dirname "$MUSTER")" && pwd)/$(basename "$MUSTER")
GOLDEN="$ROOT/bench/golden/decisions.sha256"
KEEP=1
if [ -z "$OUT" ]; then
  OUT=$(mktemp -d /tmp/muster-decisions.XXXXXX)
  KEEP=0
fi
mkdir -p "$OUT"
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$OUT"; }
trap cleanup EXIT
GEN="$OUT/inputs"
mkdir -p "$GEN"
NS="$OUT/no-shortcuts"
if [ "$NO_SHORTCUTS" = 1 ]; then
  rm -rf "$NS"
  mkdir -p "$NS"
fi

selected() { [ -z "$ONLY" ] || [[ "$1" =~ $ONLY ]]; }

# simulate NAME ARGS...: the result and the decision log, in one file.
simulate() {
  local name=$1
  shift
  selected "$name" || return 0
  local rc=0
  timeout 600 "$MUSTER" simulate "$@" -o json --log-decisions >"$OUT/$name.json" \
    2>"$OUT/$name.log" || rc=$?
  [ "$rc" = 0 ] || echo "exit status $rc" >>"$OUT/$name.log"
  [ "$NO_SHORTCUTS" = 1 ] || return 0
  rc=0
  timeout 600 "$MUSTER" simulate "$@" -o json --log-decisions --no-shortcuts \
    >"$NS/$name.json" 2>"$NS/$name.log" || rc=$?
  [ "$rc" = 0 ] || echo "exit status $rc" >>"$NS/$name.log"
}

# bench NAME SCENARIO SCALE: what the scenario decided.
bench() {
  local name=$1
  selected "$name" || return 0
  local rc=0
  timeout 600 "$MUSTER" bench "$2" --scales "$3" --shared "$SHARED" \
    --decisions "$OUT/$name.decisions" >/dev/null 2>"$OUT/$name.err" || rc=$?
  [ "$rc" = 0 ] || echo "exit status $rc" >>"$OUT/$name.decisions"
  [ "$NO_SHORTCUTS" = 1 ] || return 0
  rc=0
  timeout 600 "$MUSTER" bench "$2" --scales "$3" --shared "$SHARED" --no-shortcuts \
    --decisions "$NS/$name.decisions" >/dev/null 2>"$NS/$name.err" || rc=$?
  [ "$rc" = 0 ] || echo "exit status $rc" >>"$NS/$name.decisions"
}

# gen NAME CLUSTER-ARGS -- WORKLOAD-ARGS: generated inputs (kept with the outputs:
# a generator change shows up as a changed input, not only as changed decisions).
gen() {
  local name=$1
  shift
  selected "$name" || return 0
  local cargs=() wargs=()
  while [ "$1" != "--" ]; do cargs+=("$1"); shift; done
  shift
  wargs=("$@")
  "$MUSTER" gen cluster "${cargs[@]}" -o "$GEN/$name-cluster.yaml"
  "$MUSTER" gen workload "${wargs[@]}" -o "$GEN/$name-workload.yaml"
  simulate "$name" -f "$GEN/$name-cluster.yaml" -f "$GEN/$name-workload.yaml" --check-invariants
}

cd "$ROOT"
simulate examples -f examples/cluster -f examples/queues -f examples/jobs
simulate examples-config -f examples/cluster -f examples/queues -f examples/jobs -f examples/config

for dir in "$SHARED/conformance/cases" "$ROOT/tests/conformance/cases"; do
  [ -d "$dir" ] || continue
  for c in "$dir"/*/; do
    c=${c%/}
    args=$(/usr/bin/python3 -c 'import sys, yaml
e = yaml.safe_load(open(sys.argv[1])) or {}
print("\n".join(str(a) for a in (e.get("args") or [])))' "$c/expect.yaml")
    mapfile -t extra <<<"$args"
    [ -z "$args" ] && extra=()
    simulate "conformance-$(basename "$c")" -f "$c/input" "${extra[@]}"
  done
done

# Generated clusters and workloads: the generator's classes (small one-pod jobs,
# medium whole-node gangs, large rack/block-required gangs), three priorities (so
# later arrivals preempt), queues in cohorts (borrowing, reclaim). Several of these
# ended in "scheduling did not settle" (preemption loops, fixed since: see
# docs/architecture.md, "A preemption holds what it made").
gen gen-8cq-2cohorts --nodes 64 --racks 8 --blocks 2 --cluster-queues 8 --cohorts 2 --seed 1 -- \
  --jobs 400 --queues 8 --rack-gpus 64 --mean-interarrival 30 --seed 1
gen gen-16cq-1cohort --nodes 48 --racks 6 --blocks 3 --cluster-queues 16 --cohorts 1 --seed 2 -- \
  --jobs 500 --queues 16 --rack-gpus 64 --mix small:0.7,medium:0.25,large:0.05 \
  --mean-interarrival 10 --seed 7
gen gen-32cq-8cohorts --nodes 128 --numa 2 --racks 16 --blocks 4 --cluster-queues 32 --cohorts 8 \
  --seed 3 -- --jobs 800 --queues 32 --rack-gpus 64 --mix small:0.8,medium:0.2 \
  --mean-interarrival 5 --seed 3
gen gen-burst-preempt --nodes 32 --racks 4 --cluster-queues 4 --cohorts 2 --seed 4 -- \
  --jobs 600 --queues 4 --rack-gpus 64 --mix small:0.6,medium:0.4 --mean-interarrival 0.5 --seed 11
gen gen-noqueue-topology --nodes 96 --numa 2 --racks 12 --blocks 3 --seed 5 -- \
  --jobs 300 --rack-gpus 64 --mix small:0.5,medium:0.3,large:0.2 --mean-interarrival 60 --seed 5
gen gen-8cq-4cohorts --nodes 48 --racks 6 --cluster-queues 8 --cohorts 4 --seed 7 -- \
  --jobs 400 --queues 8 --rack-gpus 64 --mean-interarrival 5 --seed 3
gen gen-4gpu-nodes --nodes 40 --gpus-per-node 4 --racks 5 --cluster-queues 5 --cohorts 5 \
  --seed 6 -- --jobs 300 --queues 5 --gpus-per-node 4 --rack-gpus 32 --mean-interarrival 20 --seed 6

# Traces: openb whole (8,152 pods) and a bounded prefix of its multi-GPU variant;
# Philly through sim-philly below (its first 5% of jobs: the trace's first days
# hold almost nothing, so --until would bound little but print 82,000 jobs).
simulate trace-openb-default --trace "openb:$SHARED/traces/alibaba-openb"
simulate trace-openb-multigpu50 \
  --trace "openb:$SHARED/traces/alibaba-openb/openb_pod_list_multigpu50.csv" --until 72h

# The engine scenarios of `muster bench` at small scales.
bench bench-admission-1k-cq-x0.02 admission-1k-cq 0.02
bench bench-admission-1k-cq-x0.1 admission-1k-cq 0.1
bench bench-placement-5k-x0.02 placement-5k 0.02
bench bench-gang-10k-x0.02 gang-10k 0.02
bench bench-kueue-baseline-x0.2 kueue-baseline 0.2
bench bench-sim-philly-x0.05 sim-philly 0.05

# Digests: inputs generated by this build and every output, by name.
DIGESTS="$OUT/decisions.sha256"
(cd "$OUT" && find . -path ./no-shortcuts -prune -o -type f ! -name decisions.sha256 \
  ! -name '*.err' -print | sed 's|^\./||' |
  LC_ALL=C sort | xargs sha256sum) >"$DIGESTS"

# The same decisions without the admission shortcuts (--no-shortcuts-too).
shortcuts_fail=0
if [ "$NO_SHORTCUTS" = 1 ]; then
  /usr/bin/python3 "$ROOT/bench/same_decisions.py" "$OUT" "$NS" || shortcuts_fail=1
fi

if [ "$RECORD" = 1 ]; then
  mkdir -p "$(dirname "$GOLDEN")"
  {
    echo "# bench/decisions_check.sh --record: $(git -C "$ROOT" rev-parse --short HEAD)" \
      "($(git -C "$ROOT" log -1 --format=%s | cut -c1-60))"
    cat "$DIGESTS"
  } >"$GOLDEN"
  echo "recorded $(wc -l <"$DIGESTS") digests in $GOLDEN"
  exit "$shortcuts_fail"
fi

fail=$shortcuts_fail
checked=0
while read -r sum file; do
  want=$(awk -v f="$file" '$2 == f { print $1 }' "$GOLDEN")
  checked=$((checked + 1))
  if [ -z "$want" ]; then
    echo "NEW      $file (no golden digest)"
    fail=1
  elif [ "$want" != "$sum" ]; then
    echo "CHANGED  $file"
    fail=1
  fi
done <"$DIGESTS"
if [ -z "$ONLY" ]; then
  while read -r sum file; do
    [ "$sum" = "#" ] && continue
    grep -q "  $file\$" "$DIGESTS" || { echo "MISSING  $file"; fail=1; }
  done <"$GOLDEN"
fi
if [ "$fail" = 0 ]; then
  echo "decisions unchanged: $checked outputs match $(head -1 "$GOLDEN" | sed 's/^# //')"
else
  echo "decisions CHANGED (outputs in $OUT; keep them with --out DIR to diff)"
  [ "$KEEP" = 1 ] || KEEP=1
fi
exit "$fail"
