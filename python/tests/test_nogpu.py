"""Import and argument checks: run anywhere, GPU or not (CI has none). The fake arrays'
pointers are never dereferenced: every error here is raised before any CUDA work."""

from __future__ import annotations

import gc
import inspect
import math
import pydoc
import subprocess
import sys

import pytest

import scanlab
from conftest import needs_no_gpu
from fakes import FakeCAI, FakeDLPack

np = pytest.importorskip("numpy")

PUBLIC = ["reduce", "inclusive_scan", "exclusive_scan", "cumsum", "sort", "argsort", "sort_pairs",
          "linear_recurrence", "linear_recurrence_backward", "select", "unique_consecutive", "partition",
          "quicksort", "dot", "rms", "norm"]


# ---- the package ----

def test_import_makes_no_cuda_call_and_imports_no_framework():
    code = ("import sys, scanlab; "
            "bad = [m for m in ('torch', 'cupy', 'jax') if m in sys.modules]; "
            "assert not bad, bad; print(scanlab.__version__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == scanlab.__version__


@pytest.mark.parametrize("name", PUBLIC)
def test_public_functions_are_documented(name):
    f = getattr(scanlab, name)
    assert name in scanlab.__all__
    doc = inspect.getdoc(f)
    assert doc and len(doc) > 200, f"{name} has too short a docstring"
    assert "stream" in inspect.signature(f).parameters
    assert "scanlab" in pydoc.render_doc(f) or name in pydoc.render_doc(f)


def test_help_sort_says_what_it_does():
    text = pydoc.render_doc(scanlab.sort)
    assert "radix sort" in text and "stable" in text and "NaN" in text


@pytest.mark.parametrize("name", ["select", "unique_consecutive", "quicksort"])
def test_help_says_which_calls_synchronise(name):
    text = " ".join(pydoc.render_doc(getattr(scanlab, name)).split())
    assert "Synchronisation" in text and "waits for its stream" in text


def test_help_select_documents_the_bounds():
    text = " ".join(pydoc.render_doc(scanlab.select).split())
    assert "inclusive at both ends" in text and "x > gt" in text and "NaN" in text
    assert "no synchronisation" in " ".join(pydoc.render_doc(scanlab.partition).split())


def test_build_info():
    info = scanlab.build_info()
    assert info["cuda_architectures"]
    assert info["cuda_runtime_built"] >= 12000
    assert info["cuda_runtime_linked"] == "static"
    assert isinstance(info["xla_ffi"], bool)


def test_xla_ffi_targets_match_build_info():
    from scanlab import _scanlab
    targets = _scanlab.xla_ffi_targets()
    if scanlab.build_info()["xla_ffi"]:
        assert set(targets) == {"scanlab_linear_recurrence", "scanlab_linear_recurrence_backward"}
        assert all(type(c).__name__ == "PyCapsule" for c in targets.values())
    else:
        assert targets == {}


def test_runtime_info_never_raises():
    info = scanlab.runtime_info()
    assert set(info) >= {"runtime_version", "driver_version", "device_count", "device_error"}
    assert info["device_count"] >= 0


# ---- inputs that are not CUDA arrays ----

@pytest.mark.parametrize("name", ["reduce", "inclusive_scan", "exclusive_scan", "cumsum", "sort", "argsort",
                                  "unique_consecutive", "quicksort", "rms", "norm"])
def test_host_numpy_array_is_a_type_error(name):
    with pytest.raises(TypeError, match=r"scanlab\.\w+: x is a CPU array; scanlab needs a CUDA device array"):
        getattr(scanlab, name)(np.arange(10, dtype=np.float32))


def test_pinned_host_dlpack_is_a_type_error():
    with pytest.raises(TypeError, match=r"x is a pinned host"):
        scanlab.cumsum(FakeDLPack((4,), device=(3, 0)))


def test_rocm_array_is_a_type_error():
    with pytest.raises(TypeError, match=r"x is a ROCm array"):
        scanlab.cumsum(FakeDLPack((4,), device=(10, 0)))


@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, "abc", None])
def test_non_array_is_a_type_error(value):
    with pytest.raises(TypeError, match=r"scanlab\.reduce: x must be a CUDA array .* got (list|float|str|NoneType)"):
        scanlab.reduce(value)


def test_sort_pairs_names_the_argument():
    with pytest.raises(TypeError, match=r"values is a CPU array"):
        scanlab.sort_pairs(FakeDLPack((4,)), np.arange(4))
    with pytest.raises(TypeError, match=r"keys is a CPU array"):
        scanlab.sort_pairs(np.arange(4), FakeDLPack((4,)))


# ---- dtypes, ranks, layouts ----

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "bool", "complex64"])
def test_unsupported_dtype_dlpack(dtype):
    with pytest.raises(TypeError, match=rf"x has dtype {dtype}; supported: int32, int64, uint32, uint64, float32, float64"):
        scanlab.cumsum(FakeDLPack((4,), dtype=dtype))


@pytest.mark.parametrize("typestr,name", [("<f2", "float16"), ("|b1", "bool"), ("<c8", "complex64"), ("|i1", "int8")])
def test_unsupported_dtype_cuda_array_interface(typestr, name):
    with pytest.raises(TypeError, match=rf"x has dtype {name}"):
        scanlab.sort(FakeCAI((4,), typestr=typestr))


def test_linear_recurrence_needs_floats():
    with pytest.raises(TypeError, match=r"a has dtype int32; supported: float32, float64, float16, bfloat16"):
        scanlab.linear_recurrence(FakeDLPack((4,), dtype="int32"), FakeDLPack((4,), dtype="int32"))
    with pytest.raises(TypeError, match=r"b has dtype float64, but it must match a's dtype float32"):
        scanlab.linear_recurrence(FakeDLPack((4,)), FakeDLPack((4,), dtype="float64"))
    with pytest.raises(TypeError, match=r"b has dtype float16, but it must match a's dtype bfloat16"):
        scanlab.linear_recurrence(FakeDLPack((4,), dtype="bfloat16"), FakeDLPack((4,), dtype="float16"))
    with pytest.raises(TypeError, match=r"x0 has dtype float32, but it must match a's dtype bfloat16"):
        scanlab.linear_recurrence(FakeDLPack((4,), dtype="bfloat16"), FakeDLPack((4,), dtype="bfloat16"),
                                  FakeDLPack(()))
    with pytest.raises(TypeError, match=r"grad_x has dtype float32, but it must match a's dtype float16"):
        scanlab.linear_recurrence_backward(FakeDLPack((4,), dtype="float16"), FakeDLPack((4,), dtype="float16"),
                                           FakeDLPack((4,)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_types_are_the_recurrence_s_alone(dtype):
    """float16 and bfloat16 are storage types of the linear recurrence; the other operations
    refuse them by name."""
    for f in (scanlab.sort, scanlab.cumsum, scanlab.reduce, scanlab.rms):
        with pytest.raises(TypeError, match=rf"x has dtype {dtype}; supported: "):
            f(FakeDLPack((4,), dtype=dtype))


def test_scan_needs_1d():
    with pytest.raises(ValueError, match=r"scanlab\.cumsum: x must be 1-D; got shape \(2, 3\)"):
        scanlab.cumsum(FakeDLPack((2, 3)))
    with pytest.raises(ValueError, match=r"x must be 1-D; got shape \(2, 3\)"):
        scanlab.sort(FakeCAI((2, 3)))


def test_non_contiguous_dlpack():
    with pytest.raises(ValueError, match=r"x is not contiguous .*strides \(2,\)"):
        scanlab.cumsum(FakeDLPack((4,), strides=(2,)))
    with pytest.raises(ValueError, match=r"x is not contiguous"):
        scanlab.reduce(FakeDLPack((3, 4), strides=(1, 3)))


def test_non_contiguous_cuda_array_interface():
    with pytest.raises(ValueError, match=r"x is not contiguous"):
        scanlab.cumsum(FakeCAI((4,), strides=(8,)))
    with pytest.raises(ValueError, match=r"masked"):
        scanlab.cumsum(FakeCAI((4,), mask=object()))


def test_unit_dimensions_and_explicit_compact_strides_are_contiguous():
    # Accepted by the import: the error is the shape check that comes after it.
    with pytest.raises(ValueError, match=r"b has shape \(1, 5\) but a has shape \(1, 4\)"):
        scanlab.linear_recurrence(FakeDLPack((1, 4), strides=(99, 1)), FakeDLPack((1, 5), strides=(5, 1)))
    with pytest.raises(ValueError, match=r"min of an empty array"):
        scanlab.reduce(FakeDLPack((3, 0, 4), strides=(7, 7, 7)), "min")


def test_shapes_must_match():
    with pytest.raises(ValueError, match=r"values has shape \(5,\) but keys has shape \(4,\)"):
        scanlab.sort_pairs(FakeDLPack((4,)), FakeDLPack((5,), dtype="int32"))
    with pytest.raises(ValueError, match=r"b has shape \(5,\) but a has shape \(4,\)"):
        scanlab.linear_recurrence(FakeDLPack((4,)), FakeDLPack((5,)))
    with pytest.raises(ValueError, match=r"x0 has shape \(3,\); for a of shape \(2, 4\)"):
        scanlab.linear_recurrence(FakeDLPack((2, 4)), FakeDLPack((2, 4)), FakeDLPack((3,)))
    with pytest.raises(ValueError, match=r"grad_x has shape \(4, 2\) but a has shape \(2, 4\)"):
        scanlab.linear_recurrence_backward(FakeDLPack((2, 4)), FakeDLPack((2, 4)), FakeDLPack((4, 2)))
    with pytest.raises(TypeError, match=r"x0 must be None or an array"):
        scanlab.linear_recurrence_backward(FakeDLPack((4,)), FakeDLPack((4,)), FakeDLPack((4,)), 1.5)


def test_recurrence_layouts_and_offsets_are_checked():
    with pytest.raises(ValueError, match=r"layout must be one of 'bt', 'tb', 'btc'; got 'ct'"):
        scanlab.linear_recurrence(FakeDLPack((2, 4)), FakeDLPack((2, 4)), layout="ct")
    with pytest.raises(ValueError, match=r"layout 'btc' takes a of shape \(batch, length, channels\); got \(2, 4\)"):
        scanlab.linear_recurrence(FakeDLPack((2, 4)), FakeDLPack((2, 4)), layout="btc")
    with pytest.raises(ValueError, match=r"layout 'tb' takes a of shape \(length, batch\); got \(4,\)"):
        scanlab.linear_recurrence(FakeDLPack((4,)), FakeDLPack((4,)), layout="tb")
    with pytest.raises(ValueError, match=r"layout 'bt' takes a of shape \(length,\) or \(batch, length\)"):
        scanlab.linear_recurrence(FakeDLPack((2, 3, 4)), FakeDLPack((2, 3, 4)))
    with pytest.raises(ValueError, match=r"x0 has shape \(6,\); for a of shape \(2, 4, 3\) .*\(2, 3\)"):
        scanlab.linear_recurrence(FakeDLPack((2, 4, 3)), FakeDLPack((2, 4, 3)), FakeDLPack((6,)), layout="btc")
    with pytest.raises(ValueError, match=r"x0 has shape \(4,\); .*\(3,\)"):
        scanlab.linear_recurrence(FakeDLPack((9, 3)), FakeDLPack((9, 3)), FakeDLPack((4,)), layout="tb")
    with pytest.raises(TypeError, match=r"return_final must be True or False"):
        scanlab.linear_recurrence(FakeDLPack((4,)), FakeDLPack((4,)), return_final=1)
    offsets = FakeDLPack((4,), dtype="int64")  # three sequences
    with pytest.raises(ValueError, match=r"with offsets, a must be 1-D"):
        scanlab.linear_recurrence(FakeDLPack((2, 4)), FakeDLPack((2, 4)), offsets=offsets)
    with pytest.raises(ValueError, match=r"layout='btc' does not go with them"):
        scanlab.linear_recurrence(FakeDLPack((2, 4, 3)), FakeDLPack((2, 4, 3)), layout="btc", offsets=offsets)
    with pytest.raises(TypeError, match=r"offsets has dtype int32; supported: int64"):
        scanlab.linear_recurrence(FakeDLPack((8,)), FakeDLPack((8,)), offsets=FakeDLPack((4,), dtype="int32"))
    with pytest.raises(ValueError, match=r"offsets must be 1-D"):
        scanlab.linear_recurrence(FakeDLPack((8,)), FakeDLPack((8,)), offsets=FakeDLPack((2, 2), dtype="int64"))
    with pytest.raises(ValueError, match=r"offsets must have at least one entry"):
        scanlab.linear_recurrence(FakeDLPack((8,)), FakeDLPack((8,)), offsets=FakeDLPack((0,), dtype="int64"))
    with pytest.raises(ValueError, match=r"offsets describe no sequence but a has 8 elements"):
        scanlab.linear_recurrence(FakeDLPack((8,)), FakeDLPack((8,)), offsets=FakeDLPack((1,), dtype="int64"))
    with pytest.raises(ValueError, match=r"x0 has shape \(2,\); .*\(3,\)"):
        scanlab.linear_recurrence(FakeDLPack((8,)), FakeDLPack((8,)), FakeDLPack((2,)), offsets=offsets)
    with pytest.raises(ValueError, match=r"x0 has shape \(2,\); .*\(3,\)"):
        scanlab.linear_recurrence_backward(FakeDLPack((8,)), FakeDLPack((8,)), FakeDLPack((8,)), FakeDLPack((2,)),
                                           offsets=offsets)


def test_sort_return_indices_must_be_a_bool():
    with pytest.raises(TypeError, match=r"return_indices must be True or False; got int"):
        scanlab.sort(FakeDLPack((4,)), return_indices=1)


def test_devices_must_match():
    with pytest.raises(ValueError, match=r"b is on CUDA device 1 but a is on CUDA device 0"):
        scanlab.linear_recurrence(FakeDLPack((4,), device=(2, 0)), FakeDLPack((4,), device=(2, 1)))


# ---- other arguments ----

def test_op_is_checked():
    with pytest.raises(ValueError, match=r"scanlab\.reduce: op must be one of 'sum', 'prod', 'min', 'max'; got 'mean'"):
        scanlab.reduce(FakeDLPack((4,)), "mean")
    with pytest.raises(TypeError, match=r"op must be a string"):
        scanlab.inclusive_scan(FakeDLPack((4,)), 3)


def test_min_max_of_empty_is_a_value_error():
    with pytest.raises(ValueError, match=r"min of an empty array"):
        scanlab.reduce(FakeDLPack((0,)), "min")


def test_exclusive_scan_init_is_checked():
    with pytest.raises(ValueError, match=r"init=1.5 is not an integer, but the scan accumulates in int64"):
        scanlab.exclusive_scan(FakeDLPack((4,), dtype="int32"), init=1.5)
    with pytest.raises(ValueError, match=r"does not fit the scan's accumulator type int32"):
        scanlab.exclusive_scan(FakeDLPack((4,), dtype="int32"), "max", init=2**40)
    with pytest.raises(ValueError, match=r"does not fit .* uint64"):
        scanlab.exclusive_scan(FakeDLPack((4,), dtype="uint32"), init=-1)
    with pytest.raises(TypeError, match=r"init must be a Python int or float; got str"):
        scanlab.exclusive_scan(FakeDLPack((4,)), init="0")


def test_sort_bit_range_is_checked():
    with pytest.raises(ValueError, match=r"need 0 <= begin_bit <= end_bit <= 32 for float32 keys; got 0, 40"):
        scanlab.sort(FakeDLPack((4,)), end_bit=40)
    with pytest.raises(ValueError, match=r"got 9, 8"):
        scanlab.argsort(FakeDLPack((4,), dtype="int64"), begin_bit=9, end_bit=8)
    with pytest.raises(TypeError, match=r"descending must be True or False"):
        scanlab.sort(FakeDLPack((4,)), descending="yes")
    with pytest.raises(TypeError, match=r"begin_bit must be an integer"):
        scanlab.sort(FakeDLPack((4,)), begin_bit=1.0)


def test_stream_argument_is_checked():
    with pytest.raises(TypeError, match=r"stream: expected an integer cudaStream_t"):
        scanlab.cumsum(FakeDLPack((4,)), stream="default")
    with pytest.raises(ValueError, match=r"stream: a cudaStream_t handle is not negative"):
        scanlab.cumsum(FakeDLPack((4,)), stream=-5)


def test_stream_is_passed_to_dlpack():
    x = FakeDLPack((4,), strides=(2,))  # refused after the import
    with pytest.raises(ValueError, match="not contiguous"):
        scanlab.cumsum(x)
    with pytest.raises(ValueError, match="not contiguous"):
        scanlab.cumsum(x, stream=1234)
    assert x.streams == [1, 1234]  # the legacy default stream is 1 in DLPack, never 0


# ---- DLPack ownership ----

def test_dlpack_deleter_runs_once_after_an_argument_error():
    x = FakeDLPack((4,), strides=(2,))
    with pytest.raises(ValueError):
        scanlab.cumsum(x)
    gc.collect()
    assert x.deleted == 1


def test_dlpack_import_of_numpy_capsule():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]
    t = scanlab._scanlab.dlpack_import(a.__dlpack__())
    assert t.shape == (3, 2) and t.strides == (4, 2)
    assert (t.dtype_code, t.dtype_bits, t.dtype_lanes) == (0, 64, 1)
    assert t.device_type == 1 and t.data == a.__array_interface__["data"][0]
    t.release()
    with pytest.raises(ValueError, match="released"):
        t.shape


def test_dlpack_import_refuses_a_used_capsule():
    cap = np.arange(3).__dlpack__()
    scanlab._scanlab.dlpack_import(cap)
    with pytest.raises(TypeError, match="unused DLPack capsule"):
        scanlab._scanlab.dlpack_import(cap)
    with pytest.raises(TypeError):
        scanlab._scanlab.dlpack_import(object())


def test_empty_device_array_exports_both_protocols():
    buf = scanlab._scanlab.DeviceBuffer(0, 0)  # no allocation for 0 bytes: no CUDA call
    a = scanlab.DeviceArray(buf, (0,), "float32", 0)
    assert a.__dlpack_device__() == (2, 0)
    cai = a.__cuda_array_interface__
    assert cai["typestr"] == "<f4" and cai["shape"] == (0,) and cai["stream"] == 1 and cai["version"] == 3
    for max_version in (None, (1, 0)):
        t = scanlab._scanlab.dlpack_import(a.__dlpack__(max_version=max_version))
        assert t.shape == (0,) and t.device_type == 2 and (t.dtype_code, t.dtype_bits) == (2, 32)
        assert t.strides == (1,) and t.data == 0
    b = scanlab.DeviceArray(buf, (2, 0, 3), "int64", 0)
    t = scanlab._scanlab.dlpack_import(b.__dlpack__())
    assert t.shape == (2, 0, 3) and t.strides == (3, 3, 1) and (t.dtype_code, t.dtype_bits) == (0, 64)
    s = scanlab._scanlab.dlpack_import(scanlab.DeviceArray(buf, (), "uint32", 0).__dlpack__())
    assert s.shape == () and s.strides == ()
    a.__dlpack__()  # a capsule nobody takes is freed with its tensor
    gc.collect()
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError):
        a.__dlpack__(copy=True)


# ---- without a GPU, valid calls fail cleanly ----

@needs_no_gpu
@pytest.mark.parametrize("call", [
    lambda: scanlab.reduce(FakeDLPack((1000,))),
    lambda: scanlab.cumsum(FakeDLPack((10,), dtype="int32")),
    lambda: scanlab.sort(FakeCAI((10,), typestr="<u4")),
    lambda: scanlab.linear_recurrence(FakeDLPack((2, 8)), FakeDLPack((2, 8)), 0.5),
    lambda: scanlab.select(FakeDLPack((10,)), FakeDLPack((10,), dtype="bool"), return_indices=True),
    lambda: scanlab.select(FakeDLPack((0,), dtype="int64"), between=(1, 2)),
    lambda: scanlab.unique_consecutive(FakeDLPack((3, 3), dtype="uint64"), return_counts=True),
    lambda: scanlab.partition(FakeDLPack((10,)), 0.5),
    lambda: scanlab.partition(FakeDLPack((10,), dtype="int32"), 3, three_way=True, stable=True),
    lambda: scanlab.quicksort(FakeCAI((10,), typestr="<f8"), descending=True),
    lambda: scanlab.dot(FakeDLPack((10,)), FakeDLPack((10,)), dtype="float64"),
    lambda: scanlab.rms(FakeDLPack((0,), dtype="float64")),
    lambda: scanlab.norm(FakeDLPack((4, 4))),
    # Empty inputs allocate nothing: these reach the extension's functions (their arguments
    # converted by nanobind), which fail at their first CUDA call.
    lambda: scanlab.select(FakeDLPack((0,)), gt=1.0, lt=math.inf, return_indices=True),
    lambda: scanlab.select(FakeDLPack((0,), dtype="uint64"), FakeDLPack((0,), dtype="bool")),
    lambda: scanlab.unique_consecutive(FakeDLPack((0,), dtype="float64"), return_counts=True),
    lambda: scanlab.partition(FakeDLPack((0,), dtype="uint64"), between=(0, 2**64 - 1), stable=True),
    lambda: scanlab.partition(FakeDLPack((0,), dtype="float32"), math.nan, three_way=True),
    lambda: scanlab.partition(FakeDLPack((0,), dtype="int64"), -(2**63), three_way=True),
    lambda: scanlab.quicksort(FakeDLPack((0,), dtype="int32"), descending=True),
    lambda: scanlab.dot(FakeDLPack((0,)), FakeDLPack((0,))),
    lambda: scanlab._scanlab.read_int64("select", 0x7F0000000000, 0, 0),
    lambda: scanlab._scanlab.copy_async("select", 0x7F0000000000, 0x7F0000001000, 8, 0, 0),
])
def test_without_gpu_a_valid_call_raises_runtime_error(call):
    with pytest.raises(RuntimeError, match=r"scanlab\.\w+: CUDA error cuda\w+: "):
        call()


# ---- select, unique_consecutive, partition, quicksort, norms: argument checks ----

def test_new_functions_refuse_host_arrays_naming_the_argument():
    host = np.arange(10, dtype=np.float32)
    with pytest.raises(TypeError, match=r"scanlab\.select: x is a CPU array"):
        scanlab.select(host, gt=0)
    with pytest.raises(TypeError, match=r"scanlab\.select: mask is a CPU array"):
        scanlab.select(FakeDLPack((10,)), host > 0)
    with pytest.raises(TypeError, match=r"scanlab\.partition: x is a CPU array"):
        scanlab.partition(host, 0.5)
    with pytest.raises(TypeError, match=r"scanlab\.dot: y is a CPU array"):
        scanlab.dot(FakeDLPack((10,)), host)
    with pytest.raises(TypeError, match=r"scanlab\.dot: x must be a CUDA array .* got list"):
        scanlab.dot([1.0], [2.0])


def test_select_needs_exactly_one_kind_of_test():
    x = FakeDLPack((4,))
    with pytest.raises(ValueError, match=r"scanlab\.select: nothing to select by"):
        scanlab.select(x)
    with pytest.raises(ValueError, match=r"give a mask or a value test .*not both"):
        scanlab.select(x, FakeDLPack((4,), dtype="bool"), gt=0)
    with pytest.raises(TypeError, match=r"return_indices must be True or False"):
        scanlab.select(x, gt=0, return_indices=1)


def test_select_mask_is_checked():
    x = FakeDLPack((2, 3))
    with pytest.raises(TypeError, match=r"mask has dtype float32; supported: bool, uint8"):
        scanlab.select(x, FakeDLPack((2, 3)))
    with pytest.raises(TypeError, match=r"mask has dtype int8"):
        scanlab.select(x, FakeCAI((2, 3), typestr="|i1"))
    with pytest.raises(ValueError, match=r"mask has shape \(6,\) but x has shape \(2, 3\)"):
        scanlab.select(x, FakeDLPack((6,), dtype="bool"))
    with pytest.raises(ValueError, match=r"mask is not contiguous"):
        scanlab.select(x, FakeDLPack((2, 3), dtype="uint8", strides=(1, 2)))
    with pytest.raises(ValueError, match=r"mask is on CUDA device 1 but x is on CUDA device 0"):
        scanlab.select(x, FakeDLPack((2, 3), dtype="bool", device=(2, 1)))
    with pytest.raises(TypeError, match=r"x has dtype float16"):
        scanlab.select(FakeDLPack((2, 3), dtype="float16"), FakeDLPack((2, 3), dtype="bool"))


def test_select_bounds_are_checked():
    x = FakeDLPack((4,))
    with pytest.raises(TypeError, match=r"scanlab\.select: gt must be a Python int or float; got str"):
        scanlab.select(x, gt="1")
    with pytest.raises(TypeError, match=r"lt must be a number; got bool"):
        scanlab.select(x, lt=True)
    with pytest.raises(TypeError, match=r"between must be a pair \(lo, hi\) of numbers; got float"):
        scanlab.select(x, between=1.0)
    with pytest.raises(ValueError, match=r"between must be a pair \(lo, hi\) of numbers; got 3 values"):
        scanlab.select(x, between=(1, 2, 3))
    with pytest.raises(TypeError, match=r"between\[1\] must be a Python int or float; got NoneType"):
        scanlab.select(x, between=(1, None))


def test_unique_consecutive_arguments():
    with pytest.raises(TypeError, match=r"scanlab\.unique_consecutive: return_counts must be True or False"):
        scanlab.unique_consecutive(FakeDLPack((4,)), "yes")
    with pytest.raises(TypeError, match=r"x has dtype bool"):
        scanlab.unique_consecutive(FakeDLPack((4,), dtype="bool"))
    with pytest.raises(ValueError, match=r"x is not contiguous"):
        scanlab.unique_consecutive(FakeCAI((4,), strides=(8,)))


def test_partition_arguments():
    x = FakeDLPack((8,), dtype="int32")
    with pytest.raises(ValueError, match=r"scanlab\.partition: nothing to partition by"):
        scanlab.partition(x)
    with pytest.raises(ValueError, match=r"give a pivot .* or a value test .*not both"):
        scanlab.partition(x, 3, gt=1)
    with pytest.raises(ValueError, match=r"three_way=True needs a pivot"):
        scanlab.partition(x, three_way=True)
    with pytest.raises(ValueError, match=r"gt, lt and between are two-way tests"):
        scanlab.partition(x, 3, three_way=True, lt=4)
    with pytest.raises(ValueError, match=r"pivot=2.5 is not a whole number, but x is int32"):
        scanlab.partition(x, 2.5, three_way=True)
    with pytest.raises(ValueError, match=r"pivot=4294967296 is outside int32's range"):
        scanlab.partition(x, 2**32, three_way=True)
    with pytest.raises(ValueError, match=r"pivot=-1 is outside uint32's range"):
        scanlab.partition(FakeDLPack((8,), dtype="uint32"), -1, three_way=True)
    with pytest.raises(TypeError, match=r"pivot must be a Python int or float; got str"):
        scanlab.partition(x, "3")
    with pytest.raises(TypeError, match=r"stable must be True or False"):
        scanlab.partition(x, 3, stable=None)
    with pytest.raises(TypeError, match=r"three_way must be True or False"):
        scanlab.partition(x, 3, three_way=1)
    with pytest.raises(ValueError, match=r"x must be 1-D; got shape \(2, 4\)"):
        scanlab.partition(FakeDLPack((2, 4)), 0.0)


def test_quicksort_arguments():
    with pytest.raises(ValueError, match=r"scanlab\.quicksort: x must be 1-D"):
        scanlab.quicksort(FakeDLPack((2, 2)))
    with pytest.raises(TypeError, match=r"descending must be True or False"):
        scanlab.quicksort(FakeDLPack((4,)), descending="yes")
    with pytest.raises(TypeError, match=r"x has dtype bfloat16"):
        scanlab.quicksort(FakeDLPack((4,), dtype="bfloat16"))
    with pytest.raises(TypeError):
        scanlab.quicksort(FakeDLPack((4,)), True)  # descending is keyword-only, as sort's


def test_norms_arguments():
    f32, f64 = FakeDLPack((4,)), FakeDLPack((4,), dtype="float64")
    with pytest.raises(TypeError, match=r"scanlab\.dot: x has dtype int32; supported: float32, float64"):
        scanlab.dot(FakeDLPack((4,), dtype="int32"), FakeDLPack((4,), dtype="int32"))
    with pytest.raises(TypeError, match=r"y has dtype float64, but it must match x's dtype float32"):
        scanlab.dot(f32, f64)
    with pytest.raises(ValueError, match=r"y has shape \(5,\) but x has shape \(4,\)"):
        scanlab.dot(f32, FakeDLPack((5,)))
    with pytest.raises(ValueError, match=r"x must be 1-D"):
        scanlab.dot(FakeDLPack((2, 2)), FakeDLPack((2, 2)))
    with pytest.raises(ValueError, match=r"y is on CUDA device 1 but x is on CUDA device 0"):
        scanlab.dot(f32, FakeDLPack((4,), device=(2, 1)))
    with pytest.raises(ValueError, match=r"scanlab\.rms: dtype must be None, 'float32' or 'float64'; got 'int64'"):
        scanlab.rms(f32, dtype="int64")
    with pytest.raises(ValueError, match=r"dtype='float32' is narrower than x's float64"):
        scanlab.norm(f64, dtype="float32")
    with pytest.raises(ValueError, match=r"scanlab\.norm: ord=1 is not supported"):
        scanlab.norm(f32, 1)
    with pytest.raises(ValueError, match=r"ord=True is not supported"):
        scanlab.norm(f32, True)
    with pytest.raises(TypeError, match=r"scanlab\.rms: x has dtype uint64"):
        scanlab.rms(FakeCAI((4,), typestr="<u8"))


# ---- value tests as closed ranges (pure Python: the device sees lo <= x <= hi) ----

from scanlab._arrays import Call  # noqa: E402
from scanlab._select import closed_range, next_float, round_to  # noqa: E402

F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).smallest_subnormal)


def rng(dtype, **kw):
    return closed_range(Call("select"), dtype, **kw)


def test_integer_ranges_are_exact():
    assert rng("int32", gt=5) == (6, 2**31 - 1)
    assert rng("int32", lt=5) == (-(2**31), 4)
    assert rng("int32", gt=2.5) == (3, 2**31 - 1)
    assert rng("int32", gt=-2.5) == (-2, 2**31 - 1)
    assert rng("int32", lt=2.5) == (-(2**31), 2)
    assert rng("int32", lt=-2.5) == (-(2**31), -3)
    assert rng("int64", between=(-1.5, 3.5)) == (-1, 3)
    assert rng("int64", between=(2, 2)) == (2, 2)
    assert rng("uint32", gt=-7) == (0, 2**32 - 1)
    assert rng("uint64", lt=2**70) == (0, 2**64 - 1)
    assert rng("uint64", gt=2**64 - 2) == (2**64 - 1, 2**64 - 1)
    assert rng("int32", gt=0, lt=10, between=(3, 100)) == (3, 9)
    assert rng("int32", gt=np.int64(4), lt=np.float32(6.5)) == (5, 6)
    assert rng("int32", gt=-math.inf) == (-(2**31), 2**31 - 1)
    assert rng("int32", lt=math.inf, between=(-math.inf, math.inf)) == (-(2**31), 2**31 - 1)


@pytest.mark.parametrize("kw", [dict(gt=2**31 - 1), dict(lt=-(2**31)), dict(gt=math.inf), dict(lt=-math.inf),
                                dict(gt=math.nan), dict(between=(3, 2)), dict(between=(0, math.nan)),
                                dict(gt=5, lt=6), dict(lt=0.5, gt=0.25), dict(gt=2**40)])
def test_integer_ranges_that_keep_nothing(kw):
    lo, hi = rng("int32", **kw)
    assert lo > hi and -(2**31) <= lo <= 2**31 - 1 and -(2**31) <= hi <= 2**31 - 1


def test_float_ranges_move_strict_bounds_by_one_ulp():
    assert rng("float64", gt=1.0) == (math.nextafter(1.0, 2.0), math.inf)
    assert rng("float64", lt=1.0) == (-math.inf, math.nextafter(1.0, 0.0))
    assert rng("float64", between=(-1.0, 1.0)) == (-1.0, 1.0)
    lo, hi = rng("float32", gt=1.0)
    assert lo == float(np.nextafter(np.float32(1), np.float32(2))) and hi == math.inf
    lo, hi = rng("float32", lt=1.0)
    assert hi == float(np.nextafter(np.float32(1), np.float32(0)))
    assert rng("float32", gt=0.0)[0] == F32_TINY and rng("float32", gt=-0.0)[0] == F32_TINY
    assert rng("float32", lt=0.0)[1] == -F32_TINY
    assert rng("float64", gt=0.0)[0] == 5e-324
    assert rng("float32", gt=-math.inf) == (-F32_MAX, math.inf)
    assert rng("float32", lt=math.inf) == (-math.inf, F32_MAX)
    assert rng("float32", gt=F32_MAX) == (math.inf, math.inf)
    assert rng("float32", between=(0, 10), lt=10)[1] == float(np.nextafter(np.float32(10), np.float32(0)))


def test_float32_bounds_are_rounded_to_float32_first():
    lo, _ = rng("float32", between=(0.1, 1.0))
    assert lo == float(np.float32(0.1))
    lo, _ = rng("float32", gt=0.1)
    assert lo == float(np.nextafter(np.float32(0.1), np.float32(1)))
    assert rng("float32", lt=1e300)[1] == F32_MAX  # 1e300 rounds to inf in float32: x < inf
    assert rng("float32", gt=1e39)[0] > F32_MAX  # x > inf: nothing ...
    assert rng("float32", gt=1e39) == (math.inf, -math.inf)
    assert rng("float32", lt=2**2000)[1] == F32_MAX  # an int beyond float64


@pytest.mark.parametrize("kw", [dict(gt=math.nan), dict(lt=math.nan), dict(between=(math.nan, 1)),
                                dict(gt=math.inf), dict(lt=-math.inf), dict(between=(1, 0)), dict(gt=1, lt=1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_ranges_that_keep_nothing(kw, dtype):
    lo, hi = rng(dtype, **kw)
    assert lo > hi


def test_float32_helpers_match_numpy():
    r = np.random.default_rng(0)
    values = np.concatenate([r.standard_normal(200) * 10.0 ** r.integers(-40, 40, 200),
                             [0.0, -0.0, 1.0, -1.0, 3.4e38, -3.4e38, 1e-45, -1e-45]])
    for v in values:
        v = float(v)
        with np.errstate(over="ignore"):
            assert round_to("float32", v) == float(np.float32(v))
        f = round_to("float32", v)
        if math.isfinite(f):
            for up in (True, False):
                want = float(np.nextafter(np.float32(f), np.float32(np.inf if up else -np.inf)))
                assert next_float("float32", f, up) == want, (f, up)


def test_numpy_bool_is_not_a_bound():
    with pytest.raises(TypeError, match=r"gt must be a number; got numpy\.bool"):
        scanlab.select(FakeDLPack((4,)), gt=np.True_)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64", "float32", "float64"])
def test_closed_range_keeps_what_the_comparisons_keep(dtype):
    """The device's lo <= x <= hi, simulated with NumPy in x's dtype, against the tests
    themselves: exact Python comparisons for integers, comparisons in x's dtype for floats."""
    r = np.random.default_rng(1)
    if dtype.startswith("float"):
        x = np.concatenate([r.standard_normal(3000) * 4, [np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-45, 0.1, 0.5]])
        x = x.astype(dtype)
        bounds = [0, -0.0, 0.1, 0.5, -1.5, 2.25, 1e-45, 3e38, 1e39, -1e300, math.inf, -math.inf, math.nan, 2**70]
        ref = x

        def cmp(b):
            with np.errstate(over="ignore"):
                return np.array(b, dtype=np.float64).astype(dtype)  # the bound in x's dtype
    else:
        info = np.iinfo(dtype)
        x = np.concatenate([r.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True),
                            np.array([info.min, info.max, 0, 1, 2, 3], dtype=dtype)])
        bounds = [0, 1, 2.5, -2.5, -1, int(info.max), int(info.min), int(info.max) - 0.5, 2**70, -(2**70),
                  math.inf, -math.inf, math.nan, float(2**62)]
        ref = x.astype(object)

        def cmp(b):
            return b
    tests = []
    for b in bounds:
        tests.append((dict(gt=b), lambda b=b: ref > cmp(b)))
        tests.append((dict(lt=b), lambda b=b: ref < cmp(b)))
        for c in bounds[::3]:
            tests.append((dict(between=(c, b)), lambda b=b, c=c: (ref >= cmp(c)) & (ref <= cmp(b))))
            tests.append((dict(gt=c, lt=b), lambda b=b, c=c: (ref > cmp(c)) & (ref < cmp(b))))
    for kw, keep in tests:
        lo, hi = rng(dtype, **kw)
        lo_t, hi_t = np.array([lo, hi]).astype(dtype) if dtype.startswith("float") else \
            (np.array(lo, dtype=dtype), np.array(hi, dtype=dtype))  # refuses a value out of range
        with np.errstate(invalid="ignore"):
            got = (lo_t <= x) & (x <= hi_t)
            want = np.asarray(keep(), dtype=bool)
        assert np.array_equal(got, want), (kw, lo, hi)
