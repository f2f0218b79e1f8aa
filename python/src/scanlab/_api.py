"""The public functions of scanlab (re-exported by ``scanlab/__init__.py``)."""

from __future__ import annotations

import math
from typing import Any, Callable, Literal, Optional, Tuple, Union

from . import _scanlab as _C
from ._arrays import DTYPE_CODE, DTYPES, HALF_DTYPES, INT_RANGE, ITEMSIZE, Call, check_bool, check_choice, check_int, check_number

Op = Literal["sum", "prod", "min", "max"]
Scalar = Union[int, float]

_OPS: tuple[str, ...] = ("sum", "prod", "min", "max")
_OP_CODE = {name: i for i, name in enumerate(_OPS)}
_FLOATS: tuple[str, ...] = ("float32", "float64")
# The linear recurrence's: float32, float64, and float16 / bfloat16 storage computed in float32.
_RECURRENCE_DTYPES: tuple[str, ...] = _FLOATS + HALF_DTYPES

# What a reduction or scan returns (ops.hpp: accumulator): NumPy's rule, 64-bit sums and
# products of integers; min and max in the input's type.
_ACCUMULATOR = {
    (t, op): ("int64" if t in ("int32", "int64") else "uint64" if t in ("uint32", "uint64") else t)
    if op in ("sum", "prod") else t
    for t in DTYPES for op in _OPS
}


def _identity(op: str, dtype: str) -> Scalar:
    """The identity of `op` in `dtype` (an exclusive scan's default first value)."""
    if op == "sum":
        return 0
    if op == "prod":
        return 1
    if dtype in _FLOATS:
        return math.inf if op == "min" else -math.inf
    low, high = INT_RANGE[dtype]
    return high if op == "min" else low


def _check_init(call: Call, init: Any, dtype: str) -> Scalar:
    init = check_number(call, init, "init")
    if dtype in _FLOATS:
        return float(init)
    if isinstance(init, float):
        if not init.is_integer():
            raise call.value_error(f"init={init!r} is not an integer, but the scan accumulates in {dtype}")
        init = int(init)
    low, high = INT_RANGE[dtype]
    if not low <= init <= high:
        raise call.value_error(f"init={init} does not fit the scan's accumulator type {dtype} [{low}, {high}]")
    return init


# ---- reductions ----

def reduce(x: Any, op: Op = "sum", *, stream: Any = None) -> Any:
    """Reduce a CUDA array to one value: its sum, product, minimum or maximum.

    Args:
        x: a contiguous CUDA array of any shape (all elements are reduced): a ``torch.Tensor``,
            ``cupy.ndarray``, ``jax.Array`` or any object with ``__dlpack__`` or
            ``__cuda_array_interface__``. int32, int64, uint32, uint64, float32 or float64.
        op: ``"sum"``, ``"prod"``, ``"min"`` or ``"max"``.
        stream: the CUDA stream to run on (an integer ``cudaStream_t``, a ``torch.cuda.Stream``,
            a ``cupy.cuda.Stream``); by default the framework's current stream (JAX and others:
            the legacy default stream).

    Returns:
        A 0-d array of the caller's framework on the same device (no synchronisation: read it
        with ``.item()`` when needed). Its dtype is NumPy's ``np.sum``/``np.prod`` rule: sums and
        products of integers are int64 (uint64 for unsigned inputs), of floats their own type;
        min and max keep the input's dtype.

    NaNs: min and max return NaN when any element is NaN (as ``np.min`` and ``torch.min``), and
    -0.0 orders below +0.0. Float sums are deterministic (the same bits on every run on the same
    GPU) but regrouped, so they differ from a sequential sum by rounding.

    Raises:
        TypeError: ``x`` is not a CUDA array (a host array, a list), or has an unsupported dtype.
        ValueError: ``op`` is unknown; ``x`` is not contiguous; min or max of an empty array.
        RuntimeError: a CUDA error, with CUDA's name and description of it.
    """
    call = Call("reduce", stream)
    name = check_choice(call, op, "op", _OPS)
    a = call.arg(x, "x", dtypes=DTYPES, ndims=None)
    if a.size == 0 and name in ("min", "max"):
        raise call.value_error(f"{name} of an empty array (x has shape {a.shape}) is undefined")
    out, out_ptr = call.empty((), _ACCUMULATOR[a.dtype, name])
    call.launch(_C.reduce, DTYPE_CODE[a.dtype], _OP_CODE[name], a.ptr, out_ptr, a.size)
    return call.result(out)


# ---- scans ----

def _scan(name: str, x: Any, op: str, exclusive: bool, init: Any, stream: Any) -> Any:
    call = Call(name, stream)
    op = check_choice(call, op, "op", _OPS)
    a = call.arg(x, "x", dtypes=DTYPES, ndims=(1,))
    acc = _ACCUMULATOR[a.dtype, op]
    if exclusive:
        first = _check_init(call, _identity(op, acc) if init is None else init, acc)
    else:  # unused by inclusive scans
        first = 0.0 if acc in _FLOATS else 0
    out, out_ptr = call.empty_like(a, acc)
    call.launch(_C.scan, DTYPE_CODE[a.dtype], _OP_CODE[op], exclusive, first, a.ptr, out_ptr, a.size)
    return call.result(out)


def inclusive_scan(x: Any, op: Op = "sum", *, stream: Any = None) -> Any:
    """Inclusive prefix scan of a 1-D CUDA array: ``out[i] = x[0] op x[1] op ... op x[i]``.

    Args:
        x: a contiguous 1-D CUDA array (torch, CuPy, JAX, or anything with ``__dlpack__`` or
            ``__cuda_array_interface__``): int32, int64, uint32, uint64, float32 or float64.
        op: ``"sum"`` (``cumsum``), ``"prod"`` (``cumprod``), ``"min"`` or ``"max"`` (running
            minimum/maximum, NaN-aware: once a NaN is seen every later value is NaN).
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        An array of the caller's framework, same length and device. dtype: sums and products of
        integers accumulate and return int64 (uint64 for unsigned inputs), as ``np.cumsum`` and
        ``torch.cumsum``; floats and min/max keep the input's dtype. Float results are
        deterministic but differ from a sequential loop by rounding (within n·eps·sum|x|).
    """
    return _scan("inclusive_scan", x, op, False, None, stream)


def exclusive_scan(x: Any, op: Op = "sum", init: Optional[Scalar] = None, *, stream: Any = None) -> Any:
    """Exclusive prefix scan: ``out[0] = init``, ``out[i] = init op x[0] op ... op x[i-1]``.

    Args:
        x: a contiguous 1-D CUDA array (see :func:`inclusive_scan` for the dtypes).
        op: ``"sum"``, ``"prod"``, ``"min"`` or ``"max"``.
        init: the first value, a Python number that fits the accumulator type; by default the
            operator's identity (0 for sum, 1 for prod, +inf / the largest integer for min,
            -inf / the smallest integer for max).
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        An array of the caller's framework, same length, dtype as :func:`inclusive_scan`'s.
    """
    return _scan("exclusive_scan", x, op, True, init, stream)


def cumsum(x: Any, *, stream: Any = None) -> Any:
    """Cumulative sum of a 1-D CUDA array, as ``np.cumsum`` and ``torch.cumsum``:
    ``out[i] = x[0] + ... + x[i]``. The same as ``inclusive_scan(x, "sum")``.

    Args:
        x: a contiguous 1-D CUDA array (torch, CuPy, JAX, or anything with ``__dlpack__`` or
            ``__cuda_array_interface__``): int32, int64, uint32, uint64, float32 or float64.
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        An array of the caller's framework on the same device: int64 for int32/int64 inputs,
        uint64 for unsigned ones, the input's dtype for floats (deterministic; within
        n·eps·sum|x| of the exact sum).
    """
    return _scan("cumsum", x, "sum", False, None, stream)


# ---- sorting ----

def _bit_range(call: Call, dtype: str, begin_bit: Any, end_bit: Any) -> tuple[int, int]:
    bits = 8 * ITEMSIZE[dtype]
    begin = check_int(call, begin_bit, "begin_bit")
    end = bits if end_bit is None else check_int(call, end_bit, "end_bit")
    if not 0 <= begin <= end <= bits:
        raise call.value_error(f"need 0 <= begin_bit <= end_bit <= {bits} for {dtype} keys; got {begin}, {end}")
    return begin, end


def _sort_call(name: str, keys: Any, values: Any, descending: Any, begin_bit: Any, end_bit: Any,
               stream: Any, argsort: bool, with_keys: bool = True) -> tuple[Any, Any]:
    """Keys (unless ``with_keys`` is False), and values or, for ``argsort``, int64 positions."""
    call = Call(name, stream)
    desc = check_bool(call, descending, "descending")
    k = call.arg(keys, "keys" if values is not None else "x", dtypes=DTYPES, ndims=(1,))
    begin, end = _bit_range(call, k.dtype, begin_bit, end_bit)
    v = None
    if values is not None:
        v = call.arg(values, "values", dtypes=DTYPES, ndims=(1,))
        if v.shape != k.shape:
            raise call.value_error(f"values has shape {v.shape} but keys has shape {k.shape}")
    # argsort without the keys writes the permutation only (radix_argsort without d_keys_out).
    keys_out, keys_ptr = call.empty(k.shape, k.dtype) if with_keys else (None, 0)
    values_out, values_ptr, value_bytes, values_in = None, 0, 0, 0
    if v is not None:
        values_out, values_ptr = call.empty(v.shape, v.dtype)
        value_bytes, values_in = ITEMSIZE[v.dtype], v.ptr
    elif argsort:
        values_out, values_ptr = call.empty(k.shape, "int64")
        value_bytes = 8
    call.launch(_C.sort, DTYPE_CODE[k.dtype], k.ptr, keys_ptr, value_bytes, values_in, values_ptr, k.size, desc,
                begin, end)
    return (call.result(keys_out) if keys_out is not None else None,
            call.result(values_out) if values_out is not None else None)


_SORT_DOC_COMMON = """
    Order: ascending, or descending with ``descending=True``; stable either way (equal keys keep
    their input order). Floats: -0.0 and +0.0 are equal; NaNs come last in both orders. Only the
    key bits ``[begin_bit, end_bit)`` of the sort's ordered representation take part (default:
    all bits; fewer bits sort faster: e.g. ``end_bit=16`` for integer keys below 2^16).
"""


def sort(x: Any, *, descending: bool = False, begin_bit: int = 0, end_bit: Optional[int] = None,
         return_indices: bool = False, stream: Any = None) -> Any:
    """Sort a 1-D CUDA array (scanlab's onesweep LSD radix sort).

    Args:
        x: a contiguous 1-D CUDA array: int32, int64, uint32, uint64, float32 or float64.
        descending: largest first.
        begin_bit, end_bit: the bit range of the keys to sort by (see below).
        return_indices: also return where each sorted key was in ``x`` (as ``torch.sort``'s
            ``(values, indices)``): one sort of the keys with their positions.
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        The sorted keys, a new array of the caller's framework on the same device; with
        ``return_indices``, ``(keys, indices)``, the indices int64.
    """
    if not isinstance(return_indices, bool):
        raise TypeError(f"scanlab.sort: return_indices must be True or False; got {type(return_indices).__name__}")
    if return_indices:
        return _sort_call("sort", x, None, descending, begin_bit, end_bit, stream, True, True)
    return _sort_call("sort", x, None, descending, begin_bit, end_bit, stream, False)[0]


def argsort(x: Any, *, descending: bool = False, begin_bit: int = 0, end_bit: Optional[int] = None,
            stream: Any = None) -> Any:
    """The stable sorting permutation of a 1-D CUDA array: ``x[argsort(x)]`` is sorted.

    Args: as :func:`sort`.

    Returns:
        int64 positions, an array of the caller's framework on the same device.
    """
    return _sort_call("argsort", x, None, descending, begin_bit, end_bit, stream, True, False)[1]


def sort_pairs(keys: Any, values: Any, *, descending: bool = False, begin_bit: int = 0,
               end_bit: Optional[int] = None, stream: Any = None) -> Tuple[Any, Any]:
    """Sort keys and carry values along: ``(sorted keys, values in the same order)``.

    Args:
        keys: a contiguous 1-D CUDA array (dtypes as :func:`sort`).
        values: a contiguous 1-D CUDA array of the same length, any of the six dtypes (values
            are moved as raw 4- or 8-byte words), on the same device.
        descending, begin_bit, end_bit, stream: as :func:`sort`.

    Returns:
        ``(keys_sorted, values_sorted)``, new arrays of the caller's framework.
    """
    return _sort_call("sort_pairs", keys, values, descending, begin_bit, end_bit, stream, False)


for _f in (sort, argsort, sort_pairs):
    _f.__doc__ = (_f.__doc__ or "") + _SORT_DOC_COMMON


def quicksort(x: Any, *, descending: bool = False, stream: Any = None) -> Any:
    """Sort a 1-D CUDA array with scanlab's GPU quicksort (three-way partitions around 31
    pivots per level, leaves sorted in shared memory; worst case O(n log n) by construction).

    Not stable, but the sorted keys are the same on every run (equal keys are equal bits).
    NaNs come last in both orders; -0.0 sorts before +0.0 (after it, descending). Descending
    order maps the keys through an order-reversing involution (``~x`` for integers, ``-x`` for
    floats other than NaN) before and after an ascending sort: two more streaming passes.

    Synchronisation: the host plans each level from the sizes of the last one, so this call
    waits for its stream once per partition level, about log32(n / leaf size) times (a leaf,
    sorted by one block: up to 16384 four-byte keys on the H100; no wait for n up to that),
    and returns when the sort is done. It cannot be captured in a CUDA graph. :func:`sort` (the
    radix sort) is asynchronous, stable, and usually faster.

    Args:
        x: a contiguous 1-D CUDA array: int32, int64, uint32, uint64, float32 or float64.
        descending: largest first.
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        The sorted keys, a new array of the caller's framework on the same device.

    Raises:
        TypeError: ``x`` is not a CUDA array, or has an unsupported dtype.
        ValueError: ``x`` is not 1-D or not contiguous.
        RuntimeError: a CUDA error, with CUDA's name and description of it.
    """
    call = Call("quicksort", stream)
    desc = check_bool(call, descending, "descending")
    a = call.arg(x, "x", dtypes=DTYPES, ndims=(1,))
    out, out_ptr = call.empty(a.shape, a.dtype)
    call.launch(_C.quicksort, DTYPE_CODE[a.dtype], a.ptr, out_ptr, a.size, desc)
    return call.result(out)


# ---- norms ----

_NORM_KIND = {"dot": 0, "rms": 1, "norm": 2}  # ops.hpp: norm_kind


def _accumulator_name(call: Call, value: Any) -> Optional[str]:
    """``dtype=``: None, "float32" or "float64", or a framework's dtype object of those."""
    if value is None:
        return None
    name = value if isinstance(value, str) else getattr(value, "__name__", None) or str(value)
    name = name.removeprefix("torch.")
    if name not in _FLOATS:
        raise call.value_error(f"dtype must be None, 'float32' or 'float64'; got {value!r}")
    return name


def _norm_call(name: str, x: Any, y: Any, dtype: Any, stream: Any) -> Any:
    call = Call(name, stream)
    acc = _accumulator_name(call, dtype)
    xx = call.arg(x, "x", dtypes=_FLOATS, ndims=(1,) if name == "dot" else None)
    y_ptr = 0
    if name == "dot":
        yy = call.arg(y, "y", dtypes=_FLOATS, ndims=(1,), dtype=xx.dtype)
        if yy.shape != xx.shape:
            raise call.value_error(f"y has shape {yy.shape} but x has shape {xx.shape}")
        y_ptr = yy.ptr
    acc = acc or xx.dtype
    if ITEMSIZE[acc] < ITEMSIZE[xx.dtype]:
        raise call.value_error(f"dtype={acc!r} is narrower than x's {xx.dtype}: the accumulator must hold it")
    out, out_ptr = call.empty((), acc)
    call.launch(_C.norm, _NORM_KIND[name], DTYPE_CODE[xx.dtype], DTYPE_CODE[acc], xx.ptr, y_ptr, out_ptr, xx.size)
    return call.result(out)


_NORMS_DOC_COMMON = """
    Accumulation: in ``x``'s dtype, or with ``dtype="float64"`` float32 data in float64 (its
    products and squares are then exact; only the sums round); the result has that dtype. One
    fused pass over the data (scanlab/algorithms/norms.cuh), deterministic: the same bits on
    every run on one GPU, but regrouped, so not those of a sequential loop, NumPy or cuBLAS.
    NaN anywhere gives NaN. Returns a 0-d array of the caller's framework on the same device,
    without synchronising (read it with ``.item()``).

    Raises:
        TypeError: an input is not a CUDA array, or not float32/float64.
        ValueError: ``dtype`` is not None, float32 or float64, or narrower than ``x``'s; an
            input is not contiguous; (dot) shapes differ.
        RuntimeError: a CUDA error, with CUDA's name and description of it.
"""


def dot(x: Any, y: Any, *, dtype: Any = None, stream: Any = None) -> Any:
    """The dot product ``sum(x[i] * y[i])`` of two 1-D CUDA arrays, as ``torch.dot``.

    Args:
        x, y: contiguous 1-D CUDA arrays of one length and dtype (float32 or float64), on one
            device. Empty: 0.
        dtype: the accumulator and result dtype: None (``x``'s) or "float64" (also for float32
            data); ``torch.float64`` and ``numpy.float64`` are taken too.
        stream: the CUDA stream to run on; by default the framework's current stream.
    """
    return _norm_call("dot", x, y, dtype, stream)


def rms(x: Any, *, dtype: Any = None, stream: Any = None) -> Any:
    """The root mean square ``sqrt(sum(x[i]**2) / n)`` of all elements of a CUDA array.

    Scaled as the reference BLAS nrm2 (Blue's algorithm): no overflow or underflow unless the
    result itself does, one pass. An empty array gives NaN (the mean of nothing), so that a
    convergence test ``rms < tol`` fails on it.

    Args:
        x: a contiguous CUDA array of any shape, float32 or float64.
        dtype: the accumulator and result dtype: None (``x``'s) or "float64".
        stream: the CUDA stream to run on; by default the framework's current stream.
    """
    return _norm_call("rms", x, None, dtype, stream)


def norm(x: Any, ord: Optional[int] = 2, *, dtype: Any = None, stream: Any = None) -> Any:
    """The Euclidean norm ``sqrt(sum(x[i]**2))`` of all elements of a CUDA array, as
    ``torch.linalg.vector_norm(x)`` (for a matrix that is its Frobenius norm, not
    ``np.linalg.norm(x, 2)``'s spectral norm).

    Scaled as the reference BLAS nrm2 (Blue's algorithm): no overflow or underflow unless the
    result itself does, one pass. An empty array gives 0; an Inf (and no NaN) gives Inf.

    Args:
        x: a contiguous CUDA array of any shape, float32 or float64.
        ord: 2 (or None, the same): the only order bound so far.
        dtype: the accumulator and result dtype: None (``x``'s) or "float64".
        stream: the CUDA stream to run on; by default the framework's current stream.
    """
    if ord is not None and (isinstance(ord, bool) or not isinstance(ord, (int, float)) or ord != 2):
        raise ValueError(f"scanlab.norm: ord={ord!r} is not supported: only the Euclidean norm (ord=2 or None)")
    return _norm_call("norm", x, None, dtype, stream)


for _norm_fn in (dot, rms, norm):
    _norm_fn.__doc__ = (_norm_fn.__doc__ or "") + _NORMS_DOC_COMMON


# ---- linear recurrences ----

Layout = Literal["bt", "tb", "btc"]
_LAYOUTS: tuple[str, ...] = ("bt", "tb", "btc")
# The extension's layout codes (ops.hpp: recurrence_layout).
_ROW_MAJOR, _INTERLEAVED, _CHANNELS_LAST, _VARLEN = 0, 1, 2, 3


class _Sequences:
    """Where a recurrence's sequences lie: the extension's (layout, batch, length, channels,
    offsets) and the shape of one value per sequence (initial and final states, dL/dx0)."""

    __slots__ = ("code", "batch", "length", "channels", "offsets", "states_shape", "keep")

    def __init__(self, code: int, batch: int, length: int, channels: int, offsets: int,
                 states_shape: tuple[int, ...], keep: Any = None) -> None:
        self.code, self.batch, self.length, self.channels = code, batch, length, channels
        self.offsets, self.states_shape, self.keep = offsets, states_shape, keep

    def args(self) -> tuple[int, int, int, int, int]:
        return self.code, self.batch, self.length, self.channels, self.offsets


def _import_offsets(call: Call, offsets: Any) -> tuple[int, int, Any]:
    """(entries, device pointer, the imported array) of CUDA offsets."""
    o = call.arg(offsets, "offsets", dtypes=("int64",), ndims=(1,))
    return o.shape[0], o.ptr, o


def _sequences(call: Call, a: Any, other: Any, layout: Any, offsets: Any,
               take_offsets: Callable[[Call, Any], tuple[int, int, Any]] = _import_offsets) -> _Sequences:
    """The sequences of ``a`` (``other``: the array that must have a's shape; both with
    ``shape`` and ``ndim``, ``other`` with its argument name ``arg``) under ``layout`` or
    ``offsets`` (checked and imported by ``take_offsets``)."""
    name = check_choice(call, layout, "layout", _LAYOUTS)
    if other.shape != a.shape:
        raise call.value_error(f"{other.arg} has shape {other.shape} but a has shape {a.shape}")
    if offsets is not None:
        if name != "bt":
            raise call.value_error(f"offsets take concatenated 1-D sequences; layout={name!r} does not go with them")
        if a.ndim != 1:
            raise call.value_error(f"with offsets, a must be 1-D (the sequences concatenated); got shape {a.shape}")
        entries, ptr, o = take_offsets(call, offsets)
        if entries < 1:
            raise call.value_error("offsets must have at least one entry (offsets[0] == 0)")
        sequences = entries - 1
        if sequences == 0 and a.shape[0] > 0:
            raise call.value_error(f"offsets describe no sequence but a has {a.shape[0]} elements")
        return _Sequences(_VARLEN, sequences, a.shape[0], 1, ptr, (sequences,), o)
    if name == "bt":
        if a.ndim == 1:
            return _Sequences(_ROW_MAJOR, 1, a.shape[0], 1, 0, ())
        if a.ndim == 2:
            return _Sequences(_ROW_MAJOR, a.shape[0], a.shape[1], 1, 0, (a.shape[0],))
        raise call.value_error(f"layout 'bt' takes a of shape (length,) or (batch, length); got {a.shape}")
    if name == "tb":
        if a.ndim != 2:
            raise call.value_error(f"layout 'tb' takes a of shape (length, batch); got {a.shape}")
        return _Sequences(_INTERLEAVED, a.shape[1], a.shape[0], 1, 0, (a.shape[1],))
    if a.ndim != 3:
        raise call.value_error(f"layout 'btc' takes a of shape (batch, length, channels); got {a.shape}")
    return _Sequences(_CHANNELS_LAST, a.shape[0], a.shape[1], a.shape[2], 0, (a.shape[0], a.shape[2]))


def _initial_states(call: Call, x0: Any, a: Any, seq: _Sequences, allow_scalar: bool) -> tuple[int, float, Any]:
    """(device pointer of per-sequence states or 0, scalar state, the imported array or None)."""
    if x0 is None:
        return 0, 0.0, None
    if isinstance(x0, (int, float)) and not isinstance(x0, bool):
        if not allow_scalar:
            raise call.type_error("x0 must be None or an array of initial states here (not a Python number)")
        return 0, float(x0), None
    s = call.arg(x0, "x0", dtypes=_RECURRENCE_DTYPES, ndims=None, dtype=a.dtype)
    want = ((), (1,)) if seq.states_shape == () else (seq.states_shape,)
    if s.shape not in want:
        raise call.value_error(
            f"x0 has shape {s.shape}; for a of shape {a.shape} it must be a number or have shape "
            + " or ".join(str(w) for w in want) + " (one initial state per sequence)")
    return s.ptr, 0.0, s


def linear_recurrence(a: Any, b: Any, x0: Union[None, Scalar, Any] = None, *, reverse: bool = False,
                      layout: Layout = "bt", offsets: Any = None, return_final: bool = False,
                      stream: Any = None) -> Any:
    """Solve the first-order linear recurrence ``x[i] = a[i] * x[i-1] + b[i]`` (``x[-1] = x0``)
    of every sequence of ``a`` and ``b``.

    One fused single-pass kernel (a scan over affine maps) for one sequence, row-major batches
    and variable-length sequences: it reads ``a`` and ``b`` once and writes ``x`` once.
    With ``reverse=True``, ``x[i] = a[i] * x[i+1] + b[i]`` from ``x[n] = x0``.

    Args:
        a, b: contiguous CUDA arrays of the same shape and dtype: float32, float64, or the
            storage types float16 and bfloat16 (read and written in 16 bits, every state and
            composition computed in float32, each result rounded once where it is written).
        x0: the initial state: None (0), a Python number (every sequence; rounded to the dtype
            of ``a``), or an array of the
            same dtype and device with one value per sequence (the shape of ``final`` below;
            ``()`` or ``(1,)`` for one sequence).
        reverse: solve from the end of each sequence.
        layout: where the sequences are (ignored for one sequence ``(length,)``):
            ``"bt"``: ``(batch, length)``, one sequence per row (or ``(length,)``: one);
            ``"tb"``: ``(length, batch)``, one sequence per column;
            ``"btc"``: ``(batch, length, channels)``, channels-last as in sequence models: one
            sequence per ``(b, c)``.
        offsets: variable-length sequences: ``a`` and ``b`` 1-D, the sequences concatenated,
            sequence ``s`` at ``offsets[s]:offsets[s+1]``; an int64 CUDA array of ``S + 1``
            values, ``offsets[0] == 0``, nondecreasing, ``offsets[S] == len(a)`` (cu_seqlens).
            Not checked on the device (that would synchronise): broken offsets give
            meaningless results, never an access out of bounds. Empty sequences are allowed.
        return_final: also return each sequence's last state (reverse: its first; an empty
            sequence: its initial state), one per sequence.
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        ``x``, same shape, dtype and device as ``a``, as the caller's array type; with
        ``return_final``, ``(x, final)``: ``final`` of shape ``()`` for one sequence,
        ``(batch,)`` for ``"bt"``/``"tb"``, ``(batch, channels)`` for ``"btc"``, ``(S,)`` with
        offsets.

    ``a[i] == 0`` resets: ``x[i] = b[i]`` whatever came before (Inf and NaN included). Results
    are deterministic; the maps are combined in a tree, so they differ from a sequential loop by
    rounding (a few hundred eps relative for ``|a| < 1``; see primitives/docs/linrec.md).
    For gradients in PyTorch: :class:`scanlab.torch.LinearRecurrence`.
    """
    call = Call("linear_recurrence", stream)
    rev = check_bool(call, reverse, "reverse")
    want_final = check_bool(call, return_final, "return_final")
    aa = call.arg(a, "a", dtypes=_RECURRENCE_DTYPES, ndims=None)
    bb = call.arg(b, "b", dtypes=_RECURRENCE_DTYPES, ndims=None, dtype=aa.dtype)
    seq = _sequences(call, aa, bb, layout, offsets)
    x0s, x0_value, _keep = _initial_states(call, x0, aa, seq, True)
    out, out_ptr = call.empty(aa.shape, aa.dtype)
    final, final_ptr = call.empty(seq.states_shape, aa.dtype) if want_final else (None, 0)
    call.launch(_C.linear_recurrence, DTYPE_CODE[aa.dtype], aa.ptr, bb.ptr, out_ptr, final_ptr, x0s, x0_value,
                *seq.args(), rev)
    if want_final:
        return call.result(out), call.result(final)
    return call.result(out)


def linear_recurrence_backward(a: Any, x: Any, grad_x: Any, x0: Any = None, *, layout: Layout = "bt",
                               offsets: Any = None, stream: Any = None) -> Tuple[Any, Any, Any]:
    """Gradients of ``x = linear_recurrence(a, b, x0)`` (forward direction) in one fused pass.

    Given ``grad_x = dL/dx``, solves the adjoint ``g[i] = grad_x[i] + a[i+1] * g[i+1]`` of each
    sequence and returns ``(dL/da, dL/db, dL/dx0)`` with ``dL/db = g``, ``dL/da[i] = g[i] *
    x[i-1]`` (``x[-1] = x0``) and ``dL/dx0 = a[0] * g[0]`` per sequence.

    Args:
        a: the forward's ``a`` (float32, float64, float16 or bfloat16; the 16-bit types are
            computed in float32 and each gradient rounded once where it is written).
        x: the forward's result.
        grad_x: ``dL/dx``, same shape (contiguous).
        x0: the forward's initial states: None (zeros) or an array with one value per sequence
            (as :func:`linear_recurrence`'s). A Python number is not accepted here: pass it
            as an array.
        layout, offsets: the forward's (see :func:`linear_recurrence`).
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        ``(grad_a, grad_b, grad_x0)``: arrays of the caller's framework; ``grad_x0`` has
        ``x0``'s shape, or is None when ``x0`` is None.
    """
    call = Call("linear_recurrence_backward", stream)
    aa = call.arg(a, "a", dtypes=_RECURRENCE_DTYPES, ndims=None)
    xx = call.arg(x, "x", dtypes=_RECURRENCE_DTYPES, ndims=None, dtype=aa.dtype)
    gx = call.arg(grad_x, "grad_x", dtypes=_RECURRENCE_DTYPES, ndims=None, dtype=aa.dtype)
    seq = _sequences(call, aa, xx, layout, offsets)
    if gx.shape != aa.shape:
        raise call.value_error(f"grad_x has shape {gx.shape} but a has shape {aa.shape}")
    x0s, _, x0_array = _initial_states(call, x0, aa, seq, False)
    grad_a, grad_a_ptr = call.empty(aa.shape, aa.dtype)
    grad_b, grad_b_ptr = call.empty(aa.shape, aa.dtype)
    grad_x0, grad_x0_ptr = (None, 0) if x0_array is None else call.empty(x0_array.shape, aa.dtype)
    call.launch(_C.linear_recurrence_backward, DTYPE_CODE[aa.dtype], aa.ptr, xx.ptr, gx.ptr, grad_a_ptr,
                grad_b_ptr, grad_x0_ptr, x0s, *seq.args())
    return (call.result(grad_a), call.result(grad_b),
            call.result(grad_x0) if grad_x0 is not None else None)
