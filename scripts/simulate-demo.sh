#!/usr/bin/env bash
# muster simulate on the examples: build, validate the simulation examples, show
# what muster understood of them, then run them through the engine in virtual time.
# (examples/serve/ is the server demo's own cluster: see scripts/demo.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
NINJA_TARGETS=muster scripts/build.sh build
echo "== muster validate (examples/{cluster,queues,jobs,config})"
build/muster validate -f examples/cluster -f examples/queues -f examples/jobs -f examples/config && echo "all example manifests are valid"
echo
echo "== muster summary"
build/muster summary -f examples/cluster -f examples/queues -f examples/jobs -f examples/config | grep -v '^examples/.*warning' || true
echo
echo "== muster simulate"
build/muster simulate -f examples/cluster -f examples/queues -f examples/jobs -f examples/config
