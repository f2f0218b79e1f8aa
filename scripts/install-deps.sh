#!/usr/bin/env bash
# Installs the Debian packages scanlab needs, and only those; does nothing when
# they are all present (safe to run any number of times). The CUDA toolkit is
# not a Debian package here: it is expected at /usr/local/cuda.
#
#   scripts/install-deps.sh [--latest-cub[=VERSION]]
#
# --latest-cub also fetches NVIDIA's newest CCCL headers (CUB, Thrust, libcu++) for the
# benchmark baselines: the cuda-cccl wheel from PyPI (VERSION: a cuda-cccl release, e.g.
# 1.2.1, which carries CUB 3.6.0; default: the newest), unpacked into
# ${SCANLAB_CACHE_DIR:-~/.cache/scanlab}/cccl/<release>/include with cccl/latest pointing
# at it. Nothing else uses them: build against them with the latest-cub preset
# (cmake --preset latest-cub), which sets -DSCANLAB_CCCL_INCLUDE_DIR to that folder.
set -euo pipefail

latest_cub=""
for arg in "$@"; do
  case "$arg" in
    --latest-cub) latest_cub=newest ;;
    --latest-cub=*) latest_cub=${arg#--latest-cub=} ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

packages=(
  cmake ninja-build g++ ccache          # build
  googletest libgtest-dev               # tests (static GoogleTest)
  libspdlog-dev libfmt-dev              # logging (used header-only)
  libcli11-dev nlohmann-json3-dev       # command lines, JSON reports
  python3-numpy python3-matplotlib      # data scripts and benchmark plots
  python3-dev python3-venv              # the Python package (python/scripts/test.sh)
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

if [[ -n $latest_cub ]]; then
  cache=${SCANLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/scanlab}/cccl
  python=$(command -v python3 || true)
  [[ -n $python ]] || { echo "install-deps: --latest-cub needs python3 with pip" >&2; exit 1; }
  spec=cuda-cccl
  [[ $latest_cub != newest ]] && spec="cuda-cccl==$latest_cub"
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  echo "install-deps: fetching $spec from PyPI (headers only are kept)"
  "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$download" "$spec" ||
    { echo "install-deps: pip could not fetch $spec" >&2; exit 1; }
  wheel=$(ls "$download"/cuda_cccl-*.whl | head -1)
  release=$(basename "$wheel" | cut -d- -f2)
  target=$cache/$release
  if [[ ! -f $target/include/cub/version.cuh ]]; then
    rm -rf "$target.partial"
    mkdir -p "$target.partial"
    # Only the header tree: cuda/cccl/headers/include/{cub,thrust,cuda,nv} -> include/.
    "$python" - "$wheel" "$target.partial" <<'PY'
import sys, zipfile, pathlib
wheel, out = sys.argv[1], pathlib.Path(sys.argv[2])
prefix = "cuda/cccl/headers/include/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not any(n.endswith("cub/version.cuh") for n in names):
        sys.exit(f"install-deps: {wheel} has no {prefix}cub/version.cuh")
    for n in names:
        dest = out / "include" / n[len(prefix):]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(z.read(n))
PY
    mv "$target.partial" "$target"
  fi
  ln -sfn "$release" "$cache/latest"
  version=$(sed -n 's/^#define CUB_VERSION \([0-9]*\).*/\1/p' "$target/include/cub/version.cuh")
  echo "install-deps: CUB $((version / 100000)).$((version / 100 % 1000)).$((version % 100)) (cuda-cccl $release) in $target/include"
  echo "install-deps: build the baselines against it with: cmake --preset latest-cub && cmake --build --preset latest-cub"
fi
