"""PyTorch integration: scanlab's linear recurrence as an autograd function.

    >>> import torch, scanlab.torch
    >>> a = torch.rand(8, 4096, device="cuda", requires_grad=True)
    >>> b = torch.randn(8, 4096, device="cuda", requires_grad=True)
    >>> x = scanlab.torch.linear_recurrence(a, b)     # x[:, i] = a[:, i] * x[:, i-1] + b[:, i]
    >>> x.square().sum().backward()                   # a.grad, b.grad by one fused pass

Importing this module imports torch.
"""

from __future__ import annotations

from typing import Any, Optional, Union

import torch

from . import _api

__all__ = ["LinearRecurrence", "linear_recurrence"]


class LinearRecurrence(torch.autograd.Function):
    """``x = LinearRecurrence.apply(a, b, x0, layout, offsets)``: ``x[i] = a[i] * x[i-1] + b[i]``
    along every sequence of ``a`` (``layout`` ``"bt"``, ``"tb"`` or ``"btc"``, or variable
    lengths at ``offsets``: see :func:`scanlab.linear_recurrence`), with ``x[-1] = x0`` (one
    value per sequence, or None for zeros), differentiable in ``a``, ``b`` and ``x0``.
    ``LinearRecurrence.apply(a, b, x0, layout, offsets, True)`` returns ``(x, final)``, each
    sequence's last state (an empty sequence's: its ``x0``), differentiable too.

    Forward: :func:`scanlab.linear_recurrence`. Backward: scanlab's fused backward pass
    (:func:`scanlab.linear_recurrence_backward`): one kernel reads ``a``, ``x`` and ``dL/dx`` and
    writes ``dL/da`` and ``dL/db`` (and ``dL/dx0``). Saves ``a``, ``x`` and ``x0`` for it. A
    gradient reaching ``final`` is added to ``dL/dx`` at each sequence's last step first (a copy
    of ``dL/dx``; to ``dL/dx0`` for empty sequences). Inputs must be contiguous CUDA tensors of
    float32, float64, float16 or bfloat16 (the 16-bit types are stored as they are and computed
    in float32, forward and backward; the gradients come back in the inputs' dtype).
    ``reverse`` (the 7th argument) solves ``x[i] = a[i] * x[i+1] + b[i]``; its backward pass is
    composed of scanlab's forward solve and element-wise PyTorch operations (not yet one fused
    pass: about twice the memory traffic).
    """

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor, x0: Optional[torch.Tensor] = None,
                layout: str = "bt", offsets: Optional[torch.Tensor] = None, return_final: bool = False,
                reverse: bool = False) -> Any:
        result = _api.linear_recurrence(a, b, x0, layout=layout, offsets=offsets, return_final=return_final,
                                        reverse=reverse)
        x = result[0] if return_final else result
        ctx.save_for_backward(a, x, x0, offsets)
        ctx.layout = layout
        ctx.reverse = reverse
        ctx.set_materialize_grads(False)  # None for an output the loss does not use
        return result

    @staticmethod
    def backward(ctx: Any, grad_x: Optional[torch.Tensor], grad_final: Optional[torch.Tensor] = None):  # type: ignore[override]
        a, x, x0, offsets = ctx.saved_tensors
        need_a, need_b, need_x0 = ctx.needs_input_grad[:3]
        if grad_x is None and grad_final is None:
            return None, None, None, None, None, None, None
        grad_x = torch.zeros_like(x) if grad_x is None else grad_x.contiguous()
        final_to_x0 = None
        if grad_final is not None:
            grad_x, final_to_x0 = _add_final_gradient(grad_x, grad_final, ctx.layout, offsets, ctx.reverse)
        backward = _reverse_backward if ctx.reverse else _api.linear_recurrence_backward
        grad_a, grad_b, grad_x0 = backward(a, x, grad_x, x0, layout=ctx.layout, offsets=offsets)
        if grad_x0 is not None and final_to_x0 is not None:
            grad_x0 = grad_x0 + final_to_x0
        return (grad_a if need_a else None, grad_b if need_b else None,
                grad_x0 if (need_x0 and x0 is not None) else None, None, None, None, None)


def linear_recurrence(a: torch.Tensor, b: torch.Tensor, x0: Union[None, float, torch.Tensor] = None, *,
                      reverse: bool = False, layout: str = "bt", offsets: Optional[torch.Tensor] = None,
                      return_final: bool = False) -> Any:
    """Differentiable :func:`scanlab.linear_recurrence` for PyTorch tensors (``reverse``,
    ``layout``, ``offsets`` and ``return_final`` as there).

    ``a`` and ``b`` are made contiguous; a Python number ``x0`` becomes a constant tensor (no
    gradient), one value per sequence. Returns ``x`` (with ``return_final``: ``(x, final)``),
    with gradients for ``a``, ``b`` and a tensor ``x0`` through :class:`LinearRecurrence`.
    """
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError("scanlab.torch.linear_recurrence: a and b must be torch tensors "
                        "(scanlab.linear_recurrence takes any CUDA array, without gradients)")
    for name, flag in (("reverse", reverse), ("return_final", return_final)):
        if not isinstance(flag, bool):
            raise TypeError(f"scanlab.torch.linear_recurrence: {name} must be True or False; got "
                            f"{type(flag).__name__}")
    initial: Optional[torch.Tensor]
    if isinstance(x0, (int, float)) and not isinstance(x0, bool):
        initial = torch.full(_states_shape(a, layout, offsets), float(x0), dtype=a.dtype, device=a.device)
    elif x0 is None or isinstance(x0, torch.Tensor):
        initial = x0.contiguous() if x0 is not None else None
    else:
        raise TypeError(f"scanlab.torch.linear_recurrence: x0 must be None, a number or a tensor; got "
                        f"{type(x0).__name__}")
    return LinearRecurrence.apply(a.contiguous(), b.contiguous(), initial, layout, offsets, return_final, reverse)


def _add_final_gradient(grad_x: torch.Tensor, grad_final: torch.Tensor, layout: str,
                        offsets: Optional[torch.Tensor], reverse: bool) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    """dL/dx with dL/dfinal added where each sequence ends (its last step; reverse: its first),
    a new tensor (the incoming gradient is not written), and the part of dL/dfinal that goes
    to x0 (empty sequences, whose final state is x0), or None."""
    grad_x = grad_x.clone()
    if offsets is not None:  # no synchronisation: empty sequences add 0 to x and all to x0
        nonempty = offsets[1:] > offsets[:-1]
        if grad_x.numel() > 0:
            end = offsets[:-1].clamp(max=grad_x.shape[0] - 1) if reverse else (offsets[1:] - 1).clamp(min=0)
            grad_x.index_add_(0, end, torch.where(nonempty, grad_final, torch.zeros_like(grad_final)))
        return grad_x, torch.where(nonempty, torch.zeros_like(grad_final), grad_final)
    t = _time_dim(grad_x, layout)
    length = grad_x.shape[t]
    if length == 0:  # final = x0
        return grad_x, grad_final
    end = grad_x.select(t, 0 if reverse else length - 1)
    end.add_(grad_final.reshape(end.shape))
    return grad_x, None


def _time_dim(a: torch.Tensor, layout: str) -> int:
    """The dimension of ``a`` that holds the steps (without offsets)."""
    return 0 if layout == "tb" or a.dim() == 1 else 1


def _reverse_backward(a: torch.Tensor, x: torch.Tensor, grad_x: torch.Tensor, x0: Optional[torch.Tensor], *,
                      layout: str, offsets: Optional[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, Any]:
    """The gradients of the reverse recurrence x[i] = a[i] x[i+1] + b[i] (x[n] = x0), composed of
    scanlab's forward solve and PyTorch element-wise operations (not one fused pass yet: about
    twice the memory traffic of the forward direction's backward pass). The adjoint runs
    forward: g[i] = dL/dx[i] + a[i-1] g[i-1] from each sequence's first element, then
    dL/db = g, dL/da[i] = g[i] x[i+1] (x0 after the last), dL/dx0 = a[last] g[last] (0 where
    a[last] == 0: the reset cuts x0 off)."""
    zero = torch.zeros((), dtype=a.dtype, device=a.device)
    if offsets is not None:
        n = a.shape[0]
        idx = torch.arange(n, device=a.device)
        seq = torch.searchsorted(offsets, idx, right=True) - 1  # the sequence of each element
        first = idx == offsets[seq]
        last = idx == offsets[seq + 1] - 1
        a_prev = torch.where(first, zero, torch.roll(a, 1))
        after = x0[seq] if x0 is not None else zero
        x_next = torch.where(last, after, torch.roll(x, -1))
    else:
        t = _time_dim(a, layout)
        length = a.shape[t]
        if length == 0:
            return torch.empty_like(a), torch.empty_like(a), None if x0 is None else torch.zeros_like(x0)
        a_prev = torch.cat([torch.zeros_like(a.narrow(t, 0, 1)), a.narrow(t, 0, length - 1)], t)
        after = (torch.zeros_like(x.narrow(t, 0, 1)) if x0 is None
                 else x0.reshape(x.narrow(t, 0, 1).shape))
        x_next = torch.cat([x.narrow(t, 1, length - 1), after], t)
    g = _api.linear_recurrence(a_prev, grad_x, layout=layout, offsets=offsets)
    grad_a = g * x_next
    if x0 is None:
        return grad_a, g, None
    if offsets is not None:
        if a.shape[0] == 0:
            return grad_a, g, torch.zeros_like(x0)
        end = (offsets[1:] - 1).clamp(min=0)
        a_end, g_end = a[end], g[end]
        keep = (offsets[1:] > offsets[:-1]) & (a_end != 0)
    else:
        a_end, g_end = a.select(t, length - 1), g.select(t, length - 1)
        keep = a_end != 0
    grad_x0 = torch.where(keep, a_end * g_end, zero).reshape(x0.shape)
    return grad_a, g, grad_x0


def _states_shape(a: torch.Tensor, layout: str, offsets: Optional[torch.Tensor]) -> tuple[int, ...]:
    """One value per sequence (scanlab.linear_recurrence's final states), for a number x0."""
    if offsets is not None:
        return (max(offsets.shape[0] - 1, 0),) if offsets.dim() == 1 else ()
    if a.dim() == 1:
        return ()
    if layout == "tb" and a.dim() == 2:
        return (a.shape[1],)
    if layout == "btc" and a.dim() == 3:
        return (a.shape[0], a.shape[2])
    return (a.shape[0],)  # "bt" (shapes the call refuses get their error there)
