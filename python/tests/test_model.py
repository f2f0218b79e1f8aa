"""A 2-layer linear-recurrent model trained under autograd with scanlab's recurrence, against
the same model whose recurrence is a pure-PyTorch sequential loop: same initial weights, same
batches, same optimiser; the losses must agree to 1e-5 (relative) at every one of 100 steps.

This is the end-to-end check of scanlab.torch.LinearRecurrence (forward and fused backward
inside a real training loop, gradients flowing through a, b and x0 into the weights).
Skipped without a GPU or PyTorch.
"""

from __future__ import annotations

import pytest

import scanlab
from conftest import HAS_GPU

pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU usable (scanlab.runtime_info())")
torch = pytest.importorskip("torch")
if HAS_GPU and not torch.cuda.is_available():
    pytest.skip("PyTorch sees no GPU", allow_module_level=True)
import scanlab.torch  # noqa: E402  (imports torch)


def sequential_recurrence(a: "torch.Tensor", b: "torch.Tensor", x0: "torch.Tensor") -> "torch.Tensor":
    """x[:, t] = a[:, t] * x[:, t-1] + b[:, t], x[:, -1] = x0: the reference, one step at a time."""
    state, out = x0, []
    for t in range(a.shape[1]):
        state = a[:, t] * state + b[:, t]
        out.append(state)
    return torch.stack(out, dim=1)


class RecurrentLayer(torch.nn.Module):
    """Gated linear recurrence over time, per channel (an HGRN/LRU-style layer):
    a = sigmoid(x W_a), b = (1 - a) * (x W_u), h = linrec(a, b, h0), y = x + h W_o."""

    def __init__(self, width: int, recurrence) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(width, width)
        self.value = torch.nn.Linear(width, width)
        self.out = torch.nn.Linear(width, width)
        self.h0 = torch.nn.Parameter(0.1 * torch.randn(width))
        self.recurrence = recurrence

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        batch, length, width = x.shape
        a = torch.sigmoid(self.gate(x))
        b = (1 - a) * self.value(x)
        # [batch, length, width] -> [batch * width, length]: one sequence per (batch, channel).
        a_rows = a.permute(0, 2, 1).reshape(batch * width, length)
        b_rows = b.permute(0, 2, 1).reshape(batch * width, length)
        h0 = self.h0.repeat(batch)
        h = self.recurrence(a_rows, b_rows, h0).reshape(batch, width, length).permute(0, 2, 1)
        return x + self.out(h)


class Model(torch.nn.Module):
    def __init__(self, width: int, recurrence) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([RecurrentLayer(width, recurrence) for _ in range(2)])
        self.head = torch.nn.Linear(width, 1)

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        for layer in self.layers:
            x = layer(x)
        return self.head(x).squeeze(-1)


def train(recurrence, dtype, steps: int, seed: int = 7) -> list[float]:
    torch.manual_seed(seed)
    model = Model(16, recurrence).to(device="cuda", dtype=dtype)
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    data = torch.Generator(device="cuda").manual_seed(seed + 1)
    losses = []
    for _ in range(steps):
        x = torch.randn(4, 96, 16, device="cuda", dtype=dtype, generator=data)
        target = torch.cumsum(x[..., 0], dim=1) / 8  # a running sum: needs the recurrence
        loss = torch.nn.functional.mse_loss(model(x), target)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_layer_model_trains_like_the_sequential_reference(dtype: str) -> None:
    dt = getattr(torch, dtype)
    ours = train(scanlab.torch.linear_recurrence, dt, 100)
    reference = train(sequential_recurrence, dt, 100)
    worst = max(abs(p - q) / max(abs(q), 1e-30) for p, q in zip(ours, reference))
    print(f"{dtype}: loss {ours[0]:.4g} -> {ours[-1]:.4g}, largest relative difference {worst:.3g}")
    assert worst <= 1e-5, f"largest relative loss difference over 100 steps: {worst:.3g}"
    assert ours[-1] < 0.9 * ours[0], f"the model did not train: loss {ours[0]:.4g} -> {ours[-1]:.4g}"
