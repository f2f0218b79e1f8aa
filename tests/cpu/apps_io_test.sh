#!/usr/bin/env bash
# The apps' streams, formats, logging and no-GPU line, run as users run them. CPU only: every
# case runs without a GPU (the apps read and check their input before they look for one).
# Usage: apps_io_test.sh CASE BINDIR
#   GenStdout   scanlab-gen -o - writes the same bytes as -o FILE.npy, and its summary line
#               goes to stderr; -o x.txt is refused
#   GenNoArgs   scanlab-gen with no arguments writes the default dataset (16M uniform float32,
#               seed 42): to standard output when that is a file or pipe, and to
#               uniform-float32-16777216-seed42.npy when it is a terminal (under script(1);
#               that half is skipped without it)
#   Stdin       a .npy (from scanlab-gen -o -), a .npy named .bin and text reach an app through
#               -i -: it gets past reading (exit 0 with a GPU, 3 without); binary junk, a
#               truncated .npy, a .npy that is not one, two standard outputs: one line naming
#               the problem, exit 1 or 2 (scanlab-reduce, skipped where it is not built)
#   Logging     SPDLOG_LEVEL=off silences scanlab-gen and scanlab-jacobi's logs, warn keeps
#               warnings only, a per-app level reaches that app only, and -v/-q on the command
#               line win over SPDLOG_LEVEL
#   StreamBench scanlab-stream-bench's command line: --help names every mode, bad sizes,
#               unknown options and --large with --sort are refused (exit 2) before any GPU
#               is looked for; a good command line gets past parsing (exit 0 with a GPU, 3
#               without; run small: --large --n 1K)
#   NoDriver    without an NVIDIA driver, scanlab-jacobi says "no NVIDIA driver found
#               (libcuda.so.1 could not be loaded ...)" in one line and exits 3 (skipped where
#               libcuda.so.1 is installed)
#   NoArgs      every app built runs with no arguments: exit 3 without a GPU (its default
#               dataset or problem was made, then the GPU looked for), never 2 (skipped with a
#               GPU: there they would run their full default sizes)
set -uo pipefail
case_name="$1" bin="$2"
gen="$bin/scanlab-gen"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# run CMD...: runs it; sets rc, out (stdout) and err (stderr).
run() {
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  out="$(cat -v "$tmp/stdout")" err="$(cat "$tmp/stderr")"
}
has_driver() { ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; }

case "$case_name" in
  GenStdout)
    "$gen" --n 1000 --dtype int32 --dist normal -o "$tmp/file.npy" 2>/dev/null || fail "scanlab-gen -o FILE"
    "$gen" --n 1000 --dtype int32 --dist normal -o - >"$tmp/stream.npy" 2>"$tmp/stderr" || fail "scanlab-gen -o -"
    cmp -s "$tmp/file.npy" "$tmp/stream.npy" || fail "-o - and -o FILE.npy wrote different bytes"
    grep -q "wrote 1000 x int32.* to standard output" "$tmp/stderr" || fail "no summary on stderr: $(cat "$tmp/stderr")"
    run "$gen" --n 10 -o "$tmp/x.txt"
    [[ $rc == 2 && $err == *"writes .npy files (or - for standard output)"* ]] || fail "-o x.txt: $rc $err"
    ;;
  GenNoArgs)
    "$gen" >"$tmp/default.npy" 2>"$tmp/stderr" || fail "scanlab-gen > file: $(cat "$tmp/stderr")"
    "$gen" --n 16M --dtype float32 --dist uniform --seed 42 -o "$tmp/explicit.npy" 2>/dev/null || fail "explicit"
    cmp -s "$tmp/default.npy" "$tmp/explicit.npy" || fail "no arguments: not the default dataset"
    [[ $(stat -c %s "$tmp/default.npy") == $((128 + 4 * 16777216)) ]] || fail "no arguments: unexpected size"
    if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
      mkdir "$tmp/tty" && (cd "$tmp/tty" && script -qec "$gen" /dev/null >"$tmp/tty.log" 2>&1) ||
        fail "scanlab-gen on a terminal: $(cat -v "$tmp/tty.log")"
      cmp -s "$tmp/tty/uniform-float32-16777216-seed42.npy" "$tmp/explicit.npy" ||
        fail "on a terminal: no uniform-float32-16777216-seed42.npy: $(ls "$tmp/tty") $(cat -v "$tmp/tty.log")"
    else
      echo "note: no script(1): the terminal half is not tested"
    fi
    ;;
  Stdin)
    app="$bin/scanlab-reduce"
    [[ -x $app ]] || { echo "SKIP: scanlab-reduce is not built"; exit 77; }
    # Past reading: 0 where a GPU runs it, 3 where there is none; never 1 or 2.
    past_reading() { [[ $rc == 0 || $rc == 3 ]] || fail "$1: exit $rc: $err"; }
    "$gen" --n 1000 --dtype int32 -o - 2>/dev/null | "$app" -i - -q >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$? err="$(cat "$tmp/stderr")"; past_reading "scanlab-gen -o - | -i -"
    "$gen" --n 1000 --dtype int32 -o "$tmp/x.npy" 2>/dev/null && cp "$tmp/x.npy" "$tmp/x.bin"
    run "$app" -i "$tmp/x.bin" -q; past_reading ".npy named .bin (no --dtype)"
    run "$app" -i - -q < "$tmp/x.npy"; past_reading "-i - < x.npy"
    printf '1\n2\n3\n' | "$app" -i - -q >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$? err="$(cat "$tmp/stderr")"; past_reading "text on -i -"
    printf 'ab\0\1cd' | "$app" -i - -q >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$? err="$(cat "$tmp/stderr")"
    [[ $rc == 1 && $err == *"standard input: neither a .npy file nor text"* ]] || fail "junk on -i -: $rc $err"
    head -c 140 "$tmp/x.npy" | "$app" -i - -q >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$? err="$(cat "$tmp/stderr")"
    [[ $rc == 1 && $err == *"standard input: truncated data"* ]] || fail "truncated .npy on -i -: $rc $err"
    printf 'x,y\n1,2\n' > "$tmp/not.npy"
    run "$app" -i "$tmp/not.npy" -q
    [[ $rc == 1 && $err == *"not.npy: not a .npy file (bad magic): it starts with \"x,y\\n1,2\\n\""* ]] ||
      fail "text named .npy: $rc $err"
    run "$app" -i "$tmp/x.npy" -o - --json - -q
    [[ $rc == 2 && $err == *"both write to standard output"* && -z $out ]] || fail "two standard outputs: $rc $err"
    run "$app" -i "$tmp/x.npy" --offsets - -q
    [[ $rc == 2 && $err == *"standard input ('-') is read by -i only"* ]] || fail "--offsets -: $rc $err"
    ;;
  Logging)
    run env SPDLOG_LEVEL=off "$gen" --n 10 --unique 3 -o "$tmp/a.npy"
    [[ $rc == 0 && -z $err ]] || fail "SPDLOG_LEVEL=off: $rc '$err'"
    run env SPDLOG_LEVEL=warn "$gen" --n 10 --unique 3 -o "$tmp/a.npy"
    [[ $err == *"warning: --unique is ignored"* && $err != *"wrote"* ]] || fail "SPDLOG_LEVEL=warn: '$err'"
    run env SPDLOG_LEVEL=debug "$gen" --n 10 --unique 3 -o "$tmp/a.npy" -q
    [[ -z $err ]] || fail "-q wins over SPDLOG_LEVEL=debug: '$err'"
    run env SPDLOG_LEVEL="off,scanlab-gen=info" "$gen" --n 10 -o "$tmp/a.npy"
    [[ $err == *"info: wrote 10"* ]] || fail "a level for scanlab-gen: '$err'"
    run env SPDLOG_LEVEL="scanlab-cg=off" "$gen" --n 10 -o "$tmp/a.npy"
    [[ $err == *"info: wrote 10"* ]] || fail "a level for another app: '$err'"
    jacobi="$bin/scanlab-jacobi"
    if [[ -x $jacobi ]]; then
      run env SPDLOG_LEVEL=off "$jacobi" --n 8
      [[ $err != *"info:"* ]] || fail "jacobi, SPDLOG_LEVEL=off: '$err'"
      run env SPDLOG_LEVEL=off "$jacobi" --n 8 -v
      [[ $err == *"info: grid 8^3"* ]] || fail "jacobi, -v wins over SPDLOG_LEVEL=off: '$err'"
      run env SPDLOG_LEVEL=debug "$jacobi" --n 8 -q
      [[ $err != *"info:"* ]] || fail "jacobi, -q wins over SPDLOG_LEVEL=debug: '$err'"
    fi
    ;;
  NoDriver)
    has_driver && { echo "SKIP: libcuda.so.1 is installed"; exit 77; }
    jacobi="$bin/scanlab-jacobi"
    [[ -x $jacobi ]] || { echo "SKIP: scanlab-jacobi is not built"; exit 77; }
    run "$jacobi" --n 8 -q
    [[ $rc == 3 ]] || fail "exit $rc, expected 3"
    [[ $err == "scanlab-jacobi: no NVIDIA driver found (libcuda.so.1 could not be loaded"*"install the NVIDIA driver"* ]] ||
      fail "message: '$err'"
    [[ $(wc -l <"$tmp/stderr") == 1 ]] || fail "more than one line: '$err'"
    [[ $err != *"insufficient"* ]] || fail "the runtime's misleading words: '$err'"
    ;;
  NoArgs)
    has_driver && { echo "SKIP: a driver is installed: the apps would run their full default sizes"; exit 77; }
    found=0
    for app in scanlab-norms scanlab-reduce scanlab-cg scanlab-jacobi scanlab-linrec scanlab-compact \
               scanlab-partition scanlab-quicksort scanlab-sort; do
      [[ -x $bin/$app ]] || continue
      found=1
      run "$bin/$app"
      [[ $rc == 3 ]] || fail "$app with no arguments: exit $rc, expected 3 (no GPU): $err"
    done
    [[ $found == 1 ]] || { echo "SKIP: none of the GPU apps is built"; exit 77; }
    ;;
  StreamBench)
    bench="$bin/scanlab-stream-bench"
    [[ -x $bench ]] || { echo "SKIP: scanlab-stream-bench is not built"; exit 77; }
    run "$bench" --help
    [[ $rc == 0 ]] || fail "--help: exit $rc"
    for mode in "--sort" "--large" "--budget all" "--in-place" "--pairs"; do
      [[ $out == *"$mode"* ]] || fail "--help does not name $mode"
    done
    for args in "--n 12Q" "--budget -3G" "--n 0" "--chunk" "--frobnicate 3" "--large --sort"; do
      run "$bench" $args
      [[ $rc == 2 ]] || fail "$args: exit $rc, expected 2: $err"
      [[ $err == "scanlab-stream-bench: "* && $(wc -l <"$tmp/stderr") == 1 ]] || fail "$args: message '$err'"
    done
    run "$bench" --large --n 1K --budget 1M
    [[ $rc == 0 || $rc == 3 ]] || fail "--large --n 1K: exit $rc: $err"
    if [[ $rc == 3 ]]; then  # the apps' one line for a missing GPU, not the runtime's words
      [[ $(wc -l <"$tmp/stderr") == 1 && $err != *"insufficient"* ]] || fail "no GPU: '$err'"
    fi
    if [[ $rc == 0 ]]; then
      [[ $(grep -c "checked exactly" "$tmp/stdout") == 3 ]] || fail "--large: three checked results expected: $out"
    fi
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
exit $status
