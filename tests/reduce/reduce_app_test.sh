#!/usr/bin/env bash
# Tests of scanlab-reduce as users run it.
# Usage: reduce_app_test.sh CASE BINDIR
#   Errors    bad offsets, keys and initial values: one line naming the problem, exit 1 or
#             2, nothing written under -o; they are found before a GPU is looked for, so
#             this runs everywhere
#   Validate  every dtype, every operator, whole, by segments (empty segments and segments
#             ending at n included) and by key (short runs, long runs, one run; uint8,
#             int64 and uint64 keys; n = 0, 1 and 300007), awkward sizes, NaNs in floats,
#             --init: --validate against the CPU reference and CUB passes, -o writes the
#             result (one value per run by key) and --keys-out the key of each run
#             (skipped without a GPU: exit 77)
#   StreamErrors  the streaming path's input faults (issue #24: missing, directory, truncated,
#             bad header, raw size, bad --device-memory): found before a GPU is looked for
#   Stream    --device-memory 64K (the streaming path, many chunks and slices) gives the
#             in-memory result: integers exactly, floats within a tolerance, n = 0, 1, 4097,
#             300007, every operator, --init, raw and 2-D inputs, --validate passes; segments
#             and keys are refused on it (skipped without a GPU: exit 77)
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
    # --keys
    expect_error 1 "99 keys for 100 values" -i "$tmp/x.npy" --keys "$(run_keys k1 99 3)"
    expect_error 1 "101 keys for 100 values" -i "$tmp/x.npy" --keys "$(list k2 "$(seq 101)")"
    "$gen" --dist uniform --dtype float32 --n 100 -o "$tmp/f100.npy" -q || fail "scanlab-gen"
    expect_error 1 "integer keys expected, not float32" -i "$tmp/x.npy" --keys "$tmp/f100.npy"
    expect_error 2 "excludes" -i "$tmp/x.npy" --keys "$(run_keys k3 100 3)" --offsets "$(list o5 "0 100")"
    expect_error 2 "requires --keys" -i "$tmp/x.npy" --keys-out "$tmp/u.npy"
    [[ ! -e "$tmp/u.npy" ]] || fail "--keys-out without --keys wrote $tmp/u.npy"
    ;;
  Validate)
    skip_without_gpu
    n=1000003
    # REDUCE_APP_TEST_DTYPES: a subset of the dtypes (to run shards side by side; the fixed
    # cases after the dtype loops run in every shard)
    dtypes=${REDUCE_APP_TEST_DTYPES:-uint8 int8 uint16 int16 uint32 int32 uint64 int64 float32 float64}
    for dtype in $dtypes; do
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

    # By key: one result per run of equal consecutive keys (CUB's ReduceByKey).
    # by_key LABEL KEYS ARGS...: --validate passes (the CPU reference and CUB), -o holds one
    # result per run of KEYS (a .npy) and --keys-out the key of each run, which is KEYS
    # without its consecutive repeats (uniq).
    by_key() {
      local label=$1 keys=$2; shift 2
      timeout 60 "$app" "$@" --keys "$keys" --validate -q -o "$tmp/r.npy" --keys-out "$tmp/u.npy" \
        > "$tmp/stdout" 2>&1 || { fail "$label: $(tail -4 "$tmp/stdout")"; return; }
      grep -q "(cub::DeviceReduce::ReduceByKey's result)  *pass: " "$tmp/stdout" ||
        [[ $* == *--init* ]] || fail "$label: CUB's ReduceByKey was not checked: $(cat "$tmp/stdout")"
      npy_values "$keys" | uniq > "$tmp/want_keys"
      npy_values "$tmp/u.npy" > "$tmp/got_keys"
      cmp -s "$tmp/want_keys" "$tmp/got_keys" || fail "$label: --keys-out is not the key of each run"
      [[ $(npy_length "$tmp/r.npy") == $(($(wc -l < "$tmp/want_keys"))) ]] || fail "$label: -o does not hold one value per run"
      rm -f "$tmp/r.npy" "$tmp/u.npy"
    }
    n=300007
    short=$(run_keys short $n 3) long=$(run_keys long $n 5000) one=$(run_keys one $n 1e12)
    k8=$(run_keys k8 $n 40 "|u1")                      # uint8 keys, wrapping past 255
    k64=$(run_keys k64 $n 7 "<u8" $((1 << 32)))      # uint64 keys: equal low 32 bits, runs apart in the high ones
    for dtype in $dtypes; do
      for op in sum prod min max; do
        g=(--generate normal --dtype $dtype --n $n --op $op)
        by_key "$dtype $op by short keys" "$short" "${g[@]}"
        case $dtype in uint8 | int32 | uint64 | float32 | float64)
          by_key "$dtype $op by long keys" "$long" "${g[@]}" ;;
        esac
      done
    done
    by_key "float32 sum, one run" "$one" --generate normal --dtype float32 --n $n
    by_key "int64 max, one run" "$one" --generate uniform --dtype int64 --n $n --op max
    by_key "int16 sum by uint8 keys" "$k8" --generate normal --dtype int16 --n $n
    by_key "float32 max by uint8 keys" "$k8" --generate normal --dtype float32 --n $n --op max
    by_key "float64 sum by uint64 keys" "$k64" --generate normal --dtype float64 --n $n
    by_key "int8 min by uint64 keys" "$k64" --generate normal --dtype int8 --n $n --op min
    by_key "uint32 prod by uint64 keys" "$k64" --generate normal --dtype uint32 --n $n --op prod
    for size in 0 1; do
      keys=$(run_keys "small$size" $size 3)
      by_key "float32 sum by key, n=$size" "$keys" --generate normal --dtype float32 --n $size
      by_key "int32 min by key, n=$size" "$keys" --generate normal --dtype int32 --n $size --op min
    done
    # --init is folded into every run; CUB's ReduceByKey takes none, so only the CPU checks
    by_key "int32 sum by key, init" "$short" --generate normal --dtype int32 --n $n --init 5
    grep -q "CUB: not run" "$tmp/stdout" || fail "by key with --init: no word of CUB not running: $(cat "$tmp/stdout")"
    by_key "float64 max by key, init" "$long" --generate normal --dtype float64 --n $n --op max --init 0.25
    # The values and keys themselves: 1 2 | 3 | 4 5 6 by 9 9 -1 7 7 7 -> 3 3 15, keys 9 -1 7
    out=$("$app" -i "$(list v "1 2 3 4 5 6")" --dtype int32 --keys "$(list k "9 9 -1 7 7 7")" --validate \
      -o "$tmp/r.npy" --keys-out "$tmp/u.npy" 2>&1) || fail "small by key: $out"
    grep -q "3 runs of equal keys, sum of each (int64): 3 3 15$" <<< "$out" || fail "small by key: $out"
    [[ $(npy_values "$tmp/u.npy" | tr '\n' ' ') == "9 -1 7 " ]] || fail "small by key: --keys-out holds $(npy_values "$tmp/u.npy")"
    [[ $(npy_values "$tmp/r.npy" | tr '\n' ' ') == "3 3 15 " ]] || fail "small by key: -o holds $(npy_values "$tmp/r.npy")"
    # NaNs by key: a NaN makes its own run's min and max NaN, not the next run's
    for op in min max; do
      out=$("$app" -i "$tmp/nan.txt" --dtype float32 --keys "$(list kn "4 4 5")" --op $op --validate 2>&1) ||
        fail "NaN $op by key: $out"
      grep -qE "of each \(float32\): -?nan -2$" <<< "$out" || fail "NaN $op by key: not nan -2: $out"
    done
    ;;
  StreamErrors)
    stream_input_errors
    ;;
  Stream)
    skip_without_gpu
    stream_sweep "--op sum" "--op prod" "--op min" "--op max"
    "$gen" --dist normal --dtype int32 --n 300007 -o "$tmp/x.npy" -q || fail "scanlab-gen"
    stream_matches "--init" -i "$tmp/x.npy" --op sum --init -1000000
    stream_matches "--init max" -i "$tmp/x.npy" --op max --init 2147483647
    tail -c 1200028 "$tmp/x.npy" > "$tmp/x.bin"  # the data alone: raw int32, mapped
    stream_matches "raw" -i "$tmp/x.bin" --dtype int32 --op sum
    "$gen" --dist normal --dtype float32 --n 1000 -o "$tmp/f.npy" -q || fail "scanlab-gen"
    python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d.replace(b\"(1000,)\", b\"(8,125)\", 1))" \
      "$tmp/f.npy" "$tmp/f2.npy" || fail "2-D input"
    stream_matches "2-D" -i "$tmp/f2.npy" --op sum
    printf '1.5\nnan\n-2\n' > "$tmp/nan.txt"
    out=$("$app" -i "$tmp/nan.txt" --dtype float32 --op max --device-memory 64K --validate 2>&1) || fail "NaN: $out"
    grep -qE "max = -?nan" <<< "$out" || fail "NaN max streamed: $out"
    expect_error 1 "--offsets: the streaming path (--device-memory 64K) reduces whole inputs only" \
      -i "$tmp/x.npy" --device-memory 64K --offsets "$(list o "0 5 300007")"
    expect_error 1 "--keys: the streaming path" -i "$tmp/x.npy" --device-memory 64K --keys "$(run_keys k 300007 5)"
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
exit $status
