#!/usr/bin/env bash
# Tests of scanlab-sort's streaming path (issue #24: the external sort, --device-memory) as users
# run it.
# Usage: sort_app_test.sh CASE BINDIR
#   StreamErrors  the input faults (missing, directory, unreadable, truncated, bad header, raw
#             size, bad --device-memory; --values truncated, of another length, 2 bytes wide)
#             and the options the streaming path refuses with --device-memory (--descending,
#             --begin-bit, --end-bit, --algorithm multipass, --dists): one line, exit 1 or 2,
#             nothing written under -o, the input unchanged; all found before a GPU is looked
#             for, so this runs everywhere
#   Stream    --device-memory 64K (hundreds of runs, thousands of merge steps; 256K and 1M for
#             n = 300007: the steps grow as n / budget^2) writes under -o and --values-out the
#             very bytes the in-memory path writes, for every key dtype, keys, --pairs
#             (positions), --values (4- and 8-byte), --argsort; n = 0, 1, 4097, 100003, 300007;
#             few distinct keys (long runs of equal keys across runs and merge steps); floats
#             with NaNs of both signs and several payloads, -0.0, +0.0 and infinities; a raw
#             input and output; --validate passes and the report has its streaming object; a
#             full disk (ulimit -f) is one clear error leaving no file, so is a budget too small
#             for the merge (16K); standard output and text outputs are refused (skipped
#             without a GPU: exit 77). SORT_APP_TEST_DTYPES: a subset of the key dtypes
set -uo pipefail
case_name="$1" bin="$2"
app="$bin/scanlab-sort" gen="$bin/scanlab-gen"
source "$(dirname "${BASH_SOURCE[0]}")/../common/app_test_lib.sh"

# float_keys NAME N DESCR: N float keys ('<f4' or '<f8', .npy), a third of them special: NaNs
# of both signs with several payloads (quiet and signalling), -0.0, +0.0, +-inf; the rest
# quarter-integers in [-12.5, 12.5] (many equal keys). Seeded. Prints its path.
float_keys() {
  python3 - "$tmp/$1.npy" "$2" "$3" <<'PY' || fail "float_keys $*"
import random, struct, sys
path, n, descr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if descr == "<f4":
    code, bits, specials = "f", "I", [0x7FC00000, 0xFFC00000, 0x7FC00123, 0xFFC00077, 0x7F800001, 0xFF800005,
                                      0x00000000, 0x80000000, 0x7F800000, 0xFF800000]
else:
    code, bits, specials = "d", "Q", [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000123,
                                      0xFFF8000000000077, 0x7FF0000000000001, 0xFFF0000000000005,
                                      0, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000]
rng, body = random.Random(11), bytearray()
for _ in range(n):
    if rng.random() < 1 / 3:
        body += struct.pack("<" + bits, rng.choice(specials))
    else:
        body += struct.pack("<" + code, rng.randint(-50, 50) / 4)
q = chr(39)
header = "{%sdescr%s: %s%s%s, %sfortran_order%s: False, %sshape%s: (%d,), }" % (q, q, q, descr, q, q, q, q, q, n)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(body))
PY
  echo "$tmp/$1.npy"
}

# streaming_counts JSON: "RUNS MERGE_STEPS" from a report's result.streaming object.
streaming_counts() {
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["result"]["streaming"]; print(s["runs"], s["merge_steps"])' "$1"
}

# sort_matches LABEL ARGS...: the streaming path (--device-memory $budget, default 64K) writes
# under -o (and --values-out, where ARGS sort pairs) the bytes the in-memory path writes, its
# --validate passes, its report has the streaming object (with more than one run and merge
# step where $many_runs is set), and no temporary file is left. Needs a GPU.
sort_matches() {
  local label=$1; shift
  local values=()
  [[ " $* " == *" --pairs "* || " $* " == *" --values "* ]] && values=(--values-out)
  local mem_values=() str_values=()
  ((${#values[@]})) && mem_values=(--values-out "$tmp/mem_v.npy") str_values=(--values-out "$tmp/str_v.npy")
  "$app" "$@" -q -o "$tmp/mem.npy" "${mem_values[@]}" > "$tmp/stdout" 2>&1 ||
    { fail "$label, in memory: $(tail -3 "$tmp/stdout")"; return; }
  "$app" "$@" --device-memory "${budget:-64K}" --validate -q -o "$tmp/str.npy" "${str_values[@]}" \
    --json "$tmp/str.json" > "$tmp/stdout" 2>&1 || { fail "$label, streamed: $(tail -6 "$tmp/stdout")"; return; }
  grep -q "pass" "$tmp/stdout" || fail "$label, streamed: no check passed: $(cat "$tmp/stdout")"
  grep -q "FAIL" "$tmp/stdout" && fail "$label, streamed: a check failed: $(cat "$tmp/stdout")"
  cmp -s "$tmp/mem.npy" "$tmp/str.npy" || fail "$label: the streamed -o differs from the in-memory one"
  if ((${#values[@]})); then
    cmp -s "$tmp/mem_v.npy" "$tmp/str_v.npy" || fail "$label: the streamed --values-out differs from the in-memory one"
  fi
  local counts
  counts=$(streaming_counts "$tmp/str.json") || fail "$label: the report has no streaming object with runs"
  if [[ -n ${many_runs:-} ]]; then
    read -r runs steps <<< "$counts"
    ((runs > 1 && steps > 1)) || fail "$label: $runs run(s), $steps merge step(s): expected several"
  fi
  no_temp_files "$label"
  rm -f "$tmp/mem.npy" "$tmp/str.npy" "$tmp/mem_v.npy" "$tmp/str_v.npy" "$tmp/str.json"
}

case "$case_name" in
  StreamErrors)
    stream_input_errors
    # The values: read as the keys are, checked before the GPU.
    "$gen" --dist uniform --dtype int32 --n 1000 -o "$tmp/keys.npy" -q || fail "scanlab-gen"
    "$gen" --dist uniform --dtype int32 --n 999 -o "$tmp/short.npy" -q || fail "scanlab-gen"
    "$gen" --dist uniform --dtype int16 --n 1000 -o "$tmp/narrow.npy" -q || fail "scanlab-gen"
    head -c -8 "$tmp/keys.npy" > "$tmp/vtrunc.npy"
    sm="--device-memory 64K"
    expect_error 1 "vtrunc.npy: truncated data" -i "$tmp/keys.npy" --values "$tmp/vtrunc.npy" $sm
    expect_error 1 "keys and values differ in length: 1000 keys, 999 values" -i "$tmp/keys.npy" \
      --values "$tmp/short.npy" $sm
    expect_error 1 "values must be 4 or 8 bytes wide, not int16" -i "$tmp/keys.npy" --values "$tmp/narrow.npy" $sm
    expect_error 2 "does not exist" -i "$tmp/keys.npy" --values "$tmp/missing.npy" $sm
    # What the external sort cannot do: refused with --device-memory, before anything is read.
    refusal="not on the streaming path (--device-memory), which sorts ascending on all key bits"
    expect_error 2 "--descending: $refusal" -i "$tmp/keys.npy" $sm --descending
    expect_error 2 "--begin-bit: $refusal" -i "$tmp/keys.npy" $sm --begin-bit 8
    expect_error 2 "--end-bit: $refusal" -i "$tmp/keys.npy" $sm --end-bit 16
    expect_error 2 "--algorithm multipass: $refusal" -i "$tmp/keys.npy" $sm --algorithm multipass
    expect_error 2 "--dists: $refusal" --bench --dists uniform $sm
    expect_error 2 "--descending: $refusal" -i "$tmp/trunc.npy" $sm --descending  # before the input is read
    help=$("$app" --help | tr -s ' \n' ' ')
    grep -qF -- "--device-memory LIMIT" <<< "$help" || fail "--help does not list --device-memory"
    grep -qF -- "--descending, --begin-bit, --end-bit, --algorithm multipass and --dists are refused" <<< "$help" ||
      fail "--help does not document the refused options"
    ;;
  Stream)
    skip_without_gpu
    # SORT_APP_TEST_DTYPES: a subset of the key dtypes (to run shards side by side)
    for dtype in ${SORT_APP_TEST_DTYPES:-uint8 int8 uint16 int16 uint32 int32 uint64 int64 float32 float64}; do
      for n in 0 1 4097 100003; do
        "$gen" --dist normal --dtype $dtype --n $n -o "$tmp/x.npy" -q || fail "scanlab-gen"
        many_runs=""
        [[ $n == 100003 ]] && many_runs=1
        sort_matches "$dtype n=$n keys" -i "$tmp/x.npy"
        sort_matches "$dtype n=$n pairs (positions)" -i "$tmp/x.npy" --pairs
        sort_matches "$dtype n=$n argsort" -i "$tmp/x.npy" --argsort
      done
      # Few distinct keys: long runs of equal keys across runs and merge steps (stability).
      "$gen" --dist few-unique --dtype $dtype --n 100003 -o "$tmp/x.npy" -q || fail "scanlab-gen"
      many_runs=1 sort_matches "$dtype few-unique pairs (positions)" -i "$tmp/x.npy" --pairs
      "$gen" --dist normal --dtype $dtype --n 300007 -o "$tmp/x.npy" -q || fail "scanlab-gen"
      many_runs=1 budget=256K sort_matches "$dtype n=300007 pairs (positions), 256K" -i "$tmp/x.npy" --pairs
    done
    many_runs=1
    n=100003
    "$gen" --dist normal --dtype int32 --n $n -o "$tmp/x.npy" -q || fail "scanlab-gen"
    "$gen" --dist uniform --dtype float32 --n $n -o "$tmp/v4.npy" -q || fail "scanlab-gen"
    "$gen" --dist uniform --dtype int64 --n $n -o "$tmp/v8.npy" -q || fail "scanlab-gen"
    sort_matches "int32 keys, float32 values" -i "$tmp/x.npy" --values "$tmp/v4.npy"
    sort_matches "int32 keys, int64 values" -i "$tmp/x.npy" --values "$tmp/v8.npy"
    "$gen" --dist few-unique --dtype float64 --n $n -o "$tmp/f.npy" -q || fail "scanlab-gen"
    sort_matches "float64 few-unique keys, int64 values" -i "$tmp/f.npy" --values "$tmp/v8.npy"
    for descr in "<f4" "<f8"; do
      keys=$(float_keys nan $n "$descr")
      sort_matches "NaNs $descr keys" -i "$keys"
      sort_matches "NaNs $descr pairs" -i "$keys" --values "$tmp/v4.npy"
      sort_matches "NaNs $descr argsort" -i "$keys" --argsort
      many_runs="" sort_matches "NaNs $descr n=5" -i "$(float_keys nan5 5 "$descr")" --pairs
    done
    "$gen" --dist normal --dtype int64 --n 300007 -o "$tmp/x3.npy" -q || fail "scanlab-gen"
    "$gen" --dist uniform --dtype int64 --n 300007 -o "$tmp/x3v.npy" -q || fail "scanlab-gen"
    budget=1M sort_matches "int64 n=300007 argsort, 1M" -i "$tmp/x3.npy" --argsort
    # Raw input and output.
    tail -c 400012 "$tmp/x.npy" > "$tmp/x.bin"  # the data alone: raw int32, mapped
    "$app" -i "$tmp/x.bin" --dtype int32 -q -o "$tmp/mem.bin" || fail "raw, in memory"
    "$app" -i "$tmp/x.bin" --dtype int32 --device-memory 64K -q -o "$tmp/str.bin" || fail "raw, streamed"
    cmp -s "$tmp/mem.bin" "$tmp/str.bin" || fail "raw: the streamed output differs from the in-memory one"
    # No output: the sorted keys and values stay in memory; --bench prints the host data rate.
    out=$("$app" -i "$tmp/x.npy" --pairs --device-memory 64K --validate --bench 2>&1) || fail "no -o: $out"
    grep -q "^streamed .* GB/s of host data" <<< "$out" || fail "--bench: no streaming summary: $out"
    no_temp_files "no -o"
    # A full disk: 100003 int64 keys (800 KB) against a 256 KiB file size limit, found when the
    # output is preallocated.
    "$gen" --dist normal --dtype int64 --n $n -o "$tmp/x64.npy" -q || fail "scanlab-gen"
    stream_full_disk -i "$tmp/x64.npy"
    # A budget the merge of the runs does not fit: one line saying so, nothing left.
    expect_error 1 "too small for the external sort of 300007 items of 16 bytes" -i "$tmp/x3.npy" \
      --values "$tmp/x3v.npy" --device-memory 16K
    # Outputs a mapping cannot be: standard output, text. Nothing written, one line.
    "$app" -i "$tmp/x.npy" --device-memory 64K -o - > "$tmp/piped" 2> "$tmp/stderr"
    [[ $? == 1 ]] || fail "-o -: not refused: $(cat "$tmp/stderr")"
    grep -qF "standard output: this output is written in place in a file (memory-mapped)" "$tmp/stderr" ||
      fail "-o -: $(cat "$tmp/stderr")"
    [[ ! -s "$tmp/piped" ]] || fail "-o -: wrote to standard output"
    "$app" -i "$tmp/x.npy" --device-memory 64K -o "$tmp/sorted.txt" > "$tmp/stdout" 2> "$tmp/stderr"
    [[ $? == 1 ]] || fail "-o sorted.txt: not refused: $(cat "$tmp/stderr")"
    grep -qF "sorted.txt: this output is written in place (memory-mapped) as .npy or raw" "$tmp/stderr" ||
      fail "-o sorted.txt: $(cat "$tmp/stderr")"
    [[ ! -e "$tmp/sorted.txt" ]] || fail "-o sorted.txt: wrote it"
    no_temp_files "refused outputs"
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
exit $status
