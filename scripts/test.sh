#!/usr/bin/env bash
# The test command: installs missing dependencies, configures, builds everything
# and runs every test, the C++ ones and then the Python package's (CPU tests run; GPU
# tests skip with a reason where there is no GPU). Uses the 'release' CMake workflow
# preset (build/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --workflow --preset release
# The Python package (python/): built into build-python/venv from PyPI's nanobind and
# scikit-build-core, then its pytest suite (GPU tests skip without a GPU).
python/scripts/test.sh
