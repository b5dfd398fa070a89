#!/usr/bin/env bash
# End-to-end tests of the muster binary: exit codes, diagnostics format and
# byte-identical simulation output. Usage: run_cli_tests.sh path/to/muster
set -uo pipefail
muster="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# The simulation examples (examples/serve/ is the server demo's own cluster).
sim_examples=(-f "$root/examples/cluster" -f "$root/examples/queues" -f "$root/examples/jobs" -f "$root/examples/config")
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

check() {  # check NAME CONDITION-EXIT-STATUS
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "ok   $1";
  else failed=$((failed + 1)); echo "FAIL $1"; fi
}

"$muster" validate "${sim_examples[@]}" >"$tmp/v.out" 2>&1
check "examples validate with exit 0" $?

# Volcano's own scheduler configuration (seed 000) is accepted in place of muster's, with a
# warning for each plugin muster does not act on.
"$muster" validate -f "$root/examples/cluster" -f "$root/examples/queues" -f "$root/examples/jobs" \
  -f "$root/examples/volcano-config" >"$tmp/vc.out" 2>&1 &&
  grep -q 'volcano-scheduler.conf: tiers\[1\].plugins\[3\].name: warning: nodeorder' "$tmp/vc.out"
check "Volcano's volcano-scheduler.conf validates and warns about nodeorder" $?
# muster serve --config takes it too (its warnings, then which configuration it runs),
# and does not start on a configuration with errors.
timeout 5 "$muster" serve --data "$tmp/serve-config" --listen 127.0.0.1:0 \
  --config "$root/examples/volcano-config/volcano-scheduler.conf.yaml" >"$tmp/sc.out" 2>&1
grep -q 'warning: nodeorder' "$tmp/sc.out" &&
  grep -q 'muster serve: scheduler configuration from .*(volcano-scheduler.conf)' "$tmp/sc.out"
check "muster serve --config reads Volcano's volcano-scheduler.conf" $?
printf 'actions: "enqueue, allocate"\ntiers: 3\n' >"$tmp/bad-volcano.yaml"
"$muster" serve --data "$tmp/serve-bad" --listen 127.0.0.1:0 --config "$tmp/bad-volcano.yaml" \
  >"$tmp/sb.out" 2>&1
[ $? -eq 1 ] && grep -q 'bad-volcano.yaml:2: volcano-scheduler.conf: tiers: must be a list' "$tmp/sb.out"
check "muster serve --config with an error exits 1 naming file, line and field" $?

"$muster" validate -f "$here/bad/bad-quota.yaml" >"$tmp/bad.out" 2>&1
rc=$?
[ $rc -eq 1 ]; check "a bad quantity exits 1" $?
grep -q 'bad-quota.yaml:13: ClusterQueue broken: spec.resourceGroups\[0\].flavors\[0\].resources\[0\].nominalQuota: "12x" is not a quantity' "$tmp/bad.out"
check "the diagnostic names file, line, object and field" $?

"$muster" validate -f "$tmp/does-not-exist.yaml" >"$tmp/missing.out" 2>&1
[ $? -eq 1 ]; check "a missing file exits 1" $?

printf 'apiVersion: v1\nkind: Node\nmetadata: [\n' | "$muster" validate -f - >"$tmp/stdin.out" 2>&1
[ $? -eq 1 ]; check "malformed YAML on stdin exits 1 without crashing" $?

"$muster" simulate --no-such-flag >/dev/null 2>&1
[ $? -eq 2 ]; check "bad usage exits 2" $?

"$muster" simulate "${sim_examples[@]}" -o json --seed 7 >"$tmp/a.json" 2>"$tmp/a.err"
rc_a=$?
"$muster" simulate "${sim_examples[@]}" -o json --seed 7 >"$tmp/b.json" 2>"$tmp/b.err"
[ $rc_a -eq 0 ] && cmp -s "$tmp/a.json" "$tmp/b.json"
check "simulate output is byte-identical for the same inputs and seed" $?

python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kind"]=="SimulationResult"; assert d["workloads"]==sorted(d["workloads"],key=lambda w:w["name"])' "$tmp/a.json"
check "simulate -o json prints one SimulationResult sorted by name" $?

"$muster" simulate -f "$here/bad/bad-quota.yaml" >/dev/null 2>"$tmp/sim-bad.err"
[ $? -eq 1 ] && grep -q 'is not a quantity' "$tmp/sim-bad.err"
check "simulate on invalid input exits 1 with validate's messages" $?

# Valid kinds that run no workload in a simulation are named, not dropped silently.
cat >"$tmp/cron.yaml" <<'EOF'
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: busybox}]
EOF
"$muster" simulate "${sim_examples[@]}" -f "$tmp/cron.yaml" >/dev/null 2>"$tmp/sim-cron.err"
[ $? -eq 0 ] && grep -q 'cron.yaml:1: CronJob default/nightly: warning: not simulated' "$tmp/sim-cron.err"
check "simulate warns that a CronJob is not simulated" $?

"$muster" summary "${sim_examples[@]}" >"$tmp/summary.out" 2>&1
[ $? -eq 0 ] && grep -q 'team-a/llm-pretrain' "$tmp/summary.out"
check "summary lists the example jobs" $?

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
