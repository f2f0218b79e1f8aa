#!/usr/bin/env bash
# Tests of scanlab-scan as users run it.
# Usage: scan_app_test.sh CASE BINDIR
#   Errors    bad keys, offsets and initial values: one line naming the problem, exit 1 or
#             2, nothing written under -o; they are found before a GPU is looked for, so
#             this runs everywhere
#   Validate  every dtype and operator, inclusive and exclusive, with and without --init,
#             whole, by key (narrow and wide keys, short and long runs) and by offsets
#             (empty segments, boundaries at n), n = 0, 1 and 300007, NaNs in floats:
#             --validate against the CPU reference and CUB passes and -o writes n results
#             (skipped without a GPU: exit 77)
#   StreamErrors  the streaming path's input faults (issue #24: missing, directory, truncated,
#             bad header, raw size, bad --device-memory): found before a GPU is looked for
#   Stream    --device-memory 64K (the streaming path, many chunks and slices) writes what the
#             in-memory path writes: integers exactly, floats within a tolerance, n = 0, 1,
#             4097, 300007, every operator, inclusive and exclusive, --init, the results
#             widened (int32 and uint8 summed in 64 bits), --validate passes; a full disk on
#             the output (ulimit -f) is one clear error leaving no file; keys and offsets
#             are refused on it (skipped without a GPU: exit 77)
set -uo pipefail
case_name="$1" bin="$2"
app="$bin/scanlab-scan" gen="$bin/scanlab-gen"
source "$(dirname "${BASH_SOURCE[0]}")/../common/app_test_lib.sh"

case "$case_name" in
  Errors)
    "$gen" --dist uniform --dtype int32 --n 100 -o "$tmp/x.npy" -q || fail "scanlab-gen"
    expect_error 1 "lies outside [0, 100]" -i "$tmp/x.npy" --offsets "$(list o1 "0 50 101")"
    expect_error 1 "must not decrease" -i "$tmp/x.npy" --offsets "$(list o2 "0 60 50 100")"
    expect_error 1 "at least 2 are needed" -i "$tmp/x.npy" --offsets "$(list o3 "7")"
    expect_error 1 "99 keys for 100 values" -i "$tmp/x.npy" --keys "$(run_keys k1 99 3)"
    "$gen" --dist uniform --dtype float32 --n 100 -o "$tmp/f.npy" -q || fail "scanlab-gen"
    expect_error 1 "integer keys expected, not float32" -i "$tmp/x.npy" --keys "$tmp/f.npy"
    expect_error 2 "excludes" -i "$tmp/x.npy" --keys "$(run_keys k2 100 3)" --offsets "$(list o4 "0 100")"
    expect_error 2 "expected one int64 value" -i "$tmp/x.npy" --init abc
    expect_error 2 "expected one int32 value" -i "$tmp/x.npy" --op max --init 1e3
    expect_error 2 "--op" -i "$tmp/x.npy" --op mean
    ;;
  Validate)
    skip_without_gpu
    n=300007
    short=$(run_keys short $n 3) long=$(run_keys long $n 5000)
    "$gen" --dist few-unique --dtype uint8 --n $n -o "$tmp/k8.npy" -q || fail "scanlab-gen keys"
    offsets=$(list seg "0 0 1 7 4096 4096 150000 299999 $n $n")
    # run LABEL EXPECTED_N ARGS...: --validate passes and -o holds EXPECTED_N results.
    # Each run has 60 s; SCAN_APP_TEST_LOG names a file that gets a line per run (its time).
    run() {
      local label=$1 expected=$2; shift 2
      local start=$SECONDS
      timeout 60 "$app" "$@" --validate -q -o "$tmp/r.npy" > "$tmp/stdout" 2>&1 || fail "$label: $(tail -4 "$tmp/stdout")"
      [[ -s "$tmp/r.npy" && $(npy_length "$tmp/r.npy") == "$expected" ]] || fail "$label: no output of $expected items"
      [[ -n ${SCAN_APP_TEST_LOG:-} ]] && echo "$label: $((SECONDS - start)) s" >> "$SCAN_APP_TEST_LOG"
      rm -f "$tmp/r.npy"
    }
    # SCAN_APP_TEST_DTYPES: a subset of the dtypes (to run shards side by side)
    for dtype in ${SCAN_APP_TEST_DTYPES:-uint8 int8 uint16 int16 uint32 int32 uint64 int64 float32 float64}; do
      for op in sum prod min max; do
        g=(--generate normal --dtype $dtype --op $op)
        sizes=$n; [[ $op == sum ]] && sizes="0 1 $n"
        for size in $sizes; do run "$dtype $op n=$size" $size "${g[@]}" --n $size; done
        run "$dtype $op exclusive" $n "${g[@]}" --n $n --exclusive
        run "$dtype $op by short keys" $n "${g[@]}" --n $n --keys "$short"
        run "$dtype $op by long keys, exclusive, init" $n "${g[@]}" --n $n --keys "$long" --exclusive --init 3
        run "$dtype $op by uint8 keys, init" $n "${g[@]}" --n $n --keys "$tmp/k8.npy" --init 2
        run "$dtype $op by offsets" $n "${g[@]}" --n $n --offsets "$offsets"
        run "$dtype $op by offsets, exclusive" $n "${g[@]}" --n $n --offsets "$offsets" --exclusive
      done
    done
    # NaNs: a NaN stays from where it appears (min, max) and poisons the sum
    printf '1.5\nnan\n-2\n' > "$tmp/nan.txt"
    for op in sum min max; do
      out=$("$app" -i "$tmp/nan.txt" --dtype float32 --op $op --validate 2>&1) || fail "NaN $op: $out"
      grep -qE ": 1.5 -?nan -?nan" <<< "$out" || fail "NaN $op: not 1.5 nan nan: $out"
    done
    # by key with the keys' own values: 1 2 | 3 | 4 5 6 -> 1 3 | 3 | 4 9 15
    out=$("$app" -i "$(list v "1 2 3 4 5 6")" --dtype int32 --keys "$(list k "9 9 -1 7 7 7")" --validate 2>&1) ||
      fail "small by key: $out"
    grep -q ": 1 3 3 4 ... 15" <<< "$out" || fail "small by key: $out"
    ;;
  StreamErrors)
    stream_input_errors
    ;;
  Stream)
    skip_without_gpu
    stream_sweep "--op sum" "--op prod" "--op min" "--op max" \
      "--op sum --exclusive" "--op prod --exclusive" "--op min --exclusive" "--op max --exclusive"
    "$gen" --dist normal --dtype int32 --n 300007 -o "$tmp/x.npy" -q || fail "scanlab-gen"
    stream_matches "--init" -i "$tmp/x.npy" --op sum --init -1000000
    stream_matches "--init, exclusive" -i "$tmp/x.npy" --op max --exclusive --init 7
    tail -c 1200028 "$tmp/x.npy" > "$tmp/x.bin"  # the data alone: raw int32, mapped
    stream_matches "raw" -i "$tmp/x.bin" --dtype int32 --op sum
    # To standard output: the .npy streams out as it is computed.
    "$app" -i "$tmp/x.npy" --device-memory 64K --stream-slice 40000 -q -o - > "$tmp/piped.npy" 2> "$tmp/stderr" ||
      fail "-o -: $(cat "$tmp/stderr")"
    "$app" -i "$tmp/x.npy" -q -o "$tmp/mem.npy" || fail "in memory"
    cmp -s "$tmp/piped.npy" "$tmp/mem.npy" || fail "-o - streamed differs from the in-memory output"
    # A full disk: int64 results of 300007 items (2.4 MB) against a 256 KiB file size limit.
    stream_full_disk -i "$tmp/x.npy" --op sum
    expect_error 1 "--offsets: the streaming path (--device-memory 64K) scans whole inputs only" \
      -i "$tmp/x.npy" --device-memory 64K --offsets "$(list o "0 5 300007")"
    expect_error 1 "--keys: the streaming path" -i "$tmp/x.npy" --device-memory 64K --keys "$(run_keys k 300007 5)"
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
exit $status
