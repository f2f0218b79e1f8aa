"""JAX integration: scanlab's linear recurrence as an XLA custom call.

    >>> import jax, jax.numpy as jnp, scanlab.jax
    >>> a, b = jnp.full((8, 4096), 0.99), jnp.ones((8, 4096))
    >>> x = jax.jit(scanlab.jax.linear_recurrence)(a, b)   # x[:, i] = a[:, i] * x[:, i-1] + b[:, i]
    >>> ga, gb = jax.grad(lambda a, b: scanlab.jax.linear_recurrence(a, b).sum(), (0, 1))(a, b)

The recurrence runs inside XLA (``jax.ffi.ffi_call``): on XLA's stream, on XLA's buffers (its
temporary storage is one more result, sized at trace time), under ``jax.jit`` or not, with no
copy and no synchronisation. ``jax.grad``/``jax.vjp`` take scanlab's fused backward pass
(forward direction; reverse: composed of the forward solve, as in scanlab.torch).
:func:`scanlab.linear_recurrence` also takes JAX arrays, through DLPack, outside ``jit``; this
module is the faster and composable way.

Importing it imports JAX and registers the custom-call targets for the CUDA platform; it needs
an extension built with jaxlib's headers (``scanlab.build_info()["xla_ffi"]``).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Union

import jax
import jax.numpy as jnp
import numpy as np

from . import _api
from . import _scanlab as _C
from ._arrays import _QUERY, DTYPE_CODE, Call

__all__ = ["linear_recurrence"]

_TARGETS = dict(_C.xla_ffi_targets())
if not _TARGETS:
    raise ImportError("scanlab.jax: this scanlab extension was built without jaxlib's headers "
                      "(scanlab.build_info()['xla_ffi'] is False): rebuild it where jaxlib is installed, or pass "
                      "JAX arrays to scanlab.linear_recurrence (DLPack, outside jit)")
for _name, _capsule in _TARGETS.items():
    jax.ffi.register_ffi_target(_name, _capsule, platform="CUDA")

_DTYPES = ("float32", "float64", "float16", "bfloat16")


class _Shape:
    """What scanlab._api._sequences reads of an array: its shape and argument name."""

    __slots__ = ("shape", "ndim", "arg")

    def __init__(self, x: Any, arg: str) -> None:
        self.shape = tuple(x.shape)
        self.ndim = len(self.shape)
        self.arg = arg


def _take_offsets(call: Call, offsets: Any) -> tuple[int, int, Any]:
    if str(offsets.dtype) != "int64":
        raise call.type_error(f"offsets has dtype {offsets.dtype}; supported: int64 (JAX makes int64 arrays "
                              "only with jax_enable_x64)")
    if offsets.ndim != 1:
        raise call.value_error(f"offsets must be 1-D; got shape {tuple(offsets.shape)}")
    return offsets.shape[0], 0, None


def linear_recurrence(a: Any, b: Any, x0: Union[None, float, Any] = None, *, reverse: bool = False,
                      layout: _api.Layout = "bt", offsets: Any = None, return_final: bool = False) -> Any:
    """:func:`scanlab.linear_recurrence` for JAX: ``x[i] = a[i] * x[i-1] + b[i]`` (``reverse``:
    ``x[i] = a[i] * x[i+1] + b[i]``) along every sequence, as an XLA custom call.

    ``a``, ``b``: JAX arrays of one dtype (float32, float64, float16 or bfloat16, the 16-bit
    types computed in float32), of a shape that ``layout`` (``"bt"``, ``"tb"``, ``"btc"``) or
    int64 ``offsets`` (cu_seqlens; int64 needs ``jax_enable_x64``) describes as there. ``x0``:
    None (zeros), a number, or an array of ``a``'s dtype with one value per sequence. Returns
    ``x``, or ``(x, final)`` with ``return_final``. Differentiable in ``a``, ``b`` and ``x0``
    (and through ``final``): the forward direction by scanlab's fused backward pass,
    ``reverse=True`` by a composition of scanlab's forward solve and element-wise operations
    (about twice the memory traffic; one fused pass is not written yet).
    """
    call = Call("jax.linear_recurrence")
    for name, flag in (("reverse", reverse), ("return_final", return_final)):
        if not isinstance(flag, bool):
            raise call.type_error(f"{name} must be True or False; got {type(flag).__name__}")
    a, b = jnp.asarray(a), jnp.asarray(b)
    if str(a.dtype) not in _DTYPES:
        raise call.type_error(f"a has dtype {a.dtype}; supported: {', '.join(_DTYPES)}")
    if b.dtype != a.dtype:
        raise call.type_error(f"b has dtype {b.dtype}, but it must match a's dtype {a.dtype}")
    seq = _api._sequences(call, _Shape(a, "a"), _Shape(b, "b"), layout, offsets, _take_offsets)
    x0s = _initial_states(call, x0, a, seq.states_shape)
    # offsets are read only for variable lengths: a placeholder otherwise.
    off = offsets if offsets is not None else jnp.zeros((1,), jnp.int32)
    static = (seq.code, seq.batch, seq.length, seq.channels, reverse)
    x, final = _solve(a, b, x0s, off, static)
    return (x, final) if return_final else x


def _initial_states(call: Call, x0: Any, a: Any, states_shape: tuple[int, ...]) -> Any:
    if x0 is None:
        return jnp.zeros(states_shape, a.dtype)
    if isinstance(x0, (int, float)) and not isinstance(x0, bool):
        return jnp.full(states_shape, x0, a.dtype)
    s = jnp.asarray(x0)
    if s.dtype != a.dtype:
        raise call.type_error(f"x0 has dtype {s.dtype}, but it must match a's dtype {a.dtype}")
    want = ((), (1,)) if states_shape == () else (states_shape,)
    if tuple(s.shape) not in want:
        raise call.value_error(f"x0 has shape {tuple(s.shape)}; for a of shape {tuple(a.shape)} it must be a number "
                               "or have shape " + " or ".join(str(w) for w in want) + " (one initial state per sequence)")
    return s.reshape(states_shape)


# A non-null address for the size queries' pointers: the library's query reads none of them,
# but takes null for "not wanted" (final states, x0s), which may change its answer.
_SOME_ADDRESS = 256


def _temp_bytes(query: Any, dtype: Any, static: tuple, arrays: int) -> int:
    """The temporary storage of one call, the largest over the visible GPUs (asked at trace
    time: the call may run on any of them; at least 1 byte)."""
    code, batch, length, channels, reverse = static
    offsets = _SOME_ADDRESS if code == _api._VARLEN else 0
    pointers = (_SOME_ADDRESS,) * arrays
    extra = (0.0,) if query is _C.linear_recurrence else ()
    tail = (code, batch, length, channels, offsets) + ((reverse,) if query is _C.linear_recurrence else ())
    most = 1
    for device in jax.devices("gpu"):
        ordinal = getattr(device, "local_hardware_id", None)
        ordinal = device.id if ordinal is None else ordinal
        most = max(most, int(query(DTYPE_CODE[str(dtype)], *pointers, *extra, *tail, 0, 0, _QUERY, 0, ordinal)))
    return most


def _attributes(static: tuple) -> dict[str, Any]:
    code, batch, length, channels, _ = static
    return {"layout": np.int64(code), "batch": np.int64(batch), "length": np.int64(length),
            "channels": np.int64(channels)}


def _forward_call(a: Any, b: Any, x0s: Any, offsets: Any, static: tuple) -> tuple[Any, Any]:
    temp = _temp_bytes(_C.linear_recurrence, a.dtype, static, 5)  # a, b, x, final, x0s
    out = (jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct(x0s.shape, a.dtype),
           jax.ShapeDtypeStruct((temp,), jnp.uint8))
    x, final, _ = jax.ffi.ffi_call("scanlab_linear_recurrence", out)(a, b, x0s, offsets, reverse=np.int64(static[4]),
                                                                     **_attributes(static))
    return x, final


@partial(jax.custom_vjp, nondiff_argnums=(4,))
def _solve(a: Any, b: Any, x0s: Any, offsets: Any, static: tuple) -> tuple[Any, Any]:
    return _forward_call(a, b, x0s, offsets, static)


def _solve_fwd(a: Any, b: Any, x0s: Any, offsets: Any, static: tuple):
    x, final = _forward_call(a, b, x0s, offsets, static)
    return (x, final), (a, x, x0s, offsets)


def _solve_bwd(static: tuple, residuals: tuple, cotangents: tuple):
    a, x, x0s, offsets = residuals
    grad_x, grad_final = cotangents
    code, _, length, _, reverse = static
    grad_x, final_to_x0 = _add_final_gradient(grad_x, grad_final, code, length, offsets, reverse)
    if reverse:
        grad_a, grad_b, grad_x0 = _reverse_backward(a, x, grad_x, x0s, offsets, static)
    else:
        grad_a, grad_b, grad_x0 = _fused_backward(a, x, grad_x, x0s, offsets, static)
    if final_to_x0 is not None:
        grad_x0 = grad_x0 + final_to_x0
    return grad_a, grad_b, grad_x0, None


def _fused_backward(a: Any, x: Any, grad_x: Any, x0s: Any, offsets: Any, static: tuple) -> tuple[Any, Any, Any]:
    """dL/da, dL/db, dL/dx0 of the forward direction: scanlab's fused backward pass."""
    temp = _temp_bytes(_C.linear_recurrence_backward, a.dtype, static, 7)  # a, x, dL/dx, dL/da, dL/db, dL/dx0, x0s
    out = ((jax.ShapeDtypeStruct(a.shape, a.dtype),) * 2 + (jax.ShapeDtypeStruct(x0s.shape, a.dtype),)
           + (jax.ShapeDtypeStruct((temp,), jnp.uint8),))
    grad_a, grad_b, grad_x0, _ = jax.ffi.ffi_call("scanlab_linear_recurrence_backward", out)(
        a, x, grad_x, x0s, offsets, **_attributes(static))
    return grad_a, grad_b, grad_x0


def _reverse_backward(a: Any, x: Any, grad_x: Any, x0s: Any, offsets: Any, static: tuple) -> tuple[Any, Any, Any]:
    """The gradients of the reverse recurrence x[i] = a[i] x[i+1] + b[i] (x[n] = x0), composed of
    scanlab's forward solve and element-wise operations, as scanlab.torch does (not one fused
    pass yet: about twice the memory traffic of the forward direction's backward pass). The
    adjoint runs forward: g[i] = dL/dx[i] + a[i-1] g[i-1] from each sequence's first element,
    then dL/db = g, dL/da[i] = g[i] x[i+1] (x0 after the last), dL/dx0 = a[last] g[last] (0
    where a[last] == 0: the reset cuts x0 off)."""
    code, _, length, _, _ = static
    zero = jnp.zeros((), a.dtype)
    if code == _api._VARLEN:
        n = a.shape[0]
        if n == 0:
            return a, a, jnp.zeros_like(x0s)
        idx = jnp.arange(n, dtype=offsets.dtype)
        seq = jnp.searchsorted(offsets, idx, side="right") - 1  # the sequence of each element
        first, last = idx == offsets[seq], idx == offsets[seq + 1] - 1
        a_prev = jnp.where(first, zero, jnp.roll(a, 1))
        x_next = jnp.where(last, x0s[seq], jnp.roll(x, -1))
    else:
        if length == 0:
            return a, a, jnp.zeros_like(x0s)
        t = _time_axis(code, a.ndim)
        first_step = jax.lax.slice_in_dim(a, 0, 1, axis=t)
        a_prev = jnp.concatenate([jnp.zeros_like(first_step), jax.lax.slice_in_dim(a, 0, length - 1, axis=t)], t)
        x_next = jnp.concatenate([jax.lax.slice_in_dim(x, 1, length, axis=t), x0s.reshape(first_step.shape)], t)
    g, _ = _forward_call(a_prev, grad_x, jnp.zeros_like(x0s), offsets, static[:4] + (False,))
    grad_a = g * x_next
    if code == _api._VARLEN:
        end = jnp.clip(offsets[1:] - 1, 0)
        a_end, g_end = a[end], g[end]
        keep = (offsets[1:] > offsets[:-1]) & (a_end != 0)
    else:
        a_end = jax.lax.index_in_dim(a, length - 1, axis=t, keepdims=False)
        g_end = jax.lax.index_in_dim(g, length - 1, axis=t, keepdims=False)
        keep = a_end != 0
    grad_x0 = jnp.where(keep, a_end * g_end, zero).reshape(x0s.shape)
    return grad_a, g, grad_x0


_solve.defvjp(_solve_fwd, _solve_bwd)


def _add_final_gradient(grad_x: Any, grad_final: Any, code: int, length: int, offsets: Any,
                        reverse: bool) -> tuple[Any, Any]:
    """dL/dx with dL/dfinal added where each sequence ends (its last step; reverse: its
    first), and the part of dL/dfinal that goes to x0 (empty sequences, whose final state is
    x0), or None."""
    if code == _api._VARLEN:
        nonempty = offsets[1:] > offsets[:-1]
        zero = jnp.zeros_like(grad_final)
        if grad_x.shape[0] > 0:
            end = jnp.clip(offsets[:-1], 0, grad_x.shape[0] - 1) if reverse else jnp.clip(offsets[1:] - 1, 0)
            grad_x = grad_x.at[end].add(jnp.where(nonempty, grad_final, zero))
        return grad_x, jnp.where(nonempty, zero, grad_final)
    if length == 0:  # final = x0
        return grad_x, grad_final
    end = (slice(None),) * _time_axis(code, grad_x.ndim) + (0 if reverse else -1,)
    return grad_x.at[end].add(grad_final), None


def _time_axis(code: int, ndim: int) -> int:
    """The axis of the steps (fixed-length layouts): 0 for one sequence and [length, batch],
    1 for [batch, length] and [batch, length, channels]."""
    return 0 if code == _api._INTERLEAVED or ndim == 1 else 1
