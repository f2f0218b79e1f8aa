#!/usr/bin/env bash
# Tests of scanlab-demo without a GPU: the apps are replaced by stub_app.py, copied into a
# folder under each app's name (made-up JSON, not measurements).
# Usage: run_demo_test.sh CASE DEMO
#   Usage    --help, --list, bad options (exit 2), --only with no match (exit 2), a --bin
#            without the apps (one line, exit 1)
#   NoGpu    the apps exit 3: one line saying so, exit 3, nothing written
#   NoCode   the apps exit 3 with no code for the GPU: their one line, exit 3, nothing written
#   Stubs    every step runs; the table, summary.md, summary.json and the report appear; a
#            step whose dataset is missing is skipped; the report gets the benchmark JSON only;
#            without matplotlib the table still prints and the report is explained, exit 0
#   Failure  one app fails its validation, another hangs past --timeout: FAIL in their rows,
#            every other step still runs, exit 1
set -uo pipefail
case_name="$1" demo="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# The fake bin folder and data folder (every dataset but lund_a.mtx).
bin="$tmp/bin" data="$tmp/data"
mkdir -p "$bin" "$data/sounds" "$data/matrices"
for app in scanlab-bench scanlab-reduce scanlab-scan scanlab-norms scanlab-compact scanlab-partition scanlab-quicksort scanlab-sort \
           scanlab-linrec scanlab-cg scanlab-jacobi scanlab-report; do
  cp "$here/stub_app.py" "$bin/$app" && chmod +x "$bin/$app"
done
for f in ecg.npy ecg_adc.npy sounds.npy sounds/Front_Left.npy co2.npy; do : >"$data/$f"; done

# Runs the demo; sets rc, out (stdout) and err (stderr).
run() {
  "$demo" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  out="$(cat "$tmp/stdout")" err="$(cat "$tmp/stderr")"
}
# The field of summary.json's rows named $1, for the rows whose app is $2, one per line.
rows_field() {
  python3 -c 'import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["rows"]:
    if r["app"].startswith(sys.argv[3]):
        print(r[sys.argv[2]])' "$tmp/out/summary.json" "$1" "$2"
}

case "$case_name" in
  Usage)
    run --help
    [[ $rc -eq 0 && $out == *"--bin DIR"* && $out == *"--quick"* ]] || fail "--help: exit $rc: $out"
    run --list --bin "$bin" --out "$tmp/out" --data "$data"
    [[ $rc -eq 0 ]] || fail "--list: exit $rc: $err"
    [[ $(grep -c "$bin/scanlab-" <<<"$out") -ge 15 ]] || fail "--list shows too few steps: $out"
    [[ $out == *"--validate --bench"* && $out == *"$data/ecg.npy"* || $out == *"ecg.npy"* ]] ||
      fail "--list: no app validated and timed on the ECG: $out"
    [[ ! -e $tmp/out ]] || fail "--list wrote $tmp/out"
    # --only takes words of step names: "sort" is not quicksort, "ecg" picks every ECG step.
    run --list --quick --only sort,ecg --bin "$bin"
    [[ $rc -eq 0 && $out == *"2^20"* && $out == *"scanlab-sort"* && $out == *"scanlab-compact"* &&
       $out != *"scanlab-quicksort"* && $out != *"scanlab-cg"* ]] || fail "--list --quick --only sort,ecg: $out"
    run --bogus
    [[ $rc -eq 2 && $err == *"--bogus"* ]] || fail "--bogus: exit $rc: $err"
    run --repeat 0
    [[ $rc -eq 2 ]] || fail "--repeat 0: exit $rc"
    run --only nothing-like-this --bin "$bin"
    [[ $rc -eq 2 && $err == *"no step matches"* ]] || fail "--only with no match: exit $rc: $err"
    run --bin "$tmp" --out "$tmp/out"
    [[ $rc -eq 1 && $(wc -l <"$tmp/stderr") -eq 1 && $err == *"not found in"* ]] ||
      fail "--bin without the apps: exit $rc: $err"
    ;;
  NoGpu)
    STUB_NO_GPU=1 run --bin "$bin" --out "$tmp/out" --data "$data"
    [[ $rc -eq 3 ]] || fail "exit status $rc, expected 3"
    [[ -z $out && $(wc -l <"$tmp/stderr") -eq 1 && $err == *"no usable NVIDIA GPU"* ]] ||
      fail "expected one line on stderr, got: stdout '$out', stderr '$err'"
    [[ ! -e $tmp/out ]] || fail "wrote $tmp/out without a GPU"
    ;;
  NoCode)
    STUB_NO_CODE=1 run --bin "$bin" --out "$tmp/out" --data "$data"
    [[ $rc -eq 3 ]] || fail "exit status $rc, expected 3"
    [[ -z $out && $(wc -l <"$tmp/stderr") -eq 1 && $err == "scanlab-demo: GPU 0 (Stub GPU) is sm_86, but this binary"* &&
       $err == *"-DCMAKE_CUDA_ARCHITECTURES=86"* ]] ||
      fail "expected the apps' one line on stderr, got: stdout '$out', stderr '$err'"
    [[ ! -e $tmp/out ]] || fail "wrote $tmp/out for a GPU the apps have no code for"
    ;;
  Stubs)
    STUB_LOG="$tmp/calls" run --bin "$bin" --out "$tmp/out" --data "$data"
    [[ $rc -eq 0 ]] || fail "exit status $rc: $err"
    for f in summary.md summary.json report/report.md runs/sort_uniform.json runs/sort_uniform.log; do
      [[ -s $tmp/out/$f ]] || fail "$f is missing"
    done
    # The table: a header, the stubs' ratio (1.0 / 0.8 ms), the solvers without CUB.
    [[ $out == *"app "*"dataset"*"scanlab"*"CUB"*"vs CUB"*"GB/s"*"% ceiling"*"check"* ]] || fail "no header: $out"
    # Each row names its ceiling: read-only jobs the read kernel, the others memcpy.
    [[ $(rows_field ceiling "reduce" | sort -u) == read && $(rows_field ceiling "inclusive scan" | sort -u) == memcpy ]] ||
      fail "ceilings: reduce $(rows_field ceiling reduce), scan $(rows_field ceiling 'inclusive scan')"
    # What the stubs wrote follows the app report schema (docs/schema/app-report.schema.json).
    python3 "$here/../../scripts/validate-report.py" -q "$tmp"/out/runs/*.json || fail "a stub's JSON is not an app report"
    [[ $(grep -c "1.25x" <<<"$out") -ge 15 ]] || fail "expected the ratio 1.25x on the bench rows: $out"
    [[ $(rows_field check "") == *pass* ]] || fail "no row passed"
    [[ $(rows_field check "cg" | sort | uniq -c | tr -s ' ') == *"1 pass"*"1 skipped"* ]] ||
      fail "cg: expected one pass and the lund_a row skipped: $(rows_field check cg)"
    [[ $(rows_field check "norms" | wc -l) -eq 3 ]] || fail "norms: expected dot, rms (uniform) and rms (ECG)"
    [[ $(rows_field vs_cub "jacobi") == None ]] || fail "jacobi has no CUB counterpart"
    [[ $out == *"lund_a.mtx missing (run data/fetch.sh)"* ]] || fail "the skipped step is not explained: $out"
    [[ $out == *"skipped"* && $out == *"steps passed"* ]] || fail "no verdict line: $out"
    # Every app got --validate --bench --json; the report got the benchmark JSON only.
    [[ $(grep -c -- "--validate --bench" "$tmp/calls") -ge 15 ]] || fail "apps not run with --validate --bench"
    report_call="$(grep '^scanlab-report' "$tmp/calls")"
    [[ $report_call == *"runs/sort_uniform.json"* && $report_call == *"runs/reduce.json"* ]] ||
      fail "the report lacks benchmark JSON: $report_call"
    [[ $report_call != *"runs/cg_"* && $report_call != *"runs/jacobi"* ]] || fail "the report got non-benchmark JSON"
    # A second run replaces the results; without matplotlib the table still comes, exit 0.
    STUB_REPORT_NO_MPL=1 run --bin "$bin" --out "$tmp/out" --data "$data" --quick --only sort
    [[ $rc -eq 0 && $out == *"radix sort"* && $out == *"the report needs matplotlib"* ]] ||
      fail "without matplotlib: exit $rc: $out $err"
    ;;
  Failure)
    STUB_FAIL=scanlab-sort STUB_HANG=scanlab-jacobi run --bin "$bin" --out "$tmp/out" --data "$data" --timeout 3
    [[ $rc -eq 1 ]] || fail "exit status $rc, expected 1"
    [[ $(rows_field check "jacobi") == "FAIL (timed out)" ]] || fail "jacobi: $(rows_field check jacobi)"
    [[ $(rows_field check "radix sort" | sort -u) == "FAIL (exit 1)" ]] ||
      fail "radix sort rows: $(rows_field check 'radix sort')"
    [[ $(rows_field check "quicksort" | sort -u) == pass ]] || fail "quicksort should pass"
    [[ $(rows_field check "cg") == *pass* ]] || fail "the steps after the failure did not run"
    [[ $out == *"4 FAILED"* ]] || fail "the verdict does not count 4 failed steps: $out"
    ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
[[ $status -eq 0 ]] && echo "PASS: $case_name"
exit "$status"
