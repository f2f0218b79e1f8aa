#!/usr/bin/env bash
# The main job: installs missing dependencies, builds (the release preset, build/), extracts
# the real datasets into data/cache/ (data/fetch.sh), then runs build/bin/scanlab-demo:
# every app on generated and real data, validated against the CPU and CUB, timed against
# CUB, one summary table, and the report in build/demo/ (docs/demo.md).
#
# Arguments go to scanlab-demo (--quick, --only sort,compact, --out DIR, ...; --help).
# Without a GPU it stops after building and fetching, says so in one line and exits 3.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ " $* " == *" -h "* || " $* " == *" --help "* ]]; then
  echo "Usage: scripts/demo.sh [scanlab-demo options]: installs dependencies, builds, fetches data/cache, runs:"
  echo
  exec python3 apps/demo/scanlab_demo.py --help
fi

scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --preset release >/dev/null
cmake --build --preset release
# A dataset that cannot be had is reported on its line; its rows of the demo are skipped.
data/fetch.sh || echo "demo: some datasets are missing (see above): their rows will be skipped" >&2
exec build/bin/scanlab-demo "$@"
