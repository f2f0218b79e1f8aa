#!/usr/bin/env python3
"""scanlab-demo: runs every scanlab app on generated and real data, validates and times
each against the CPU and CUB, prints one summary table and writes the report.

Each step runs one app with --validate --bench --json FILE (scanlab-bench validates
against CUB by itself) and logs its output to OUT/runs/STEP.log. The JSON each app
writes becomes one or more rows of the table: the scanlab row against the CUB row
measured on the same input in the same run. A step that fails is marked FAIL and the
demo goes on; the exit status says whether anything failed. At the end:

  OUT/summary.md, OUT/summary.json   the table, its notes and every step's command
  OUT/runs/STEP.json, STEP.log       what each app wrote
  OUT/report/                        scanlab-report on the benchmark JSON (needs matplotlib)

Exit status: 0 every step passed, 1 a step failed (or the report could not be written
for another reason than a missing matplotlib), 2 bad usage, 3 no usable GPU.
Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

PROG = "scanlab-demo"
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3


# ---------------------------------------------------------------------------------------
# The steps
# ---------------------------------------------------------------------------------------

@dataclass
class Step:
    name: str             # file stem of its JSON and log, and what --only matches
    app: str              # the executable in --bin
    label: str            # the "app" column
    dataset: str          # the "dataset" column ("": the one the app's JSON names)
    args: list            # the app's arguments, without --validate/--bench/--json
    needs: list = field(default_factory=list)  # data files it reads (paths)
    kind: str = "bench"   # how its JSON becomes rows: bench, cg, jacobi
    by_suite: bool = False  # one row per suite, named after it (norms' dot and rms)


def pow2(n):
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def plan(data, quick):
    """The demo's steps. `data` turns a name under data/cache into the path to pass."""
    n = pow2(1 << 20 if quick else 1 << 26)  # the generated headline rows
    grid = "32" if quick else "64"           # cg --poisson3d, jacobi --n (validation: <= 64)
    ecg, adc = data("ecg.npy"), data("ecg_adc.npy")
    sounds, voice, co2 = data("sounds.npy"), data("sounds/Front_Left.npy"), data("co2.npy")
    lund = data("matrices/lund_a.mtx")
    return [
        # The primitives: production path against CUB, int32 and float32.
        Step("reduce", "scanlab-bench", "reduce", "",
             ["reduce", "--sizes", n, "--types", "int32,float32", "--variants", "production"]),
        Step("scan", "scanlab-bench", "inclusive scan", "",
             ["scan", "--sizes", n, "--types", "int32,float32", "--variants", "production"]),
        # The reduction app on data: a uint8 sum into uint64 (NumPy's rule); the ECG's peak.
        Step("reduce_uint8", "scanlab-reduce", "reduce sum", "uniform", ["--n", n, "--dtype", "uint8"]),
        Step("reduce_ecg_adc", "scanlab-reduce", "reduce max", "ECG (ADC counts)", ["-i", adc, "--op", "max"],
             [adc]),
        # The scan app on data: int32 prefix sums into int64 (np.cumsum's rule); the ECG's
        # running integral.
        Step("scan_int32", "scanlab-scan", "scan sum", "uniform", ["--n", n, "--dtype", "int32"]),
        Step("scan_ecg", "scanlab-scan", "scan sum", "ECG (mV), running integral", ["-i", ecg], [ecg]),
        # Norms: generated, and the RMS of a real signal.
        Step("norms_uniform", "scanlab-norms", "norms", "uniform [0,1)", ["--n", n, "--what", "dot,rms"],
             by_suite=True),
        Step("norms_ecg", "scanlab-norms", "norms", "ECG (mV)", ["-i", ecg, "--what", "rms"], [ecg], by_suite=True),
        # Stream compaction: half of the uint32 range; the ECG samples above 1 mV (R peaks).
        Step("compact_uniform", "scanlab-compact", "compact", "uniform, x < 2^31",
             ["--n", n, "--lt", "2147483648"]),
        Step("compact_ecg", "scanlab-compact", "compact", "ECG, x > 1 mV", ["-i", ecg, "--gt", "1.0"], [ecg]),
        # Partition (two- and three-way) and quicksort around the median; radix sort.
        Step("partition_uniform", "scanlab-partition", "partition", "uniform", ["--n", n], by_suite=True),
        Step("partition_sounds", "scanlab-partition", "partition", "ALSA sounds", ["-i", sounds], [sounds],
             by_suite=True),
        Step("quicksort_uniform", "scanlab-quicksort", "quicksort", "uniform", ["--n", n]),
        Step("quicksort_sounds", "scanlab-quicksort", "quicksort", "ALSA sounds", ["-i", sounds], [sounds]),
        Step("sort_uniform", "scanlab-sort", "radix sort", "uniform", ["--n", n]),
        Step("sort_sounds", "scanlab-sort", "radix sort", "ALSA sounds", ["-i", sounds], [sounds]),
        Step("sort_ecg_adc", "scanlab-sort", "radix sort", "ECG (ADC counts)", ["-i", adc], [adc]),
        # Linear recurrences: generated (a, b); EMA filters of real signals.
        Step("linrec_uniform", "scanlab-linrec", "linrec", "a in [-0.99,0.99), b uniform", ["--n", n]),
        Step("linrec_ecg", "scanlab-linrec", "linrec EMA", "ECG, alpha 0.05", ["-i", ecg, "--ema", "0.05"],
             [ecg]),
        Step("linrec_voice", "scanlab-linrec", "linrec EMA", "Front_Left.wav, alpha 0.01",
             ["-i", voice, "--ema", "0.01"], [voice]),
        Step("linrec_co2", "scanlab-linrec", "linrec EMA", "CO2 weekly, alpha 0.1", ["-i", co2, "--ema", "0.1"],
             [co2]),
        # Solvers built on the dot products and norms: no CUB counterpart.
        Step("cg_poisson3d", "scanlab-cg", "cg", f"Poisson 3-D {grid}^3", ["--poisson3d", grid], kind="cg"),
        Step("cg_lund_a", "scanlab-cg", "cg", "lund_a.mtx (SPD)", ["-i", lund], [lund], kind="cg"),
        Step("jacobi", "scanlab-jacobi", "jacobi", f"Laplace {grid}^3", ["--n", grid], kind="jacobi"),
    ]


def command(step, exe, json_path, opts):
    """The command line of a step."""
    if step.app == "scanlab-bench":  # always times; validates against CUB unless told not to
        cmd = [exe, "--json", json_path] + step.args
        if opts.skip_validate:
            cmd.append("--no-validate")
    else:
        cmd = [exe] + step.args + ["--json", json_path]
        if not opts.skip_validate:
            cmd.append("--validate")
        if not opts.skip_bench:
            cmd.append("--bench")
    if opts.repeat:
        cmd += ["--repeat", str(opts.repeat)]
    return cmd


# ---------------------------------------------------------------------------------------
# From an app's JSON to rows of the table
# ---------------------------------------------------------------------------------------

@dataclass
class Row:
    app: str
    dataset: str
    type: str = ""
    n: int | None = None
    ours_ms: float | None = None
    cub_ms: float | None = None
    gbps: float | None = None
    pct: float | None = None  # of the ceiling the row names
    ceiling: str | None = None  # "memcpy" (read + write jobs) or "read" (read-only jobs)
    check: str = ""

    @property
    def ratio(self):  # > 1: faster than CUB
        if self.ours_ms and self.cub_ms:
            return self.cub_ms / self.ours_ms
        return None


SCHEMA, SCHEMA_VERSION = "scanlab-app-report", 1  # docs/json-schema.md


def schema_problem(doc):
    """Why `doc` is not an app report this demo reads ("" when it is)."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return f"not a {SCHEMA} (docs/json-schema.md)"
    if doc.get("schema_version") != SCHEMA_VERSION:
        return f"{SCHEMA} version {doc.get('schema_version')}, this demo reads version {SCHEMA_VERSION}"
    return ""


def failed_checks(doc):
    """What the failed checks of a report were compared against."""
    return [c["against"] for c in doc["validation"] if not c["passed"]]


def is_ours(variant):
    return variant in ("production", "scanlab") or variant.startswith("scanlab")


def bench_rows(step, doc):
    """One row per (suite, type, dataset, n) of the report's benchmark: scanlab's row (the
    production path, or the first scanlab variant) against the CUB row beside it."""
    if doc["bench"] is None:
        return []
    groups = {}
    for r in doc["bench"]["rows"]:
        groups.setdefault((r["suite"], r["type"], r["dataset"], r["n"]), []).append(r)
    rows = []
    for (suite, type_, dataset, n), members in groups.items():
        ours = next((r for r in members if r["variant"] in ("production", "scanlab")), None)
        ours = ours or next((r for r in members if is_ours(r["variant"])), None)
        cub = next((r for r in members if r["variant"].lower().startswith("cub")), None)
        if ours is None:
            continue
        label = step.label
        if step.by_suite:  # norms' dot and rms, partition's two- and three-way
            label = suite if suite.startswith(step.label) else f"{step.label} {suite}"
        cub_ms = cub["median_ms"] if cub else ours["baseline_ms"]
        check = ours["check"]
        rows.append(Row(label, step.dataset or dataset, type_, n, ours["median_ms"], cub_ms, ours["gbps"],
                        ours["pct_of_ceiling"], ours["ceiling"], check if check.startswith("FAIL") else ""))
    return rows


def bench_row(doc, variant):
    """The benchmark row of that variant, or None (no --bench)."""
    if doc["bench"] is None:
        return None
    return next((r for r in doc["bench"]["rows"] if r["variant"].startswith(variant)), None)


def cg_rows(step, doc):
    result, solve = doc["result"], bench_row(doc, "solve")
    ms = solve["median_ms"] if solve else result["solve_ms"]
    return [Row(step.label, step.dataset, result["dtype"], result["rows"], ms)]


def jacobi_rows(step, doc):
    result = doc["result"]
    gbps = result["stencil_gbps"]
    memcpy = doc["bench"]["ceilings"]["memcpy_gbps"] if doc["bench"] else None
    pct = 100.0 * gbps / memcpy if gbps and memcpy else None
    return [Row(step.label, step.dataset, result["dtype"], result["points"], result["time_ms"], None, gbps, pct,
                "memcpy" if pct is not None else None)]


def notes_of(step, doc):
    """What the table cannot show: how much was kept, iterations, convergence, throttling."""
    notes, result = [], doc["result"]
    if step.app == "scanlab-compact":
        notes.append(f"kept {result['count']} of {result['n']} ({100 * result['selectivity']:.1f}%)")
    if step.app == "scanlab-partition":  # in the order of the output
        order = ["less", "equal", "greater", "selected", "rest"]
        notes.append(", ".join(f"{k} {result['counts'][k]}" for k in order if k in result["counts"]))
    if step.kind == "cg":
        spmv = bench_row(doc, "spmv")
        notes.append(f"{result['rows']} rows, {result['nonzeros']} nonzeros, {result['iterations']} iterations, "
                     + ("converged" if result["converged"] else "NOT converged")
                     + f", true residual {result['true_relative_residual']:.1e}"
                     + "; time = one solve, no CUB counterpart"
                     + (f" (SpMV {spmv['gbps']:.0f} GB/s)" if spmv else ""))
    if step.kind == "jacobi":
        rms = bench_row(doc, "rms_diff")
        notes.append(f"{result['iterations']} sweeps, " + ("converged" if result["converged"] else "NOT converged")
                     + "; time = the whole solve, GB/s = its stencil traffic, no CUB counterpart"
                     + (f"; rms_diff alone {fmt_time(rms['median_ms'])} ({rms['gbps']:.0f} GB/s)" if rms else ""))
    if doc["bench"] is not None and doc["bench"]["throttled"]:
        rows = [r for r in doc["bench"]["rows"] if r["clocks"] and r["clocks"]["throttled"]]
        reasons = sorted({x for r in rows for x in r["clocks"]["reasons"]}) or ["SM clock below 75% of its max"]
        notes.append(f"clocks throttled in {len(rows)} benchmark rows ({', '.join(reasons)}): their times are suspect")
    return notes


# ---------------------------------------------------------------------------------------
# Formatting (the conventions of apps/common/table.cpp)
# ---------------------------------------------------------------------------------------

def fmt_time(ms):
    if ms is None:
        return ""
    if ms < 0.001:
        return f"{ms * 1e6:.0f} ns"
    if ms < 0.1:
        return f"{ms * 1e3:.1f} us"
    if ms < 10:
        return f"{ms:.3f} ms"
    return f"{ms:.1f} ms"


def fmt_count(n):
    if n is None:
        return ""
    return pow2(n) if n > 1 and n & (n - 1) == 0 else str(n)


HEADER = ["app", "dataset", "type", "n", "scanlab", "CUB", "vs CUB", "GB/s", "% ceiling", "check"]


def cells(row):
    return [row.app, row.dataset, row.type, fmt_count(row.n), fmt_time(row.ours_ms), fmt_time(row.cub_ms),
            f"{row.ratio:.2f}x" if row.ratio else "", f"{row.gbps:.0f}" if row.gbps is not None else "",
            f"{row.pct:.1f}% {row.ceiling}" if row.pct is not None else "", row.check]


def numeric(cell):
    return all(c in "0123456789.-+^ex% unms" for c in cell)


def text_table(rows):
    """Columns aligned, numbers to the right, a rule under the header."""
    table = [HEADER] + [cells(r) for r in rows]
    width = [max(len(t[c]) for t in table) for c in range(len(HEADER))]
    right = [all(numeric(t[c]) for t in table[1:]) for c in range(len(HEADER))]
    out = []
    for i, t in enumerate(table):
        parts = [t[c].rjust(width[c]) if right[c] else t[c].ljust(width[c]) for c in range(len(HEADER))]
        out.append("  ".join(parts).rstrip())
        if i == 0:
            out.append("-" * (sum(width) + 2 * (len(width) - 1)))
    return "\n".join(out)


def markdown_table(rows):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(r)) + " |")
    return "\n".join(lines)


LEGEND = ("scanlab and CUB: median times on the same input in the same run (L2 flushed); vs CUB > 1 "
          "means faster than CUB; GB/s and % ceiling are scanlab's (the bytes a perfect algorithm "
          "moves, against the ceiling the row names, measured in the run: memcpy, the device-to-device "
          "copy, for jobs that read and write; read, a read-only kernel, for jobs that only read). "
          "check: the app's --validate against the CPU and CUB (scanlab-bench: against CUB).")


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------

def write_atomically(path, text):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def run_logged(cmd, log_path, verbose, timeout):
    """Runs cmd, its output into log_path (and onto the terminal with --verbose).
    Returns (exit status, seconds); a step stopped at the timeout is exit status 124."""
    start = time.monotonic()
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace")
        except OSError as e:
            log.write(f"{PROG}: cannot run: {e.strerror}\n")
            return 126, 0.0

        def pump():  # a thread, so that a silent, hung app still meets the timeout
            for line in proc.stdout:
                log.write(line)
                if verbose:
                    sys.stdout.write("    " + line)
                    sys.stdout.flush()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = 124
        reader.join()
        if rc == 124:
            log.write(f"{PROG}: stopped after {timeout:g} s\n")
    return rc, time.monotonic() - start


def last_line(log_path):
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return ""
    return lines[-1] if len(lines) > 1 else ""


def probe_gpu(bin_dir):
    """Runs the smallest app job: exit 3 is the apps' "no usable GPU". Returns (has GPU, message)."""
    exe = os.path.join(bin_dir, "scanlab-norms")
    try:
        p = subprocess.run([exe, "--n", "1", "--what", "rms", "-q"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{exe}: {e}"
    message = (p.stderr.strip().splitlines() or [""])[-1]
    if p.returncode == EXIT_NO_GPU:
        return False, message
    if p.returncode != 0:
        return None, message or f"{exe} exited {p.returncode}"
    return True, ""


def gpu_name():
    if shutil.which("nvidia-smi") is None:
        return ""
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader",
                            "-i", "0"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return p.stdout.strip().splitlines()[0] if p.returncode == 0 and p.stdout.strip() else ""


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))  # build/bin -> the repository
    if not os.path.isfile(os.path.join(repo, "data", "fetch.sh")):
        repo = os.getcwd()
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Runs every scanlab app on generated data and on the real datasets of data/cache: "
                    "each validated against the CPU and CUB and timed against CUB. Prints one summary "
                    "table, writes OUT/summary.md, OUT/summary.json and the report OUT/report/ "
                    "(scanlab-report, needs matplotlib).",
        epilog="Without a usable GPU it says so in one line and exits 3. Rows whose dataset is missing "
               "are skipped (run data/fetch.sh). Exit status: 0 all passed, 1 a step failed, 2 bad "
               "usage, 3 no usable GPU.\nExample: scanlab-demo --quick --only sort,compact",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=here, metavar="DIR",
                   help="where the scanlab apps are (default: this script's folder)")
    p.add_argument("--out", default=os.path.join(repo, "build", "demo"), metavar="DIR",
                   help="where the results go (default: build/demo)")
    p.add_argument("--data", default=os.path.join(repo, "data", "cache"), metavar="DIR",
                   help="the real datasets, as data/fetch.sh writes them (default: data/cache)")
    p.add_argument("--quick", action="store_true",
                   help="generated data of 2^20 elements instead of 2^26, smaller grids")
    p.add_argument("--only", metavar="NAMES", help="only these steps: comma-separated step names or "
                   "words of them (sort, ecg, cg_lund_a; see --list)")
    p.add_argument("--skip-validate", action="store_true", help="no --validate (timings only)")
    p.add_argument("--skip-bench", action="store_true",
                   help="no --bench (validation only; the scanlab-bench steps are left out)")
    p.add_argument("--repeat", type=int, metavar="N", help="timed runs per measurement (the apps' default: 20)")
    p.add_argument("--timeout", type=float, default=300, metavar="S", help="limit per step in seconds (300)")
    p.add_argument("--no-report", action="store_true", help="do not run scanlab-report")
    p.add_argument("--list", action="store_true", help="print the steps and their commands, then exit")
    p.add_argument("-v", "--verbose", action="store_true", help="show every app's output as it runs")
    args = p.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.timeout <= 0:
        p.error("--timeout must be positive")
    return args


def display_path(path):
    """Relative to the working directory where that is shorter: the apps put the input's
    path into their JSON, and the report shows it."""
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else os.path.abspath(path)


def main(argv):
    opts = parse_args(argv)
    bin_dir, out, data_dir = os.path.abspath(opts.bin), os.path.abspath(opts.out), os.path.abspath(opts.data)
    steps = plan(lambda rel: display_path(os.path.join(data_dir, rel)), opts.quick)
    if opts.only:
        wanted = [w.strip() for w in opts.only.split(",") if w.strip()]
        # Whole words of the name: "cg" picks cg_poisson3d and cg_lund_a, not norms_ecg.
        steps = [s for s in steps if any(f"_{w}_" in f"_{s.name}_" for w in wanted)]
        if not steps:
            print(f"{PROG}: error: --only {opts.only}: no step matches (see --list)", file=sys.stderr)
            return EXIT_USAGE
    if opts.skip_bench:
        steps = [s for s in steps if s.app != "scanlab-bench"]
    runs = os.path.join(out, "runs")

    if opts.list:
        for s in steps:
            cmd = command(s, os.path.join(bin_dir, s.app), os.path.join(runs, s.name + ".json"), opts)
            print(f"{s.name:<18} {' '.join(cmd)}")
        return EXIT_OK

    # Everything there before the GPU is touched: the apps, then a GPU.
    needed = sorted({s.app for s in steps} | {"scanlab-norms"} | (set() if opts.no_report else {"scanlab-report"}))
    missing = [a for a in needed if not os.access(os.path.join(bin_dir, a), os.X_OK)]
    if missing:
        print(f"{PROG}: error: {', '.join(missing)} not found in {bin_dir}: build first "
              "(scripts/demo.sh, or cmake --preset release && cmake --build --preset release)", file=sys.stderr)
        return EXIT_FAIL
    has_gpu, message = probe_gpu(bin_dir)
    if has_gpu is False:
        reason = message.removeprefix('scanlab-norms: ')
        if "CMAKE_CUDA_ARCHITECTURES" in reason:
            # A GPU the apps were not built for: their line names it and how to build for it.
            print(f"{PROG}: {reason}", file=sys.stderr)
        else:
            print(f"{PROG}: no usable NVIDIA GPU here ({reason}): the apps are "
                  f"built in {display_path(bin_dir)} but need one to run", file=sys.stderr)
        return EXIT_NO_GPU
    if has_gpu is None:
        print(f"{PROG}: error: checking for a GPU failed: {message}", file=sys.stderr)
        return EXIT_FAIL
    try:
        os.makedirs(runs, exist_ok=True)
    except OSError as e:
        print(f"{PROG}: error: cannot create {runs}: {e.strerror}", file=sys.stderr)
        return EXIT_FAIL

    device = gpu_name()
    size = "2^20 (--quick)" if opts.quick else "2^26"
    print(f"{PROG}: {len(steps)} steps on {device or 'the GPU'}; generated data of {size} elements; "
          f"real data from {display_path(data_dir)}; logs in {display_path(runs)}/")
    rows, notes, records, json_files, memcpy, read = [], [], [], [], [], []
    cub = ""  # the CUB the apps' baselines were built against (their JSON says)
    failures = skipped = 0
    started = time.monotonic()
    for i, step in enumerate(steps, 1):
        json_path = os.path.join(runs, step.name + ".json")
        log_path = os.path.join(runs, step.name + ".log")
        for stale in (json_path, log_path):
            if os.path.exists(stale):
                os.remove(stale)
        cmd = command(step, os.path.join(bin_dir, step.app), json_path, opts)
        record = {"step": step.name, "app": step.app, "dataset": step.dataset, "command": cmd}
        records.append(record)
        head = f"[{i:2}/{len(steps)}] {step.label}, {step.dataset or 'generated'}"
        absent = [f for f in step.needs if not os.path.isfile(f)]
        if absent:
            skipped += 1
            record["status"] = "skipped"
            note = f"{', '.join(absent)} missing (run data/fetch.sh)"
            print(f"{head}: skipped, {note}", flush=True)
            rows.append(Row(step.label, step.dataset or "generated", check="skipped"))
            notes.append(f"{step.name}: skipped, {note}")
            continue
        print(f"{head} ...", end="\n" if opts.verbose else " ", flush=True)
        rc, seconds = run_logged(cmd, log_path, opts.verbose, opts.timeout)
        record.update({"exit_status": rc, "seconds": round(seconds, 2), "log": os.path.relpath(log_path, out)})

        doc, problem = None, ""
        if os.path.isfile(json_path):
            try:
                with open(json_path, encoding="utf-8") as f:
                    doc = json.load(f)
                record["json"] = os.path.relpath(json_path, out)
                problem = schema_problem(doc)
            except (OSError, ValueError) as e:
                problem = f"not readable JSON ({e})"
        step_rows, failed = [], []
        if doc is not None and not problem:
            try:
                bench = doc["bench"]
                if bench is not None:
                    device = device or bench["device"]["name"]
                    memcpy.append(bench["ceilings"]["memcpy_gbps"])
                    if bench["ceilings"]["read_gbps"] is not None:
                        read.append(bench["ceilings"]["read_gbps"])
                    cub = cub or f"CUB {bench['baseline']['cub_version']}"
                step_rows = {"bench": bench_rows, "cg": cg_rows, "jacobi": jacobi_rows}[step.kind](step, doc)
                notes += [f"{step.name}: {n}" for n in notes_of(step, doc)]
                failed = failed_checks(doc)
            except (KeyError, TypeError, IndexError) as e:
                problem, step_rows = f"does not follow {SCHEMA} {SCHEMA_VERSION} ({type(e).__name__}: {e})", []
            if step.kind == "bench" and step_rows and not opts.skip_bench:
                json_files.append(json_path)
        if problem:
            notes.append(f"{step.name}: {json_path} {problem}")
        if not step_rows:
            step_rows = [Row(step.label, step.dataset or "generated")]

        if rc != 0:
            why = "timed out" if rc == 124 else f"exit {rc}"
            check = f"FAIL ({why})"
            notes.append(f"{step.name}: {why}: {last_line(log_path) or 'no output'} (see {record['log']})")
        elif failed:
            check = "FAIL: " + ", ".join(dict.fromkeys(failed))
        elif doc is None:
            check = "FAIL (no JSON)"
        elif problem:
            check = "FAIL (JSON not an app report)"
        elif opts.skip_validate:
            check = "not run"
        else:
            check = "pass"
        for r in step_rows:
            r.check = r.check or check
        bad = any(r.check.startswith("FAIL") for r in step_rows)
        failures += bad
        record["status"] = "FAIL" if bad else "ok"
        rows += step_rows
        print(f"{'FAIL' if bad else 'ok'} ({seconds:.1f} s)" + (f": {check}" if bad else ""), flush=True)

    # The table, the summary files.
    elapsed = time.monotonic() - started
    memcpy_gbps = sorted(memcpy)[len(memcpy) // 2] if memcpy else None
    read_gbps = sorted(read)[len(read) // 2] if read else None
    setting = (f"{device or 'GPU'}; device-to-device memcpy "
               + (f"{memcpy_gbps:.0f} GB/s (median of the runs)" if memcpy_gbps else "not measured")
               + (f", read-only {read_gbps:.0f} GB/s" if read_gbps else "")
               + f"; generated data of {size} elements" + (f"; baselines: {cub}" if cub else ""))
    print()
    print(text_table(rows))
    print(LEGEND)
    if notes:
        print("\nNotes:")
        for n in notes:
            print(f"  {n}")
    verdict = (f"{len(steps) - failures - skipped} of {len(steps)} steps passed"
               + (f", {failures} FAILED" if failures else "") + (f", {skipped} skipped" if skipped else "")
               + f" in {elapsed:.0f} s")
    print(f"\n{PROG}: {setting}")
    print(f"{PROG}: {verdict}")

    summary = {
        "device": device,
        "memcpy_gbps": memcpy_gbps,
        "read_gbps": read_gbps,
        "cub_version": cub.removeprefix("CUB ") or None,
        "generated_n": 1 << 20 if opts.quick else 1 << 26,
        "quick": opts.quick,
        "seconds": round(elapsed, 1),
        "failed_steps": failures,
        "skipped_steps": skipped,
        "rows": [dict(zip(["app", "dataset", "type", "n", "scanlab_ms", "cub_ms", "vs_cub", "gbps", "pct_of_ceiling",
                           "ceiling", "check"], [r.app, r.dataset, r.type, r.n, r.ours_ms, r.cub_ms, r.ratio, r.gbps,
                                                 r.pct, r.ceiling, r.check])) for r in rows],
        "notes": notes,
        "steps": records,
    }
    md = ["# scanlab demo", "", f"{setting}; {verdict}.", "",
          markdown_table(rows), "", LEGEND, ""]
    if notes:
        md += ["Notes:", ""] + [f"- {n}" for n in notes] + [""]
    md += ["Commands and logs: `runs/`. Plots and every variant: [report/report.md](report/report.md).", ""]
    write_atomically(os.path.join(out, "summary.json"), json.dumps(summary, indent=2) + "\n")
    write_atomically(os.path.join(out, "summary.md"), "\n".join(md))
    print(f"{PROG}: wrote {display_path(os.path.join(out, 'summary.md'))} and summary.json")

    # The report, from the benchmark JSON (paths relative to OUT, so report.md names them so).
    report_ok = True
    if opts.no_report:
        pass
    elif not json_files:
        print(f"{PROG}: no benchmark results, so no report")
    else:
        cmd = [os.path.join(bin_dir, "scanlab-report")] + [os.path.relpath(f, out) for f in json_files] + [
            "-o", "report", "--title", "scanlab demo: every app against CUB"]
        p = subprocess.run(cmd, cwd=out, capture_output=True, text=True)
        message = (p.stderr.strip() or p.stdout.strip()).splitlines()
        message = message[-1] if message else f"exit {p.returncode}"
        if p.returncode == 0:
            print(f"{PROG}: report in {display_path(os.path.join(out, 'report', 'report.md'))}")
        elif "matplotlib" in message:
            print(f"{PROG}: the report needs matplotlib, which this python3 lacks (scripts/install-deps.sh "
                  f"installs python3-matplotlib); the table is in {display_path(os.path.join(out, 'summary.md'))}"
                  f" and the JSON in {display_path(runs)}/ (scanlab-report {os.path.basename(runs)}/*.json "
                  f"makes the report later)")
        else:
            report_ok = False
            print(f"{PROG}: the report failed: {message}", file=sys.stderr)
    return EXIT_OK if failures == 0 and report_ok else EXIT_FAIL


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        sys.exit(130)
