#!/usr/bin/env bash
# Run on a machine with an NVIDIA GPU, from the repository root, after building
# (here or elsewhere: build/bin travels). Runs every test executable in the bin
# folder, then compute-sanitizer (memcheck, racecheck, synccheck) on the GPU test
# executables, and prints a summary. Exit code 0 only if everything passed.
#
#   scripts/gpu-check.sh [--bin DIR] [--skip-tests] [--skip-sanitizer]
#                        [--tools "memcheck racecheck synccheck"] [--filter GTEST_FILTER]
#                        [--max-n N] [--only NAME] [--timeout SECONDS]
#
# Under the sanitizer, tests named *Large* (past 2^31 elements) and *Stress* are
# left out by default (the same code at sizes that take hours there), and so are
# *DeliberateApiError* tests, which provoke a failing CUDA call on purpose to check
# that it is reported (memcheck would count that call as an error). The sanitizer
# runs also set SCANLAB_TEST_MAX_N (default 65536): every test runs its whole logic
# on its sizes up to that bound. --only NAME limits everything to one test executable;
# --timeout stops each sanitizer run after that many seconds (counted as a failure).
set -uo pipefail

bin=build/bin
tools="memcheck racecheck synccheck"
filter="-*Large*:*Stress*:*DeliberateApiError*"
run_tests=1
run_sanitizer=1
max_n=65536
only=""
limit=0
while (($#)); do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --max-n) max_n=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --skip-tests) run_tests=0; shift ;;
    --skip-sanitizer) run_sanitizer=0; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
  esac
done

[[ -d $bin ]] || { echo "gpu-check: no $bin (build first)" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu-check: no NVIDIA GPU here" >&2; exit 3; }
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)

summary=()
status=0
record() {  # name, exit code, detail
  local verdict=PASS
  [[ $2 -eq 0 ]] || { verdict=FAIL; status=1; }
  summary+=("$(printf '%-4s  %-38s  %s' "$verdict" "$1" "$3")")
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tests=()
for t in "$bin"/test_*; do
  [[ -x $t && -f $t ]] || continue
  [[ -z $only || $(basename "$t") == "$only" ]] && tests+=("$t")
done

if ((run_tests)); then
  for t in "${tests[@]}"; do
    name=$(basename "$t")
    echo "== $name"
    log=$(mktemp)
    "$t" --gtest_brief=1 2>&1 | tee "$log"
    code=${PIPESTATUS[0]}
    record "$name" "$code" "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr '\n' ' ')"
    rm -f "$log"
  done
fi

if ((run_sanitizer)); then
  if [[ -z $sanitizer ]]; then
    record "compute-sanitizer" 1 "not found"
  else
    for t in "${tests[@]}"; do
      name=$(basename "$t")
      [[ $name == test_gpu_* ]] || continue
      for tool in $tools; do
        echo "== compute-sanitizer --tool $tool $name"
        log=$(mktemp)
        SCANLAB_TEST_MAX_N=$max_n timeout "$limit" "$sanitizer" --tool "$tool" --error-exitcode 99 \
          "$t" --gtest_brief=1 --gtest_filter="$filter" 2>&1 | tee "$log"
        code=${PIPESTATUS[0]}
        record "$tool $name" "$code" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) ' "$log" | tr '\n' ' ')"
        rm -f "$log"
      done
    done
  fi
fi

echo
echo "== gpu-check summary"
printf '%s\n' "${summary[@]}"
exit $status
