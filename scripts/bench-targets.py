#!/usr/bin/env python3
"""The performance targets against CUB, each build against the CUB it was built with.

    scripts/bench-targets.py LABEL=BINDIR [LABEL=BINDIR ...] [--only sort,quicksort,...]
                             [--sizes 2^16,2^20,2^24,2^28,2^30] [--repeat-small 100]
                             [--repeat-large 10] [--data data/cache] [--out DIR]

For every target (GROUPS below: radix sort keys and pairs of eight types over sizes, uint32
keys and pairs also with all six key distributions and at the large sizes, the quicksort against CUB's merge sort over sizes and on a real
dataset, the three-way partition on generated and real data, compaction at three
selectivities and with flags and unique, the linear recurrence and the scan), runs each
build's app with --bench --variants production and reads its --json: scanlab's production
row and the CUB row it is compared with, in the same run. Builds alternate per
measurement. Writes DIR/targets.md (one table per group: scanlab, CUB and the ratio per
build; ratio > 1 means scanlab is faster) as it goes, so a run cut short keeps what it
measured, and keeps the JSON files. Exit status 0 when every run succeeded, else 1.
"""

import argparse
import os
import subprocess
import sys
import tempfile

from bench_common import parse_builds, parse_choices, parse_size, pct_label, read_bench, size_label

DISTS = "uniform,entropy-reduced,sorted,few-unique,constant,zipf"


def sort_runs(sizes, large, all_dist_sizes):
    # keys of six types and pairs of two, uniform keys at every size of `sizes`; the sizes of
    # `large` for uint32 keys and pairs only; uint32 keys and pairs with all six key
    # distributions at all_dist_sizes
    kinds = [(t, []) for t in ("uint32", "int32", "float32", "uint64", "int64", "float64")]
    kinds += [("uint32", ["--pairs"]), ("uint64", ["--pairs"])]
    for n in sizes + large:
        for dtype, extra in kinds:
            wide = dtype != "uint32"
            if n in large and wide:
                continue
            dists = DISTS if n in all_dist_sizes and not wide else "uniform"
            label = dtype + (" + uint32" if extra else "")
            yield (f"sort {label}", n, "scanlab-sort",
                   ["--dtype", dtype, "--n", str(n), "--dists", dists] + extra, "scanlab onesweep")


def quicksort_runs(sizes, data):
    for dtype in ("uint32", "float32", "float64"):
        for n in sizes:
            yield (f"quicksort {dtype}", n, "scanlab-quicksort",
                   ["--generate", "uniform", "--dtype", dtype, "--n", str(n)], "scanlab quicksort")
    sounds = os.path.join(data, "sounds.npy")
    yield ("quicksort float32 (ALSA sounds)", None, "scanlab-quicksort", ["-i", sounds], "scanlab quicksort")


def partition3_runs(data):
    # each run times both partitions: the three-way one (the target) and the two-way one
    both = {"scanlab partition_three_way": "three-way", "scanlab partition": "two-way"}
    yield ("partition uint32", 1 << 28, "scanlab-partition",
           ["--generate", "uniform", "--dtype", "uint32", "--n", str(1 << 28), "--ways", "3"], both)
    yield ("partition float32", 1 << 28, "scanlab-partition",
           ["--generate", "normal", "--dtype", "float32", "--n", str(1 << 28), "--ways", "3"], both)
    for name in ("sounds.npy", "ecg.npy"):
        yield (f"partition float32 ({name})", None, "scanlab-partition",
               ["-i", os.path.join(data, name), "--ways", "3"], both)


def compact_runs():
    n = str(1 << 28)
    base = ["--generate", "uniform", "--dtype", "uint32", "--n", n]
    for pct, bound in (("1 %", "42949673"), ("50 %", "2147483648"), ("99 %", "4252017623")):
        yield (f"compaction If {pct}", 1 << 28, "scanlab-compact", base + ["--lt", bound], "scanlab")
    # Flagged: the flags are a second generated file; Unique: runs of equal keys
    yield ("compaction Flagged 50 %", 1 << 28, "scanlab-compact", base + ["--flags", "{flags}"], "scanlab")
    yield ("compaction Unique (few-unique)", 1 << 28, "scanlab-compact",
           ["--generate", "few-unique", "--dtype", "uint32", "--n", n, "--unique"], "scanlab")
    yield ("compaction Unique (sorted)", 1 << 28, "scanlab-compact",
           ["--generate", "sorted", "--dtype", "uint32", "--n", n, "--unique"], "scanlab")


def linrec_runs():
    yield ("linear recurrence float32", 1 << 28, "scanlab-linrec", ["--n", str(1 << 28)], "scanlab")
    yield ("linear recurrence float32, 2^16 x 2^12", 1 << 28, "scanlab-linrec",
           ["--n", str(1 << 12), "--batch", str(1 << 16)], "scanlab")


def scan_runs():
    yield ("inclusive scan int32", 1 << 28, "scanlab-bench",
           ["scan", "--types", "int32", "--variants", "production", "--no-validate", "--sizes", str(1 << 28)],
           None)


GROUPS = ["compact", "partition3", "linrec", "scan", "quicksort", "sort"]


def pick(rows, variant):
    """(label, dataset, n, scanlab ms, cub ms, % of ceiling) for each dataset of a run; variant:
    the production row's name, or {name: label} for runs with several targets."""
    out = []
    if variant is None:  # scanlab-bench: the production row and the CUB row
        mine = [r for r in rows if r["variant"] != "cub"]
        cub = {r["type"]: r for r in rows if r["variant"] == "cub"}
        for r in mine:
            c = cub.get(r["type"])
            if c:
                out.append(("", r["dataset"], r["n"], r["median_ms"], c["median_ms"], pct_label(r)))
        return out
    names = variant if isinstance(variant, dict) else {variant: ""}
    for r in rows:
        if r["variant"] in names and r["baseline_ms"] is not None:
            out.append((names[r["variant"]], r["dataset"], r["n"], r["median_ms"], r["baseline_ms"], pct_label(r)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", metavar="LABEL=BINDIR")
    parser.add_argument("--only", default=",".join(GROUPS), help="groups: " + ",".join(GROUPS))
    parser.add_argument("--sizes", default="2^16,2^20,2^24,2^28", help="sizes of the sort and quicksort groups")
    parser.add_argument("--large", default="2^30",
                        help="larger sizes: the quicksort's types, and the radix sort's uint32 keys and pairs")
    parser.add_argument("--all-dists", default="2^28",
                        help="sizes at which the radix sort of uint32 keys and pairs times all six key "
                             "distributions (else uniform)")
    parser.add_argument("--repeat-small", type=int, default=100, help="timed runs below 2^24 elements")
    parser.add_argument("--repeat-large", type=int, default=10, help="timed runs from 2^24 elements")
    parser.add_argument("--data", default="data/cache", help="the real datasets (data/fetch.sh sounds ecg)")
    parser.add_argument("--out", help="keep the JSON files and write targets.md here")
    opts = parser.parse_args()

    builds = parse_builds(parser, opts.builds)
    groups = parse_choices(parser, opts.only, GROUPS, "group")
    sizes = [parse_size(s) for s in opts.sizes.split(",")]
    out = opts.out or tempfile.mkdtemp(prefix="bench-targets-")
    os.makedirs(out, exist_ok=True)

    all_dist_sizes = {parse_size(s) for s in opts.all_dists.split(",") if s}
    large = [parse_size(s) for s in opts.large.split(",") if s]
    runs = {"sort": lambda: sort_runs(sizes, large, all_dist_sizes),
            "quicksort": lambda: quicksort_runs(sizes + large, opts.data),
            "partition3": lambda: partition3_runs(opts.data), "compact": compact_runs,
            "linrec": linrec_runs, "scan": scan_runs}

    flags_file = None
    if "compact" in groups:
        # one byte per item, half of them set at random
        import numpy as np
        flags_file = os.path.join(out, "flags.npy")
        np.save(flags_file, np.random.default_rng(7).integers(0, 2, 1 << 28, dtype=np.uint8))

    results = {}  # group -> list of (job, size label, dataset) -> label -> (ours, cub, pct)
    order = {}
    cub_versions = {}
    failures = []

    def render():
        md = ["# scanlab against CUB: the performance targets", ""]
        md.append("Each build's scanlab against the CUB it was built with, in the same run "
                  f"(median of {opts.repeat_small} timed runs below 2^24 elements, {opts.repeat_large} from 2^24; "
                  "L2 flushed). Ratio > 1: scanlab is faster.")
        md.append("")
        md.append("Builds: " + ", ".join(f"{label} (CUB {cub_versions.get(label, '?')})" for label, _ in builds))
        md.append("")
        for g in groups:
            if g not in results:
                continue
            md += [f"## {g}", ""]
            head = "| job | n | dataset |"
            rule = "|---|---|---|"
            for label, _ in builds:
                head += f" scanlab ({label}) | CUB {cub_versions.get(label, '?')} | ratio |"
                rule += "---|---|---|"
            if g in ("scan", "linrec", "compact"):
                head += " % of ceiling |"
                rule += "---|"
            md += [head, rule]
            for key in order[g]:
                job, n, dataset = key
                line = f"| {job} | {n} | {dataset} |"
                pct = None
                for label, _ in builds:
                    v = results[g][key].get(label)
                    if v is None:
                        line += " | | |"
                        continue
                    ours, cub, p = v
                    pct = pct if pct is not None else p
                    line += f" {fmt(ours)} | {fmt(cub)} | {cub / ours:.2f}x |"
                if g in ("scan", "linrec", "compact"):
                    line += f" {pct} |" if pct else " |"
                md.append(line)
            md.append("")
        if failures:
            md += ["Failed runs:", ""] + [f"- {f}" for f in failures]
        with open(os.path.join(out, "targets.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(md) + "\n")
        return "\n".join(md)

    count = 0
    for g in groups:
        results[g] = {}
        order[g] = []
        for job, n, app, args, variant in runs[g]():
            repeat = opts.repeat_small if n is not None and n < (1 << 24) else opts.repeat_large
            args = [a.replace("{flags}", flags_file or "") for a in args]
            for label, path in builds:
                count += 1
                json_path = os.path.join(out, f"{count:04d}_{label}.json")
                cmd = [os.path.join(path, app)] + args + ["--repeat", str(repeat), "--json", json_path, "-q"]
                if app != "scanlab-bench":
                    cmd += ["--bench", "--variants", "production"]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
                    failures.append(f"{job} {size_label(n)} {label}: exit {proc.returncode}: {tail[0]}")
                    continue
                bench = read_bench(json_path)
                cub_versions[label] = bench["baseline"]["cub_version"]
                for what, dataset, rn, ours, cub, pct in pick(bench["rows"], variant):
                    key = (f"{job}, {what}" if what else job, size_label(rn) if n is not None else str(rn), dataset)
                    if key not in results[g]:
                        results[g][key] = {}
                        order[g].append(key)
                    results[g][key][label] = (ours, cub, pct)
            print(f"bench-targets: {job} {size_label(n)} done", file=sys.stderr, flush=True)
            render()
    print(render())
    return 1 if failures else 0


def fmt(ms):
    return f"{ms * 1000:.1f} us" if ms < 0.1 else f"{ms:.3f} ms"


if __name__ == "__main__":
    sys.exit(main())
