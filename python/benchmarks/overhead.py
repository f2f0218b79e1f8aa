# Where the time of a small scanlab call from PyTorch goes (issue #23's call overhead).
# python3 python/benchmarks/overhead.py [--short] (a GPU and torch needed): --short prints the two headline rows only.
import time, sys
import torch
import scanlab
from scanlab import _scanlab as C
from scanlab import _api, _arrays

dev = torch.device("cuda", 0)
def rate(f, n=4000):
    for _ in range(200): f()
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(n): f()
    torch.cuda.synchronize(); return (time.perf_counter() - t) / n * 1e6

size = 1 << 10
x = torch.rand(size, device=dev)
s = torch.cuda.current_stream().cuda_stream
out = torch.empty_like(x)
code = _arrays.DTYPE_CODE["float32"]; op = _api._OP_CODE["sum"]
nbytes = C.scan(code, op, False, 0.0, x.data_ptr(), out.data_ptr(), size, 0, 0, 0, s, 0)
temp = torch.empty(1 << 16, dtype=torch.uint8, device=dev)
rows = {
    "torch.cumsum": lambda: torch.cumsum(x, 0),
    "scanlab.cumsum": lambda: scanlab.cumsum(x),
}
if "--short" not in sys.argv:
    rows.update({
        "torch.empty(n, dtype=, device=)": lambda: torch.empty((size,), dtype=torch.float32, device=dev),
        "torch.empty_like(x)": lambda: torch.empty_like(x),
        "_cuda_getCurrentRawStream": lambda: torch._C._cuda_getCurrentRawStream(0),
        "Call + arg (no launch)": lambda: _arrays.Call("cumsum", None).arg(x, "x", dtypes=_arrays.DTYPES, ndims=(1,)),
        "_C.scan query": lambda: C.scan(code, op, False, 0.0, x.data_ptr(), out.data_ptr(), size, 0, 0, 0, s, 0),
        "_C.scan given temp": lambda: C.scan(code, op, False, 0.0, x.data_ptr(), out.data_ptr(), size, temp.data_ptr(), nbytes, 1, s, 0),
        "_C.scan workspace (one call)": lambda: C.scan(code, op, False, 0.0, x.data_ptr(), out.data_ptr(), size, temp.data_ptr(), 1 << 16, 3, s, 0),
    })
print(f"n = {size}, temp bytes {nbytes}")
for k, f in rows.items():
    vals = sorted(rate(f) for _ in range(5))
    print(f"  {k:34s} {vals[2]:8.2f} us/call (median of 5 x 4000; min {vals[0]:.2f})")
