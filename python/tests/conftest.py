"""Shared fixtures: which GPU frameworks this machine has (GPU tests skip without them)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # fakes.py


def _torch_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def _cupy_cuda() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def _jax_gpu() -> bool:
    try:
        import jax
        return len(jax.devices("gpu")) > 0
    except Exception:
        return False


def _scanlab_gpu() -> bool:
    import scanlab
    return scanlab.runtime_info()["device_count"] > 0


HAS_GPU = _scanlab_gpu()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU usable (scanlab.runtime_info())")
needs_no_gpu = pytest.mark.skipif(HAS_GPU, reason="runs only where no GPU is usable")
