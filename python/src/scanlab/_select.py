"""Compaction and partitions: :func:`select`, :func:`unique_consecutive`, :func:`partition`
(re-exported by ``scanlab/__init__.py``), and the value tests they share.

A value test (``gt=``, ``lt=``, ``between=``, a two-way ``pivot``) becomes one closed range
``[lo, hi]`` of the array's dtype here, in Python, so that the device runs one kernel per
dtype (``lo <= x <= hi``, typed.cuh: in_range) whatever the test: strict bounds move to the
next value of the dtype (the next integer; for floats the next float32 or float64).
"""

from __future__ import annotations

import math
import struct
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from . import _scanlab as _C
from ._arrays import DTYPE_CODE, DTYPES, INT_RANGE, Call, check_bool, check_number

Scalar = Union[int, float]
_FLOATS = ("float32", "float64")
_TINY32 = 2.0**-149  # the least positive float32 (a subnormal)


# ---- value tests as closed ranges ----

def _as_float(value: Scalar) -> float:
    try:
        return float(value)
    except OverflowError:  # an int beyond float64: beyond every float
        return math.inf if value > 0 else -math.inf


def round_to(dtype: str, value: Scalar) -> float:
    """``value`` as the nearest ``dtype`` value (float32: round to nearest even, overflow to ±inf),
    as NumPy 2 and PyTorch convert a Python number compared with a float32 array."""
    v = _as_float(value)
    if dtype == "float64" or math.isnan(v) or math.isinf(v):
        return v
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:  # rounds beyond the largest float32
        return math.copysign(math.inf, v)


def next_float(dtype: str, v: float, up: bool) -> float:
    """The ``dtype`` value next to ``v`` (a ``dtype`` value, not NaN) upwards or downwards."""
    if dtype == "float64":
        return math.nextafter(v, math.inf if up else -math.inf)
    if v == 0:
        return _TINY32 if up else -_TINY32
    if math.isinf(v) and (v > 0) == up:
        return v
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    bits += 1 if (v > 0) == up else -1  # magnitude one ulp up or down
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _bound(dtype: str, v: Scalar, strict: bool, lower: bool) -> Optional[Scalar]:
    """lower: the least ``dtype`` value x with x > v (strict) or x >= v; else the greatest with
    x < v (strict) or x <= v. None when there is none."""
    if isinstance(v, float) and math.isnan(v):
        return None
    beyond = math.inf if lower else -math.inf  # no value is strictly past it
    if dtype in _FLOATS:
        v = round_to(dtype, v)
        if not strict:
            return v
        return None if v == beyond else next_float(dtype, v, lower)
    if isinstance(v, float) and math.isinf(v):
        return None if v == beyond else INT_RANGE[dtype][0 if lower else 1]
    if lower:
        return math.floor(v) + 1 if strict else math.ceil(v)
    return math.ceil(v) - 1 if strict else math.floor(v)


def _between(call: Call, value: Any, arg: str) -> tuple[Scalar, Scalar]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) and not hasattr(value, "__iter__"):
        raise call.type_error(f"{arg} must be a pair (lo, hi) of numbers; got {type(value).__name__}")
    pair = tuple(value)
    if len(pair) != 2:
        raise call.value_error(f"{arg} must be a pair (lo, hi) of numbers; got {len(pair)} values")
    return check_number(call, pair[0], f"{arg}[0]"), check_number(call, pair[1], f"{arg}[1]")


def closed_range(call: Call, dtype: str, gt: Any = None, lt: Any = None, between: Any = None, *,
                 lt_name: str = "lt") -> tuple[Scalar, Scalar]:
    """``(lo, hi)``: the ``dtype`` values x with ``x > gt``, ``x < lt`` and
    ``between[0] <= x <= between[1]`` (those given; all of them) are those with lo <= x <= hi.
    Python ints for integer dtypes, floats for float dtypes; ``lo > hi`` when there are none."""
    low_limit, high_limit = INT_RANGE[dtype] if dtype in INT_RANGE else (-math.inf, math.inf)
    lows: list[Optional[Scalar]] = []
    highs: list[Optional[Scalar]] = []
    if gt is not None:
        lows.append(_bound(dtype, check_number(call, gt, "gt"), True, lower=True))
    if lt is not None:
        highs.append(_bound(dtype, check_number(call, lt, lt_name), True, lower=False))
    if between is not None:
        a, b = _between(call, between, "between")
        lows.append(_bound(dtype, a, False, lower=True))
        highs.append(_bound(dtype, b, False, lower=False))
    empty: tuple[Scalar, Scalar] = (high_limit, low_limit) if dtype in _FLOATS else (1, 0)
    lo_bounds = [b for b in lows if b is not None]
    hi_bounds = [b for b in highs if b is not None]
    if len(lo_bounds) < len(lows) or len(hi_bounds) < len(highs):  # a test nothing passes
        return empty
    lo = max([low_limit, *lo_bounds])
    hi = min([high_limit, *hi_bounds])
    return (lo, hi) if lo <= hi else empty


def _pivot(call: Call, dtype: str, pivot: Any) -> Scalar:
    """The three-way pivot as a ``dtype`` value (integers: a whole number in range)."""
    p = check_number(call, pivot, "pivot")
    if dtype in _FLOATS:
        return round_to(dtype, p)
    if isinstance(p, float):
        if not p.is_integer():
            raise call.value_error(f"pivot={p!r} is not a whole number, but x is {dtype}: the equal part would be "
                                   "empty (use the two-way partition, whose x < pivot takes any number)")
        p = int(p)
    low, high = INT_RANGE[dtype]
    if not low <= p <= high:
        raise call.value_error(f"pivot={p} is outside {dtype}'s range [{low}, {high}]")
    return p


# ---- compaction ----

def _compact(call: Call, n: int, dtypes: Sequence[Optional[str]],
             launch: Callable[[list[int], int], None]) -> list[Any]:
    """Outputs whose size only the device knows: one array of ``n`` items per dtype in
    ``dtypes`` (None: not wanted, pointer 0), a device count, ``launch(pointers, count_ptr)``;
    then the count is read (this synchronises the call's stream) and each output cut to it."""
    outs = [call.empty((n,), d) if d is not None else (None, 0) for d in dtypes]
    _count, count_ptr = call.empty((1,), "int64")
    launch([ptr for _, ptr in outs], count_ptr)
    kept = call.read_count(count_ptr)
    return [call.result(call.shrink(out, ptr, d, kept, n)) if d is not None else None
            for (out, ptr), d in zip(outs, dtypes)]


_SYNC_NOTE = """
    Synchronisation: the size of the result is known only on the device, so this call waits
    for its stream to finish (one device-to-host copy of the count) before it returns; the
    result is then ready. Every other scanlab function, :func:`quicksort` excepted, returns
    without waiting.

    Memory: the result is written into an array of ``x.size`` items; where it keeps at most
    half of them, the kept items are copied (on the call's stream) into an array of their own
    and the large one is released; otherwise the result is a view of the first items.
"""


def select(x: Any, mask: Any = None, *, gt: Optional[Scalar] = None, lt: Optional[Scalar] = None,
           between: Optional[Tuple[Scalar, Scalar]] = None, return_indices: bool = False,
           stream: Any = None) -> Union[Any, Tuple[Any, Any]]:
    """Stream compaction: the elements of ``x`` that a mask or a value test keeps, in order
    (scanlab's single-pass select: ``x`` is read once, the kept elements written once).

    Either a mask, as ``torch.masked_select(x, mask)`` and ``x[mask]``::

        scanlab.select(x, x_valid)              # mask: bool or uint8, nonzero keeps

    or a value test, from any of ``gt``, ``lt`` and ``between``; given together, an element is
    kept when it passes every one::

        scanlab.select(x, gt=0)                  # x > 0
        scanlab.select(x, lt=1.5)                # x < 1.5
        scanlab.select(x, between=(-1, 1))       # -1 <= x <= 1: BOTH bounds inclusive
        scanlab.select(x, between=(0, 10), lt=10)  # 0 <= x < 10 (half-open)
        scanlab.select(x, gt=0, lt=1)            # 0 < x < 1

    The value tests are scanlab-compact's ``--gt``, ``--lt`` and ``--between`` (closed range).
    Bounds are Python numbers (or NumPy/framework scalars), compared as the elements' dtype:
    for float32 data a bound is first rounded to float32 (as NumPy 2 and PyTorch compare a
    float32 array with a Python float); for integer data the comparison is exact (``gt=2.5``
    keeps 3 and up; a bound beyond the dtype's range keeps everything or nothing). NaN
    elements fail every test (as ``x > a`` in NumPy); a NaN bound keeps nothing.

    Args:
        x: a contiguous CUDA array of any shape (torch, CuPy, JAX, or anything with
            ``__dlpack__`` or ``__cuda_array_interface__``): int32, int64, uint32, uint64,
            float32 or float64. Its elements are taken in row-major order.
        mask: a contiguous CUDA array of ``x``'s shape, bool or uint8 (nonzero: keep), on the
            same device. Not together with ``gt``/``lt``/``between``.
        gt, lt: keep ``x > gt``, ``x < lt`` (strict).
        between: ``(lo, hi)``: keep ``lo <= x <= hi`` (inclusive at both ends).
        return_indices: also return the positions (int64, into the flattened ``x``) of the kept
            elements, as ``np.flatnonzero(mask)``.
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        The kept elements, a 1-D array of ``x``'s dtype and framework on the same device; with
        ``return_indices=True``, ``(values, indices)``.

    Raises:
        TypeError: ``x`` or ``mask`` is not a CUDA array or has an unsupported dtype; a bound
            is not a number.
        ValueError: neither a mask nor a test, or both; ``mask``'s shape is not ``x``'s; an
            array is not contiguous, or on another GPU.
        RuntimeError: a CUDA error, with CUDA's name and description of it.
    """
    call = Call("select", stream)
    indices = check_bool(call, return_indices, "return_indices")
    tested = gt is not None or lt is not None or between is not None
    if mask is not None and tested:
        raise call.value_error("give a mask or a value test (gt=, lt=, between=), not both")
    if mask is None and not tested:
        raise call.value_error("nothing to select by: give a mask or a value test (gt=, lt=, between=)")
    a = call.arg(x, "x", dtypes=DTYPES, ndims=None)
    flags = 0
    lo: Scalar = 0
    hi: Scalar = 0
    if mask is not None:
        m = call.arg(mask, "mask", dtypes=("bool", "uint8"), ndims=None)
        if m.shape != a.shape:
            raise call.value_error(f"mask has shape {m.shape} but x has shape {a.shape}")
        flags = m.ptr
    else:
        lo, hi = closed_range(call, a.dtype, gt, lt, between)

    def launch(ptrs: list[int], count_ptr: int) -> None:
        call.launch(_C.select, DTYPE_CODE[a.dtype], a.ptr, flags, lo, hi, ptrs[0], ptrs[1], count_ptr, a.size)

    values, positions = _compact(call, a.size, (a.dtype, "int64" if indices else None), launch)
    return (values, positions) if indices else values


def unique_consecutive(x: Any, return_counts: bool = False, *, stream: Any = None) -> Union[Any, Tuple[Any, Any]]:
    """Drop consecutive duplicates: the first element of every run of equal neighbours, as
    ``torch.unique_consecutive(x)`` (scanlab's single-pass unique: one read, one write).

    Equality is ``==``: NaNs are never equal (each NaN is kept), -0.0 equals +0.0 (the first of
    a run of zeros is kept, with its sign). On sorted data this gives the distinct values.

    Args:
        x: a contiguous CUDA array of any shape, taken in row-major order (as torch's
            ``dim=None``): int32, int64, uint32, uint64, float32 or float64.
        return_counts: also return the length of each run (int64), as torch's
            ``return_counts=True``.
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        The run heads, a 1-D array of ``x``'s dtype and framework on the same device; with
        ``return_counts=True``, ``(values, counts)``.

    Raises:
        TypeError: ``x`` is not a CUDA array, or has an unsupported dtype.
        ValueError: ``x`` is not contiguous.
        RuntimeError: a CUDA error, with CUDA's name and description of it.
    """
    call = Call("unique_consecutive", stream)
    counts = check_bool(call, return_counts, "return_counts")
    a = call.arg(x, "x", dtypes=DTYPES, ndims=None)

    def launch(ptrs: list[int], count_ptr: int) -> None:
        call.launch(_C.unique_consecutive, DTYPE_CODE[a.dtype], a.ptr, ptrs[0], ptrs[1], count_ptr, a.size)

    values, lengths = _compact(call, a.size, (a.dtype, "int64" if counts else None), launch)
    return (values, lengths) if counts else values


for _compaction in (select, unique_consecutive):
    _compaction.__doc__ = (_compaction.__doc__ or "") + _SYNC_NOTE


# ---- partitions ----

def partition(x: Any, pivot: Optional[Scalar] = None, *, gt: Optional[Scalar] = None, lt: Optional[Scalar] = None,
              between: Optional[Tuple[Scalar, Scalar]] = None, three_way: bool = False, stable: bool = False,
              stream: Any = None) -> Tuple[Any, Any]:
    """Partition a 1-D CUDA array: ``(out, counts)``, ``out`` a permutation of ``x`` in parts,
    ``counts`` the sizes of the parts (scanlab's single-pass partitions).

    Two ways (default): ``out = [the elements that pass | the rest]``, ``counts = [passed,
    rest]``. The test is ``x < pivot``, or a value test as :func:`select`'s (``gt``, ``lt``,
    ``between``: the same rules, ``between`` inclusive at both ends)::

        out, counts = scanlab.partition(x, 0.5)            # [x < 0.5 | x >= 0.5 and NaNs]
        out, counts = scanlab.partition(x, between=(1, 9))  # [1 <= x <= 9 | the rest]

    Three ways (``three_way=True``): ``out = [x < pivot | x == pivot | x > pivot]``,
    ``counts = [less, equal, greater]``, under ``scanlab.nan_last_less``: every NaN is greater
    than every number (with a NaN pivot, NaNs are the equal part); -0.0 equals +0.0.

    Order inside the parts: the first part (and the equal part) keeps the input order; the last
    part comes in REVERSE input order (CUB's DevicePartition layout: written from the end),
    unless ``stable=True``, which puts it in input order too (one more pass over that part).

    ``counts`` stays on the device (no synchronisation): ``torch.split(out, counts.tolist())``
    (or ``cupy.split`` of the cumulative counts) gives the parts, reading it then.

    Args:
        x: a contiguous 1-D CUDA array: int32, int64, uint32, uint64, float32 or float64.
        pivot: a number. Two ways: the test ``x < pivot`` (not with ``gt``/``lt``/``between``).
            Three ways: required; rounded to float32 for float32 data; for integer data a
            whole number in the dtype's range.
        gt, lt, between: the two-way value test (see :func:`select`).
        three_way: less | equal | greater around ``pivot``.
        stable: the last part in input order too.
        stream: the CUDA stream to run on; by default the framework's current stream.

    Returns:
        ``(out, counts)``: ``out`` as ``x`` (caller's framework, same device), ``counts`` an
        int64 array of 2 (two ways) or 3 (three ways) elements on the same device.

    Raises:
        TypeError: ``x`` is not a CUDA array or has an unsupported dtype; ``pivot`` or a bound
            is not a number.
        ValueError: no test, or ``pivot`` with ``gt``/``lt``/``between``; three ways without a
            pivot or with a value test; an integer pivot out of range or not whole; ``x`` not
            1-D or not contiguous.
        RuntimeError: a CUDA error, with CUDA's name and description of it.
    """
    call = Call("partition", stream)
    three = check_bool(call, three_way, "three_way")
    keep_order = check_bool(call, stable, "stable")
    tested = gt is not None or lt is not None or between is not None
    if three and tested:
        raise call.value_error("three_way=True partitions around pivot; gt, lt and between are two-way tests")
    if three and pivot is None:
        raise call.value_error("three_way=True needs a pivot")
    if not three and pivot is not None and tested:
        raise call.value_error("give a pivot (the test x < pivot) or a value test (gt=, lt=, between=), not both")
    if not three and pivot is None and not tested:
        raise call.value_error("nothing to partition by: give a pivot or a value test (gt=, lt=, between=)")
    a = call.arg(x, "x", dtypes=DTYPES, ndims=(1,))
    code = DTYPE_CODE[a.dtype]
    if three:
        p = _pivot(call, a.dtype, pivot)
        out, out_ptr = call.empty(a.shape, a.dtype)
        counts, counts_ptr = call.empty((3,), "int64")
        call.launch(_C.partition_three_way, code, a.ptr, out_ptr, counts_ptr, a.size, p, keep_order)
    else:
        if pivot is not None:
            lo, hi = closed_range(call, a.dtype, lt=pivot, lt_name="pivot")
        else:
            lo, hi = closed_range(call, a.dtype, gt, lt, between)
        out, out_ptr = call.empty(a.shape, a.dtype)
        counts, counts_ptr = call.empty((2,), "int64")
        call.launch(_C.partition_two_way, code, a.ptr, out_ptr, counts_ptr, a.size, lo, hi, keep_order)
    return call.result(out), call.result(counts)


__all__ = ["closed_range", "next_float", "partition", "round_to", "select", "unique_consecutive"]
