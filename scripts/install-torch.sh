#!/usr/bin/env bash
# Installs python3-torch (for /usr/bin/python3) for tests/server/ddp_test.sh, a real
# DDP job under muster serve. It is large and optional: if it cannot be installed,
# warn and exit 0 (the test then skips with a message). Idempotent; scripts/test.sh
# runs it in the background while muster builds.
set -uo pipefail
if dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "installing: python3-torch" >&2
# Another apt may hold the lock for a moment (install-deps.sh): wait for it.
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq &&
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends python3-torch \
    >/dev/null ||
  echo "warning: could not install python3-torch; tests/server/ddp_test.sh will skip" >&2
exit 0
