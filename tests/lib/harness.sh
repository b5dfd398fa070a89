# The checks the shell tests share: source it, then
#   ok NAME / bad NAME [DETAIL]      record a pass or a failure (DETAIL indented, cut
#                                    to HARNESS_DETAIL_LINES lines, 20 by default)
#   check NAME PATTERN CMD...        CMD succeeds and its output matches PATTERN (ERE)
#   check_fails NAME PATTERN CMD...  CMD fails and its output matches PATTERN
#   check_exit NAME CODE PATTERN CMD...  CMD exits with CODE, output matches PATTERN
#   finish                           prints "N passed, M failed"; fails if any failed
# shellcheck shell=bash
PASS=0
FAIL=0
HARNESS_DETAIL_LINES=${HARNESS_DETAIL_LINES:-20}

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
bad() {
  FAIL=$((FAIL + 1))
  echo "FAIL $1"
  [ -n "${2:-}" ] && sed 's/^/     /' <<<"$2" | head -"$HARNESS_DETAIL_LINES"
  return 0
}
check() {
  local name=$1 pattern=$2
  shift 2
  local out
  if out=$("$@" 2>&1) && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else bad "$name" "$out"; fi
}
check_fails() {
  local name=$1 pattern=$2
  shift 2
  local out
  if ! out=$("$@" 2>&1) && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else bad "$name" "$out"; fi
}
check_exit() {
  local name=$1 code=$2 pattern=$3
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else bad "$name" "exit $rc: $out"; fi
}
finish() {
  echo "$PASS passed, $FAIL failed"
  [ "$FAIL" -eq 0 ]
}
