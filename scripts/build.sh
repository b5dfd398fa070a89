#!/usr/bin/env bash
# Configures and builds muster into build/ (Release with debug info).
# Usage: scripts/build.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
dir="${1:-build}"
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# NINJA_TARGETS: the targets, separated by spaces (default: all).
read -r -a targets <<<"${NINJA_TARGETS:-all}"
ninja -C "$dir" "${targets[@]}"
