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

    Forward: :func:`scanlab.linear_recurrence`. Backward: scanlab's fused backward pass
    (:func:`scanlab.linear_recurrence_backward`): one kernel reads ``a``, ``x`` and ``dL/dx`` and
    writes ``dL/da`` and ``dL/db`` (and ``dL/dx0``). Saves ``a``, ``x`` and ``x0`` for it. Inputs
    must be contiguous CUDA tensors of float32, float64, float16 or bfloat16 (the 16-bit types
    are stored as they are and computed in float32, forward and backward; the gradients come
    back in the inputs' dtype). Forward direction only (``reverse`` has no backward yet); no
    final states (use ``x``'s last steps).
    """

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor, x0: Optional[torch.Tensor] = None,
                layout: str = "bt", offsets: Optional[torch.Tensor] = None) -> torch.Tensor:
        x = _api.linear_recurrence(a, b, x0, layout=layout, offsets=offsets)
        ctx.save_for_backward(a, x, x0, offsets)
        ctx.layout = layout
        return x

    @staticmethod
    def backward(ctx: Any, grad_x: torch.Tensor):  # type: ignore[override]
        a, x, x0, offsets = ctx.saved_tensors
        grad_a, grad_b, grad_x0 = _api.linear_recurrence_backward(a, x, grad_x.contiguous(), x0, layout=ctx.layout,
                                                                  offsets=offsets)
        need_a, need_b, need_x0 = ctx.needs_input_grad[:3]
        return (grad_a if need_a else None, grad_b if need_b else None,
                grad_x0 if (need_x0 and x0 is not None) else None, None, None)


def linear_recurrence(a: torch.Tensor, b: torch.Tensor, x0: Union[None, float, torch.Tensor] = None, *,
                      layout: str = "bt", offsets: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Differentiable :func:`scanlab.linear_recurrence` for PyTorch tensors (forward direction;
    ``layout`` and ``offsets`` as there).

    ``a`` and ``b`` are made contiguous; a Python number ``x0`` becomes a constant tensor (no
    gradient), one value per sequence. Returns ``x``, with gradients for ``a``, ``b`` and a
    tensor ``x0`` through :class:`LinearRecurrence`.
    """
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError("scanlab.torch.linear_recurrence: a and b must be torch tensors "
                        "(scanlab.linear_recurrence takes any CUDA array, without gradients)")
    initial: Optional[torch.Tensor]
    if isinstance(x0, (int, float)) and not isinstance(x0, bool):
        initial = torch.full(_states_shape(a, layout, offsets), float(x0), dtype=a.dtype, device=a.device)
    elif x0 is None or isinstance(x0, torch.Tensor):
        initial = x0.contiguous() if x0 is not None else None
    else:
        raise TypeError(f"scanlab.torch.linear_recurrence: x0 must be None, a number or a tensor; got "
                        f"{type(x0).__name__}")
    return LinearRecurrence.apply(a.contiguous(), b.contiguous(), initial, layout, offsets)


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
