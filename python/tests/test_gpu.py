"""GPU tests: results against NumPy (and PyTorch) on random data of awkward sizes. Skipped
where no GPU (or no PyTorch) is present; the CuPy and JAX tests skip without those."""

from __future__ import annotations

import math

import pytest

import scanlab
from conftest import HAS_GPU

pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU usable (scanlab.runtime_info())")
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
if HAS_GPU and not torch.cuda.is_available():
    pytest.skip("PyTorch sees no GPU", allow_module_level=True)

SIZES = [0, 1, 1000, 1000003]
DTYPES = ["int32", "int64", "uint32", "uint64", "float32", "float64"]
FLOATS = ["float32", "float64"]
EPS = {"float32": np.finfo(np.float32).eps, "float64": np.finfo(np.float64).eps}


def random(n: int, dtype: str, seed: int, *, small: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype in FLOATS:
        x = rng.standard_normal(n).astype(dtype)
        if small:  # products stay finite
            x = (1 + 1e-3 * x).astype(dtype)
        return x
    info = np.iinfo(dtype)
    if small:
        return rng.integers(-3 if info.min < 0 else 0, 4, n).astype(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def cuda(a: np.ndarray) -> "torch.Tensor":
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def host(t) -> np.ndarray:
    return t.cpu().numpy()


def assert_float_close(got, want, x, dtype):
    """Higham's bound for a regrouped sum: n * eps * sum|x| (with a little slack)."""
    n = max(len(x), 1)
    bound = 2 * n * EPS[dtype] * np.sum(np.abs(x.astype(np.float64))) + 1e-30
    assert abs(float(got) - float(want)) <= bound, (got, want, bound)


# ---- reduce ----

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "prod", "min", "max"])
def test_reduce(n, dtype, op):
    if n == 0 and op in ("min", "max"):
        pytest.skip("undefined (a ValueError: test_nogpu)")
    x = random(n, dtype, seed=n + 7, small=(op == "prod"))
    got = scanlab.reduce(cuda(x), op)
    assert isinstance(got, torch.Tensor) and got.shape == () and got.is_cuda
    ref = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}[op]
    want_dtype = np.result_type(np.sum(x[:0])) if op in ("sum", "prod") else x.dtype
    assert str(got.dtype).removeprefix("torch.") == np.dtype(want_dtype).name
    with np.errstate(over="ignore"):
        if dtype in FLOATS:
            want = ref(x.astype(np.float64))
            if op == "prod":
                assert math.isclose(got.item(), want, rel_tol=100 * n * EPS[dtype] + 1e-12)
            elif op == "sum":
                assert_float_close(got.item(), want, x, dtype)
            else:
                assert got.item() == want
        else:
            assert int(host(got)) % 2**64 == int(ref(x.astype(want_dtype))) % 2**64  # wraps like NumPy


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["min", "max"])
def test_reduce_nan_and_signed_zero(dtype, op):
    x = random(100003, dtype, seed=3)
    x[77777] = np.nan
    assert math.isnan(scanlab.reduce(cuda(x), op).item())
    z = np.array([0.0, -0.0, 0.0], dtype=dtype)
    got = scanlab.reduce(cuda(z), op).item()
    assert got == 0.0 and math.copysign(1, got) == (-1 if op == "min" else 1)


def test_reduce_any_rank_and_grad_input():
    x = torch.randn(3, 5, 7, device="cuda", requires_grad=True)
    torch.testing.assert_close(scanlab.reduce(x), x.detach().sum(), rtol=1e-5, atol=1e-5)


# ---- scans ----

def scan_reference(x: np.ndarray, op: str, exclusive: bool, init=None) -> np.ndarray:
    acc = np.result_type(np.cumsum(x[:0])) if op in ("sum", "prod") else x.dtype
    y = x.astype(acc)
    with np.errstate(over="ignore"):
        if op == "sum":
            out = np.cumsum(y, dtype=acc)
        elif op == "prod":
            out = np.cumprod(y, dtype=acc)
        elif op == "min":
            out = np.minimum.accumulate(y) if len(y) else y
        else:
            out = np.maximum.accumulate(y) if len(y) else y
        if exclusive:
            ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[op]
            first = np.array([init], dtype=acc)
            out = np.concatenate([first, ufunc(first, out[:-1]).astype(acc)]) if len(y) else out
    return out


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "prod", "min", "max"])
@pytest.mark.parametrize("kind", ["inclusive", "exclusive"])
def test_scan(n, dtype, op, kind):
    x = random(n, dtype, seed=n + 11, small=(op == "prod"))
    if kind == "inclusive":
        got = host(scanlab.inclusive_scan(cuda(x), op))
        want = scan_reference(x, op, False)
    else:
        init = {"sum": 5, "prod": 1, "min": 3, "max": 2}[op]
        got = host(scanlab.exclusive_scan(cuda(x), op, init=init))
        want = scan_reference(x, op, True, init)
    assert got.dtype == want.dtype and got.shape == (n,)
    if dtype in FLOATS and op in ("sum", "prod"):
        # Higham's bound, loosely: n * eps * (running sum of |x| + |result| + |init|).
        want64 = scan_reference(x.astype(np.float64), op, kind == "exclusive", 5 if op == "sum" else 1)
        scale = np.cumsum(np.abs(x.astype(np.float64))) + np.abs(want64) + 5
        tol = 4 * max(n, 1) * EPS[dtype] * scale
        assert np.all(np.abs(got.astype(np.float64) - want64) <= tol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cumsum_matches_torch_and_nan_running_max(dtype):
    x = cuda(random(1000003, dtype, seed=5))
    got = scanlab.cumsum(x)
    torch.testing.assert_close(got.double(), torch.cumsum(x.double(), 0), rtol=1e-4, atol=1e-2)
    y = x.clone()
    y[500000] = float("nan")
    run = host(scanlab.inclusive_scan(y, "max"))
    assert not np.isnan(run[:500000]).any() and np.isnan(run[500000:]).all()


def test_exclusive_scan_default_identity():
    x = cuda(np.array([3, -1, 4], dtype=np.int32))
    assert host(scanlab.exclusive_scan(x)).tolist() == [0, 3, 2]
    assert host(scanlab.exclusive_scan(x, "min")).tolist() == [2**31 - 1, 3, -1]
    f = cuda(np.array([3.0, 1.0], dtype=np.float32))
    assert host(scanlab.exclusive_scan(f, "max")).tolist() == [-math.inf, 3.0]


# ---- sorting ----

def assert_stable_order(keys: np.ndarray, perm: np.ndarray, descending: bool) -> None:
    """perm is a permutation; keys[perm] is ordered (NaNs last); equal keys keep input order."""
    n = len(keys)
    assert np.array_equal(np.sort(perm), np.arange(n))
    k = keys[perm]
    if n < 2:
        return
    if keys.dtype.kind == "f":
        nan = np.isnan(k)
        assert not (nan[:-1] & ~nan[1:]).any(), "NaNs must come last"
        k, p = k[~nan], perm[~nan]
        assert np.all(np.diff(perm[nan]) > 0) if nan.sum() > 1 else True
    else:
        p = perm
    a, b = k[:-1], k[1:]
    assert np.all(a >= b) if descending else np.all(a <= b)
    equal = a == b
    assert np.all(p[:-1][equal] < p[1:][equal]), "not stable"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort_pairs(n, dtype, descending):
    x = random(n, dtype, seed=n + 13)
    if dtype in FLOATS and n > 10:
        x[::97] = np.nan
        x[5::101] = 0.0
        x[6::103] = -0.0
    elif n > 10:
        x[::7] = x[0]  # duplicates: stability is visible
    t = cuda(x)
    perm = host(scanlab.argsort(t, descending=descending))
    assert perm.dtype == np.int64
    assert_stable_order(x, perm, descending)
    keys = host(scanlab.sort(t, descending=descending))
    np.testing.assert_array_equal(keys.view(f"u{x.itemsize}"), x[perm].view(f"u{x.itemsize}"))  # bits, NaNs too
    values = np.arange(n, dtype=np.int64)[::-1].copy()
    k2, v2 = scanlab.sort_pairs(t, cuda(values), descending=descending)
    np.testing.assert_array_equal(host(v2), values[perm])
    np.testing.assert_array_equal(host(k2).view(f"u{x.itemsize}"), keys.view(f"u{x.itemsize}"))


@pytest.mark.parametrize("n", [0, 1, 1000, 1000003])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_return_indices_is_a_stable_torch_sort(n, dtype, descending):
    x = random(n, dtype, seed=n + 17, small=True)  # many equal keys: stability shows
    t = cuda(x)
    keys, idx = scanlab.sort(t, descending=descending, return_indices=True)
    assert idx.dtype == torch.int64
    order = np.argsort(-x.astype(np.float64) if descending else x, kind="stable")
    np.testing.assert_array_equal(host(idx), order)
    np.testing.assert_array_equal(host(keys), x[order])
    np.testing.assert_array_equal(host(scanlab.argsort(t, descending=descending)), order)


def test_sort_pairs_float_values_and_bit_range():
    x = random(100003, "uint32", seed=1)
    vals = random(100003, "float32", seed=2)
    k, v = scanlab.sort_pairs(cuda(x), cuda(vals), end_bit=16)
    perm = np.argsort(x & 0xFFFF, kind="stable")
    np.testing.assert_array_equal(host(k), x[perm])
    np.testing.assert_array_equal(host(v), vals[perm])


# ---- linear recurrences ----

def linrec_reference(a: np.ndarray, b: np.ndarray, x0, reverse: bool) -> np.ndarray:
    a2, b2 = np.atleast_2d(a).astype(np.float64), np.atleast_2d(b).astype(np.float64)
    x = np.empty_like(a2)
    state = np.broadcast_to(np.asarray(x0, dtype=np.float64), (a2.shape[0],)).copy()
    steps = range(a2.shape[1] - 1, -1, -1) if reverse else range(a2.shape[1])
    for i in steps:
        state = a2[:, i] * state + b2[:, i]
        x[:, i] = state
    return x.reshape(a.shape)


@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (100003,), (4, 1000), (3, 0), (0, 5)])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence(shape, dtype, reverse):
    rng = np.random.default_rng(sum(shape) + 3)
    a = rng.uniform(0.5, 0.99, shape).astype(dtype)
    b = rng.standard_normal(shape).astype(dtype)
    batch = 1 if len(shape) == 1 else shape[0]
    for x0 in (None, 0.25, "array"):
        if x0 == "array":
            x0_np = rng.standard_normal(() if len(shape) == 1 else (batch,)).astype(dtype)
            x0_arg, x0_ref = cuda(np.asarray(x0_np)), x0_np
        else:
            x0_arg, x0_ref = x0, (0.0 if x0 is None else x0)
        got = host(scanlab.linear_recurrence(cuda(a), cuda(b), x0_arg, reverse=reverse))
        want = linrec_reference(a, b, x0_ref, reverse)
        tol = 1e-4 if dtype == "float32" else 1e-11
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 100)


def test_linear_recurrence_reset_on_zero():
    a = cuda(np.array([0.5, 0.0, 0.5], dtype=np.float32))
    b = cuda(np.array([np.inf, 1.0, 1.0], dtype=np.float32))
    assert host(scanlab.linear_recurrence(a, b)).tolist() == [np.inf, 1.0, 1.5]


@pytest.mark.parametrize("batch,length", [(1, 1), (1, 50), (3, 17)])
def test_linear_recurrence_autograd_gradcheck(batch, length):
    import scanlab.torch as st
    torch.manual_seed(0)
    shape = (length,) if batch == 1 else (batch, length)
    a = (0.5 + 0.4 * torch.rand(shape, dtype=torch.float64, device="cuda")).requires_grad_()
    b = torch.randn(shape, dtype=torch.float64, device="cuda", requires_grad=True)
    x0 = torch.randn(() if batch == 1 else (batch,), dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(st.LinearRecurrence.apply, (a, b, x0))
    assert torch.autograd.gradcheck(lambda a, b: st.linear_recurrence(a, b, 0.5), (a, b))


def test_linear_recurrence_autograd_matches_sequential_torch():
    import scanlab.torch as st
    torch.manual_seed(1)
    a = (0.9 + 0.09 * torch.rand(4, 3000, device="cuda")).requires_grad_()
    b = torch.randn(4, 3000, device="cuda", requires_grad=True)
    x0 = torch.randn(4, device="cuda", requires_grad=True)
    (st.linear_recurrence(a, b, x0) ** 2).mean().backward()
    grads = [t.grad.clone() for t in (a, b, x0)]
    ad, bd, xd = (t.detach().double().requires_grad_() for t in (a, b, x0))
    state, xs = xd, []
    for i in range(ad.shape[1]):
        state = ad[:, i] * state + bd[:, i]
        xs.append(state)
    (torch.stack(xs, 1) ** 2).mean().backward()
    for got, want in zip(grads, (ad.grad, bd.grad, xd.grad)):
        torch.testing.assert_close(got.double(), want, rtol=1e-3, atol=1e-6)


# ---- recurrences on every layout, variable lengths, final states, the backward pass ----

def sequence_positions(shape, layout, offsets):
    """Each sequence's flat positions in step order, in the sequences' order (the order of
    the final states and x0)."""
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    if offsets is not None:
        return [idx[offsets[s]:offsets[s + 1]] for s in range(len(offsets) - 1)]
    if layout == "bt":
        return [idx] if len(shape) == 1 else list(idx)
    if layout == "tb":
        return [idx[:, k] for k in range(shape[1])]
    return [idx[i, :, c] for i in range(shape[0]) for c in range(shape[2])]


def linrec_positions_reference(a, b, x0s, positions, reverse):
    af, bf = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    x, final = np.zeros_like(af), np.zeros(len(positions))
    for s, pos in enumerate(positions):
        state = x0s[s]
        for p in (pos[::-1] if reverse else pos):
            state = af[p] * state + bf[p]
            x[p] = state
        final[s] = state
    return x.reshape(a.shape), final


def linrec_backward_reference(a, x, gx, x0s, positions):
    af, xf, gf = (t.astype(np.float64).ravel() for t in (a, x, gx))
    ga, gb, g0 = np.zeros_like(af), np.zeros_like(af), np.zeros(len(positions))
    for s, pos in enumerate(positions):
        g = 0.0
        for i in range(len(pos) - 1, -1, -1):
            g = gf[pos[i]] + (af[pos[i + 1]] * g if i + 1 < len(pos) else 0.0)
            gb[pos[i]] = g
            ga[pos[i]] = g * (xf[pos[i - 1]] if i > 0 else x0s[s])
        g0[s] = af[pos[0]] * gb[pos[0]] if len(pos) else 0.0
    return ga.reshape(a.shape), gb.reshape(a.shape), g0


def _offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


RECURRENCE_CASES = [  # (shape, layout, offsets)
    ((3, 257), "bt", None),
    ((300, 5), "tb", None),
    ((1, 7), "tb", None),
    ((2, 129, 3), "btc", None),
    ((3, 1, 33), "btc", None),
    ((2, 0, 4), "btc", None),
    ((1308,), "bt", _offsets([0, 1, 5, 0, 300, 2, 1000, 0])),
    ((0,), "bt", _offsets([0, 0])),
    (None, "bt", "many short"),  # 3000 sequences of 0..9 elements
]


def _recurrence_case(case, dtype, seed):
    shape, layout, offsets = case
    rng = np.random.default_rng(seed)
    if isinstance(offsets, str):
        offsets = _offsets(rng.integers(0, 10, 3000))
        shape = (int(offsets[-1]),)
    a = rng.uniform(0.5, 0.99, shape).astype(dtype)
    b = rng.standard_normal(shape).astype(dtype)
    positions = sequence_positions(shape, layout, offsets)
    states = ((len(offsets) - 1,) if offsets is not None else () if len(shape) == 1 else
              (shape[0], shape[2]) if layout == "btc" else (shape[1],) if layout == "tb" else (shape[0],))
    return a, b, layout, offsets, positions, states, rng


@pytest.mark.parametrize("case", range(len(RECURRENCE_CASES)))
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_layouts_offsets_and_final_states(case, dtype, reverse):
    a, b, layout, offsets, positions, states, rng = _recurrence_case(RECURRENCE_CASES[case], dtype, case)
    off = None if offsets is None else cuda(offsets)
    tol = 1e-4 if dtype == "float32" else 1e-11
    for x0 in (None, 0.25, "array"):
        if x0 == "array":
            x0_np = rng.standard_normal(states).astype(dtype)
            x0_arg, x0_ref = cuda(np.asarray(x0_np)), np.asarray(x0_np, np.float64).ravel()
        else:
            x0_arg, x0_ref = x0, np.full(len(positions), 0.0 if x0 is None else x0)
        x, final = scanlab.linear_recurrence(cuda(a), cuda(b), x0_arg, reverse=reverse, layout=layout, offsets=off,
                                             return_final=True)
        want_x, want_final = linrec_positions_reference(a, b, x0_ref, positions, reverse)
        assert tuple(final.shape) == states
        np.testing.assert_allclose(host(x), want_x, rtol=tol, atol=tol * 100)
        np.testing.assert_allclose(host(final).ravel(), want_final, rtol=tol, atol=tol * 100)
        # Without final states: the same x.
        np.testing.assert_array_equal(
            host(scanlab.linear_recurrence(cuda(a), cuda(b), x0_arg, reverse=reverse, layout=layout, offsets=off)),
            host(x))


@pytest.mark.parametrize("case", range(len(RECURRENCE_CASES)))
@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_recurrence_backward_layouts_and_offsets(case, dtype):
    a, b, layout, offsets, positions, states, rng = _recurrence_case(RECURRENCE_CASES[case], dtype, 50 + case)
    off = None if offsets is None else cuda(offsets)
    x0_np = rng.standard_normal(states).astype(dtype)
    gx = rng.standard_normal(a.shape).astype(dtype)
    x = scanlab.linear_recurrence(cuda(a), cuda(b), cuda(np.asarray(x0_np)), layout=layout, offsets=off)
    ga, gb, g0 = scanlab.linear_recurrence_backward(cuda(a), x, cuda(gx), cuda(np.asarray(x0_np)), layout=layout,
                                                    offsets=off)
    want_a, want_b, want_0 = linrec_backward_reference(a, host(x), gx, np.asarray(x0_np, np.float64).ravel(),
                                                       positions)
    tol = 1e-4 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(host(gb), want_b, rtol=tol, atol=tol * 100)
    np.testing.assert_allclose(host(ga), want_a, rtol=tol, atol=tol * 100)
    assert tuple(g0.shape) == states
    np.testing.assert_allclose(host(g0).ravel(), want_0, rtol=tol, atol=tol * 100)


@pytest.mark.parametrize("layout,shape,offsets", [
    ("tb", (9, 3), None), ("btc", (2, 6, 3), None), ("bt", (11,), [0, 3, 3, 7, 11]),
])
def test_linear_recurrence_autograd_layouts_gradcheck(layout, shape, offsets):
    import scanlab.torch as st
    torch.manual_seed(2)
    a = (0.5 + 0.4 * torch.rand(shape, dtype=torch.float64, device="cuda")).requires_grad_()
    b = torch.randn(shape, dtype=torch.float64, device="cuda", requires_grad=True)
    off = None if offsets is None else torch.tensor(offsets, dtype=torch.int64, device="cuda")
    states = ((len(offsets) - 1,) if offsets is not None else (shape[1],) if layout == "tb" else (shape[0], shape[2]))
    x0 = torch.randn(states, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b, x0: st.linear_recurrence(a, b, x0, layout=layout, offsets=off),
                                    (a, b, x0))


@pytest.mark.parametrize("layout,shape,offsets", [
    ("bt", (7,), None), ("bt", (3, 5), None), ("tb", (9, 3), None), ("btc", (2, 6, 3), None),
    ("bt", (3, 0), None), ("bt", (11,), [0, 3, 3, 7, 11, 11]), ("bt", (0,), [0, 0, 0]),
])
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_autograd_final_states_gradcheck(layout, shape, offsets, reverse):
    """Final states under autograd: their gradient reaches a, b and x0 (x0 alone for an empty
    sequence), with x's and without it; both directions (reverse: the composed backward)."""
    import scanlab.torch as st
    torch.manual_seed(4)
    a = (0.5 + 0.4 * torch.rand(shape, dtype=torch.float64, device="cuda")).requires_grad_()
    b = torch.randn(shape, dtype=torch.float64, device="cuda", requires_grad=True)
    off = None if offsets is None else torch.tensor(offsets, dtype=torch.int64, device="cuda")
    states = ((len(offsets) - 1,) if offsets is not None else () if len(shape) == 1 else
              (shape[1],) if layout == "tb" else (shape[0], shape[2]) if layout == "btc" else (shape[0],))
    x0 = torch.randn(states, dtype=torch.float64, device="cuda", requires_grad=True)

    def both(a, b, x0):
        return st.linear_recurrence(a, b, x0, layout=layout, offsets=off, return_final=True, reverse=reverse)

    x, final = both(a, b, x0)
    assert tuple(final.shape) == states
    assert torch.autograd.gradcheck(both, (a, b, x0))
    assert torch.autograd.gradcheck(lambda a, b, x0: both(a, b, x0)[1], (a, b, x0))
    assert torch.autograd.gradcheck(lambda a, b, x0: both(a, b, x0)[0], (a, b, x0))
    # The final states are x's last steps (reverse: first; x0 for empty sequences).
    if offsets is None and len(shape) > 1 and shape[1 if layout != "tb" else 0] > 0:
        last = x.select(0 if layout == "tb" else 1, 0 if reverse else -1)
        torch.testing.assert_close(final, last, rtol=0, atol=0)


def test_linear_recurrence_autograd_reverse_matches_sequential_torch():
    """The reverse direction's gradients (float32, a reset inside) against float64 autograd of a
    sequential loop from the end."""
    import scanlab.torch as st
    torch.manual_seed(5)
    a = (0.9 + 0.09 * torch.rand(4, 3000, device="cuda"))
    a[1, 1234] = 0.0  # a reset
    a.requires_grad_()
    b = torch.randn(4, 3000, device="cuda", requires_grad=True)
    x0 = torch.randn(4, device="cuda", requires_grad=True)
    (st.linear_recurrence(a, b, x0, reverse=True) ** 2).mean().backward()
    grads = [t.grad.clone() for t in (a, b, x0)]
    ad, bd, xd = (t.detach().double().requires_grad_() for t in (a, b, x0))
    state, xs = xd, []
    for i in range(ad.shape[1] - 1, -1, -1):
        state = ad[:, i] * state + bd[:, i]
        xs.append(state)
    (torch.stack(xs[::-1], 1) ** 2).mean().backward()
    for got, want in zip(grads, (ad.grad, bd.grad, xd.grad)):
        torch.testing.assert_close(got.double(), want, rtol=1e-3, atol=1e-6)


# ---- 16-bit storage: float16 and bfloat16, computed in float32 ----

HALVES = ["float16", "bfloat16"]
# A 16-bit result is the float32 solve rounded once: half an ulp relative (2^-11, 2^-8), with
# twice that as slack for the float32 solve's own error.
HALF_RTOL = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


def to_half(t: np.ndarray, dtype: str) -> "torch.Tensor":
    """``t`` rounded to the 16-bit ``dtype``, on the GPU."""
    return cuda(np.asarray(t, np.float32)).to(getattr(torch, dtype))


def f64(t) -> np.ndarray:
    """A tensor of any float dtype as float64 on the host (exact for the 16-bit types)."""
    return t.float().cpu().numpy().astype(np.float64)


def assert_half_close(got, want, dtype, roundings=1):
    """``got`` (16-bit) within ``roundings`` 16-bit roundings (and slack) of ``want``."""
    assert str(got.dtype) == f"torch.{dtype}"
    want = np.asarray(want, np.float64)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(f64(got), want, rtol=roundings * HALF_RTOL[dtype], atol=1e-3 * scale)


@pytest.mark.parametrize("case", range(len(RECURRENCE_CASES)))
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_16_bit_storage(case, dtype, reverse):
    a, b, layout, offsets, positions, states, rng = _recurrence_case(RECURRENCE_CASES[case], "float32", 100 + case)
    ah, bh = to_half(a, dtype), to_half(b, dtype)
    x0h = to_half(rng.standard_normal(states), dtype)
    off = None if offsets is None else cuda(offsets)
    x, final = scanlab.linear_recurrence(ah, bh, x0h, reverse=reverse, layout=layout, offsets=off, return_final=True)
    # The reference solves the stored (rounded) inputs in float64.
    want_x, want_final = linrec_positions_reference(f64(ah), f64(bh), f64(x0h).ravel(), positions, reverse)
    assert tuple(final.shape) == states
    assert_half_close(x, want_x, dtype)
    assert_half_close(final.reshape(-1), want_final, dtype)
    # A number x0 is rounded to the dtype first (0.1 is not a 16-bit number).
    x_number = scanlab.linear_recurrence(ah, bh, 0.1, reverse=reverse, layout=layout, offsets=off)
    x0_rounded = float(torch.tensor(0.1, dtype=getattr(torch, dtype)))
    want_number, _ = linrec_positions_reference(f64(ah), f64(bh), np.full(len(positions), x0_rounded), positions,
                                                reverse)
    assert_half_close(x_number, want_number, dtype)


@pytest.mark.parametrize("case", range(len(RECURRENCE_CASES)))
@pytest.mark.parametrize("dtype", HALVES)
def test_linear_recurrence_backward_16_bit_storage(case, dtype):
    a, b, layout, offsets, positions, states, rng = _recurrence_case(RECURRENCE_CASES[case], "float32", 150 + case)
    ah, bh = to_half(a, dtype), to_half(b, dtype)
    x0h = to_half(rng.standard_normal(states), dtype)
    gxh = to_half(rng.standard_normal(a.shape), dtype)
    off = None if offsets is None else cuda(offsets)
    x = scanlab.linear_recurrence(ah, bh, x0h, layout=layout, offsets=off)
    ga, gb, g0 = scanlab.linear_recurrence_backward(ah, x, gxh, x0h, layout=layout, offsets=off)
    want_a, want_b, want_0 = linrec_backward_reference(f64(ah), f64(x), f64(gxh), f64(x0h).ravel(), positions)
    assert_half_close(gb, want_b, dtype)
    assert_half_close(ga, want_a, dtype, roundings=2)  # g x[i-1]: x as stored, then the product
    assert tuple(g0.shape) == states
    assert_half_close(g0.reshape(-1), want_0, dtype, roundings=2)


@pytest.mark.parametrize("dtype", HALVES)
def test_linear_recurrence_autograd_16_bit_storage(dtype):
    """Gradients through scanlab.torch in 16 bits against float64 autograd of a sequential loop
    on the same (rounded) inputs and the same (rounded) dL/dx."""
    import scanlab.torch as st
    torch.manual_seed(3)
    half = getattr(torch, dtype)
    a = (0.9 + 0.09 * torch.rand(4, 3000, device="cuda")).to(half).requires_grad_()
    b = torch.randn(4, 3000, device="cuda").to(half).requires_grad_()
    x0 = torch.randn(4, device="cuda").to(half).requires_grad_()
    w = torch.randn(4, 3000, device="cuda").to(half)
    x = st.linear_recurrence(a, b, x0)
    assert x.dtype == half
    (x.float() * w.float()).sum().backward()
    ad, bd, xd = (t.detach().double().requires_grad_() for t in (a, b, x0))
    state, xs = xd, []
    for i in range(ad.shape[1]):
        state = ad[:, i] * state + bd[:, i]
        xs.append(state)
    (torch.stack(xs, 1) * w.double()).sum().backward()
    for got, want in zip((a.grad, b.grad, x0.grad), (ad.grad, bd.grad, xd.grad)):
        assert got.dtype == half
        # dL/da = g x[i-1] takes x as stored (rounded), then rounds the product.
        assert_half_close(got, want.cpu().numpy(), dtype, roundings=2)


def test_linear_recurrence_bfloat16_jax_in_jax_out():
    jax, gpu = jax_gpu()
    import jax.numpy as jnp
    rng = np.random.default_rng(5)
    a32 = rng.uniform(0.5, 0.99, (3, 1001)).astype(np.float32)
    b32 = rng.standard_normal((3, 1001)).astype(np.float32)
    a = jax.device_put(jnp.asarray(a32, jnp.bfloat16), gpu)
    b = jax.device_put(jnp.asarray(b32, jnp.bfloat16), gpu)
    x = scanlab.linear_recurrence(a, b)
    assert isinstance(x, jax.Array) and x.dtype == jnp.bfloat16 and x.shape == (3, 1001)
    want = linrec_reference(np.asarray(a, np.float64), np.asarray(b, np.float64), 0.0, False)
    got = np.asarray(x.astype(jnp.float32), np.float64)
    np.testing.assert_allclose(got, want, rtol=HALF_RTOL["bfloat16"], atol=1e-3 * max(1.0, np.abs(want).max()))


def test_offset_views_are_not_16_byte_aligned():
    base = cuda(random(100010, "float32", seed=21))
    for k in (1, 2, 3):
        x = base[k:]
        torch.testing.assert_close(scanlab.cumsum(x), torch.cumsum(x, 0), rtol=1e-3, atol=1e-1)
        torch.testing.assert_close(scanlab.sort(x), torch.sort(x).values)
        torch.testing.assert_close(scanlab.reduce(x, "max"), x.max())
    a = 0.5 + 0.4 * torch.rand_like(base)
    for k in (1, 3):
        got = host(scanlab.linear_recurrence(a[k:], base[k:]))
        want = linrec_reference(host(a[k:]), host(base[k:]), 0.0, False)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


# ---- streams, frameworks, errors on the GPU ----

def test_explicit_stream():
    x = cuda(random(1000003, "float32", seed=9))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    got = scanlab.cumsum(x, stream=s)
    s.synchronize()
    torch.testing.assert_close(got, torch.cumsum(x, 0), rtol=1e-3, atol=1e-1)
    with torch.cuda.stream(s):
        got2 = scanlab.sort(x)  # the framework's current stream: s
    s.synchronize()
    torch.testing.assert_close(got2, torch.sort(x).values)


def test_small_calls_share_a_workspace_per_stream():
    # Small temporary storage comes from one workspace per (device, stream), reused: many
    # calls in a row on two streams (queued, not synchronised between), each result right.
    xs = [cuda(random(n, "float32", seed=n)) for n in (1, 1000, 4097, 65536)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    outs = []
    for rep in range(20):
        x = xs[rep % len(xs)]
        outs.append((x, scanlab.cumsum(x)))
        with torch.cuda.stream(s):
            outs.append((x, scanlab.cumsum(x)))
    torch.cuda.current_stream().wait_stream(s)
    for x, got in outs:
        torch.testing.assert_close(got, torch.cumsum(x, 0), rtol=1e-3, atol=1e-2)


def test_cuda_graph_capture_of_a_small_call():
    # While a stream is captured the workspace is not used (the graph would keep its
    # address): replays give the scan of the captured input's current values.
    x = cuda(random(1000, "float32", seed=12))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        scanlab.cumsum(x)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = scanlab.cumsum(x)
    for seed in (13, 14):
        x.copy_(cuda(random(1000, "float32", seed=seed)))
        other = scanlab.cumsum(cuda(random(1000, "float32", seed=99)))  # the eager workspace in use
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, torch.cumsum(x, 0), rtol=1e-3, atol=1e-2)
        torch.testing.assert_close(other, torch.cumsum(cuda(random(1000, "float32", seed=99)), 0), rtol=1e-3,
                                   atol=1e-2)


def test_cuda_array_interface_fallback_returns_device_array():
    x = cuda(random(1000, "int32", seed=4))

    class OnlyCAI:
        __cuda_array_interface__ = x.__cuda_array_interface__

    got = scanlab.cumsum(OnlyCAI())
    assert isinstance(got, scanlab.DeviceArray) and got.dtype == "int64" and got.shape == (1000,)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(host(torch.from_dlpack(got)), np.cumsum(host(x), dtype=np.int64))
    # torch reads the result through its __cuda_array_interface__ too: the last sum is the total
    assert torch.as_tensor(got, device="cuda")[-1].item() == int(np.sum(host(x), dtype=np.int64))


def test_dlpack_path_of_a_torch_tensor_returns_device_array():
    """Tensors are normally read from their attributes; through __dlpack__ (versioned capsule,
    the consumer's stream) they must give the same results."""
    x = cuda(random(100003, "float64", seed=6))

    class OnlyDLPack:
        def __dlpack__(self, **kwargs):
            return x.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    got = scanlab.sort(OnlyDLPack())
    assert isinstance(got, scanlab.DeviceArray) and got.dtype == "float64"
    torch.testing.assert_close(torch.from_dlpack(got), torch.sort(x).values)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = torch.from_dlpack(scanlab.cumsum(OnlyDLPack()))  # waits for the result on s
        torch.testing.assert_close(y, torch.cumsum(x, 0))


def test_mixed_frameworks_follow_the_first():
    cupy = pytest.importorskip("cupy")
    keys = cupy.asarray(random(1000, "int32", seed=3))
    values = torch.arange(1000, device="cuda", dtype=torch.int64)
    k, v = scanlab.sort_pairs(keys, values)
    assert isinstance(k, cupy.ndarray) and isinstance(v, cupy.ndarray)
    perm = np.argsort(cupy.asnumpy(keys), kind="stable")
    np.testing.assert_array_equal(cupy.asnumpy(v), perm)


def test_gpu_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"x is a CPU array"):
        scanlab.cumsum(torch.arange(5.0))
    with pytest.raises(ValueError, match=r"x is not contiguous"):
        scanlab.cumsum(torch.arange(10.0, device="cuda")[::2])
    with pytest.raises(TypeError, match=r"x has dtype float16"):
        scanlab.sort(torch.zeros(4, dtype=torch.float16, device="cuda"))
    with pytest.raises(TypeError, match=r"x has dtype bfloat16"):
        scanlab.reduce(torch.zeros(4, dtype=torch.bfloat16, device="cuda"))


@pytest.mark.skipif(not HAS_GPU or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_arrays_on_two_gpus_are_refused():
    with pytest.raises(ValueError, match=r"values is on CUDA device 1 but keys is on CUDA device 0"):
        scanlab.sort_pairs(torch.zeros(4, device="cuda:0"), torch.zeros(4, device="cuda:1"))


@pytest.mark.skipif(not HAS_GPU or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_second_gpu():
    x = torch.randn(100003, device="cuda:1")
    got = scanlab.cumsum(x)
    assert got.device == x.device
    torch.testing.assert_close(got, torch.cumsum(x, 0), rtol=1e-3, atol=1e-1)


def test_cupy_in_cupy_out():
    cupy = pytest.importorskip("cupy")
    x = cupy.asarray(random(1000003, "float64", seed=8))
    got = scanlab.cumsum(x)
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(got), np.cumsum(cupy.asnumpy(x)), rtol=1e-9, atol=1e-6)
    keys = cupy.asarray(random(1000, "int32", seed=2))
    np.testing.assert_array_equal(cupy.asnumpy(scanlab.sort(keys)), np.sort(cupy.asnumpy(keys)))
    assert scanlab.reduce(keys, "max").item() == int(cupy.asnumpy(keys).max())


def jax_gpu():
    """(jax, its first GPU device), or a skip."""
    jax = pytest.importorskip("jax")
    try:
        return jax, jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX sees no GPU")


def test_jax_in_jax_out():
    jax, gpu = jax_gpu()
    x_np = random(1000003, "float32", seed=12)
    x = jax.device_put(x_np, gpu)
    got = scanlab.cumsum(x)
    assert isinstance(got, jax.Array)
    np.testing.assert_allclose(np.asarray(got), np.cumsum(x_np.astype(np.float64)), rtol=1e-3, atol=1e-1)
    np.testing.assert_array_equal(np.asarray(scanlab.sort(x)), np.sort(x_np))
    assert float(scanlab.reduce(x, "min")) == x_np.min()


# ---- scanlab.jax: the recurrence as an XLA custom call ----

def jax_ffi():
    """(jax, its first GPU, scanlab.jax), or a skip."""
    jax, gpu = jax_gpu()
    if not scanlab.build_info().get("xla_ffi"):
        pytest.skip("the extension was built without jaxlib's headers (no scanlab.jax)")
    import scanlab.jax as sj
    return jax, gpu, sj


@pytest.mark.parametrize("case", range(6))  # the layouts (offsets need int64: jax_enable_x64)
@pytest.mark.parametrize("reverse", [False, True])
def test_jax_ffi_linear_recurrence(case, reverse):
    """Under jax.jit, against a float64 loop, and bit for bit against the DLPack path (the same
    kernel on the same data)."""
    jax, gpu, sj = jax_ffi()
    a, b, layout, _, positions, states, rng = _recurrence_case(RECURRENCE_CASES[case], "float32", 200 + case)
    x0 = np.asarray(rng.standard_normal(states), np.float32)
    aj, bj, x0j = (jax.device_put(t, gpu) for t in (a, b, x0))
    f = jax.jit(lambda a, b, x0: sj.linear_recurrence(a, b, x0, reverse=reverse, layout=layout, return_final=True))
    x, final = f(aj, bj, x0j)
    assert x.shape == a.shape and final.shape == states
    want_x, want_final = linrec_positions_reference(a, b, x0.astype(np.float64).ravel(), positions, reverse)
    np.testing.assert_allclose(np.asarray(x), want_x, rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(np.asarray(final).ravel(), want_final, rtol=1e-4, atol=1e-2)
    x_dlpack = scanlab.linear_recurrence(cuda(a), cuda(b), cuda(x0), reverse=reverse, layout=layout)
    np.testing.assert_array_equal(np.asarray(x), host(x_dlpack))
    # Outside jit, a number x0, x alone.
    x_number = sj.linear_recurrence(aj, bj, 0.25, reverse=reverse, layout=layout)
    want_number, _ = linrec_positions_reference(a, b, np.full(len(positions), 0.25), positions, reverse)
    np.testing.assert_allclose(np.asarray(x_number), want_number, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("case", [0, 1, 3, 4, 5])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("reverse", [False, True])
def test_jax_ffi_linear_recurrence_gradients(case, dtype, reverse):
    """jax.grad through x and the final states (forward: the fused backward pass; reverse: its
    composition) against a float64 adjoint on the stored inputs (reverse: the forward adjoint
    along each sequence's positions in reverse order)."""
    jax, gpu, sj = jax_ffi()
    import jax.numpy as jnp
    a, b, layout, _, positions, states, rng = _recurrence_case(RECURRENCE_CASES[case], "float32", 300 + case)
    jd = jnp.bfloat16 if dtype == "bfloat16" else jnp.float32
    put = lambda t: jax.device_put(jnp.asarray(np.asarray(t, np.float32), jd), gpu)
    aj, bj, x0j = put(a), put(b), put(rng.standard_normal(states))
    wj, vj = put(rng.standard_normal(a.shape)), put(rng.standard_normal(states))

    def loss(a, b, x0):
        x, final = sj.linear_recurrence(a, b, x0, reverse=reverse, layout=layout, return_final=True)
        f32 = jnp.float32
        return (x.astype(f32) * wj.astype(f32)).sum() + (final.astype(f32) * vj.astype(f32)).sum()

    got = jax.jit(jax.grad(loss, (0, 1, 2)))(aj, bj, x0j)
    f64 = lambda t: np.asarray(t.astype(jnp.float32), np.float64)
    af, bf, x0f, w, v = f64(aj), f64(bj), f64(x0j).ravel(), f64(wj), f64(vj).ravel()
    if reverse:
        positions = [pos[::-1] for pos in positions]
    x_ref, _ = linrec_positions_reference(af, bf, x0f, positions, False)
    gx = w.copy().ravel()
    for s, pos in enumerate(positions):
        if len(pos):
            gx[pos[-1]] += v[s]
    want_a, want_b, want_0 = linrec_backward_reference(af, x_ref, gx.reshape(a.shape), x0f, positions)
    want_0 = want_0 + np.array([0.0 if len(pos) else v[s] for s, pos in enumerate(positions)])
    rtol = 1e-4 if dtype == "float32" else 2 * HALF_RTOL["bfloat16"]
    for g, want in zip(got, (want_a, want_b, want_0.reshape(states))):
        assert g.dtype == jd
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        np.testing.assert_allclose(f64(g), want, rtol=rtol, atol=1e-3 * scale)


# ---- select (stream compaction) ----

def select_data(n: int, dtype: str, seed: int) -> np.ndarray:
    x = random(n, dtype, seed=seed)
    if dtype in FLOATS and n > 10:
        x[::37] = np.nan
        x[3::41] = -0.0
        x[4::43] = 0.0
    return x


def select_cases(dtype: str):
    """(kwargs, numpy test) pairs: each bound form, and intersections."""
    if dtype in FLOATS:
        return [(dict(gt=0.0), lambda x: x > 0), (dict(lt=0.5), lambda x: x < 0.5),
                (dict(between=(-1.0, 0.0)), lambda x: (x >= -1) & (x <= 0)),
                (dict(between=(-1.0, 1.0), lt=1.0), lambda x: (x >= -1) & (x < 1)),
                (dict(gt=3.0), lambda x: x > 3)]  # few kept: the copy path
    low, high = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    mid = low // 2 + high // 2
    top = high - (high - low) // 8  # about an eighth kept: the copy path
    return [(dict(gt=mid), lambda x: x > mid), (dict(lt=mid + 0.5), lambda x: x < mid + 0.5),
            (dict(between=(mid, high)), lambda x: x >= mid),
            (dict(gt=top, lt=2**80), lambda x: x > top)]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_select_by_value(n, dtype):
    x = select_data(n, dtype, seed=n + 31)
    t = cuda(x)
    for kw, keep in select_cases(dtype):
        with np.errstate(invalid="ignore"):
            want = np.flatnonzero(keep(x.astype(np.float64) if dtype in FLOATS else x.astype(object)).astype(bool))
        got = scanlab.select(t, **kw)
        assert isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == t.dtype and got.dim() == 1
        np.testing.assert_array_equal(host(got).view(f"u{x.itemsize}"), x[want].view(f"u{x.itemsize}"), err_msg=str(kw))
        values, idx = scanlab.select(t, **kw, return_indices=True)
        np.testing.assert_array_equal(host(idx), want)
        np.testing.assert_array_equal(host(values).view(f"u{x.itemsize}"), x[want].view(f"u{x.itemsize}"))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_select_by_mask_matches_masked_select(n, dtype):
    x = select_data(n, dtype, seed=n + 41)
    rng = np.random.default_rng(n)
    for density in (0.9, 0.1):
        mask = rng.random(n) < density
        t, m = cuda(x), cuda(mask)
        want = x[mask].view(f"u{x.itemsize}")
        got = scanlab.select(t, m)
        np.testing.assert_array_equal(host(got).view(f"u{x.itemsize}"), want)
        if dtype in ("int32", "int64", "float32", "float64"):
            np.testing.assert_array_equal(host(got).view(f"u{x.itemsize}"),
                                          host(torch.masked_select(t, m)).view(f"u{x.itemsize}"))
        values, idx = scanlab.select(t, cuda(mask.astype(np.uint8) * 7), return_indices=True)  # nonzero keeps
        np.testing.assert_array_equal(host(idx), np.flatnonzero(mask))
        np.testing.assert_array_equal(host(values).view(f"u{x.itemsize}"), want)


def test_select_any_rank_and_result_memory():
    x = torch.randn(30, 1001, device="cuda")
    got = scanlab.select(x, x > 0)
    torch.testing.assert_close(got, x[x > 0])
    few = scanlab.select(x, gt=2.5)  # under half kept: an array of its own
    assert few.untyped_storage().nbytes() == few.numel() * 4
    torch.testing.assert_close(few, x[x > 2.5])
    many = scanlab.select(x, gt=-2.5)  # most kept: a view of the n-element output
    assert many.untyped_storage().nbytes() == x.numel() * 4
    torch.testing.assert_close(many, x[x > -2.5])


def test_select_float32_bounds_round_like_torch():
    x = torch.tensor([0.1, 0.2, 0.30000001, 0.3, 1e-45, -0.0, 0.0, float("inf"), float("nan")], device="cuda")
    for kw, want in [(dict(gt=0.1), x > 0.1), (dict(lt=0.3), x < 0.3), (dict(between=(0.1, 0.3)), (x >= 0.1) & (x <= 0.3)),
                     (dict(gt=0), x > 0), (dict(gt=3.4e38), x > 3.4e38), (dict(lt=float("nan")), x < float("nan"))]:
        torch.testing.assert_close(scanlab.select(x, **kw), x[want], msg=str(kw))


def test_select_integer_bounds_are_exact():
    x = torch.tensor([2**62, 2**62 + 1, -5, 3, 2, 2**63 - 1], dtype=torch.int64, device="cuda")
    assert host(scanlab.select(x, gt=2**62)).tolist() == [2**62 + 1, 2**63 - 1]
    assert host(scanlab.select(x, gt=2.5)).tolist() == [2**62, 2**62 + 1, 3, 2**63 - 1]
    assert host(scanlab.select(x, between=(2, 3.9))).tolist() == [3, 2]
    u = cuda(np.array([0, 2**63, 2**64 - 1], dtype=np.uint64))
    assert host(scanlab.select(u, gt=2**63 - 1)).view(np.uint64).tolist() == [2**63, 2**64 - 1]


# ---- unique_consecutive ----

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_consecutive_matches_torch(n, dtype):
    rng = np.random.default_rng(n + 5)
    x = np.repeat(rng.integers(0, 4, n), rng.integers(1, 6, n))[:n].astype(dtype)  # runs of 1 to 5 and more
    if dtype in FLOATS and n > 10:
        x[::53] = np.nan
        x[7::59] = -0.0
    t = cuda(x)
    got = scanlab.unique_consecutive(t)
    values, counts = scanlab.unique_consecutive(t, return_counts=True)
    keep = np.ones(n, dtype=bool)
    keep[1:] = x[1:] != x[:-1]  # NaN != NaN; -0.0 == +0.0
    starts = np.flatnonzero(keep)
    want, want_counts = x[starts], np.diff(np.append(starts, n))
    if dtype in ("int32", "int64"):  # torch has these kernels (not the unsigned ones)
        w, c = torch.unique_consecutive(t, return_counts=True)
        np.testing.assert_array_equal(host(w), want)
        np.testing.assert_array_equal(host(c), want_counts)
    np.testing.assert_array_equal(host(got).view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))
    np.testing.assert_array_equal(host(values).view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))
    np.testing.assert_array_equal(host(counts), want_counts)
    assert host(counts).sum() == n


def test_unique_consecutive_nan_and_signed_zero():
    x = torch.tensor([float("nan"), float("nan"), -0.0, 0.0, 1.0, 1.0], device="cuda")
    values, counts = scanlab.unique_consecutive(x, return_counts=True)
    v = host(values)
    assert np.isnan(v[:2]).all() and v[2] == 0.0 and math.copysign(1, v[2]) == -1 and v[3] == 1.0 and len(v) == 4
    assert host(counts).tolist() == [1, 1, 2, 2]


# ---- partition ----

def check_partition(x: np.ndarray, out: np.ndarray, counts: list, parts: list, stable: bool) -> None:
    """parts: boolean masks of x, one per part; the last part is reversed unless stable."""
    assert counts == [int(p.sum()) for p in parts] and sum(counts) == len(x)
    begin = 0
    for k, part in enumerate(parts):
        want = x[part]
        if k == len(parts) - 1 and not stable:
            want = want[::-1]
        got = out[begin:begin + counts[k]]
        np.testing.assert_array_equal(got.view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))
        begin += counts[k]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("stable", [False, True])
def test_partition_two_way(n, dtype, stable):
    x = select_data(n, dtype, seed=n + 51)
    t = cuda(x)
    pivot = 0.25 if dtype in FLOATS else int(np.iinfo(dtype).max // 3)
    out, counts = scanlab.partition(t, pivot, stable=stable)
    assert counts.dtype == torch.int64 and counts.shape == (2,) and counts.is_cuda
    with np.errstate(invalid="ignore"):
        less = x < pivot
    check_partition(x, host(out), host(counts).tolist(), [less, ~less], stable)
    out, counts = scanlab.partition(t, between=(-1, 1), stable=stable)
    with np.errstate(invalid="ignore"):
        inside = (x >= -1) & (x <= 1)
    check_partition(x, host(out), host(counts).tolist(), [inside, ~inside], stable)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("stable", [False, True])
def test_partition_three_way(n, dtype, stable):
    rng = np.random.default_rng(n + 61)
    x = rng.integers(0, 5, n).astype(dtype)  # many equal to the pivot
    if dtype in FLOATS and n > 10:
        x[::31] = np.nan
        x[1::37] = -0.0
    t = cuda(x)
    for pivot in (2, 0):
        out, counts = scanlab.partition(t, pivot, three_way=True, stable=stable)
        assert counts.shape == (3,)
        with np.errstate(invalid="ignore"):
            less, equal = x < pivot, x == pivot
        greater = ~less & ~equal  # NaNs are greater than every number
        check_partition(x, host(out), host(counts).tolist(), [less, equal, greater], stable)
    if dtype in FLOATS and n > 10:  # a NaN pivot: the NaNs are the equal part
        out, counts = scanlab.partition(t, math.nan, three_way=True, stable=True)
        nan = np.isnan(x)
        check_partition(x, host(out), host(counts).tolist(), [~nan, nan, np.zeros(n, bool)], True)


def test_partition_counts_split_the_output():
    x = torch.randn(100003, device="cuda")
    out, counts = scanlab.partition(x, 0.0, three_way=True, stable=True)
    less, equal, greater = torch.split(out, counts.tolist())
    torch.testing.assert_close(less, x[x < 0])
    torch.testing.assert_close(greater, x[x > 0])


# ---- quicksort ----

def sorted_reference(x: np.ndarray, descending: bool) -> np.ndarray:
    """np.sort with NaNs last in both orders and -0.0 before +0.0 (ascending)."""
    if x.dtype.kind != "f":
        s = np.sort(x, kind="stable")
        return s[::-1] if descending else s
    nan = x[np.isnan(x)]
    rest = x[~np.isnan(x)]
    order = np.lexsort((~np.signbit(rest), rest.astype(np.float64)))  # by value, -0.0 before +0.0
    s = rest[order]
    return np.concatenate([s[::-1] if descending else s, nan])


@pytest.mark.parametrize("n", SIZES + [16384, 16385, 3 * 2**20 + 7])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_quicksort(n, dtype, descending):
    x = select_data(n, dtype, seed=n + 71)
    if n > 10 and dtype not in FLOATS:
        x[::5] = x[1]  # duplicates
    got = host(scanlab.quicksort(cuda(x), descending=descending))
    want = sorted_reference(x, descending)
    if dtype in FLOATS:  # NaN payloads survive; the sort holds one NaN pattern here
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        keep = ~np.isnan(want)
        np.testing.assert_array_equal(got[keep].view(f"u{x.itemsize}"), want[keep].view(f"u{x.itemsize}"))
    else:
        np.testing.assert_array_equal(got, want)


def test_quicksort_matches_torch_sort():
    x = torch.randn(2**20 + 3, device="cuda", dtype=torch.float64)
    torch.testing.assert_close(scanlab.quicksort(x), torch.sort(x).values)
    torch.testing.assert_close(scanlab.quicksort(x, descending=True), torch.sort(x, descending=True).values)


# ---- norms ----

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("acc", [None, "float64"])
def test_norms(n, dtype, acc):
    x, y = random(n, dtype, seed=n + 81), random(n, dtype, seed=n + 82)
    tx, ty = cuda(x), cuda(y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    eps = EPS[acc or dtype]
    out_dtype = acc or dtype
    d = scanlab.dot(tx, ty, dtype=acc)
    assert d.shape == () and str(d.dtype).removeprefix("torch.") == out_dtype
    bound = 2 * max(n, 1) * eps * np.sum(np.abs(x64 * y64)) + 1e-300
    assert abs(d.item() - np.dot(x64, y64)) <= bound
    r, nrm = scanlab.rms(tx, dtype=acc).item(), scanlab.norm(tx, dtype=acc).item()
    if n == 0:
        assert math.isnan(r) and nrm == 0.0 and d.item() == 0.0
    else:
        want = math.sqrt(np.sum(x64 * x64))
        assert math.isclose(nrm, want, rel_tol=4 * n * eps)
        assert math.isclose(r, want / math.sqrt(n), rel_tol=4 * n * eps)
        torch.testing.assert_close(scanlab.norm(tx, None), torch.linalg.vector_norm(tx), rtol=1e-5, atol=0)


def test_norms_scale_and_nan():
    big = torch.full((1000,), 1e30, device="cuda")  # squares overflow float32
    assert math.isclose(scanlab.norm(big).item(), 1e30 * math.sqrt(1000), rel_tol=1e-5)
    assert math.isclose(scanlab.rms(big).item(), 1e30, rel_tol=1e-5)
    tiny = torch.full((1000,), 1e-30, device="cuda")  # squares underflow
    assert math.isclose(scanlab.norm(tiny).item(), 1e-30 * math.sqrt(1000), rel_tol=1e-5)
    x = torch.randn(100003, device="cuda")
    x[5000] = float("nan")
    assert math.isnan(scanlab.norm(x).item()) and math.isnan(scanlab.rms(x).item())
    assert math.isnan(scanlab.dot(x, torch.ones_like(x)).item())
    m = torch.randn(30, 40, device="cuda", dtype=torch.float64)
    torch.testing.assert_close(scanlab.norm(m), torch.linalg.matrix_norm(m), rtol=1e-12, atol=0)  # Frobenius


# ---- the new functions: streams and frameworks ----

def test_select_on_an_explicit_stream():
    x = cuda(random(1000003, "float32", seed=91))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    few = scanlab.select(x, gt=2.0, stream=s)  # the copy path, on s
    many = scanlab.select(x, gt=-2.0, stream=s)
    s.synchronize()
    torch.testing.assert_close(few, x[x > 2.0])
    torch.testing.assert_close(many, x[x > -2.0])
    out, counts = scanlab.partition(x, 0.0, stream=s)
    s.synchronize()
    assert counts.tolist() == [int((x < 0).sum()), int((x >= 0).sum())]


def test_select_and_unique_through_cuda_array_interface():
    x = cuda(np.repeat(np.arange(1000, dtype=np.int32), 3))

    class OnlyCAI:
        __cuda_array_interface__ = x.__cuda_array_interface__

    values, counts = scanlab.unique_consecutive(OnlyCAI(), return_counts=True)  # 1/3 kept: the copy path
    assert isinstance(values, scanlab.DeviceArray) and values.shape == (1000,) and values.dtype == "int32"
    torch.cuda.synchronize()
    np.testing.assert_array_equal(host(torch.from_dlpack(values)), np.arange(1000))
    np.testing.assert_array_equal(host(torch.from_dlpack(counts)), np.full(1000, 3))
    kept = scanlab.select(OnlyCAI(), gt=10)  # most kept: a DeviceArray over the first items
    assert isinstance(kept, scanlab.DeviceArray) and kept.shape == (3 * 989,)
    np.testing.assert_array_equal(host(torch.from_dlpack(kept)), np.repeat(np.arange(11, 1000), 3))


def test_new_functions_cupy_in_cupy_out():
    cupy = pytest.importorskip("cupy")
    x_np = random(100003, "float64", seed=92)
    x = cupy.asarray(x_np)
    got = scanlab.select(x, gt=0.0)
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(got), x_np[x_np > 0])
    out, counts = scanlab.partition(x, 0.0, stable=True)
    assert isinstance(out, cupy.ndarray) and isinstance(counts, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(scanlab.quicksort(x)), np.sort(x_np))
    assert math.isclose(float(scanlab.norm(x)), float(np.linalg.norm(x_np)), rel_tol=1e-12)


def test_new_functions_jax_in_jax_out():
    jax, gpu = jax_gpu()
    x_np = random(100003, "float32", seed=93)
    x = jax.device_put(x_np, gpu)
    got = scanlab.select(x, lt=0.0)
    assert isinstance(got, jax.Array)
    np.testing.assert_array_equal(np.asarray(got), x_np[x_np < 0])
    np.testing.assert_array_equal(np.asarray(scanlab.unique_consecutive(x)), x_np)
    # (JAX without jax_enable_x64 turns the float64 result into float32 when it takes it in.)
    rel = 1e-9 if jax.config.jax_enable_x64 else 1e-6
    assert math.isclose(float(scanlab.dot(x, x, dtype="float64")), float(np.dot(x_np.astype(np.float64), x_np)),
                        rel_tol=rel)


def test_new_functions_errors_on_the_gpu():
    x = torch.randn(10, device="cuda")
    with pytest.raises(ValueError, match=r"mask has shape"):
        scanlab.select(x, torch.ones(11, dtype=torch.bool, device="cuda"))
    with pytest.raises(TypeError, match=r"mask has dtype float32"):
        scanlab.select(x, x)
    with pytest.raises(ValueError, match=r"x is not contiguous"):
        scanlab.quicksort(x[::2])
    with pytest.raises(TypeError, match=r"mask is a CPU array"):
        scanlab.select(x, torch.ones(10, dtype=torch.bool))


@pytest.mark.skipif(not HAS_GPU or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_new_functions_refuse_two_gpus():
    with pytest.raises(ValueError, match=r"mask is on CUDA device 1 but x is on CUDA device 0"):
        scanlab.select(torch.zeros(4, device="cuda:0"), torch.ones(4, dtype=torch.bool, device="cuda:1"))
    with pytest.raises(ValueError, match=r"y is on CUDA device 1 but x is on CUDA device 0"):
        scanlab.dot(torch.zeros(4, device="cuda:0"), torch.zeros(4, device="cuda:1"))
