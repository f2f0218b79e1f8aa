"""What scripts/bench-compare.py and scripts/bench-targets.py share: sizes, builds, lists,
reading the apps' reports."""

import json
import os

SCHEMA, SCHEMA_VERSION = "scanlab-app-report", 1  # docs/json-schema.md


def read_bench(path):
    """The "bench" object of an app report (docs/json-schema.md): its rows under "rows", the
    CUB under "baseline", the ceilings under "ceilings". A file that is not an app report
    with a benchmark is a ValueError naming it."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or doc.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: not a {SCHEMA} version {SCHEMA_VERSION}")
    if not isinstance(doc.get("bench"), dict):
        raise ValueError(f"{path}: holds no benchmark (run with --bench)")
    return doc["bench"]


def pct_label(row):
    """A row's GB/s against its ceiling, "88.1 % memcpy" or "97.0 % read"; "" for none."""
    return f"{row['pct_of_ceiling']:.1f} % {row['ceiling']}" if row["pct_of_ceiling"] is not None else ""


def parse_size(text):
    """'2^28' or '1000' -> an element count."""
    text = text.strip()
    return 1 << int(text[2:]) if text.startswith("2^") else int(text)


def size_label(n):
    """An element count as 2^k where it is a power of two; None (a file's size) as 'file'."""
    if n is None:
        return "file"
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def parse_builds(parser, specs):
    """LABEL=BINDIR arguments -> [(label, bindir)]; a missing folder is a usage error."""
    builds = []
    for b in specs:
        label, _, path = b.partition("=")
        if not path or not os.path.isdir(path):
            parser.error(f"'{b}': expected LABEL=BINDIR with an existing folder")
        builds.append((label, path))
    return builds


def parse_choices(parser, text, known, what):
    """A comma-separated subset of `known`; an unknown name is a usage error."""
    chosen = [c for c in text.split(",") if c]
    for c in chosen:
        if c not in known:
            parser.error(f"unknown {what} '{c}' (known: {', '.join(known)})")
    return chosen
