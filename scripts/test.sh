#!/usr/bin/env bash
# The test command: installs missing dependencies, configures, builds everything
# and runs every test (CPU tests run; GPU tests skip with a reason where there is
# no GPU). Uses the 'release' CMake workflow preset (build/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --workflow --preset release
