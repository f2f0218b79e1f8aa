#!/usr/bin/env python3
"""A stand-in for every scanlab app in the demo's tests: it is copied under each app's
name and writes the JSON that app writes with --json, with made-up timings (scanlab
0.8 ms, CUB 1.0 ms), so that scanlab-demo can be tested without a GPU. Not a measurement.

Environment:
  STUB_NO_GPU=1          every app says there is no GPU and exits 3
  STUB_FAIL=APP          that app reports a failed validation and exits 1
  STUB_HANG=APP          that app hangs, silent, for 60 s
  STUB_REPORT_NO_MPL=1   scanlab-report fails as it does without matplotlib
  STUB_LOG=FILE          each call appends its command line here
"""
import json
import os
import sys
import time

name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
if os.environ.get("STUB_LOG"):
    with open(os.environ["STUB_LOG"], "a") as f:
        f.write(" ".join([name] + args) + "\n")


def value(option, default=None):
    return args[args.index(option) + 1] if option in args else default


if name == "scanlab-report":
    if os.environ.get("STUB_REPORT_NO_MPL"):
        print("scanlab-report: error: matplotlib is not installed for /usr/bin/python3 "
              "(scripts/install-deps.sh installs python3-matplotlib)", file=sys.stderr)
        sys.exit(1)
    out = value("-o", "report")
    os.makedirs(out, exist_ok=True)
    inputs = [a for a in args[:args.index("-o")] if a.endswith(".json")]
    for path in inputs:
        with open(path) as f:
            json.load(f)  # the files it is given must be JSON
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("# stub report\n" + "\n".join(inputs) + "\n")
    sys.exit(0)

if os.environ.get("STUB_NO_GPU"):
    print(f"{name}: no CUDA-capable GPU found (stub)", file=sys.stderr)
    sys.exit(3)
if os.environ.get("STUB_NO_CODE"):
    print(f"{name}: GPU 0 (Stub GPU) is sm_86, but this binary has no code for it (built for sm_90 + PTX compute_90): "
          "rebuild with -DCMAKE_CUDA_ARCHITECTURES=86 (or =native on that machine, or cmake --preset portable for "
          "every GPU from Turing to Blackwell)", file=sys.stderr)
    sys.exit(3)

if os.environ.get("STUB_HANG") == name and "--json" in args:
    time.sleep(60)
failing = os.environ.get("STUB_FAIL") == name
n = 1000 if "-i" in args else 1 << 20
rows = []


def bench_row(suite, variant, type_, dataset, ms, baseline=None, validation="n/a"):
    row = {"suite": suite, "variant": variant, "type": type_, "dataset": dataset, "n": n, "bytes": 8.0 * n,
           "median_ms": ms, "min_ms": ms, "max_ms": ms, "runs": 20, "gbps": 8.0 * n / (ms * 1e6),
           "items_per_second": n / (ms * 1e-3), "pct_memcpy": 800.0 * n / (ms * 1e6) / 3000, "validation": validation}
    if baseline:
        row["baseline_ms"] = baseline
        row["speedup_vs_baseline"] = baseline / ms
    rows.append(row)


def bench(suites, ours, cub):
    for suite in suites:
        bench_row(suite, ours, "float32", "uniform", 0.8, 1.0, "pass")
        bench_row(suite, cub, "float32", "uniform", 1.0)
    return {"scanlab_version": "0.0-stub", "timestamp": "2000-01-01T00:00:00Z", "device": {"name": "stub GPU"},
            "memcpy_gbps": 3000.0, "results": rows}


check = [{"check": "CPU", "result": "FAIL: 3 keys differ" if failing else "pass"}]
if name == "scanlab-bench":
    doc = bench(["scan" if "scan" in args else "reduce"], "production", "cub")
elif name == "scanlab-cg":
    doc = {"rows": n, "nonzeros": 7 * n, "dtype": "float64", "iterations": 99, "converged": True,
           "true_relative_residual": 1e-9, "solve_ms": 5.0,
           "validation": {"pass": not failing}, "bench": {"solve_ms": 4.0, "spmv_ms": 0.01, "spmv_bytes": 8e6}}
elif name == "scanlab-jacobi":
    doc = {"n": 64, "points": 64 ** 3, "dtype": "float32", "iterations": 500, "converged": True,
           "time_ms": 20.0, "stencil_gbps": 1500.0, "validation": {"pass": not failing},
           "bench": {"sweep_ms": 0.02, "rms_diff_ms": 0.01, "sweep_bytes": 2e6, "rms_diff_bytes": 2e6,
                     "memcpy_gbps": 3000.0}}
else:
    suites = {"scanlab-norms": value("--what", "dot,rms").split(","),
              "scanlab-partition": ["partition", "partition3"]}.get(name, ["x"])
    doc = {"n": n, "validation": check, "bench": bench(suites, "scanlab", "cub")}
    if name == "scanlab-compact":
        doc.update({"count": n // 2, "selectivity": 0.5})

path = value("--json")
if path:
    with open(path, "w") as f:
        json.dump(doc, f)
print(f"{name}: stub done")
sys.exit(1 if failing else 0)
