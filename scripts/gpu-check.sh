#!/usr/bin/env bash
# Run on a machine with an NVIDIA GPU, from the repository root, after building
# (here or elsewhere: build/bin travels). Runs every test executable in the bin
# folder, then compute-sanitizer (memcheck, racecheck, synccheck) over EVERY GPU test
# executable (test_gpu_*) and every test in it, and prints a summary table. Exit code 0
# only if everything passed with 0 errors and 0 hazards.
#
#   scripts/gpu-check.sh [--bin DIR] [--skip-tests] [--skip-sanitizer]
#                        [--tools "memcheck racecheck synccheck"] [--filter GTEST_FILTER]
#                        [--max-n N] [--racecheck-max-n N] [--only NAME[,NAME...]]
#                        [--jobs N] [--shards K] [--timeout SECONDS] [--summary FILE]
#                        [--logs DIR]
#
# Under the sanitizer, tests named *Large* (past 2^31 elements) and *Stress* are
# left out by default (the same code at sizes that take hours there), and so are
# *DeliberateApiError* tests, which provoke a failing CUDA call on purpose to check
# that it is reported (memcheck would count that call as an error). Every other test
# of every type and mode runs: the sanitizer runs set SCANLAB_TEST_MAX_N (--max-n,
# default 65536; racecheck, which instruments every shared-memory access, uses
# --racecheck-max-n, default 8192), so each test runs its whole logic on its sizes up
# to that bound. --only NAMES limits everything to those test executables; --jobs N
# runs N sanitizer runs at once on the one GPU (they are mostly bound by the
# instrumentation, not the GPU); --shards K splits each sanitizer run of a binary into
# K GoogleTest shards (GTEST_TOTAL_SHARDS), one row each, so a long binary spreads over
# the jobs; --timeout stops each sanitizer run after that many seconds (a failure);
# --summary FILE also writes the table as Markdown; --logs DIR keeps every run's full
# log there (written as the run goes, so a run cut short still shows how far it got).
#
# memcheck of test_gpu_distributed runs with --report-api-errors no: NCCL's communicator
# set-up asks cudaFuncGetAttributes about each of its kernels, and those it did not build
# for this GPU's architecture answer cudaErrorNoKernelImageForDevice, which NCCL expects
# and handles. Memory access errors are still reported; the tests themselves check every
# CUDA and NCCL call scanlab makes.
set -uo pipefail

bin=build/bin
tools="memcheck racecheck synccheck"
filter="-*Large*:*Stress*:*DeliberateApiError*"
run_tests=1
run_sanitizer=1
max_n=65536
racecheck_max_n=8192
only=""
limit=0
jobs=1
shards=1
logs=""
summary_file=""
while (($#)); do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --max-n) max_n=$2; shift 2 ;;
    --racecheck-max-n) racecheck_max_n=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --summary) summary_file=$2; shift 2 ;;
    --skip-tests) run_tests=0; shift ;;
    --skip-sanitizer) run_sanitizer=0; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
  esac
done

[[ -d $bin ]] || { echo "gpu-check: no $bin (build first)" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu-check: no NVIDIA GPU here" >&2; exit 3; }
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -n $logs ]]; then
  mkdir -p "$logs" || exit 2
  logs=$(cd "$logs" && pwd)
fi

selected() {  # name: is it in --only (or is --only empty)?
  [[ -z $only ]] && return 0
  local IFS=,
  for want in $only; do [[ $1 == "$want" ]] && return 0; done
  return 1
}

tests=()
for t in "$bin"/test_*; do
  [[ -x $t && -f $t ]] || continue
  selected "$(basename "$t")" && tests+=("$t")
done

# One row per run, in $work/rows/NNN: verdict|what|binary|tests|errors|minutes.
mkdir -p "$work/rows"
row=0
status=0
gtest_counts() {  # log -> "N passed[, N failed][, N skipped]"
  local passed failed skipped out
  passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "$1" | grep -oE '[0-9]+$' | tail -1)
  failed=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "$1" | grep -oE '[0-9]+' | tail -1)
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+' "$1" | grep -oE '[0-9]+$' | tail -1)
  out="${passed:-0} passed"
  [[ -n $failed ]] && out+=", $failed failed"
  [[ -n $skipped ]] && out+=", $skipped skipped"
  echo "$out"
}
sanitizer_findings() {  # log -> "N errors" (memcheck, synccheck) or "N hazards, N errors" (racecheck)
  local errors hazards race
  race=$(grep -E 'RACECHECK SUMMARY: [0-9]+ hazard' "$1" | tail -1)
  if [[ -n $race ]]; then
    hazards=$(grep -oE '[0-9]+ hazard' <<<"$race" | grep -oE '[0-9]+')
    errors=$(grep -oE '\(([0-9]+) error' <<<"$race" | grep -oE '[0-9]+')
    echo "${hazards:-?} hazards, ${errors:-?} errors"
  else
    errors=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$1" | tail -1 | grep -oE '[0-9]+')
    echo "${errors:-?} errors"
  fi
}

# run_one ID WHAT BINARY [ENV=VALUE...] -- COMMAND...: runs it with its output in
# $work/ID.log, then writes its row.
run_one() {
  local id=$1 what=$2 name=$3
  shift 3
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local log=$work/$id.log start end code verdict findings
  [[ -n $logs ]] && log=$logs/$id-$what-${name//[^A-Za-z0-9_.-]/_}.log
  start=$(date +%s)
  env "${envs[@]}" "$@" >"$log" 2>&1
  code=$?
  end=$(date +%s)
  verdict=PASS
  [[ $code -eq 0 ]] || verdict=FAIL
  findings=""
  [[ $what != test ]] && findings=$(sanitizer_findings "$log")
  if [[ $what == racecheck && $findings != 0\ hazards* ]]; then verdict=FAIL; fi
  if [[ $what != test && $findings != *"0 errors" ]]; then verdict=FAIL; fi
  printf '%s|%s|%s|%s|%s|%s\n' "$verdict" "$what" "$name" "$(gtest_counts "$log")" "$findings" \
    "$(awk -v s=$((end - start)) 'BEGIN { printf "%.1f", s / 60 }')" >"$work/rows/$id"
  {
    echo "== $what $name: $verdict ($(cat "$work/rows/$id" | cut -d'|' -f4-))"
    [[ $verdict == PASS ]] || tail -40 "$log"
  } >&2
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if ((run_tests)); then
  for t in "${tests[@]}"; do
    row=$((row + 1))
    run_one "$(printf '%03d' $row)" test "$(basename "$t")" -- "$t" --gtest_brief=1
  done
fi

if ((run_sanitizer)); then
  if [[ -z $sanitizer ]]; then
    echo "FAIL|sanitizer|compute-sanitizer|not found||" >"$work/rows/999"
  else
    running=0
    for tool in $tools; do
      n=$max_n
      [[ $tool == racecheck ]] && n=$racecheck_max_n
      for t in "${tests[@]}"; do
        name=$(basename "$t")
        [[ $name == test_gpu_* ]] || continue
        timeout_cmd=()
        ((limit > 0)) && timeout_cmd=(timeout "$limit")
        tool_args=()
        [[ $tool == memcheck && $name == test_gpu_distributed ]] && tool_args=(--report-api-errors no)
        for ((shard = 0; shard < shards; shard++)); do
          row=$((row + 1))
          label=$name
          ((shards > 1)) && label="$name shard $((shard + 1))/$shards"
          run_one "$(printf '%03d' $row)" "$tool" "$label" "SCANLAB_TEST_MAX_N=$n" \
            "GTEST_TOTAL_SHARDS=$shards" "GTEST_SHARD_INDEX=$shard" -- \
            "${timeout_cmd[@]}" "$sanitizer" --tool "$tool" "${tool_args[@]}" --error-exitcode 99 \
            "$t" --gtest_filter="$filter" &
          running=$((running + 1))
          if ((running >= jobs)); then
            wait -n
            running=$((running - 1))
          fi
        done
      done
    done
    wait
  fi
fi

echo
echo "== gpu-check summary (sanitizer filter: $filter; SCANLAB_TEST_MAX_N $max_n, racecheck $racecheck_max_n)"
table=$(
  echo "| verdict | run | binary | tests | findings | minutes |"
  echo "|---|---|---|---|---|---|"
  for f in "$work"/rows/*; do
    [[ -f $f ]] || continue
    IFS='|' read -r verdict what name counts findings minutes <"$f"
    echo "| $verdict | $what | $name | $counts | $findings | $minutes |"
  done
)
echo "$table"
[[ -n $summary_file ]] && echo "$table" >"$summary_file"
grep -q '^| FAIL' <<<"$table" && status=1
exit $status
