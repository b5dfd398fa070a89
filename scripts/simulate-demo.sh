#!/usr/bin/env bash
# muster's main job on its embedded default: build, validate the examples, show
# what muster understood of them, then run them through the engine in virtual time.
set -euo pipefail
cd "$(dirname "$0")/.."
NINJA_TARGETS=muster scripts/build.sh build
echo "== muster validate -f examples/"
build/muster validate -f examples/ && echo "all example manifests are valid"
echo
echo "== muster summary -f examples/"
build/muster summary -f examples/ | grep -v '^examples/.*warning' || true
echo
echo "== muster simulate -f examples/"
build/muster simulate -f examples/
