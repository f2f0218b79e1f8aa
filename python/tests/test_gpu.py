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


def test_jax_in_jax_out():
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX sees no GPU")
    x_np = random(1000003, "float32", seed=12)
    x = jax.device_put(x_np, gpu)
    got = scanlab.cumsum(x)
    assert isinstance(got, jax.Array)
    np.testing.assert_allclose(np.asarray(got), np.cumsum(x_np.astype(np.float64)), rtol=1e-3, atol=1e-1)
    np.testing.assert_array_equal(np.asarray(scanlab.sort(x)), np.sort(x_np))
    assert float(scanlab.reduce(x, "min")) == x_np.min()
