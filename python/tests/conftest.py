"""Shared fixtures: which GPU frameworks this machine has (GPU tests skip without them)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # fakes.py
# JAX takes 75 % of the GPU's memory when it starts unless told otherwise; the GPU tests
# share the GPU between PyTorch, CuPy and JAX in one process.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def _scanlab_gpu() -> bool:
    import scanlab
    return scanlab.runtime_info()["device_count"] > 0


HAS_GPU = _scanlab_gpu()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU usable (scanlab.runtime_info())")
needs_no_gpu = pytest.mark.skipif(HAS_GPU, reason="runs only where no GPU is usable")
