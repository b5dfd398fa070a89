#!/usr/bin/env bash
# Checks that every C++ file of src/, tests/, bench/ and fuzz/ is formatted as
# .clang-format says (clang-format --dry-run -Werror): prints each file that is not
# and fails. With --fix, formats them in place instead.
# Usage: scripts/check-format.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format is not installed" >&2; exit 1; }
# Tracked files only: build trees and generated sources are not ours to format.
mapfile -d '' files < <(git ls-files -z -- 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' \
  'bench/*.cc' 'bench/*.h' 'fuzz/*.cc' 'fuzz/*.h')
if [ "${1:-}" = --fix ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -P2 -n32 clang-format -i
  exit 0
fi
# One file per line, not clang-format's diagnostics for every changed line.
# (xargs fails when any file is not formatted: the list below decides.)
bad=$({ printf '%s\0' "${files[@]}" | xargs -0 -P2 -n32 clang-format --dry-run -Werror 2>&1 || true; } |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
if [ -n "$bad" ]; then
  echo "not formatted as .clang-format says (scripts/check-format.sh --fix formats them):"
  echo "$bad"
  exit 1
fi
echo "format: ${#files[@]} files formatted"
