#!/usr/bin/env bash
# Every app's --json against the app report schema (docs/schema/app-report.schema.json),
# on a GPU: each app runs with --validate --bench --json on small generated data and must
# exit 0 and write a report that scripts/validate-report.py accepts, with a benchmark whose
# rows keep their samples; one app also writes --csv and --markdown. Without a GPU (an app
# exits 3) the test is skipped (exit 77).
# Usage: app_reports_test.sh BINDIR REPO
set -uo pipefail
bin="$1" repo="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
status=0
fail() { echo "FAIL: $*"; status=1; }

n=65536
# name|app and arguments (the --json and --repeat are added)
runs=(
  "reduce|scanlab-reduce --n $n --dtype int32 --validate --bench"
  "reduce_segmented|scanlab-reduce --n $n --dtype float32 --op max --validate --bench --offsets OFFSETS"
  "reduce_by_key|scanlab-reduce --n 6 --dtype int32 --validate --bench --keys KEYS"
  "scan|scanlab-scan --n $n --dtype int32 --validate --bench"
  "scan_by_offsets|scanlab-scan --n $n --dtype float32 --op max --exclusive --validate --bench --offsets OFFSETS"
  "norms|scanlab-norms --n $n --validate --bench"
  "compact|scanlab-compact --generate uniform --dtype uint32 --n $n --lt 2147483648 --validate --bench"
  "partition|scanlab-partition --n $n --validate --bench"
  "quicksort|scanlab-quicksort --n $n --validate --bench"
  "sort|scanlab-sort --n $n --validate --bench"
  "linrec|scanlab-linrec --n $n --validate --bench"
  "linrec_reverse|scanlab-linrec --n $n --batch 4 --reverse --validate --bench"
  "linrec_backward|scanlab-linrec --n $n --backward --validate --bench"
  "jacobi|scanlab-jacobi --n 16 --validate --bench"
  "cg|scanlab-cg --poisson3d 8 --validate --bench"
  "dist_sort|scanlab-dist sort --n $n --dtype uint32 --validate --bench"
  "dist_reduce|scanlab-dist reduce --n $n --dtype float32 --validate --bench"
  "bench_reduce|scanlab-bench reduce --sizes 2^16 --types int32 --variants production"
  "bench_scan|scanlab-bench scan --sizes 2^16 --types int32 --variants production"
)
printf '0\n100\n100\n65536\n' > "$tmp/offsets.txt"
printf '9\n9\n-1\n7\n7\n7\n' > "$tmp/keys.txt"

first=1
for entry in "${runs[@]}"; do
  name="${entry%%|*}" cmd="${entry#*|}"
  cmd="${cmd/OFFSETS/$tmp/offsets.txt}"
  cmd="${cmd/KEYS/$tmp/keys.txt}"
  # shellcheck disable=SC2086
  "$bin"/$cmd --repeat 10 --json "$tmp/$name.json" -q >"$tmp/$name.log" 2>&1
  rc=$?
  if ((first)) && [[ $rc -eq 3 ]]; then
    echo "SKIP: $(tail -n 1 "$tmp/$name.log")"
    exit 77
  fi
  first=0
  [[ $rc -eq 0 ]] || { fail "$name: exit $rc: $(tail -n 3 "$tmp/$name.log")"; continue; }
  [[ -s $tmp/$name.json ]] || { fail "$name: no JSON written"; continue; }
  python3 "$repo/scripts/validate-report.py" -q "$tmp/$name.json" || fail "$name: the report does not follow the schema"
  python3 - "$tmp/$name.json" "$name" <<'PY' || fail "$name: see above"
import json, sys
doc, name = json.load(open(sys.argv[1])), sys.argv[2]
problems = []
if not doc["validation"]:
    problems.append("no checks in 'validation'")
if not all(c["passed"] for c in doc["validation"]):
    problems.append("a check failed: " + "; ".join(c["detail"] for c in doc["validation"] if not c["passed"]))
bench = doc["bench"]
if bench is None or not bench["rows"]:
    problems.append("no benchmark rows")
else:
    for r in bench["rows"]:
        if r["samples_ms"] is None or len(r["samples_ms"]) != r["runs"]:
            problems.append(f"{r['variant']}: {r['runs']} runs but samples {r['samples_ms']}")
        if r["ceiling"] == "read" and bench["ceilings"]["read_gbps"] is None:
            problems.append(f"{r['variant']}: compared with the read ceiling, which was not measured")
    read_only = name.startswith(("reduce", "norms", "bench_reduce", "dist_reduce"))
    scanlab = [r for r in bench["rows"] if r["variant"] in ("scanlab", "production")]
    if read_only and any(r["ceiling"] != "read" for r in scanlab):
        problems.append("a read-only job is not compared with the read ceiling")
    if bench["nvml"] and any(r["clocks"] is None for r in bench["rows"] if r["warmup"] > 0):
        problems.append("NVML is there but a harness row has no clocks")
if doc["command_line"][0].rsplit("/", 1)[-1] != doc["app"]:
    problems.append(f"command_line starts with {doc['command_line'][0]}, not {doc['app']}")
for p in problems:
    print(f"FAIL: {name}: {p}")
sys.exit(1 if problems else 0)
PY
done

# The table in CSV and Markdown, beside the JSON.
"$bin/scanlab-compact" --n $n --bench --repeat 10 --csv "$tmp/t.csv" --markdown "$tmp/t.md" -q >/dev/null 2>&1 ||
  fail "scanlab-compact --csv --markdown"
[[ $(head -n 1 "$tmp/t.csv" 2>/dev/null) == suite,variant,type,dataset,n,* ]] || fail "the CSV has no header"
[[ $(wc -l <"$tmp/t.csv" 2>/dev/null || echo 0) -ge 3 ]] || fail "the CSV has no rows"
grep -q '^| suite | variant |' "$tmp/t.md" 2>/dev/null || fail "the Markdown has no table"

[[ $status -eq 0 ]] && echo "PASS: ${#runs[@]} app reports follow the schema"
exit "$status"
