#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over source files of src/ (and the
# headers of src/ they include), with the compile commands of a configured build
# tree; any warning fails. The diagnostics are printed once each (a header's are
# found from every file that includes it).
# Usage: scripts/clang-tidy.sh [--since REV] [build-dir] [jobs]   (default: build, 2)
#   --since REV: only the .cc files changed in REV..HEAD, and the .cc file beside
#   each changed header (a whole-tree run costs ~20 CPU-minutes; CI checks what the
#   latest commits changed, see scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
since=""
if [ "${1:-}" = --since ]; then
  since="$2"
  shift 2
fi
dir="${1:-build}"
jobs="${2:-2}"
[ -f "$dir/compile_commands.json" ] ||
  { echo "no $dir/compile_commands.json: configure $dir first (scripts/build.sh)" >&2; exit 1; }
log="$dir/clang-tidy.log"
files="$dir/clang-tidy.files"
# The generated dashboard assets are not tracked, so not listed.
if [ -n "$since" ]; then
  git diff --name-only --diff-filter=d "$since" HEAD -- 'src/*.cc' 'src/*.h' |
    sed 's/\.h$/.cc/' | sort -u | while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done >"$files"
  what="$(wc -l <"$files") files of src/ changed since $(git rev-parse --short "$since")"
else
  git ls-files -- 'src/*.cc' >"$files"
  what="$(wc -l <"$files") files of src/"
fi
# Four files per clang-tidy process.
if tr '\n' '\0' <"$files" | xargs -0 -r -P"$jobs" -n4 clang-tidy -p "$dir" --quiet \
  --warnings-as-errors='*' --header-filter="^$root/src/" >"$log" 2>&1; then
  echo "clang-tidy: $what clean"
  exit 0
fi
# A diagnostic is its "file:line:col: warning|error: ..." line and the two lines of
# source and caret under it; print each once.
grep -E -A2 "^/.*:[0-9]+:[0-9]+: (warning|error): " "$log" | grep -v '^--$' |
  awk '/^\/.*:[0-9]+:[0-9]+: (warning|error): / { key = $0; keep = !(key in seen); seen[key] = 1 }
       keep' | cut -c1-300
echo "clang-tidy found the problems above in $what ($dir/clang-tidy.log has its whole output)"
exit 1
