#!/usr/bin/env bash
# Builds muster and runs every test: unit tests (ctest), the CLI tests, the
# conformance suite, a sanitizer (ASan + UBSan) build of the unit tests, a
# ThreadSanitizer build of the threaded code's tests, and a bounded fuzzing run of the
# manifest decoder.
# Set MUSTER_SKIP_SANITIZE=1 / MUSTER_SKIP_FUZZ=1 to skip the slow parts locally.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# Each stage's header says when it began (minutes:seconds into the run), so a CI log
# shows where the time goes.
stage() { printf '== %s [%d:%02d]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
shared="${MUSTER_SHARED:-$root/../shared}"
# A failing stage ends the run: the background builds and clang-tidy end with it
# instead of writing into a tree CI is already removing.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
background=()
trap 'for p in "${background[@]}"; do kill_tree "$p"; done' EXIT

scripts/install-deps.sh
# python3-torch is large and only the DDP test needs it: it installs while muster builds.
mkdir -p build
scripts/install-torch.sh >build/install-torch.log 2>&1 &
torch_install=$!

# Line tables only (-g1): the full debug info of the test binaries (kube_test alone is
# >100 MB) costs CI minutes in compile and link time. -O1, not the -O2 users build:
# measured on three of the heaviest files (stop 24), 25% less compile CPU, which is
# what lets the ThreadSanitizer tree into CI's hour; the sanitizer trees test -O0/-O1.
# MUSTER_UNITY: the layer libraries and the test binaries compile in batches of 8 files
# (CMakeLists.txt), in all three trees; MUSTER_UNITY=OFF builds file by file, as
# developers do. In a batch a test's helper call can bind to another file's overload
# of the same name (runtime_test's Cpu went to queueing_test's), so before anything
# builds, scripts/check-unity-tests.py refuses two test files that define one.
unity="-DMUSTER_UNITY=${MUSTER_UNITY:-ON}"
python3 scripts/check-unity-tests.py
scripts/build.sh build -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" "$unity"

# A build whose status file, build/NAME.rc, appears only once it has ended (written
# aside, then renamed: a redirection on the command itself created it empty at the
# start, and a wait took the running build for a failed one).
build_logged() {
  local name=$1 rc=0
  shift
  rm -f "build/$name.rc"
  "$@" >"build/$name.log" 2>&1 || rc=1
  echo "$rc" >"build/$name.rc.tmp" && mv "build/$name.rc.tmp" "build/$name.rc"
}
# Waits until build_logged NAME (in the background job $2) has ended. Its status file,
# not `wait`, says so: a run forks thousands of processes under a pid_max of 32768, and
# once a job's pid is reused bash has forgotten the child ("wait: pid N is not a child
# of this shell", a clean run that failed so).
await_logged() {
  while [ ! -f "build/$1.rc" ] && kill -0 "$2" 2>/dev/null; do sleep 5; done
}
logged_ok() { [ "$(cat "build/$1.rc" 2>/dev/null)" = 0 ]; }
# await_logged, then fails the run with the tail of its log unless it succeeded.
await_build() {
  await_logged "$1" "$2"
  logged_ok "$1" || { tail -50 "build/$1.log"; echo "$1 failed"; exit 1; }
}
fuzz_enabled() { [ "${MUSTER_SKIP_FUZZ:-0}" != 1 ] && [ -f fuzz/decode_fuzz.cc ]; }
fuzz_build() {
  CXX=clang++ NINJA_TARGETS=fuzz_decode scripts/build.sh build-fuzz -DCMAKE_CXX_COMPILER=clang++ \
    -DMUSTER_FUZZ=ON -DMUSTER_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
}
# The sanitizer trees build in the background while the first tree's tests run (they
# mostly wait on sockets, servers and child processes); -g1 (line tables only) keeps
# their debug info, and so their compile and link time, small. One after the other, so
# they take one core between them, not both: first ASan + UBSan (every test binary),
# then ThreadSanitizer, only the test binaries of the threaded code (serve's HTTP
# server, scheduler controller and garbage collector; kube's controller, reflectors,
# leader election, webhook and dashboard servers), at -O1 as TSan advises.
rm -f build/asan-build.rc build/tsan-build.rc build/fuzz-build.rc
if [ "${MUSTER_SKIP_SANITIZE:-0}" != 1 ]; then
  (
    build_logged asan-build scripts/build.sh build-asan -DMUSTER_SANITIZE=ON -DMUSTER_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 "$unity"
    # MUSTER_TSAN=0 skips it. A fresh-clone run here (stop 23) with the main tree at -O2
    # built it by 18 min and ended the TSan tests at 62 min; that run found a real
    # report (ui/view_publisher.h, fixed). The main tree at -O1 gives the time back.
    if [ "${MUSTER_TSAN:-1}" = 1 ]; then
      NINJA_TARGETS="server_test kube_test" build_logged tsan-build scripts/build.sh build-tsan \
        -DMUSTER_SANITIZE=thread -DMUSTER_BENCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" "$unity"
    fi
    # The fuzzer's tree last, while the TSan tests run: built at the end, it held the
    # run's last minute and a half.
    if fuzz_enabled; then build_logged fuzz-build fuzz_build; fi
  ) &
  sanitizer_builds=$!
  background+=("$sanitizer_builds")
fi

# Static checks. clang-format over every tracked C++ file (scripts/check-format.sh --fix
# formats them; MUSTER_CHECK_FORMAT=0 skips it).
# clang-tidy with .clang-tidy: ~2-9 s of CPU per file, ~20 CPU-minutes for the whole
# tree, so by default only the files the latest commits changed
# (MUSTER_CLANG_TIDY=recent: the last MUSTER_CLANG_TIDY_COMMITS, default 10 of main's
# first-parent history, where a merge brings its whole branch: 41 files at stop 24, 91
# with 30, which cost CI's hour minutes; =all: every file of src/; =0: off). It runs in
# the background on the first tree's compile commands while the tests run, and its
# result is waited for at the end.
if [ "${MUSTER_CHECK_FORMAT:-1}" = 1 ]; then
  stage "clang-format"
  scripts/check-format.sh
fi
# Each layer includes only the layers it links (the DEPS of CMakeLists.txt).
stage "layers"
python3 scripts/check-layers.py
tidy_mode="${MUSTER_CLANG_TIDY:-recent}"
case "$tidy_mode" in
  all) tidy_args=() ;;
  recent)
    # A shallow clone may hold fewer commits: then everything since its oldest one.
    tidy_base=$(git rev-parse -q --verify "HEAD~${MUSTER_CLANG_TIDY_COMMITS:-10}" ||
      git rev-list --max-parents=0 HEAD | tail -1)
    tidy_args=(--since "$tidy_base") ;;
  0) ;;
  *) echo "MUSTER_CLANG_TIDY=$tidy_mode: expected recent, all or 0" >&2; exit 2 ;;
esac
if [ "$tidy_mode" != 0 ]; then
  # Its own configured (never built) tree, file by file: a unity tree's compile commands
  # name the batches, not the files clang-tidy checks.
  cmake -S . -B build-tidy -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMUSTER_UNITY=OFF >/dev/null
  rm -f build/clang-tidy.rc  # an earlier run's must not answer for this one
  build_logged clang-tidy nice scripts/clang-tidy.sh "${tidy_args[@]}" build-tidy 1 &
  clang_tidy=$!
  background+=("$clang_tidy")
fi

stage "unit tests"
# -j4 on two cores: many tests wait on sockets and child processes, not the CPU.
ctest --test-dir build --output-on-failure -j4

stage "CLI tests"
bash tests/cli/run_cli_tests.sh build/muster

stage "kubectl against muster serve"
bash tests/server/kubectl_test.sh build/muster

stage "authentication of muster serve (tokens, client certificates, TLS, owner)"
timeout 300 bash tests/server/auth_test.sh build/muster

stage "authorization of muster serve (RBAC, default roles, kubectl auth can-i)"
timeout 300 bash tests/server/rbac_test.sh build/muster

stage "Kueue's visibility API, CRDs and kubectl explain on muster serve"
timeout 300 bash tests/server/visibility_test.sh build/muster

stage "core kinds of muster serve (ConfigMap, Secret, Service, PVC, ResourceQuota, Pods, kubectl exec)"
timeout 300 bash tests/server/core_kinds_test.sh build/muster
timeout 300 bash tests/server/bare_pods_test.sh build/muster
timeout 300 bash tests/server/exec_test.sh build/muster
timeout 300 bash tests/server/job_policies_test.sh build/muster
timeout 300 bash tests/server/cronjob_test.sh build/muster
timeout 300 bash tests/server/trainjob_test.sh build/muster
timeout 400 bash tests/server/tfjob_test.sh build/muster
timeout 300 bash tests/server/jobset_test.sh build/muster
timeout 300 bash tests/server/mpijob_test.sh build/muster

stage "the seed documents' manifests applied unchanged with kubectl (tests/seeds)"
timeout 600 bash tests/server/seeds_test.sh build/muster "$shared"

stage "pods run as their owners (two local accounts, tokens and client certificates, RBAC)"
timeout 300 bash tests/server/owner_test.sh build/muster

stage "pods as podman containers of a locally built image (--container-runtime=podman)"
timeout 300 bash tests/server/podman_test.sh build/muster

stage "Kueue's waitForPodsReady on muster serve: timeout, backoff, deactivation, restarts (podman)"
timeout 300 bash tests/server/pods_ready_test.sh build/muster

stage "kill -9 recovery of muster serve's scheduler"
bash tests/server/serve_recovery_test.sh build

stage "muster client commands against muster serve"
bash tests/cli/client_test.sh build/muster

stage "muster kube --dashboard-port against muster serve"
timeout 300 bash tests/kube/dashboard_port_test.sh build/muster

stage "the dashboard in headless chromium (pages, live updates, workloads at scale)"
timeout 1500 bash tests/ui/browser_test.sh build

stage "torch DDP job under muster serve (preempted, resumed)"
wait "$torch_install" || true
cat build/install-torch.log
bash tests/server/ddp_test.sh build

stage "deploy/ manifests (kustomize render, structural CRDs, RBAC, webhook wiring)"
bash tests/kube/deploy_test.sh

stage "conformance"
# The shared cases and the repository's own (tests/conformance/cases, same format).
timeout 900 python3 "$shared/conformance/check.py" --muster build/muster "$shared/conformance/cases" \
  tests/conformance/cases

stage "same decisions as the golden digests (examples, conformance, generated clusters, traces, bench scenarios), and without the admission shortcuts"
timeout 900 bash bench/decisions_check.sh --muster build/muster --no-shortcuts-too

if [ "${MUSTER_SKIP_SANITIZE:-0}" != 1 ]; then
  stage "sanitizer build (ASan + UBSan)"
  await_build asan-build "$sanitizer_builds"
  scripts/asan-tests.sh build-asan

  stage "ThreadSanitizer build of the threaded code's tests (server_test, kube_test)"
  if [ "${MUSTER_TSAN:-1}" = 1 ]; then
    await_build tsan-build "$sanitizer_builds"
    scripts/tsan-tests.sh build-tsan
  else
    echo "skipped (MUSTER_TSAN=0)"
  fi
fi

if fuzz_enabled; then
  stage "fuzzing the decoder (${MUSTER_FUZZ_SECONDS:-30} s)"
  if [ "${MUSTER_SKIP_SANITIZE:-0}" != 1 ]; then
    await_build fuzz-build "$sanitizer_builds"
    cat build/fuzz-build.log
  else
    fuzz_build
  fi
  rm -rf build-fuzz/corpus && mkdir -p build-fuzz/corpus && cp fuzz/corpus/* build-fuzz/corpus/
  build-fuzz/fuzz_decode -max_total_time="${MUSTER_FUZZ_SECONDS:-30}" -max_len=65536 \
    -print_final_stats=0 build-fuzz/corpus >build-fuzz/fuzz.log 2>&1 \
    || { tail -50 build-fuzz/fuzz.log; exit 1; }
  echo "fuzzing found nothing"
fi
if [ "$tidy_mode" != 0 ]; then
  stage "clang-tidy (.clang-tidy over src/)"
  # The whole log, pass or fail: its findings, not a tail.
  await_logged clang-tidy "$clang_tidy"
  cat build/clang-tidy.log
  logged_ok clang-tidy || { echo "clang-tidy failed"; exit 1; }
fi
background=()
echo "all tests passed [$((SECONDS / 60)):$(printf %02d $((SECONDS % 60)))]"
