"""Stand-ins for CUDA arrays that need no GPU: DLPack capsules built with ctypes and
objects with a __cuda_array_interface__. Their pointers are fake: only argument checks
(which run before any CUDA call) may see them, never a kernel."""

from __future__ import annotations

import ctypes
from typing import Sequence


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAME = b"dltensor"  # the capsule keeps a pointer to its name: keep it alive for good

DTYPES = {"int32": (0, 32), "int64": (0, 64), "uint32": (1, 32), "uint64": (1, 64), "float32": (2, 32),
          "float64": (2, 64), "float16": (2, 16), "bfloat16": (4, 16), "bool": (6, 8), "complex64": (5, 64),
          "uint8": (1, 8), "int8": (0, 8)}


class FakeDLPack:
    """An array that exports a DLPack capsule of a fake device pointer. `deleted` counts the
    deleter calls (the consumer must call it exactly once per capsule)."""

    def __init__(self, shape: Sequence[int], dtype: str = "float32", device: tuple[int, int] = (2, 0),
                 strides: Sequence[int] | None = None, ptr: int = 0x7F0000000000) -> None:
        self.shape, self.dtype, self.device, self.strides, self.ptr = tuple(shape), dtype, device, strides, ptr
        self.deleted = 0
        self.streams: list = []
        self._keep: list = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        shape = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)
        strides = None
        if self.strides is not None:
            strides = (ctypes.c_int64 * max(1, len(self.strides)))(*self.strides)

        def deleter(_ptr):
            self.deleted += 1

        callback = DELETER(deleter)
        code, bits = DTYPES[self.dtype]
        m = DLManagedTensor()
        m.dl_tensor.data = self.ptr
        m.dl_tensor.device = DLDevice(*self.device)
        m.dl_tensor.ndim = len(self.shape)
        m.dl_tensor.dtype = DLDataType(code, bits, 1)
        m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        m.dl_tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None
        m.dl_tensor.byte_offset = 0
        m.deleter = callback
        self._keep.append((shape, strides, callback, m))
        return _capsule_new(ctypes.addressof(m), _NAME, None)


class FakeCAI:
    """An object with only a __cuda_array_interface__ (version 3)."""

    def __init__(self, shape: Sequence[int], typestr: str = "<f4", strides=None, ptr: int = 0x7F0000000000,
                 mask=None) -> None:
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3}
        if mask is not None:
            self.__cuda_array_interface__["mask"] = mask
