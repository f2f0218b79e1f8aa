#!/usr/bin/env bash
# The Python package's test command: builds and installs it into a virtual environment
# (build-python/venv by default) and runs its pytest suite. Without a GPU the GPU tests
# skip; the rest (imports, argument checks, DLPack ownership) run. About 3 minutes on 2 cores
# for the first build (nvcc), seconds after that (python/build/ keeps the build tree).
#   PYTHON=python3.12 python/scripts/test.sh      # the interpreter (3.11 or newer)
#   python/scripts/test.sh -k sort                # arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
venv=${SCANLAB_PYTHON_VENV:-build-python/venv}
export PATH="$PATH:/usr/local/cuda/bin"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
venv=$(cd "$venv" && pwd)
"$venv/bin/python" -m pip install -q nanobind scikit-build-core pytest numpy
# jaxlib for its XLA FFI headers only (scanlab.jax's handlers; python/CMakeLists.txt): no
# dependencies, the newest release for this interpreter (XLA's FFI keeps handlers built with
# older headers working). Where none installs, scanlab.jax is left out and its tests skip.
"$venv/bin/python" -m pip install -q --no-deps "jaxlib${SCANLAB_JAXLIB_VERSION:+==$SCANLAB_JAXLIB_VERSION}" ||
  echo "test.sh: no jaxlib for $("$venv/bin/python" -V): scanlab.jax is not built" >&2
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps ./python
cd python  # pytest's rootdir; the installed package is imported, not src/
exec "$venv/bin/python" -m pytest tests -q "$@"
