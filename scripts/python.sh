#!/usr/bin/env bash
# Runs python with an interpreter that has numpy and matplotlib: `python3` on PATH
# may be another installation (pyenv, conda) than Debian's, where install-deps.sh put them.
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import numpy, matplotlib' 2>/dev/null; then
    exec "$py" "$@"
  fi
done
echo "python.sh: no python3 with numpy and matplotlib found (run scripts/install-deps.sh)" >&2
exit 1
