"""scanlab through its Python API against the frameworks' own functions, on the same tensors.

    python3 python/benchmarks/bench.py                       # 2^10, 2^16, 2^20, 2^24, 2^28
    python3 python/benchmarks/bench.py --sizes 10,20 --json out.json --markdown out.md

Each row times one Python call of each side, binding overhead included: CUDA events around
the call on the current stream, after warm-up, median of --repeat runs (the L2 cache is not
flushed: from 2^24 float32 elements up the data is larger than the H100's L2). The "calls/s"
column is the host-side rate of back-to-back calls at that size (the call overhead at small
sizes). The JAX rows end each call with block_until_ready() (JAX runs on its own streams), so
they are host-synchronous times of both sides; scanlab runs there once through DLPack
(scanlab.linear_recurrence on JAX arrays) and once as the XLA custom call of scanlab.jax
under jax.jit. The "back to back" row issues --repeat jitted calls of each side and waits
for the last one only: time per call with dispatch overlapped, as inside a training step. --only runs the cases whose name contains a text (e.g. --only JAX). Cases
whose framework is missing are skipped.
Exit 3 without a GPU or PyTorch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def parse_sizes(text: str) -> list[int]:
    return [2 ** int(s) for s in text.split(",") if s]


def time_gpu(fn, repeat: int) -> float:
    """Median milliseconds of fn() between two CUDA events on PyTorch's current stream."""
    import torch
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeat):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def time_back_to_back(fn, repeat: int) -> float:
    """Milliseconds per call of `repeat` calls of fn() issued back to back, blocking on the last
    one's result only (a JAX array): the device time per call once dispatch overlaps the work,
    as in a training step's sequence of calls."""
    for _ in range(3):
        fn().block_until_ready()
    t0 = time.perf_counter()
    for _ in range(repeat):
        out = fn()
    out.block_until_ready()
    return (time.perf_counter() - t0) * 1e3 / repeat


def calls_per_second(fn, sync, seconds: float = 0.2) -> float:
    sync()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    sync()
    return n / (time.perf_counter() - t0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,16,20,24,28", help="log2 of the sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", help="write the rows as JSON here")
    parser.add_argument("--markdown", help="write the table as Markdown here")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this text")
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        print("bench.py: needs PyTorch", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("bench.py: no CUDA GPU", file=sys.stderr)
        return 3
    import scanlab

    try:
        import cupy
    except ImportError:
        cupy = None
    try:
        import os
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        import jax.numpy as jnp
        jax_gpu = jax.devices("gpu")[0]
    except Exception:
        jax = None
    scanlab_jax = None
    if jax is not None:
        try:
            import scanlab.jax as scanlab_jax
        except ImportError as e:
            print(f"bench.py: no scanlab.jax ({e})", file=sys.stderr)

    rows = []
    sync = torch.cuda.synchronize

    def row(case: str, n: int, bytes_moved: int, ours, theirs, baseline: str, back_to_back: bool = False) -> None:
        if args.only not in case:
            return
        timer = time_back_to_back if back_to_back else time_gpu
        t_ours = timer(ours, args.repeat)
        t_theirs = timer(theirs, args.repeat)
        r = {"case": case, "n": n, "scanlab_ms": t_ours, "baseline": baseline, "baseline_ms": t_theirs,
             "speedup": t_theirs / t_ours, "scanlab_GBps": bytes_moved / t_ours / 1e6,
             "scanlab_calls_per_s": 1e3 / t_ours if back_to_back else calls_per_second(ours, sync),
             "baseline_calls_per_s": 1e3 / t_theirs if back_to_back else calls_per_second(theirs, sync)}
        rows.append(r)
        print(f"{case:28s} n=2^{n.bit_length() - 1:<2d} scanlab {t_ours * 1e3:10.1f} us  {baseline:28s} "
              f"{t_theirs * 1e3:10.1f} us  x{r['speedup']:.2f}  {r['scanlab_GBps']:7.1f} GB/s", flush=True)

    for n in parse_sizes(args.sizes):
        x = torch.rand(n, device="cuda")
        pos = torch.arange(n, device="cuda")
        row("cumsum float32", n, 8 * n, lambda: scanlab.cumsum(x), lambda: torch.cumsum(x, 0), "torch.cumsum")
        row("sum float32", n, 4 * n, lambda: scanlab.reduce(x), lambda: torch.sum(x), "torch.sum")
        row("sort float32", n, 8 * n, lambda: scanlab.sort(x), lambda: torch.sort(x), "torch.sort (values, indices)")
        row("sort pairs float32+int64", n, 24 * n, lambda: scanlab.sort_pairs(x, pos), lambda: torch.sort(x),
            "torch.sort (values, indices)")
        row("sort float32 with indices", n, 16 * n, lambda: scanlab.sort(x, return_indices=True),
            lambda: torch.sort(x), "torch.sort (values, indices)")
        row("argsort float32", n, 12 * n, lambda: scanlab.argsort(x), lambda: torch.argsort(x), "torch.argsort")
        if cupy is not None:
            xc = cupy.asarray(x)
            row("cumsum float32 (CuPy)", n, 8 * n, lambda: scanlab.cumsum(xc), lambda: cupy.cumsum(xc), "cupy.cumsum")
            row("sort float32 (CuPy)", n, 8 * n, lambda: scanlab.sort(xc), lambda: cupy.sort(xc), "cupy.sort")
        if jax is not None:
            a = jax.device_put(jnp.full((n,), 0.999, dtype=jnp.float32), jax_gpu)
            b = jax.device_put(jnp.ones((n,), dtype=jnp.float32), jax_gpu)

            def combine(left, right):
                return left[0] * right[0], right[0] * left[1] + right[1]

            assoc = jax.jit(lambda a, b: jax.lax.associative_scan(combine, (a, b))[1])
            row("linrec float32 (JAX, DLPack)", n, 12 * n,
                lambda: scanlab.linear_recurrence(a, b).block_until_ready(),
                lambda: assoc(a, b).block_until_ready(), "jax.lax.associative_scan")
            if scanlab_jax is not None:  # the XLA custom call, jit-compiled
                ours = jax.jit(scanlab_jax.linear_recurrence)
                row("linrec float32 (JAX, scanlab.jax)", n, 12 * n, lambda: ours(a, b).block_until_ready(),
                    lambda: assoc(a, b).block_until_ready(), "jax.lax.associative_scan")
                row("linrec float32 (JAX, scanlab.jax, back to back)", n, 12 * n, lambda: ours(a, b),
                    lambda: assoc(a, b), "jax.lax.associative_scan", back_to_back=True)
            a = b = None
        x = pos = None  # free the inputs before the next size
        torch.cuda.empty_cache()

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"Device: {torch.cuda.get_device_name()}, torch {torch.__version__}\n\n")
            f.write("| case | n | scanlab | baseline | baseline time | speedup | scanlab GB/s |\n|---|---|---|---|---|---|---|\n")
            for r in rows:
                f.write(f"| {r['case']} | 2^{r['n'].bit_length() - 1} | {r['scanlab_ms'] * 1e3:.1f} us | {r['baseline']} | "
                        f"{r['baseline_ms'] * 1e3:.1f} us | {r['speedup']:.2f}x | {r['scanlab_GBps']:.0f} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
