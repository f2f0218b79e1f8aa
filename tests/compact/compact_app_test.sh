#!/usr/bin/env bash
# Tests of scanlab-compact's streaming path (issue #24) as users run it.
# Usage: compact_app_test.sh CASE BINDIR
#   StreamErrors  the input faults (missing, directory, truncated, bad header, raw size, bad
#             --device-memory): one line, nothing written under -o, the input unchanged; found
#             before a GPU is looked for, so this runs everywhere
#   Stream    --device-memory 64K (many chunks and slices) writes the kept values the
#             in-memory path writes, bit for bit, for every value predicate and several
#             dtypes, n = 0, 1, 4097, 300007 (none kept, all kept included), --validate
#             passes; a full disk on the output (ulimit -f) is one clear error leaving no
#             file; --flags, --unique, --indices and -o - are refused on it (skipped without
#             a GPU: exit 77)
set -uo pipefail
case_name="$1" bin="$2"
app="$bin/scanlab-compact" gen="$bin/scanlab-gen"
source "$(dirname "${BASH_SOURCE[0]}")/../common/app_test_lib.sh"

case "$case_name" in
  StreamErrors)
    stream_input_errors --gt 0
    ;;
  Stream)
    skip_without_gpu
    stream_sweep "--gt 0" "--lt 3" "--between 0 1" "--nonzero" "--finite"
    DTYPES="uint8 int16 int64 uint64" stream_sweep "--odd" "--even"
    DTYPES="float32 float64" stream_sweep "--gt 1e30" "--lt 1e30"
    printf '1.5\nnan\n-2\ninf\n0\n' > "$tmp/nan.txt"
    stream_matches "NaN, inf, --finite" -i "$tmp/nan.txt" --dtype float64 --finite
    stream_matches "NaN, inf, --nonzero" -i "$tmp/nan.txt" --dtype float64 --nonzero
    "$gen" --dist uniform --dtype int64 --n 300007 -o "$tmp/x.npy" -q || fail "scanlab-gen"
    tail -c 2400056 "$tmp/x.npy" > "$tmp/x.bin"  # the data alone: raw int64, mapped
    stream_matches "raw" -i "$tmp/x.bin" --dtype int64 --odd
    # A full disk: about half of 300007 int64 kept (1.2 MB) against a 256 KiB file size limit.
    stream_full_disk -i "$tmp/x.npy" --odd
    sm="--device-memory 64K"
    expect_error 1 "--flags: not on the streaming path (--device-memory 64K)" -i "$tmp/x.npy" $sm --flags "$tmp/x.npy"
    expect_error 1 "--unique: not on the streaming path" -i "$tmp/x.npy" $sm --unique
    expect_error 1 "--indices: not on the streaming path" -i "$tmp/x.npy" $sm --odd --indices "$tmp/where.npy"
    [[ ! -e "$tmp/where.npy" ]] || fail "--indices: wrote $tmp/where.npy"
    "$app" -i "$tmp/x.npy" $sm --odd -o - > "$tmp/piped" 2> "$tmp/stderr"
    [[ $? == 1 ]] || fail "-o -: not refused: $(cat "$tmp/stderr")"
    grep -qF "standard output: cannot stream this output to standard output" "$tmp/stderr" ||
      fail "-o -: $(cat "$tmp/stderr")"
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
exit $status
