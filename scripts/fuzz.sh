#!/usr/bin/env bash
# Fuzzes the input readers (.npy, text/CSV, Matrix Market) with libFuzzer.
#
#   scripts/fuzz.sh [SECONDS] [READER...]     READER: npy, text, mtx (default: all three)
#
# Builds tests/fuzz on its own with clang in build-fuzz/ (no CUDA needed), runs each harness
# for SECONDS (default 60), starting from the committed corpus and the inputs of earlier runs
# (build-fuzz/work/<reader>/), then merges into tests/fuzz/corpus/<reader>/ the inputs that
# reach code (edges) the corpus did not: commit them, CTest replays that corpus in every build.
# Inputs that crash, break a harness's check, leak, run out of memory or time land in
# build-fuzz/artifacts/<reader>/; once the reader is fixed, add each to the corpus under a name
# that says what it is. Mallocs are capped at 256 MB: the inputs are a few KB, so a larger
# allocation is one the file did not pay for. See CONTRIBUTING.md, "Fuzzing".
# Exit status: 0 when no harness found anything, 1 when one did, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ $seconds =~ ^[0-9]+$ ]] || (( seconds < 1 )); then
  echo "usage: scripts/fuzz.sh [SECONDS] [npy|text|mtx ...]" >&2
  exit 2
fi
shift $(( $# > 0 ? 1 : 0 ))
readers=("$@")
(( ${#readers[@]} > 0 )) || readers=(npy text mtx)
for reader in "${readers[@]}"; do
  case $reader in
    npy|text|mtx) ;;
    *) echo "fuzz.sh: unknown reader '$reader' (npy, text, mtx)" >&2; exit 2 ;;
  esac
done
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang++ with libFuzzer (Debian: apt-get install clang)" >&2; exit 2; }

build=build-fuzz
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S tests/fuzz -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DSCANLAB_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"

# Longer inputs for .npy: its headers may take 10000 bytes.
declare -A max_len=([npy]=12288 [text]=4096 [mtx]=4096)
found=0
summary=()
for reader in "${readers[@]}"; do
  corpus=tests/fuzz/corpus/$reader
  work=$build/work/$reader
  artifacts=$build/artifacts/$reader
  log=$build/fuzz_$reader.log
  mkdir -p "$work" "$artifacts"
  before=$(find "$artifacts" -type f | wc -l)
  echo "== fuzz_$reader: $seconds s (log: $log)"
  status=0
  "$build/fuzz_$reader" "$work" "$corpus" -max_total_time="$seconds" -max_len="${max_len[$reader]}" \
    -dict="tests/fuzz/$reader.dict" -malloc_limit_mb=256 -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if (( status != 0 )); then
    found=1
    grep -m1 -E 'ERROR|fuzz check failed|==[0-9]+==' "$log" >&2 || tail -5 "$log" >&2
  fi
  # Keep what reaches new code: merge the working corpus into the committed one.
  added=0
  if (( status == 0 )); then
    count_before=$(find "$corpus" -type f | wc -l)
    "$build/fuzz_$reader" -merge=1 -use_counters=0 "$corpus" "$work" -max_len="${max_len[$reader]}" >>"$log" 2>&1
    added=$(( $(find "$corpus" -type f | wc -l) - count_before ))
  fi
  new_artifacts=$(( $(find "$artifacts" -type f | wc -l) - before ))
  summary+=("fuzz_$reader: ${runs:-?} executions in $seconds s, exit $status, $new_artifacts new artifacts, $added inputs added to $corpus")
done
printf '%s\n' "${summary[@]}"
exit "$found"
