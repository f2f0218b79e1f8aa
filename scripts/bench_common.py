"""What scripts/bench-compare.py and scripts/bench-targets.py share: sizes, builds, lists."""

import os


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
