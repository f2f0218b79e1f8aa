#!/usr/bin/env bash
# Compiles every public header of scanlab, with every public algorithm instantiated
# (tests/arches/all_public.cu), once per CUDA architecture: compile only (nvcc -c), no GPU
# needed. An instruction that an architecture lacks (cp.async before sm_80, bulk copies
# before sm_90, ...) fails that architecture's line. One PASS/FAIL line per architecture;
# exits 1 if any failed, 2 on bad usage.
#
#   scripts/compile-arches.sh                    # the portable list: 75 80 86 89 90 100 120
#   scripts/compile-arches.sh --arches 75,80,120 --jobs 2
#
# Slow (a few minutes per architecture on one core): not part of the default CI run.
set -euo pipefail

prog=compile-arches.sh
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
arches="75 80 86 89 90 100 120"  # the portable preset's list (CMakePresets.json)
jobs=$(nproc 2>/dev/null || echo 2)
logs=""

usage() {
  cat <<EOF
usage: $prog [--arches LIST] [--jobs N] [--logs DIR]
  --arches LIST  compute capabilities as CMake writes them, comma- or space-separated
                 (default: $arches)
  --jobs N       architectures compiled at once (default: the number of cores, $jobs)
  --logs DIR     keep each architecture's compiler output in DIR/sm_XY.log
                 (default: a temporary folder, removed at the end; a failure's first
                 errors are printed either way)
Environment: NVCC (default: \$CUDACXX, /usr/local/cuda/bin/nvcc, or nvcc on PATH),
NVCC_FLAGS (extra flags, e.g. -Werror=all-warnings).
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --arches) arches=${2:?--arches needs a list}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --logs) logs=${2:?--logs needs a folder}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$prog: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
arches=${arches//,/ }
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then echo "$prog: --jobs '$jobs': a positive number" >&2; exit 2; fi
for a in $arches; do
  if ! [[ "$a" =~ ^[0-9]+a?$ ]]; then echo "$prog: architecture '$a': write it as CMake does (75, 90, 90a, 120)" >&2; exit 2; fi
done

nvcc=${NVCC:-${CUDACXX:-}}
if [[ -z "$nvcc" ]]; then
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then nvcc=/usr/local/cuda/bin/nvcc; else nvcc=$(command -v nvcc || true); fi
fi
if [[ -z "$nvcc" || ! -x "$nvcc" ]]; then echo "$prog: nvcc not found (set NVCC)" >&2; exit 2; fi

source_file=$root/tests/arches/all_public.cu
include_dir=$root/primitives/include
# Every header must be in the translation unit, or an architecture problem in it goes unseen.
missing=()
while IFS= read -r header; do
  rel=${header#"$include_dir"/}
  grep -q "#include <$rel>" "$source_file" || missing+=("$rel")
done < <(find "$include_dir/scanlab" -type f \( -name '*.cuh' -o -name '*.hpp' -o -name '*.h' \) | sort)
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "$prog: ${source_file#"$root"/} does not include: ${missing[*]} (add them, and instantiate any new algorithm)" >&2
  exit 1
fi

if [[ -n "$logs" ]]; then
  mkdir -p "$logs"
  work=$(cd "$logs" && pwd)
  keep=1
else
  work=$(mktemp -d)
  keep=0
fi
cleanup() { [[ $keep -eq 1 ]] || rm -rf "$work"; }
trap cleanup EXIT

# The flags a consumer of the package gets (C++20, optimised), nothing of scanlab's own build.
read -r -a extra <<<"${NVCC_FLAGS:-}"
compile_one() {
  local arch=$1 start end status
  start=$(date +%s)
  set +e
  "$nvcc" -std=c++20 -O3 -DNDEBUG -I"$include_dir" -Wno-deprecated-gpu-targets "${extra[@]}" \
    -gencode "arch=compute_$arch,code=sm_$arch" -c "$source_file" -o "$work/sm_$arch.o" >"$work/sm_$arch.log" 2>&1
  status=$?
  set -e
  end=$(date +%s)
  echo "$status $((end - start))" >"$work/sm_$arch.result"
}

echo "$prog: $($nvcc --version | tail -1); ${source_file#"$root"/} for sm_${arches// /, sm_} ($jobs at a time)"
total_start=$(date +%s)
running=0
for arch in $arches; do
  compile_one "$arch" &
  running=$((running + 1))
  if [[ $running -ge $jobs ]]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=0
for arch in $arches; do
  read -r status seconds <"$work/sm_$arch.result"
  if [[ "$status" -eq 0 ]]; then
    echo "sm_$arch PASS ${seconds}s"
  else
    failed=$((failed + 1))
    echo "sm_$arch FAIL ${seconds}s (nvcc exit $status)"
    grep -m 5 -E "error|Error" "$work/sm_$arch.log" | sed 's/^/    /' || true
    [[ $keep -eq 1 ]] && echo "    full output: $work/sm_$arch.log"
  fi
done
echo "$prog: $failed of $(wc -w <<<"$arches") architecture(s) failed, $(($(date +%s) - total_start))s in all"
[[ $failed -eq 0 ]]
