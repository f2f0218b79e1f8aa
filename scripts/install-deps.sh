#!/usr/bin/env bash
# Installs the Debian packages scanlab needs, and only those; does nothing when
# they are all present (safe to run any number of times). The CUDA toolkit is
# not a Debian package here: it is expected at /usr/local/cuda.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache          # build
  googletest libgtest-dev               # tests (static GoogleTest)
  libspdlog-dev libfmt-dev              # logging (used header-only)
  libcli11-dev nlohmann-json3-dev       # command lines, JSON reports
  python3-numpy python3-matplotlib      # data scripts and benchmark plots
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  cat >&2 <<'MSG'
install-deps: the CUDA toolkit was not found (no nvcc on PATH or in /usr/local/cuda/bin).
Install CUDA 13 from NVIDIA (it provides nvcc, CUB and Thrust) into /usr/local/cuda, then run this again.
MSG
  exit 1
fi
echo "install-deps: all dependencies present"
