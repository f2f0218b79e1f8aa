#!/usr/bin/env python3
"""scanlab-report: a Markdown summary and PNG plots from scanlab's benchmark JSON.

Reads the app reports that `scanlab-bench ... --json` and the apps' `--bench --json` write
(docs/json-schema.md: the benchmark under "bench", its device, ceilings and one row per
variant, type, dataset and size; nothing else is read) and writes a folder:

  report.md                        a summary per suite: headline table at the largest
                                   size, the plots, every row in a folded table
  <suite>_<type>_gbps.png          GB/s against n (log2 axis) for every variant, with the
                                   measured ceilings as dashed lines (memcpy; the read-only
                                   kernel where rows are compared with it)
                                   (suites measured at several sizes)
  <suite>_<type>_bars.png          grouped bars of GB/s per dataset (distribution,
                                   selectivity) for every variant, each bar labelled with
                                   its ratio to CUB (suites with several datasets, or one size)

A file whose suites each hold a single measurement (one size, one dataset), like
scanlab-norms' report, gets one section whose bars are grouped by suite.

The folder is written under a temporary name beside its destination and renamed into
place at the end: a failed run leaves the previous report as it was.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field

PROG = "scanlab-report"
SCHEMA, SCHEMA_VERSION = "scanlab-app-report", 1  # docs/json-schema.md


class ReportError(Exception):
    """A problem reported to the user as one line, exit status 1."""


# ---------------------------------------------------------------------------------------
# Reading the JSON
# ---------------------------------------------------------------------------------------

@dataclass
class Row:
    suite: str
    variant: str
    type: str
    dataset: str
    n: int
    median_ms: float
    gbps: float
    validation: str
    speedup: float | None  # CUB's median / this median: > 1 is faster than CUB
    ceiling: str | None = None  # "memcpy" or "read": what pct is a fraction of
    pct: float | None = None
    noise: float | None = None  # relative standard deviation of the runs
    throttled: bool = False


@dataclass
class Run:
    path: str
    device: dict
    memcpy_gbps: float | None  # measured device-to-device copy bandwidth (read + write)
    version: str
    timestamp: str
    rows: list = field(default_factory=list)
    cub: str = ""  # the CUB the baselines ran against ("3.0.1")
    read_gbps: float | None = None  # measured read-only bandwidth, where rows are compared with it
    runtime: int = 0  # CUDA runtime version, 13000 for 13.0
    commit: str = ""


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_run(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not a text file (expected JSON)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None

    # An app report (docs/json-schema.md) with a benchmark.
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ReportError(f"{path}: not a {SCHEMA} (the --json of a scanlab app; docs/json-schema.md)")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ReportError(f"{path}: {SCHEMA} version {doc.get('schema_version')}; this reads version {SCHEMA_VERSION}")
    bench = doc.get("bench")
    if not isinstance(bench, dict) or not isinstance(bench.get("rows"), list):
        raise ReportError(f"{path}: no benchmark results (its 'bench' is null: run the app with --bench)")
    if not bench["rows"]:
        raise ReportError(f"{path}: 'bench.rows' is empty")

    rows = []
    for i, r in enumerate(bench["rows"]):
        where = f"{path}: bench.rows[{i}]"
        if not isinstance(r, dict):
            raise ReportError(f"{where} is not an object")
        for key in ("suite", "variant", "type"):
            if not isinstance(r.get(key), str) or not r[key]:
                raise ReportError(f"{where}: '{key}' is missing or not a non-empty string")
        if not isinstance(r.get("n"), int) or isinstance(r.get("n"), bool) or r["n"] < 0:
            raise ReportError(f"{where}: 'n' is missing or not a non-negative integer")
        for key in ("median_ms", "gbps"):
            if not _number(r.get(key)) or r[key] < 0:
                raise ReportError(f"{where}: '{key}' is missing or not a non-negative number")
        for key in ("speedup_vs_baseline", "pct_of_ceiling", "noise"):
            if r.get(key) is not None and not _number(r[key]):
                raise ReportError(f"{where}: '{key}' is neither a number nor null")
        if r.get("ceiling") not in ("memcpy", "read", None):
            raise ReportError(f"{where}: 'ceiling' is {r['ceiling']!r}, not memcpy, read or null")
        if not isinstance(r.get("check"), str):
            raise ReportError(f"{where}: 'check' is missing or not a string")
        clocks = r.get("clocks")
        rows.append(Row(suite=r["suite"], variant=r["variant"], type=r["type"], dataset=str(r.get("dataset", "")),
                        n=r["n"], median_ms=float(r["median_ms"]), gbps=float(r["gbps"]), validation=r["check"],
                        speedup=r.get("speedup_vs_baseline"), ceiling=r.get("ceiling"), pct=r.get("pct_of_ceiling"),
                        noise=r.get("noise"), throttled=isinstance(clocks, dict) and clocks.get("throttled") is True))

    ceilings = bench.get("ceilings")
    if not isinstance(ceilings, dict) or not _number(ceilings.get("memcpy_gbps")):
        raise ReportError(f"{path}: 'bench.ceilings.memcpy_gbps' is missing or not a number")
    read = ceilings.get("read_gbps")
    device = bench.get("device") if isinstance(bench.get("device"), dict) else {}
    baseline = bench.get("baseline") if isinstance(bench.get("baseline"), dict) else {}
    build = doc.get("build") if isinstance(doc.get("build"), dict) else {}
    run = Run(path=path, device=device, memcpy_gbps=float(ceilings["memcpy_gbps"]) or None,
              version=str(doc.get("scanlab_version", "")), timestamp=str(doc.get("timestamp", "")),
              rows=rows, cub=str(baseline.get("cub_version", "")), read_gbps=float(read) if _number(read) else None,
              runtime=bench.get("cuda_runtime_version") or 0, commit=str(build.get("commit", ""))[:12])
    _fill_speedups(run)
    return run


def _fill_speedups(run):
    """Rows without a ratio to CUB get one from the CUB row measured on the same input."""
    cub = {(r.suite, r.type, r.dataset, r.n): r.median_ms for r in run.rows if r.variant == "cub"}
    for r in run.rows:
        if r.variant == "cub":
            r.speedup = 1.0  # the baseline itself (some writers leave it out)
        elif r.speedup is None and r.median_ms > 0:
            base = cub.get((r.suite, r.type, r.dataset, r.n))
            if base:
                r.speedup = base / r.median_ms


# ---------------------------------------------------------------------------------------
# Sections: what goes together in the Markdown and the plots
# ---------------------------------------------------------------------------------------

@dataclass
class Section:
    title: str
    slug: str           # prefix of the PNG names
    run: Run
    rows: list
    group_by_suite: bool  # bars grouped by suite (a file of single-measurement suites)


def unique(items):
    return list(dict.fromkeys(items))


def slugify(text):
    s = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return s or "x"


def make_sections(runs):
    sections = []
    seen_titles = {}
    for run in runs:
        stem = os.path.splitext(os.path.basename(run.path))[0]
        suites = unique(r.suite for r in run.rows)
        single = all(len(unique((r.type, r.dataset, r.n) for r in run.rows if r.suite == s))
                     == len(unique(r.type for r in run.rows if r.suite == s)) for s in suites)
        if len(suites) > 1 and single:
            groups = [(stem, run.rows, True)]
        else:
            groups = [(s, [r for r in run.rows if r.suite == s], False) for s in suites]
        for title, rows, by_suite in groups:
            if title in seen_titles:  # the same suite in two files: tell them apart
                title = f"{title} ({stem})"
            seen_titles[title] = True
            sections.append(Section(title=title, slug=slugify(title), run=run, rows=rows,
                                    group_by_suite=by_suite))
    slugs = [s.slug for s in sections]
    for i, s in enumerate(sections):
        if slugs.count(s.slug) > 1:
            s.slug = f"{s.slug}-{i + 1}"
    return sections


# ---------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------

def fmt_n(n):
    if n > 1 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def fmt_time(ms):
    if ms < 0.001:
        return f"{ms * 1e6:.0f} ns"
    if ms < 0.1:
        return f"{ms * 1e3:.1f} µs"
    if ms < 10:
        return f"{ms:.3f} ms"
    return f"{ms:.1f} ms"


def fmt_pct(row):
    """A row's GB/s against its ceiling: "88.1% memcpy", "97.0% read"."""
    return f"{row.pct:.1f}% {row.ceiling}" if row.pct is not None else ""


def fmt_noise(row):
    return f"{100.0 * row.noise:.1f}%" if row.noise is not None else ""


def fmt_speedup(s):
    return f"{s:.2f}x" if s is not None else ""


def fmt_check(v):
    return f"**{v}**" if v.startswith("FAIL") else v


def md_cell(text):
    return str(text).replace("|", "\\|")


def anchor(title):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def table(rows, with_suite):
    head = (["suite"] if with_suite else []) + ["variant", "type", "dataset", "n", "time", "noise", "GB/s",
                                                "% of ceiling", "vs CUB", "check"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = ([r.suite] if with_suite else []) + [
            r.variant, r.type, r.dataset, fmt_n(r.n), fmt_time(r.median_ms) + (" (throttled)" if r.throttled else ""),
            fmt_noise(r), f"{r.gbps:.1f}", fmt_pct(r), fmt_speedup(r.speedup), fmt_check(r.validation)]
        lines.append("| " + " | ".join(md_cell(c) for c in cells) + " |")
    return lines


# ---------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------

# The production path and CUB stand out; the ladder's steps are thin lines in ladder order.
def variant_styles(variants):
    import matplotlib
    ladder = [v for v in variants if v.startswith("ladder/")]
    ladder_colours = matplotlib.colormaps["viridis"]
    others = matplotlib.colormaps["tab10"]
    styles, other_index = {}, 0
    for v in variants:
        if v == "cub":
            styles[v] = dict(color="#d62728", linewidth=2.6, marker="s", markersize=5, zorder=5)
        elif v in ("production", "scanlab"):
            styles[v] = dict(color="black", linewidth=2.6, marker="o", markersize=5, zorder=6)
        elif v.startswith("ladder/"):
            k = ladder.index(v)
            colour = ladder_colours(0.9 * k / max(1, len(ladder) - 1))
            styles[v] = dict(color=colour, linewidth=1.3, marker=".", markersize=6, zorder=3)
        else:  # production variants (production-exclusive), cuBLAS, ...
            colour = others((other_index + 1) % 10)  # skip tab10's first blue: close to viridis
            other_index += 1
            # Drawn over the production line, dashed, so a variant that matches it stays visible.
            styles[v] = dict(color=colour, linewidth=1.6, marker="D", markersize=4, zorder=7,
                             linestyle="--")
    return styles


def device_label(run):
    return run.device.get("name") or "unknown device"


def save(fig, path):
    # No software/date metadata: the same input gives the same bytes.
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})


def draw_ceilings(ax, ceilings):
    for (name, gbps), style in zip(ceilings, ("--", ":")):
        ax.axhline(gbps, color="grey", linestyle=style, linewidth=1.5, label=f"{name} ceiling ({gbps:.0f} GB/s)",
                   zorder=2)


def plot_sweep(plt, rows, ceilings, title, path, log_y):
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    variants = unique(r.variant for r in rows)
    styles = variant_styles(variants)
    fig, ax = plt.subplots(figsize=(10, 5.6))
    for v in variants:
        pts = sorted((r.n, r.gbps) for r in rows if r.variant == v and r.n > 0)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=v, **styles[v])
    draw_ceilings(ax, ceilings)
    ns = [r.n for r in rows if r.n > 0]
    lo, hi = math.floor(math.log2(min(ns))), math.ceil(math.log2(max(ns)))
    step = max(1, math.ceil((hi - lo + 1) / 14))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([2.0 ** k for k in range(lo, hi + 1, step)]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"$2^{{{round(math.log2(x))}}}$"))
    ax.set_xlim(2.0 ** lo / 1.3, 2.0 ** hi * 1.3)
    top = max([r.gbps for r in rows] + [g for _, g in ceilings])
    if log_y:
        ax.set_yscale("log")
    else:
        ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    ax.set_xlabel("n (elements, log2 scale)")
    ax.set_ylabel("GB/s (declared bytes / median time)" + (", log scale" if log_y else ""))
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.35)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    save(fig, path)
    plt.close(fig)


def plot_bars(plt, rows, ceilings, title, group_of, group_name, path):
    """Bars of GB/s: one group per dataset (or suite), one bar per variant, at the largest n."""
    groups = unique(group_of(r) for r in rows)
    variants = unique(r.variant for r in rows)
    styles = variant_styles(variants)
    largest = {}
    for r in rows:
        key = (group_of(r), r.variant)
        if key not in largest or r.n > largest[key].n:
            largest[key] = r
    # Each group's bars are centred on its tick, whichever variants it has.
    present = {g: [v for v in variants if (g, v) in largest] for g in groups}
    width = 0.8 / max(len(p) for p in present.values())
    fig, ax = plt.subplots(figsize=(max(6.5, 1.1 + len(groups) * (0.5 + 0.32 * len(variants))), 5.0))
    top = max([g for _, g in ceilings] + [0])
    for v in variants:
        xs, ys, labels = [], [], []
        for i, g in enumerate(groups):
            if v not in present[g]:
                continue
            r = largest[(g, v)]
            xs.append(i + width * (present[g].index(v) + 0.5 - len(present[g]) / 2))
            ys.append(r.gbps)
            labels.append("" if v == "cub" else fmt_speedup(r.speedup))
            top = max(top, r.gbps)
        bars = ax.bar(xs, ys, width=width * 0.95, label=v, color=styles[v]["color"], zorder=3)
        ax.bar_label(bars, labels=labels, fontsize=7, padding=2, rotation=90 if len(variants) > 4 else 0)
    draw_ceilings(ax, ceilings)
    ax.set_xticks(range(len(groups)))
    long_labels = len(groups) > 4 or max(len(g) for g in groups) > 14
    ax.set_xticklabels(groups, rotation=20 if long_labels else 0, ha="right" if long_labels else "center")
    ax.set_xlabel(group_name)
    ax.set_ylabel("GB/s (declared bytes / median time)")
    ax.set_ylim(0, top * 1.18 if top > 0 else 1)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.35, zorder=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False,
              title="bar label: vs CUB", title_fontsize="small")
    save(fig, path)
    plt.close(fig)


# ---------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------

FOLD_ABOVE = 30  # sections with more rows than this show a headline table and fold the rest


def write_section(plt, out, s, log_y):
    run, rows = s.run, s.rows
    # The ceilings this section's rows are compared with, as dashed lines in its plots.
    ceilings = [(name, gbps) for name, gbps in (("memcpy", run.memcpy_gbps), ("read", run.read_gbps))
                if gbps and any(r.ceiling == name for r in rows)]
    md = [f"## {s.title}", ""]
    types = unique(r.type for r in rows)
    desc = []
    for t in types:
        tr = [r for r in rows if r.type == t]
        ns = [r.n for r in tr]
        sizes = fmt_n(min(ns)) if min(ns) == max(ns) else f"{fmt_n(min(ns))} to {fmt_n(max(ns))}"
        desc.append(f"{t} ({', '.join(unique(r.dataset for r in tr))}; n = {sizes})")
    md += [f"From `{os.path.basename(run.path)}`, {device_label(run)}: {'; '.join(desc)}.", ""]

    # One sentence per type: the production path against CUB at the largest size.
    for t in types:
        tr = [r for r in rows if r.type == t]
        nmax = max(r.n for r in tr)
        for r in tr:
            if r.n == nmax and r.variant in ("production", "scanlab") and not s.group_by_suite:
                md.append(f"- {t}{', ' + r.dataset if len(unique(x.dataset for x in tr)) > 1 else ''}: "
                          f"{r.variant} reaches {r.gbps:.0f} GB/s at n = {fmt_n(nmax)}"
                          + (f" ({r.pct:.1f}% of the {r.ceiling} ceiling)" if r.pct is not None else "")
                          + (f", {fmt_speedup(r.speedup)} CUB's speed." if r.speedup else "."))
    if md[-1] != "":
        md.append("")

    throttled = [r for r in rows if r.throttled]
    if throttled:
        md += [f"**{len(throttled)} row(s) ran with throttled clocks** (marked in the tables): their times are "
               "suspect.", ""]
    failures = [r for r in rows if r.validation.startswith("FAIL")]
    if failures:
        md += [f"**{len(failures)} row(s) failed validation**: "
               + ", ".join(f"{r.variant} {r.type} n={fmt_n(r.n)}" for r in failures[:10]), ""]

    pngs = []
    for t in types:
        tr = [r for r in rows if r.type == t]
        tslug = slugify(t)
        sizes = unique(r.n for r in tr)
        datasets = unique(r.dataset for r in tr)
        if len(sizes) > 1:
            for d in datasets:
                dr = [r for r in tr if r.dataset == d]
                if len(unique(r.n for r in dr)) < 2:
                    continue
                dslug = f"_{slugify(d)}" if len(datasets) > 1 else ""
                name = f"{s.slug}_{tslug}{dslug}_gbps.png"
                plot_sweep(plt, dr, ceilings, f"{s.title}, {t}{', ' + d if d else ''}: GB/s against n "
                           f"({device_label(run)})", os.path.join(out, name), log_y)
                pngs.append((name, f"{s.title} {t} {d}: GB/s against n"))
        if s.group_by_suite or len(datasets) > 1 or len(sizes) == 1:
            if s.group_by_suite:
                group_of, group_name = (lambda r: r.suite), "suite"
            else:
                group_of, group_name = (lambda r: r.dataset or "(none)"), "dataset"
            name = f"{s.slug}_{tslug}_bars.png"
            plot_bars(plt, tr, ceilings, f"{s.title}, {t}: GB/s per {group_name} at the largest n "
                      f"({device_label(run)})", group_of, group_name, os.path.join(out, name))
            pngs.append((name, f"{s.title} {t}: GB/s per {group_name}"))

    if len(rows) > FOLD_ABOVE:
        md += ["At the largest size of each type, fastest first:", ""]
        head = []
        for t in types:
            tr = [r for r in rows if r.type == t]
            nmax = max(r.n for r in tr)
            head += sorted((r for r in tr if r.n == nmax), key=lambda r: -r.gbps)
        md += table(head, s.group_by_suite) + [""]
    else:
        md += table(rows, s.group_by_suite) + [""]
    for name, alt in pngs:
        alt = re.sub(r"([\[\]\\])", r"\\\1", alt)  # a dataset such as "random [0,1)"
        md += [f"![{alt}]({name})", ""]
    if len(rows) > FOLD_ABOVE:
        md += [f"<details><summary>All {len(rows)} rows</summary>", ""]
        md += table(rows, s.group_by_suite) + ["", "</details>", ""]
    return md, [p[0] for p in pngs]


def build_report(runs, out, title, log_y, plt):
    sections = make_sections(runs)
    md = [f"# {title}", "",
          "Made by `scanlab-report` from " + ", ".join(f"`{r.path}`" for r in runs) + ".", "",
          "| file | device | SMs | CUDA runtime | CUB | memcpy GB/s | read GB/s | scanlab | commit | taken (UTC) |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        rt = r.runtime
        rt = f"{rt // 1000}.{rt % 1000 // 10}" if isinstance(rt, int) and rt > 0 else ""
        md.append("| " + " | ".join(md_cell(c) for c in [
            os.path.basename(r.path), device_label(r), r.device.get("sm_count", ""), rt, r.cub,
            f"{r.memcpy_gbps:.0f}" if r.memcpy_gbps else "", f"{r.read_gbps:.0f}" if r.read_gbps else "",
            r.version, r.commit, r.timestamp]) + " |")
    md += ["",
           "GB/s is the bytes a perfect algorithm must move divided by the median time (L2 flushed "
           "before each run); noise is the standard deviation of the runs over their mean; % of ceiling "
           "compares GB/s with the ceiling the row names, measured in the same run: memcpy, the "
           "device-to-device copy (read + write), for jobs that read and write; read, a read-only "
           "kernel, for jobs that only read (reductions, norms); the dashed lines in the plots. vs CUB "
           "is CUB's median time over the variant's on the same input (above 1: faster than CUB).", ""]
    if len(sections) > 1:
        md += ["Sections: " + ", ".join(f"[{s.title}](#{anchor(s.title)})" for s in sections) + ".", ""]
    files = ["report.md"]
    for s in sections:
        part, pngs = write_section(plt, out, s, log_y)
        md += part
        files += pngs
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md).rstrip("\n") + "\n")
    return files


def import_pyplot():
    """matplotlib's pyplot on the Agg backend. Where the interpreter running this script
    lacks matplotlib (a pyenv or conda python3 first on PATH), Debian's /usr/bin/python3,
    where scripts/install-deps.sh puts it, runs the script instead."""
    try:
        import matplotlib
    except ImportError:
        alt = "/usr/bin/python3"
        if (not os.environ.get("SCANLAB_REPORT_REEXEC") and os.path.exists(alt)
                and os.path.realpath(alt) != os.path.realpath(sys.executable)):
            os.environ["SCANLAB_REPORT_REEXEC"] = "1"
            os.execv(alt, [alt, os.path.abspath(__file__)] + sys.argv[1:])
        raise ReportError(f"matplotlib is not installed for {sys.executable} "
                          "(scripts/install-deps.sh installs python3-matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.max_open_warning": 0, "svg.hashsalt": "scanlab"})
    return plt


def check_destination(out):
    """`out` may be absent, empty, or an earlier report: never replace anything else."""
    if os.path.lexists(out):
        if not os.path.isdir(out) or os.path.islink(out):
            raise ReportError(f"{out} exists and is not a folder")
        if os.listdir(out) and not os.path.isfile(os.path.join(out, "report.md")):
            raise ReportError(f"{out} is a folder that holds no report.md: not replacing it "
                              "(choose another -o)")


def replace_folder(tmp, out):
    """Moves the finished folder `tmp` to `out`, replacing an earlier report there."""
    check_destination(out)  # again: it may have changed while the plots were drawn
    if os.path.lexists(out):
        old = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.old-", dir=os.path.dirname(out))
        os.rename(out, os.path.join(old, "report"))
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, out)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Writes a report folder (report.md and PNG plots) from the JSON files that "
                    "scanlab-bench and the apps write with --json.",
        epilog="Example: scanlab-report docs/results/*.json -o report\n"
               "Exit status: 0 done, 1 bad input or a file that cannot be written, 2 bad usage.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", nargs="+", metavar="JSON", help="benchmark reports (--json output)")
    p.add_argument("-o", "--output", default="report", metavar="DIR",
                   help="the report folder; an earlier report there is replaced (default: report)")
    p.add_argument("--title", default="scanlab benchmark report", help="the Markdown title")
    p.add_argument("--log-y", action="store_true", help="GB/s on a log scale in the size plots")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    try:
        plt = import_pyplot()
        runs = [load_run(path) for path in args.json]
        out = os.path.abspath(args.output)
        parent = os.path.dirname(out)
        if not os.path.isdir(parent):
            raise ReportError(f"{parent}: no such folder (for -o {args.output})")
        check_destination(out)
        try:
            tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.tmp-", dir=parent)
        except OSError as e:
            raise ReportError(f"{parent}: cannot write: {e.strerror}") from None
        try:
            os.chmod(tmp, 0o755)
            files = build_report(runs, tmp, args.title, args.log_y, plt)
            replace_folder(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    except ReportError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{PROG}: error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"{PROG}: wrote {out}/ ({', '.join(files)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
