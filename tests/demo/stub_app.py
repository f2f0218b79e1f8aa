#!/usr/bin/env python3
"""A stand-in for every scanlab app in the demo's tests: it is copied under each app's
name and writes the app report (docs/json-schema.md) that app writes with --json, with made-up timings (scanlab
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


def bench_row(suite, variant, type_, dataset, ms, baseline=None, validation="n/a", ceiling="memcpy", bytes_=None):
    bytes_ = 8.0 * n if bytes_ is None else bytes_
    gbps = bytes_ / (ms * 1e6)
    ceiling_gbps = {"memcpy": 3000.0, "read": 3300.0, None: None}[ceiling]
    rows.append({"suite": suite, "variant": variant, "type": type_, "dataset": dataset, "n": n, "bytes": bytes_,
                 "median_ms": ms, "min_ms": ms, "max_ms": ms, "mean_ms": ms, "noise": 0.0, "runs": 20, "warmup": 3,
                 "flush_l2": True, "samples_ms": [ms] * 20, "gbps": gbps, "items_per_second": n / (ms * 1e-3),
                 "ceiling": ceiling, "ceiling_gbps": ceiling_gbps,
                 "pct_of_ceiling": 100.0 * gbps / ceiling_gbps if ceiling_gbps else None,
                 "baseline_ms": baseline, "speedup_vs_baseline": baseline / ms if baseline else None,
                 "check": validation, "clocks": None})


def bench(suites, ours, cub, ceiling="memcpy"):
    for suite in suites:
        bench_row(suite, ours, "float32", "uniform", 0.8, 1.0, "pass", ceiling)
        bench_row(suite, cub, "float32", "uniform", 1.0, ceiling=ceiling)
    return {"device": {"name": "stub GPU", "ordinal": 0, "sm_count": 1, "compute_capability": "9.0", "l2_bytes": 0,
                       "global_bytes": 0},
            "driver_version": None, "cuda_driver_version": 13000, "cuda_runtime_version": 13000, "nvml": False,
            "baseline": {"cub_version": "0.0-stub", "headers": "CUDA toolkit"},
            "harness": {"warmup": 3, "repeat": 20, "min_repeat": 10, "flush_l2": True},
            "ceilings": {"memcpy_gbps": 3000.0, "read_gbps": 3300.0 if ceiling == "read" else None},
            "throttled": False, "rows": rows}


def report(result, bench_doc):
    """An app report (docs/json-schema.md) around the app's own fields."""
    return {"schema": "scanlab-app-report", "schema_version": 1, "app": name, "scanlab_version": "0.0-stub",
            "build": {"commit": "unknown", "dirty": False, "cuda_architectures": "90"},
            "command_line": [name] + args, "timestamp": "2000-01-01T00:00:00Z", "result": result,
            "validation": [{"against": "CPU", "passed": not failing, "max_error": None,
                            "detail": "3 keys differ" if failing else "agrees"}],
            "bench": bench_doc}


if name == "scanlab-bench":
    suite = "scan" if "scan" in args else "reduce"
    doc = report({"suite": suite}, bench([suite], "production", "cub", "read" if suite == "reduce" else "memcpy"))
elif name == "scanlab-cg":
    bench_row("cg", "solve", "float64", "stub", 4.0, ceiling=None, bytes_=0.0)
    bench_row("cg", "spmv (thread per row)", "float64", "stub", 0.01)
    doc = report({"rows": n, "nonzeros": 7 * n, "dtype": "float64", "iterations": 99, "converged": True,
                  "true_relative_residual": 1e-9, "solve_ms": 5.0}, bench([], "", ""))
elif name == "scanlab-jacobi":
    bench_row("jacobi", "sweep (7-point stencil)", "float32", "stub", 0.02)
    bench_row("jacobi", "rms_diff of the two buffers", "float32", "stub", 0.01, ceiling="read")
    doc = report({"n": 64, "points": 64 ** 3, "dtype": "float32", "iterations": 500, "converged": True,
                  "time_ms": 20.0, "stencil_gbps": 1500.0}, bench([], "", ""))
else:
    suites = {"scanlab-norms": value("--what", "dot,rms").split(","),
              "scanlab-partition": ["partition", "partition3"]}.get(name, ["x"])
    read_only = name in ("scanlab-norms", "scanlab-reduce")
    result = {"n": n}
    if name == "scanlab-compact":
        result.update({"count": n // 2, "selectivity": 0.5})
    if name == "scanlab-partition":
        result["counts"] = {"equal": 1, "greater": n // 2, "less": n // 2 - 1}
    doc = report(result, bench(suites, "scanlab", "cub", "read" if read_only else "memcpy"))

path = value("--json")
if path:
    with open(path, "w") as f:
        json.dump(doc, f)
print(f"{name}: stub done")
sys.exit(1 if failing else 0)
