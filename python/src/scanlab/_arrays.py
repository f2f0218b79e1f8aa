"""Arrays in and out: DLPack, the CUDA array interface, frameworks, streams, allocation.

Every public function of the package goes through a :class:`Call`:

1. ``Call(name, stream)`` remembers the explicit ``stream=`` argument, if any;
2. ``call.arg(obj, "x", ...)`` looks at an input: where it lives (``__dlpack_device__``, or
   the CUDA array interface), which framework made it (the module of its type), then takes it
   through ``__dlpack__(stream=...)`` with the call's stream, so that the producer orders its
   pending work before ours, and checks its dtype, rank and layout. PyTorch tensors are read
   from their own attributes instead (``data_ptr()``, ``stride()``: no capsule to build), with
   the same ordering done here. The first input fixes the framework, the device and (unless
   given) the stream: the framework's current stream on that device;
3. ``call.empty(shape, dtype)`` allocates an output with the framework's own allocator
   (PyTorch's and CuPy's caching allocators, stream-ordered on the call's stream), or, for
   JAX and other producers, as a :class:`DeviceArray` (``cudaMalloc``) exported through DLPack;
4. ``call.launch(fn, *args)`` runs the operation with temporary storage: the framework's
   workspace for the stream where it is large enough (one extension call), else storage
   sized for the call (framework allocator where there is one, else ``cudaMallocAsync``/
   ``cudaFreeAsync`` on the stream inside the extension);
5. ``call.result(out)`` hands the output back as the caller's array type. Compactions, whose
   result size is known only on the device, read it with ``call.read_count`` (which waits for
   the call's stream) and cut their outputs to it with ``call.shrink``.

Nothing here calls CUDA at import time.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, Sequence, cast

from . import _scanlab as _C

# The element types of the bindings' general operations (reduce, scan, sort, select, ...).
DTYPES: tuple[str, ...] = ("int32", "int64", "uint32", "uint64", "float32", "float64")
# Storage types of the linear recurrence alone (computed in float32).
HALF_DTYPES: tuple[str, ...] = ("float16", "bfloat16")
# The code the extension takes for each type (ops.hpp: dtype): the index.
DTYPE_CODE: dict[str, int] = {name: i for i, name in enumerate(DTYPES + HALF_DTYPES)}
ITEMSIZE: dict[str, int] = {"int32": 4, "int64": 8, "uint32": 4, "uint64": 8, "float32": 4, "float64": 8,
                            "float16": 2, "bfloat16": 2,
                            "bool": 1, "uint8": 1}  # bool, uint8: masks and temporary storage
# The values of each integer element type.
INT_RANGE: dict[str, tuple[int, int]] = {
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
}

# DLPack (type code, bits) -> name, for every type an input may come with (so that an
# unsupported one is named in the error).
_DLPACK_NAMES: dict[tuple[int, int], str] = {
    (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
    (4, 16): "bfloat16", (5, 64): "complex64", (5, 128): "complex128", (6, 8): "bool",
}
DLPACK_OF: dict[str, tuple[int, int]] = {name: key for key, name in _DLPACK_NAMES.items() if name in DTYPE_CODE}

# DLPack device types.
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "pinned host (CUDA host)", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
                 9: "VPI", 10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}

# Temporary-storage modes of the extension's operations (module.cpp: temp_mode).
_QUERY, _GIVEN, _OWN, _WORKSPACE = 0, 1, 2, 3


def _type_name(obj: Any) -> str:
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def framework_of(obj: Any) -> str:
    """'torch', 'cupy', 'jax' or 'other', from the module of ``type(obj)``."""
    root = type(obj).__module__.partition(".")[0]
    if root == "torch":
        return "torch"
    if root == "cupy":
        return "cupy"
    if root in ("jax", "jaxlib"):
        return "jax"
    return "other"


def stream_handle(stream: Any) -> int:
    """The ``cudaStream_t`` of a ``stream=`` argument, as an integer.

    Accepts an integer handle (0: the legacy default stream), an object with
    ``__cuda_stream__`` (CUDA Python's protocol), a ``torch.cuda.Stream`` (``.cuda_stream``)
    or a ``cupy.cuda.Stream`` (``.ptr``).
    """
    if isinstance(stream, bool):
        raise TypeError("stream: expected a CUDA stream or an integer cudaStream_t, got bool")
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError(f"stream: a cudaStream_t handle is not negative (got {stream})")
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        value = proto() if callable(proto) else proto
        return stream_handle(int(value[1]))
    for attr in ("cuda_stream", "ptr"):
        value = getattr(stream, attr, None)
        if value is not None:
            return stream_handle(int(value))
    raise TypeError(
        "stream: expected an integer cudaStream_t, a torch.cuda.Stream, a cupy.cuda.Stream or an object "
        f"with __cuda_stream__; got {_type_name(stream)}")


def _dlpack_stream(handle: int) -> int:
    """The DLPack protocol's name for a stream: 1 for the legacy default stream (0 is not allowed)."""
    return 1 if handle == 0 else handle


def _same_stream(a: int, b: int) -> bool:
    return _dlpack_stream(a) == _dlpack_stream(b)


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs a microsecond a call
class Array:
    """An input, imported: where it is and what it holds. ``keep`` keeps the memory alive."""

    arg: str
    obj: Any
    ptr: int
    shape: tuple[int, ...]
    dtype: str
    device: int
    keep: Any

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)


# torch.Tensor once torch is in use (a fast test for the common input), and torch dtype ->
# name: set by _Torch._module and _from_torch, never importing torch here.
_torch_tensor_type: list[Any] = [None]
_torch_dtype_names: dict[Any, str] = {}


def _contiguous(shape: Sequence[int], strides: Sequence[int] | None) -> bool:
    """Compact row-major (strides in elements; dimensions of extent 1 may have any stride)."""
    if strides is None or 0 in shape:
        return True
    expected = 1
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


class Call:
    """One call of a public function: its arguments, device, stream and allocations."""

    def __init__(self, name: str, stream: Any = None) -> None:
        self.name = name
        self.explicit_stream = stream is not None
        # Set by the first input (_adopt): until then -1, and `first` is None.
        self.stream: int = stream_handle(stream) if stream is not None else -1
        self.framework: str = "other"
        self.device: int = -1
        self.first: str | None = None
        self.torch_ordered = False  # PyTorch's current stream already ordered before ours

    # ---- errors ----

    def type_error(self, message: str) -> TypeError:
        return TypeError(f"scanlab.{self.name}: {message}")

    def value_error(self, message: str) -> ValueError:
        return ValueError(f"scanlab.{self.name}: {message}")

    # ---- inputs ----

    def _adopt(self, arg: str, framework: str, device: int) -> None:
        """The first input fixes the framework, the device and the stream."""
        if self.first is None:
            self.framework, self.device, self.first = framework, device, arg
            if not self.explicit_stream:
                self.stream = _FRAMEWORKS[framework].current_stream(device)
        elif device != self.device:
            raise self.value_error(
                f"{arg} is on CUDA device {device} but {self.first} is on CUDA device {self.device}: "
                "move them to one device")

    def arg(self, obj: Any, arg: str, *, dtypes: Sequence[str], ndims: Sequence[int] | None = (1,),
            dtype: str | None = None) -> Array:
        """Import ``obj`` (argument ``arg``) and check it: a CUDA array of one of ``dtypes``
        (exactly ``dtype`` where given), of a rank in ``ndims`` (None: any), compact row-major."""
        if type(obj) is _torch_tensor_type[0] or (framework_of(obj) == "torch" and hasattr(obj, "data_ptr")):
            array = self._from_torch(obj, arg)
        elif hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
            array = self._from_dlpack(obj, arg)
        elif hasattr(obj, "__cuda_array_interface__"):
            array = self._from_cuda_array_interface(obj, arg, dtypes, ndims)
        else:
            raise self.type_error(
                f"{arg} must be a CUDA array (an object with __dlpack__ or __cuda_array_interface__, e.g. a "
                f"torch.Tensor, cupy.ndarray or jax.Array on a GPU); got {_type_name(obj)}")
        self._check(array, dtypes, ndims, dtype)
        return array

    def _check(self, a: Array, dtypes: Sequence[str], ndims: Sequence[int] | None, dtype: str | None) -> None:
        if dtype is not None and a.dtype != dtype:
            raise self.type_error(f"{a.arg} has dtype {a.dtype}, but it must match {self.first}'s dtype {dtype}")
        if a.dtype not in dtypes:
            raise self.type_error(f"{a.arg} has dtype {a.dtype}; supported: {', '.join(dtypes)}")
        if ndims is not None and a.ndim not in ndims:
            want = " or ".join(f"{n}-D" for n in ndims)
            raise self.value_error(f"{a.arg} must be {want}; got shape {a.shape}")

    def _from_torch(self, t: Any, arg: str) -> Array:
        """A torch.Tensor, read from its own attributes: what __dlpack__ would say, without
        building a capsule (the call overhead matters at small sizes). Real dtypes carry no
        conjugate or negative bit, and complex ones are refused, so the raw data is the value."""
        if not t.is_cuda:
            where = "CPU" if t.device.type == "cpu" else t.device.type
            hint = " (host memory: move it to the GPU first, e.g. tensor.cuda())" if where == "CPU" else ""
            raise self.type_error(f"{arg} is a {where} array; scanlab needs a CUDA device array{hint}")
        index = t.get_device()  # an int: cheaper than building t.device
        self._adopt(arg, "torch", index)
        if (self.framework != "torch" or self.explicit_stream) and not self.torch_ordered:
            # Read without __dlpack__, which would have ordered the tensor for us: a call
            # stream other than PyTorch's current one waits for that one's work (once).
            current = _FRAMEWORKS["torch"].current_stream(index)
            if not _same_stream(current, self.stream):
                _C.stream_wait(current, self.stream, index)
            self.torch_ordered = True
        shape = tuple(t.shape)
        name = _torch_dtype_names.get(t.dtype)
        if name is None:
            name = _torch_dtype_names[t.dtype] = str(t.dtype).removeprefix("torch.")
        # PyTorch's contiguity is _contiguous's: row-major, extents of 1 with any stride, and
        # empty tensors contiguous.
        if not t.is_contiguous():
            raise self.value_error(
                f"{arg} is not contiguous (shape {shape}, strides {t.stride()} in elements): "
                "pass a contiguous copy (x.contiguous() in PyTorch, cupy.ascontiguousarray)")
        return Array(arg, t, int(t.data_ptr()), shape, name, index, t)

    def _from_dlpack(self, obj: Any, arg: str) -> Array:
        framework = framework_of(obj)
        if framework == "torch" and getattr(obj, "requires_grad", False):
            obj = obj.detach()  # torch refuses to export tensors that require grad
        try:
            device_type, device_id = obj.__dlpack_device__()
        except Exception as e:  # a producer that cannot say where its data is
            raise self.type_error(f"{arg}: __dlpack_device__() failed: {e}") from e
        device_type, device_id = int(device_type), int(device_id)
        if device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            where = _DEVICE_NAMES.get(device_type, f"DLPack device type {device_type}")
            hint = " (host memory: move it to the GPU first, e.g. tensor.cuda() or cupy.asarray)" \
                if device_type in (_KDL_CPU, _KDL_CUDA_HOST) else ""
            raise self.type_error(f"{arg} is a {where} array; scanlab needs a CUDA device array{hint}")
        self._adopt(arg, framework, device_id)
        capsule = _export(obj, _dlpack_stream(self.stream))
        try:
            imported = _C.dlpack_import(capsule)
        except TypeError as e:
            raise self.type_error(f"{arg}.__dlpack__() did not return a DLPack capsule: {e}") from e
        key = (imported.dtype_code, imported.dtype_bits)
        name = _DLPACK_NAMES.get(key, f"DLPack type (code {key[0]}, {key[1]} bits)")
        if imported.dtype_lanes != 1:
            name = f"{name}x{imported.dtype_lanes}"
        shape = tuple(imported.shape)
        strides = cast("tuple[int, ...] | None", imported.strides)
        if not _contiguous(shape, strides):
            raise self.value_error(
                f"{arg} is not contiguous (shape {shape}, strides {strides} in elements): "
                "pass a contiguous copy (x.contiguous() in PyTorch, cupy.ascontiguousarray)")
        return Array(arg, obj, int(imported.data), shape, name, device_id, imported)

    def _from_cuda_array_interface(self, obj: Any, arg: str, dtypes: Sequence[str],
                                   ndims: Sequence[int] | None) -> Array:
        cai = obj.__cuda_array_interface__
        try:
            shape = tuple(int(s) for s in cai["shape"])
            typestr = str(cai["typestr"])
            ptr = int(cai["data"][0])
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise self.type_error(f"{arg}.__cuda_array_interface__ is malformed: {e!r}") from e
        name = _typestr_name(typestr)
        if cai.get("mask") is not None:
            raise self.value_error(f"{arg}: masked arrays (__cuda_array_interface__ 'mask') are not supported")
        # dtype and rank first (they need no CUDA call, and strides are read in items).
        self._check(Array(arg, obj, ptr, shape, name, -1, obj), dtypes, ndims, None)
        strides = cai.get("strides")
        if strides is not None:
            itemsize = ITEMSIZE[name]
            if any(s % itemsize for s in strides):
                raise self.value_error(f"{arg} has strides {tuple(strides)} bytes, not multiples of its item size")
            strides = tuple(int(s) // itemsize for s in strides)
        if not _contiguous(shape, strides):
            raise self.value_error(
                f"{arg} is not contiguous (shape {shape}, strides {cai.get('strides')} bytes): pass a contiguous copy")
        device = self._device_of_pointer(ptr, arg) if math.prod(shape) > 0 else max(self.device, 0)
        self._adopt(arg, "other", device)
        producer = cai.get("stream")
        if producer is not None:  # version 3: the producer's stream, to order against ours
            producer = int(producer)
            if producer == 0:
                raise self.value_error(f"{arg}.__cuda_array_interface__ has stream 0, which the protocol forbids")
            if not _same_stream(producer, self.stream):
                _C.stream_wait(producer, self.stream, device)
        return Array(arg, obj, ptr, shape, name, device, obj)

    def _device_of_pointer(self, ptr: int, arg: str) -> int:
        memory_type, device = _C.pointer_info(ptr)
        if memory_type not in (2, 3):  # cudaMemoryTypeDevice, cudaMemoryTypeManaged
            raise self.type_error(
                f"{arg}: its __cuda_array_interface__ points at host memory; scanlab needs a CUDA device array")
        return int(device)

    # ---- outputs and temporary storage ----

    def empty(self, shape: tuple[int, ...], dtype: str) -> tuple[Any, int]:
        """An uninitialised output of the caller's framework (or a DeviceArray), and its address."""
        return _FRAMEWORKS[self.framework].empty(self, shape, dtype)

    def empty_like(self, a: Array, dtype: str) -> tuple[Any, int]:
        """:meth:`empty` of ``a``'s shape, through the framework's cheaper ``empty_like`` where
        it has one and ``dtype`` is ``a``'s (the small calls' overhead)."""
        return _FRAMEWORKS[self.framework].empty_like(self, a, dtype)

    def launch(self, fn: Callable[..., int], *args: Any) -> None:
        """Run ``fn(*args, temp, temp_bytes, mode, stream, device)`` with temporary storage."""
        fw = _FRAMEWORKS[self.framework]
        if fw.allocates:
            # The workspace (or none: 0 bytes) where the call fits it: launched at once;
            # else the size it needs, for storage of its own.
            ws_ptr, ws_bytes = fw.workspace(self)
            nbytes = fn(*args, ws_ptr, ws_bytes, _WORKSPACE, self.stream, self.device)
            if nbytes:
                temp, ptr = fw.temporary(self, nbytes)
                fn(*args, ptr, nbytes, _GIVEN, self.stream, self.device)
                del temp  # back to the framework's pool, ordered on the call's stream
        else:
            fn(*args, 0, 0, _OWN, self.stream, self.device)

    def result(self, out: Any) -> Any:
        return _FRAMEWORKS[self.framework].wrap(out)

    def read_count(self, ptr: int) -> int:
        """The int64 a launch left at device address ``ptr``: copied to the host once the call's
        stream has done its work so far (this synchronises the stream)."""
        return int(_C.read_int64(self.name, ptr, self.stream, self.device))

    def shrink(self, out: Any, ptr: int, dtype: str, count: int, capacity: int) -> Any:
        """The first ``count`` items of the 1-D output ``out`` (at ``ptr``, ``capacity`` items).
        A view where that keeps at most twice the memory the items need; otherwise a copy of
        its own (enqueued on the call's stream, so that ``out`` goes back to its pool after it),
        which lets the rest of ``out`` go."""
        if 2 * count >= capacity:
            return _FRAMEWORKS[self.framework].prefix(out, count)
        copy, copy_ptr = self.empty((count,), dtype)
        _C.copy_async(self.name, copy_ptr, ptr, count * ITEMSIZE[dtype], self.stream, self.device)
        return copy


def _export(obj: Any, stream: int) -> Any:
    """``obj.__dlpack__`` with the consumer's stream, asking for DLPack 1.x where the producer knows it."""
    try:
        return obj.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # a producer older than DLPack 1.0's keyword arguments
        return obj.__dlpack__(stream=stream)


def _typestr_name(typestr: str) -> str:
    if len(typestr) < 3 or typestr[0] not in "<|=":
        return f"typestr {typestr!r}"
    kind, size = typestr[1], typestr[2:]
    names = {"i": "int", "u": "uint", "f": "float", "c": "complex"}
    if kind == "b" and size == "1":
        return "bool"
    if kind in names and size.isdigit():
        return f"{names[kind]}{8 * int(size)}"
    return f"typestr {typestr!r}"


# ---- results of JAX and other producers ----

class DeviceArray:
    """A result in device memory that scanlab allocated (``cudaMalloc``), for producers whose
    allocator scanlab cannot use (JAX returns are converted with ``jax.dlpack.from_dlpack``;
    arrays of other producers come back as this).

    Any framework takes it without a copy: it has ``__dlpack__``/``__dlpack_device__`` and
    ``__cuda_array_interface__`` (e.g. ``torch.from_dlpack(a)``, ``cupy.from_dlpack(a)``,
    ``numba.cuda.as_cuda_array(a)``). The memory is freed when the last array using it goes.
    """

    __slots__ = ("_buffer", "shape", "dtype", "_stream")

    def __init__(self, buffer: Any, shape: tuple[int, ...], dtype: str, stream: int) -> None:
        self._buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self._stream = stream

    @property
    def device(self) -> int:
        return self._buffer.device

    @property
    def ptr(self) -> int:
        return self._buffer.ptr

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_KDL_CUDA, self._buffer.device)

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"scanlab.DeviceArray lives on CUDA device {self.device}; cannot export to {dl_device}")
        if copy:
            raise BufferError("scanlab.DeviceArray exports without copying (copy=True is not supported)")
        consumer = 1 if stream is None else int(stream)  # None: the legacy default stream
        if consumer != -1 and not _same_stream(consumer, self._stream):
            _C.stream_wait(self._stream, consumer, self._buffer.device)
        code, bits = DLPACK_OF[self.dtype]
        versioned = max_version is not None and int(max_version[0]) >= 1
        return _C.export_dlpack(self._buffer, list(self.shape), code, bits, versioned)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        code, bits = DLPACK_OF[self.dtype]
        kind = {0: "i", 1: "u", 2: "f"}.get(code)
        if kind is None:  # bfloat16: no typestr names it (NumPy has no such type)
            raise AttributeError(f"scanlab.DeviceArray of {self.dtype} has no __cuda_array_interface__; "
                                 "take it through DLPack (__dlpack__)")
        return {"shape": self.shape, "typestr": f"<{kind}{bits // 8}", "data": (self._buffer.ptr, False),
                "strides": None, "version": 3, "stream": _dlpack_stream(self._stream)}

    def __repr__(self) -> str:
        return f"scanlab.DeviceArray(shape={self.shape}, dtype={self.dtype}, device=cuda:{self.device})"


# ---- frameworks ----

class _Framework:
    name = "other"
    allocates = False  # True: outputs and temporary storage come from the framework's allocator

    def current_stream(self, device: int) -> int:
        return 0  # the legacy default stream

    def workspace(self, call: Call) -> tuple[int, int]:
        """Address and bytes of storage kept for the call's stream (0, 0: none), which the
        extension uses for calls that fit it, outside graph capture."""
        return 0, 0

    def temporary(self, call: Call, nbytes: int) -> tuple[Any, int]:
        """Temporary storage of ``nbytes`` for one launch on the call's stream."""
        return self.empty(call, (nbytes,), "uint8")

    def empty_like(self, call: Call, a: Array, dtype: str) -> tuple[Any, int]:
        return self.empty(call, a.shape, dtype)

    def empty(self, call: Call, shape: tuple[int, ...], dtype: str) -> tuple[Any, int]:
        nbytes = math.prod(shape) * ITEMSIZE[dtype]
        buffer = _C.DeviceBuffer(nbytes, call.device)
        return DeviceArray(buffer, shape, dtype, call.stream), buffer.ptr

    def prefix(self, out: Any, count: int) -> Any:
        """The first ``count`` items of a 1-D output of :meth:`empty`, sharing its memory."""
        return DeviceArray(out._buffer, (count,), out.dtype, out._stream)

    def wrap(self, out: Any) -> Any:
        return out


class _Torch(_Framework):
    name = "torch"
    allocates = True

    # Temporary storage up to this size comes from one workspace per (device, current
    # stream), kept between calls (as PyTorch keeps cuBLAS workspaces): the launches of one
    # stream run in order, so each finishes with the workspace before the next starts. It
    # saves a torch.empty (4-5 us) of the small calls, whose temporary storage is a few
    # hundred bytes.
    _WORKSPACE_BYTES = 1 << 16
    _WORKSPACES_KEPT = 64  # streams remembered; the oldest is let go (stream-ordered: safe)

    def __init__(self) -> None:
        self._torch: Any = None
        self._raw_stream: Callable[[int], int] | None = None
        self._devices: dict[int, Any] = {}
        self._workspaces: dict[tuple[int, int], tuple[Any, int]] = {}

    def workspace(self, call: Call) -> tuple[int, int]:
        # Not for explicit streams (a stream the caller may destroy), nor under graph capture
        # (the extension checks the stream: the graph would keep the address that later
        # calls reuse).
        if call.explicit_stream:
            return 0, 0
        key = (call.device, call.stream)
        workspace = self._workspaces.get(key)
        if workspace is None:
            if len(self._workspaces) >= self._WORKSPACES_KEPT:
                del self._workspaces[next(iter(self._workspaces))]
            workspace = self._workspaces[key] = self.empty(call, (self._WORKSPACE_BYTES,), "uint8")
        return workspace[1], self._WORKSPACE_BYTES

    def _module(self) -> Any:
        # Imported on first use (never at scanlab's import), then kept: a call at 2^10
        # elements costs tens of microseconds, of which the lookups below were several.
        if self._torch is None:
            import torch
            self._torch = torch
            _torch_tensor_type[0] = torch.Tensor
            # The current stream's handle without building a torch.cuda.Stream (3 us a call on
            # the H100 machine); PyTorch's own binding, absent from some builds: then the public way.
            self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        return self._torch

    def current_stream(self, device: int) -> int:
        torch = self._module()
        if self._raw_stream is not None:
            return int(self._raw_stream(device))
        return int(torch.cuda.current_stream(device).cuda_stream)

    def empty_like(self, call: Call, a: Array, dtype: str) -> tuple[Any, int]:
        # torch.empty_like parses two arguments where torch.empty parses three (about a
        # microsecond less); contiguous inputs give contiguous results. Explicit streams take
        # empty's path (the allocation on the call's stream).
        if dtype == a.dtype and not call.explicit_stream and type(a.obj) is _torch_tensor_type[0]:
            t = self._torch.empty_like(a.obj)
            return t, t.data_ptr()
        return self.empty(call, a.shape, dtype)

    def empty(self, call: Call, shape: tuple[int, ...], dtype: str) -> tuple[Any, int]:
        torch = self._module()
        dev = self._devices.get(call.device)
        if dev is None:
            dev = self._devices.setdefault(call.device, torch.device("cuda", call.device))
        if call.explicit_stream and not _same_stream(call.stream, self.current_stream(call.device)):
            # The caching allocator pools memory per stream: allocate on the call's stream.
            with torch.cuda.stream(torch.cuda.ExternalStream(call.stream, device=dev)):
                t = torch.empty(shape, dtype=getattr(torch, dtype), device=dev)
        else:
            t = torch.empty(shape, dtype=getattr(torch, dtype), device=dev)
        return t, t.data_ptr()

    def prefix(self, out: Any, count: int) -> Any:
        return out[:count]


class _CuPy(_Framework):
    name = "cupy"
    allocates = True

    def current_stream(self, device: int) -> int:
        import cupy
        with cupy.cuda.Device(device):
            return int(cupy.cuda.get_current_stream().ptr)

    def empty(self, call: Call, shape: tuple[int, ...], dtype: str) -> tuple[Any, int]:
        import cupy
        with cupy.cuda.Device(call.device):
            if call.explicit_stream and not _same_stream(call.stream, self.current_stream(call.device)):
                with cupy.cuda.ExternalStream(call.stream):
                    a = cupy.empty(shape, dtype=dtype)
            else:
                a = cupy.empty(shape, dtype=dtype)
        return a, int(a.data.ptr)

    def prefix(self, out: Any, count: int) -> Any:
        return out[:count]


class _Jax(_Framework):
    name = "jax"

    def wrap(self, out: Any) -> Any:
        import jax.dlpack
        return jax.dlpack.from_dlpack(out)


_FRAMEWORKS: dict[str, _Framework] = {
    "torch": _Torch(), "cupy": _CuPy(), "jax": _Jax(), "other": _Framework(),
}


def check_choice(call: Call, value: Any, arg: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise call.type_error(f"{arg} must be a string, one of {', '.join(map(repr, choices))}; got {_type_name(value)}")
    if value not in choices:
        raise call.value_error(f"{arg} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_bool(call: Call, value: Any, arg: str) -> bool:
    if not isinstance(value, bool):
        raise call.type_error(f"{arg} must be True or False; got {_type_name(value)}")
    return value


def check_number(call: Call, value: Any, arg: str) -> int | float:
    """A Python int or float from ``value``: ints and floats as they are, NumPy and framework
    scalars through their own ``__index__`` or ``__float__``; bools and the rest refused."""
    if isinstance(value, bool) or type(value).__name__ in ("bool_", "bool"):  # numpy.bool_ too
        raise call.type_error(f"{arg} must be a number; got {_type_name(value)}")
    if isinstance(value, (int, float)):
        return value
    try:
        return operator.index(value)  # NumPy integers, integer 0-d tensors
    except TypeError:
        pass
    if hasattr(value, "__float__"):
        try:
            return float(value)
        except (TypeError, ValueError) as e:
            raise call.type_error(f"{arg} must be a number; float() of it failed: {e}") from e
    raise call.type_error(f"{arg} must be a Python int or float; got {_type_name(value)}")


def check_int(call: Call, value: Any, arg: str) -> int:
    if isinstance(value, bool):
        raise call.type_error(f"{arg} must be an integer; got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise call.type_error(f"{arg} must be an integer; got {_type_name(value)}") from None


__all__ = ["Array", "Call", "DeviceArray", "DTYPES", "DTYPE_CODE", "HALF_DTYPES", "INT_RANGE", "ITEMSIZE", "framework_of",
           "stream_handle"]
