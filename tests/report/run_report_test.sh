#!/usr/bin/env bash
# Tests of scanlab-report. Usage: run_report_test.sh CASE TOOL REPO
#   Results   the report on the committed results (docs/results/*.json) and on a made-up app
#             report (synthetic_app.json): report.md and the PNGs it names appear, each PNG is
#             a real image, the same input gives the same bytes, and an earlier report is
#             replaced without leftovers
#   BadInput  invalid JSON, a row without a field, a file that is not an app report
#             (docs/json-schema.md), a destination that is not a report, no arguments: one
#             line on stderr, the right exit status, nothing written
# Exit 77 (CTest's SKIP_RETURN_CODE) where no python3 has matplotlib.
set -uo pipefail
case_name="$1" tool="$2" repo="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! "$repo/scripts/python.sh" -c '' 2>/dev/null; then
  echo "SKIP: no python3 with numpy and matplotlib (scripts/install-deps.sh installs them)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# Runs the tool; sets rc, and out/err to the contents of its stdout/stderr.
run() {
  "$tool" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  out="$(cat "$tmp/stdout")" err="$(cat "$tmp/stderr")"
}

# One line on stderr, "scanlab-report: error: ..." containing each of the given strings.
expect_error() {
  local want_rc="$1"; shift
  [[ $rc -eq $want_rc ]] || fail "exit status $rc, expected $want_rc (stderr: $err)"
  [[ $(wc -l <"$tmp/stderr") -eq 1 ]] || fail "expected one line on stderr, got: $err"
  for s in "$@"; do
    [[ $err == *"$s"* ]] || fail "stderr lacks '$s': $err"
  done
}

case "$case_name" in
  Results)
    inputs=("$repo"/docs/results/*.json "$here/synthetic_app.json")
    run "${inputs[@]}" -o "$tmp/report"
    [[ $rc -eq 0 ]] || { fail "exit status $rc: $err"; exit 1; }
    echo "$out"
    # The checks that need the JSON and the Markdown read together.
    "$repo/scripts/python.sh" - "$tmp/report" "${inputs[@]}" <<'PY' || status=1
import json, os, re, sys
folder, inputs = sys.argv[1], sys.argv[2:]
problems = []
md = open(os.path.join(folder, "report.md"), encoding="utf-8").read()
named = re.findall(r"!\[(?:\\.|[^\]\\])*\]\(([^)]+\.png)\)", md)
on_disk = sorted(f for f in os.listdir(folder) if f.endswith(".png"))
if sorted(named) != on_disk:
    problems.append(f"PNGs named in report.md {sorted(named)} differ from those written {on_disk}")
for f in on_disk:
    data = open(os.path.join(folder, f), "rb").read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n") or len(data) < 10000:
        problems.append(f"{f} is not a PNG of a plot ({len(data)} bytes)")
for path in inputs:
    doc = json.load(open(path))
    bench = doc["bench"]
    rows = bench["rows"]
    suites = list(dict.fromkeys(r["suite"] for r in rows))
    stem = os.path.splitext(os.path.basename(path))[0]
    if f"`{path}`" not in md:
        problems.append(f"report.md does not name {path}")
    for s in suites:
        sr = [r for r in rows if r["suite"] == s]
        several_sizes = len({r["n"] for r in sr}) > 1
        title = s if (f"## {s}\n" in md) else stem  # single-measurement suites share a section
        if f"## {title}\n" not in md:
            problems.append(f"no section for suite {s} of {path}")
        if several_sizes and not any(n.startswith(re.sub(r'[^a-z0-9]+', '-', s.lower())) and
                                     n.endswith("_gbps.png") for n in named):
            problems.append(f"no GB/s-against-n plot for {s} of {path}")
        if len(sr) > 30 and f"All {len(sr)} rows" not in md:
            problems.append(f"report.md does not list all {len(sr)} rows of {s}")
    for ceiling in sorted({r["ceiling"] for r in rows if r["pct_of_ceiling"] is not None}):
        if f"% {ceiling} |" not in md:  # each row names the ceiling it is compared with
            problems.append(f"no row of {path} is shown against its {ceiling} ceiling")
if "GB/s per dataset" not in md:
    problems.append("no bars per dataset for the app report")
for p in problems:
    print("FAIL:", p)
print(f"checked report.md ({len(md.splitlines())} lines) and {len(on_disk)} PNGs: {', '.join(on_disk)}")
sys.exit(1 if problems else 0)
PY
    # Deterministic: a second report is the same, byte for byte.
    run "${inputs[@]}" -o "$tmp/again"
    [[ $rc -eq 0 ]] || fail "second run: exit status $rc: $err"
    diff -r "$tmp/report" "$tmp/again" >/dev/null || fail "two runs on the same input differ"
    # An earlier report is replaced whole (a stale plot disappears), with no leftovers.
    touch "$tmp/report/stale.png"
    run "$repo/docs/results/reduce.json" -o "$tmp/report"
    [[ $rc -eq 0 ]] || fail "replacing a report: exit status $rc: $err"
    [[ -e $tmp/report/stale.png ]] && fail "the earlier report's files survived the replacement"
    [[ -f $tmp/report/report.md ]] || fail "no report.md after the replacement"
    leftovers="$(find "$tmp" -maxdepth 1 -name '.*' ! -name . | head -n 3)"
    [[ -n $leftovers ]] && fail "temporary folders left behind: $leftovers"
    ;;

  BadInput)
    printf '{"results": [1,\n 2,,]}\n' >"$tmp/broken.json"
    run "$tmp/broken.json" -o "$tmp/out"
    expect_error 1 "scanlab-report: error:" "broken.json:2:" "not valid JSON"
    [[ -e $tmp/out ]] && fail "a report folder was written for invalid JSON"

    echo '{"schema": "scanlab-app-report", "schema_version": 1, "bench": {"ceilings": {"memcpy_gbps": 3000}, "rows": [{"suite": "scan", "type": "int32", "n": 1024, "median_ms": 0.01, "gbps": 1}]}}' >"$tmp/no_variant.json"
    run "$tmp/no_variant.json" -o "$tmp/out"
    expect_error 1 "no_variant.json: bench.rows[0]" "'variant'"

    echo '{"schema": "scanlab-app-report", "schema_version": 1, "bench": null}' >"$tmp/no_results.json"
    run "$tmp/no_results.json" -o "$tmp/out"
    expect_error 1 "no_results.json: no benchmark results"

    # Only app reports are read: the shape before schema 1 (a bare "results" list) is refused.
    echo '{"memcpy_gbps": 3000, "results": []}' >"$tmp/old_shape.json"
    run "$tmp/old_shape.json" -o "$tmp/out"
    expect_error 1 "old_shape.json: not a scanlab-app-report"

    run "$tmp/does_not_exist.json" -o "$tmp/out"
    expect_error 1 "does_not_exist.json: cannot read"

    mkdir -p "$tmp/precious" && echo keep >"$tmp/precious/notes.txt"
    run "$repo/docs/results/reduce.json" -o "$tmp/precious"
    expect_error 1 "holds no report.md"
    [[ $(ls "$tmp/precious") == notes.txt ]] || fail "a folder that is not a report was touched"
    [[ -e $tmp/out ]] && fail "a report folder was written for bad input"

    run
    [[ $rc -eq 2 ]] || fail "no arguments: exit status $rc, expected 2"
    run --help
    [[ $rc -eq 0 && $out == *"usage: scanlab-report"* ]] || fail "--help: exit status $rc, output: $out"
    ;;

  *) echo "unknown case $case_name"; exit 2 ;;
esac

if ((status)); then echo "report.$case_name: failed"; else echo "report.$case_name: ok"; fi
exit "$status"
