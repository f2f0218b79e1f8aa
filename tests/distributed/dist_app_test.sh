#!/usr/bin/env bash
# Tests of scanlab-dist as users run it.
# Usage: dist_app_test.sh CASE BINDIR
#   Errors    a dtype it does not take (exit 1), an unknown job, --gpus 0, more GPUs than the
#             machine has (exit 2; exit 3 where there is no GPU): one line, nothing written
#             under -o; runs everywhere
#   Validate  every job and dtype on every GPU of the machine, sizes 0, 7 and 1000003,
#             reduce and scan with several operators, inclusive and exclusive: --validate
#             against the single-GPU result passes and -o writes the result; also on one GPU
#             (--gpus 1, two dtypes). Skipped without a GPU (exit 77)
set -uo pipefail
case_name="$1" bin="$2"
app="$bin/scanlab-dist" gen="$bin/scanlab-gen"
source "$(dirname "${BASH_SOURCE[0]}")/../common/app_test_lib.sh"
export NCCL_NVLS_ENABLE=0

case "$case_name" in
  Errors)
    "$gen" --dist uniform --dtype int16 --n 100 -o "$tmp/i16.npy" -q || fail "scanlab-gen"
    expect_error 1 "scanlab-dist takes int32, uint32, int64, uint64, float32, float64, not int16" sort -i "$tmp/i16.npy"
    "$gen" --dist uniform --dtype int32 --n 100 -o "$tmp/x.npy" -q || fail "scanlab-gen"
    expect_error 2 "job" shuffle -i "$tmp/x.npy"
    expect_error 2 "--gpus" sort -i "$tmp/x.npy" --gpus 0
    # 4096 GPUs: "this machine has N GPUs" (exit 2), or no usable GPU at all (exit 3).
    "$app" sort -i "$tmp/x.npy" --gpus 4096 -o "$tmp/out.npy" > "$tmp/stdout" 2> "$tmp/stderr"
    rc=$?
    if [[ $rc == 2 ]]; then
      grep -qF "this machine has" "$tmp/stderr" || fail "--gpus 4096: $(cat "$tmp/stderr")"
    elif [[ $rc != 3 ]]; then
      fail "--gpus 4096 exited $rc: $(cat "$tmp/stderr")"
    fi
    [[ ! -e "$tmp/out.npy" ]] || fail "--gpus 4096 wrote $tmp/out.npy"
    ;;
  Validate)
    skip_without_gpu
    runs=("sort" "compact --gt 0.25" "scan" "scan --exclusive --op max" "scan --op prod" "reduce" "reduce --op min")
    check_runs() {  # check_runs "GPU OPTIONS" DTYPES...
      local gpus=$1; shift
      for dtype in "$@"; do
        for size in 0 7 1000003; do
          for run in "${runs[@]}"; do
            "$app" $run $gpus --generate normal --dtype $dtype --n $size --validate -q -o "$tmp/r.npy" \
              > "$tmp/stdout" 2>&1 || fail "$run $gpus $dtype n=$size: $(tail -3 "$tmp/stdout")"
            [[ -s "$tmp/r.npy" ]] || fail "$run $gpus $dtype n=$size: no output"
            rm -f "$tmp/r.npy"
          done
        done
      done
    }
    # DIST_APP_TEST_DTYPES: a subset of the dtypes on every GPU (to run shards side by side);
    # DIST_APP_TEST_ONE_GPU=0 leaves out the --gpus 1 runs
    check_runs "" ${DIST_APP_TEST_DTYPES:-int32 uint32 int64 uint64 float32 float64}
    [[ ${DIST_APP_TEST_ONE_GPU:-1} == 0 ]] || check_runs "--gpus 1" int32 float64
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
exit $status
