#!/usr/bin/env bash
# The main job: installs missing dependencies, builds, generates a dataset with
# scanlab-gen and runs the apps on it. Without a GPU it stops after building
# and generating, says so in one line and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --preset release >/dev/null
cmake --build --preset release

bin=build/bin
out=build/demo
mkdir -p "$out"
echo "== scanlab-gen: datasets"
"$bin/scanlab-gen" --dist uniform --n 2^24 --dtype float32 --seed 1 -o "$out/uniform_f32.npy"
"$bin/scanlab-gen" --dist entropy-reduced --and-count 2 --n 2^24 --dtype uint32 --seed 2 -o "$out/entropy2_u32.npy"

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "demo: no NVIDIA GPU on this machine: built and generated data, but the apps need a GPU." >&2
  exit 3
fi

echo "== scanlab-norms: dot, norms, RMS against CUB and cuBLAS"
"$bin/scanlab-norms" -i "$out/uniform_f32.npy" --validate --bench --json "$out/norms.json"
echo "== scanlab-cg: conjugate gradients on a 3-D Poisson matrix"
"$bin/scanlab-cg" --poisson3d 64 --validate
echo "== scanlab-jacobi: Laplace on a 64^3 grid, stopping on the RMS change"
"$bin/scanlab-jacobi" --n 64 --validate
echo "== scanlab-bench reduce"
"$bin/scanlab-bench" reduce --sizes 2^20,2^24,2^28 --json "$out/reduce.json"
echo "== scanlab-bench scan"
"$bin/scanlab-bench" scan --sizes 2^20,2^24,2^28 --json "$out/scan.json"
echo "demo: reports in $out/"
