#!/usr/bin/env python3
"""Before/after benchmarks of two or more builds on one GPU, in one run.

    scripts/bench-compare.py LABEL=BINDIR [LABEL=BINDIR ...] [--sizes 2^20,2^28]
                             [--only scan,reduce,...] [--rounds 2] [--repeat-small 200]
                             [--repeat-large 30] [--keep-cub] [--out DIR]

Runs each benchmark of BENCHMARKS (below) with every build's apps, alternating builds
within a round (a, b, a, b, ... over --rounds), on the same generated input (same seed),
reading the medians from each app's --json. Prints one Markdown table per size: the
scanlab rows of every build (with --keep-cub, CUB's too: builds
against different CCCL headers then compare CUB versions), the mean over the rounds of each run's median,
and each build's time relative to the first build. With --out, keeps the JSON files and
writes the table to DIR/compare.md. The first build is the reference ("base").

A build's apps may predate a flag: a benchmark that fails with one build is reported as
such and the others still run. Exit status 0 when every run succeeded, else 1.
"""

import argparse
import os
import subprocess
import sys
import tempfile

from bench_common import parse_builds, parse_choices, parse_size, read_bench, size_label

# name -> (app, arguments before the size); {n} is the element count. Each selects only
# scanlab's production path where the app can (CUB's rows are dropped anyway).
BENCHMARKS = {
    "scan": ("scanlab-bench", ["scan", "--types", "int32", "--variants", "production", "--no-validate",
                               "--sizes", "{n}"]),
    "reduce": ("scanlab-bench", ["reduce", "--types", "float32", "--variants", "production", "--no-validate",
                                 "--sizes", "{n}"]),
    "compact": ("scanlab-compact", ["--generate", "uniform", "--dtype", "uint32", "--n", "{n}",
                                    "--lt", "2147483648", "--bench"]),
    "partition2": ("scanlab-partition", ["--generate", "uniform", "--dtype", "uint32", "--n", "{n}",
                                         "--ways", "2", "--bench"]),
    "partition3": ("scanlab-partition", ["--generate", "uniform", "--dtype", "uint32", "--n", "{n}",
                                         "--ways", "3", "--bench"]),
    "linrec": ("scanlab-linrec", ["--n", "{n}", "--bench"]),
    "sort": ("scanlab-sort", ["--generate", "uniform", "--dtype", "uint32", "--n", "{n}", "--bench"]),
    "sort_f32": ("scanlab-sort", ["--generate", "uniform", "--dtype", "float32", "--n", "{n}", "--bench"]),
    "sort_f64": ("scanlab-sort", ["--generate", "uniform", "--dtype", "float64", "--n", "{n}", "--bench"]),
    "quicksort": ("scanlab-quicksort", ["--generate", "uniform", "--dtype", "uint32", "--n", "{n}", "--bench"]),
    "quicksort_f32": ("scanlab-quicksort", ["--generate", "uniform", "--dtype", "float32", "--n", "{n}", "--bench"]),
    "quicksort_f64": ("scanlab-quicksort", ["--generate", "uniform", "--dtype", "float64", "--n", "{n}", "--bench"]),
    "quicksort_abs": ("scanlab-quicksort", ["--generate", "normal", "--dtype", "float32", "--n", "{n}",
                                            "--order", "abs-desc", "--bench"]),
}


def rows_of(path):
    bench = read_bench(path)
    return bench["rows"], bench["baseline"]


def run_one(bindir, bench, n, repeat, json_path, keep_cub):
    app, args = BENCHMARKS[bench]
    cmd = [os.path.join(bindir, app)] + [a.format(n=n) for a in args] + [
        "--repeat", str(repeat), "--json", json_path, "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"exit {proc.returncode}: {tail[0]}"
    rows, _ = rows_of(json_path)
    return [r for r in rows if keep_cub or r["variant"] != "cub"], None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", metavar="LABEL=BINDIR")
    parser.add_argument("--sizes", default="2^20,2^28")
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="benchmarks: " + ",".join(BENCHMARKS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat-small", type=int, default=200, help="timed runs below 2^24 elements")
    parser.add_argument("--repeat-large", type=int, default=30, help="timed runs from 2^24 elements")
    parser.add_argument("--keep-cub", action="store_true", help="also list the CUB rows")
    parser.add_argument("--out", help="keep the JSON files and write compare.md here")
    opts = parser.parse_args()

    builds = parse_builds(parser, opts.builds)
    benches = parse_choices(parser, opts.only, list(BENCHMARKS), "benchmark")
    sizes = [parse_size(s) for s in opts.sizes.split(",")]
    out = opts.out or tempfile.mkdtemp(prefix="bench-compare-")
    os.makedirs(out, exist_ok=True)

    labels = [label for label, _ in builds]

    def render(final):
        md = []
        for n in sizes:
            md += [f"## n = {size_label(n)}", "",
                   "| benchmark | variant | type | " + " | ".join(labels) + " | " +
                   " | ".join(f"{label} vs {labels[0]}" for label in labels[1:]) + " |",
                   "|---|---|---|" + "---|" * (2 * len(labels) - 1)]
            for key in sorted(k for k in times if k[1] == n):
                bench, _, variant, dtype = key
                means = {label: sum(v) / len(v) for label, v in times[key].items()}
                cells = []
                for label in labels:
                    if label not in means:
                        cells.append("")
                    elif means[label] < 0.1:
                        cells.append(f"{means[label] * 1000:.2f} us")
                    else:
                        cells.append(f"{means[label]:.4f} ms")
                for label in labels[1:]:
                    if label in means and labels[0] in means:
                        cells.append(f"{100.0 * (means[label] / means[labels[0]] - 1):+.1f} %")
                    else:
                        cells.append("")
                md.append(f"| {bench} | {variant} | {dtype} | " + " | ".join(cells) + " |")
            md.append("")
        md.append(f"Mean over {opts.rounds} alternating rounds of each run's median "
                  f"({opts.repeat_small} timed runs below 2^24, {opts.repeat_large} from 2^24; L2 flushed); "
                  "+ is slower than the first build.")
        if failures:
            md += ["", "Failed runs:"] + [f"- {f}" for f in failures]
        text = "\n".join(md) + "\n"
        if final:
            print(text)
        with open(os.path.join(out, "compare.md"), "w", encoding="utf-8") as f:
            f.write(text)

    # (bench, n, variant, type) -> label -> [median per round]
    times = {}
    failures = []
    for n in sizes:
        repeat = opts.repeat_small if n < (1 << 24) else opts.repeat_large
        for bench in benches:
            for rnd in range(opts.rounds):
                for label, path in builds:
                    json_path = os.path.join(out, f"{bench}_{size_label(n).replace('^', 'p')}_{label}_{rnd}.json")
                    rows, error = run_one(path, bench, n, repeat, json_path, opts.keep_cub)
                    if error:
                        failures.append(f"{bench} {size_label(n)} {label}: {error}")
                        continue
                    for r in rows:
                        key = (bench, n, r["variant"], r["type"])
                        times.setdefault(key, {}).setdefault(label, []).append(r["median_ms"])
            print(f"bench-compare: {bench} {size_label(n)} done", file=sys.stderr, flush=True)
            render(False)  # compare.md holds what is measured so far (a run cut short keeps it)

    render(True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
