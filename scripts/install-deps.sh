#!/usr/bin/env bash
# Installs muster's build and test dependencies from Debian packages. Idempotent:
# quiet and quick when everything is already there. Run as root (or with sudo).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
  libcpp-httplib-dev libsqlite3-dev sqlite3 libcurl4-openssl-dev libssl-dev libsimdjson-dev libjemalloc-dev
  libcctz-dev tzdata
  libgtest-dev libgmock-dev libbenchmark-dev
  clang clang-format clang-tidy python3 python3-yaml openssl
)
# kubectl for tests/server/kubectl_test.sh: Debian ships it as kubernetes-client; a
# machine with a kubectl from elsewhere (Google's "kubectl" package) needs neither.
command -v kubectl >/dev/null 2>&1 || PACKAGES+=(kubernetes-client)
# The dashboard's browser test (tests/ui/browser_test.sh): Debian's chromium, driven by
# puppeteer-core from npm (which downloads no browser); a Node.js from elsewhere
# (nodesource ships npm inside its nodejs) needs neither Debian package.
PACKAGES+=(chromium curl)
# Pods as containers (tests/server/podman_test.sh): podman with runc (Debian's default
# crun refuses hybrid cgroup layouts), and busybox-static, the test image's only binary.
PACKAGES+=(podman runc busybox-static)
# MPIJobs launched by a real mpirun (tests/server/mpijob_test.sh): Open MPI's mpirun.
PACKAGES+=(openmpi-bin)
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
