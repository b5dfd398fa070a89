#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over every source file of src/
# (and the headers of src/ they include), with the compile commands of a configured
# build tree; any warning fails. The diagnostics are printed once each (a header's are
# found from every file that includes it).
# Usage: scripts/clang-tidy.sh [build-dir] [jobs]   (default: build, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir="${1:-build}"
jobs="${2:-2}"
[ -f "$dir/compile_commands.json" ] ||
  { echo "no $dir/compile_commands.json: configure $dir first (scripts/build.sh)" >&2; exit 1; }
log="$dir/clang-tidy.log"
# The generated dashboard assets are not tracked, so not listed; four files per
# clang-tidy process.
if git ls-files -z -- 'src/*.cc' | xargs -0 -P"$jobs" -n4 clang-tidy -p "$dir" --quiet \
  --warnings-as-errors='*' --header-filter="^$root/src/" >"$log" 2>&1; then
  echo "clang-tidy: $(git ls-files -- 'src/*.cc' | wc -l) files of src/ clean"
  exit 0
fi
# A diagnostic is its "file:line:col: warning|error: ..." line and the two lines of
# source and caret under it; print each once.
grep -E -A2 "^/.*:[0-9]+:[0-9]+: (warning|error): " "$log" | grep -v '^--$' |
  awk '/^\/.*:[0-9]+:[0-9]+: (warning|error): / { key = $0; keep = !(key in seen); seen[key] = 1 }
       keep' | cut -c1-300
echo "clang-tidy found the problems above ($dir/clang-tidy.log has its whole output)"
exit 1
