#!/usr/bin/env bash
# Tests of scanlab-reduce as users run it.
# Usage: reduce_app_test.sh CASE BINDIR
#   Errors    bad offsets and initial values: one line naming the problem, exit 1 or 2,
#             nothing written under -o; they are found before a GPU is looked for, so this
#             runs everywhere
#   Validate  every dtype, every operator, whole and by segments (empty segments and
#             segments ending at n included), awkward sizes, NaNs in floats, --init:
#             --validate against the CPU reference and CUB passes and -o writes the result
#             (skipped without a GPU: exit 77)
set -uo pipefail
case_name="$1" bin="$2"
app="$bin/scanlab-reduce" gen="$bin/scanlab-gen"
source "$(dirname "${BASH_SOURCE[0]}")/../common/app_test_lib.sh"

case "$case_name" in
  Errors)
    "$gen" --dist uniform --dtype int32 --n 100 -o "$tmp/x.npy" -q || fail "scanlab-gen"
    expect_error 1 "lies outside [0, 100]" -i "$tmp/x.npy" --offsets "$(list o1 "0 50 101")"
    expect_error 1 "must not decrease" -i "$tmp/x.npy" --offsets "$(list o2 "0 60 50 100")"
    expect_error 1 "at least 2 are needed" -i "$tmp/x.npy" --offsets "$(list o3 "7")"
    expect_error 1 "lies outside [0, 100]" -i "$tmp/x.npy" --offsets "$(list o4 "-1 100")"
    printf '0.5\n1\n' > "$tmp/f.txt"
    expect_error 1 "is not an integer" -i "$tmp/x.npy" --offsets "$tmp/f.txt"
    "$gen" --dist uniform --dtype float32 --n 3 -o "$tmp/f.npy" -q || fail "scanlab-gen"
    expect_error 1 "integers expected, not float32" -i "$tmp/x.npy" --offsets "$tmp/f.npy"
    expect_error 2 "expected one int64 value" -i "$tmp/x.npy" --init abc
    expect_error 2 "expected one int32 value" -i "$tmp/x.npy" --op max --init 1e3
    expect_error 2 "expected one int32 value" -i "$tmp/x.npy" --op min --init 5000000000
    expect_error 2 "--op" -i "$tmp/x.npy" --op mean
    ;;
  Validate)
    skip_without_gpu
    n=1000003
    for dtype in uint8 int8 uint16 int16 uint32 int32 uint64 int64 float32 float64; do
      for op in sum prod min max; do
        for size in 0 1 $n; do
          "$app" --generate normal --dtype $dtype --n $size --op $op --validate -q -o "$tmp/r.npy" \
            > "$tmp/stdout" 2>&1 || fail "$dtype $op n=$size: $(tail -3 "$tmp/stdout")"
          [[ -s "$tmp/r.npy" ]] || fail "$dtype $op n=$size: no output"
          rm -f "$tmp/r.npy"
        done
        # segments: empty ones, one ending at n, one spanning most of the input
        "$app" --generate normal --dtype $dtype --n $n --op $op --validate -q \
          --offsets "$(list seg "0 0 1 7 500000 500000 999999 $n $n")" > "$tmp/stdout" 2>&1 ||
          fail "$dtype $op segments: $(tail -3 "$tmp/stdout")"
      done
    done
    # NaNs and an initial value
    printf '1.5\nnan\n-2\n' > "$tmp/nan.txt"
    for op in sum min max; do
      out=$("$app" -i "$tmp/nan.txt" --dtype float32 --op $op --validate 2>&1) || fail "NaN $op: $out"
      grep -qE "$op = -?nan" <<< "$out" || fail "NaN $op: the result is not NaN: $out"
    done
    out=$("$app" -i "$tmp/probe.npy" --op max --init 2147483647 --validate 2>&1) || fail "--init: $out"
    grep -q "max = 2147483647" <<< "$out" || fail "--init max: $out"
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
exit $status
