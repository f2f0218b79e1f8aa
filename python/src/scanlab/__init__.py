"""scanlab: GPU reductions, scans, sorts, compaction, partitions, norms and linear recurrences
on CUDA arrays.

Works on the arrays of PyTorch, CuPy and JAX (and anything with ``__dlpack__`` or
``__cuda_array_interface__``) without copying them, and returns results as the caller's array
type on the same device, computed on the framework's current CUDA stream (or ``stream=``).

    >>> import torch, scanlab
    >>> x = torch.rand(1_000_000, device="cuda")
    >>> scanlab.cumsum(x)            # a torch.Tensor on the same GPU
    >>> scanlab.reduce(x, "max")     # a 0-d torch.Tensor
    >>> keys, vals = scanlab.sort_pairs(x, torch.arange(x.numel(), device="cuda"))

Functions: :func:`reduce`, :func:`inclusive_scan`, :func:`exclusive_scan`, :func:`cumsum`,
:func:`sort`, :func:`argsort`, :func:`sort_pairs`, :func:`quicksort`, :func:`select`,
:func:`unique_consecutive`, :func:`partition`, :func:`dot`, :func:`rms`, :func:`norm`,
:func:`linear_recurrence`, :func:`linear_recurrence_backward`; the PyTorch autograd function is
in :mod:`scanlab.torch`. No call waits for the GPU except :func:`select` and
:func:`unique_consecutive` (their result size is read back) and :func:`quicksort` (it plans
each level on the host).
Importing scanlab makes no CUDA call (and imports no framework): it works on machines
without a GPU, where the functions raise TypeError/ValueError for bad arguments and
RuntimeError (with CUDA's error) for everything that needs the GPU.
"""

from __future__ import annotations

from typing import Any

from . import _scanlab
from ._api import (
    argsort,
    cumsum,
    dot,
    exclusive_scan,
    inclusive_scan,
    linear_recurrence,
    linear_recurrence_backward,
    norm,
    quicksort,
    reduce,
    rms,
    sort,
    sort_pairs,
)
from ._arrays import DTYPES, DeviceArray
from ._select import partition, select, unique_consecutive

__version__ = "0.1.0"


def build_info() -> dict[str, Any]:
    """What the extension was built with: the CUDA architectures it has code for, the CUDA
    runtime version it links (statically). Makes no CUDA call."""
    return dict(_scanlab.build_info())


def runtime_info() -> dict[str, Any]:
    """The CUDA runtime and driver versions and the number of GPUs, as scanlab sees them
    (makes CUDA calls; ``device_count`` is 0 and ``device_error`` names the reason where no
    GPU is usable)."""
    return dict(_scanlab.runtime_info())


__all__ = [
    "DTYPES",
    "DeviceArray",
    "argsort",
    "build_info",
    "cumsum",
    "dot",
    "exclusive_scan",
    "inclusive_scan",
    "linear_recurrence",
    "linear_recurrence_backward",
    "norm",
    "partition",
    "quicksort",
    "reduce",
    "rms",
    "runtime_info",
    "select",
    "sort",
    "sort_pairs",
    "unique_consecutive",
]
