#!/usr/bin/env python3
"""scanlab's linear recurrence against the ML libraries that solve the same recurrence.

    scripts/linrec-peers.py [--wheel-dir .devrun/wheels] [--out DIR] [--quick]
                            [--cases scanlab,triton,warp,jax] [--modes fwd,fwd+bwd]
                            [--shapes 8x1536x4096,8x1536x65536] [--dtypes float32,bfloat16]
                            [--repeat 20] [--warmup 3] [--seed 42] [--app build/bin/scanlab-linrec]

x[t] = a[t] x[t-1] + b[t] along T of (B, C, T) arrays (x[-1] = 0), forward and forward +
backward (dL/da, dL/db from a given dL/dx), timed for

  scanlab                    build/bin/scanlab-linrec --bench on [B*C, T] row-major batches
                             (fwd+bwd = the forward's median + the backward pass's, --backward)
  accelerated-scan-triton    accelerated_scan.scalar.scan(gates, tokens) (Triton), with autograd
  accelerated-scan-warp      accelerated_scan.warp.scan (CUDA C++, built at first import by
                             torch.utils.cpp_extension.load_inline: needs nvcc and ninja)
  jax                        jax.lax.associative_scan over the affine maps (a, b), jitted; fwd+bwd
                             through jax.vjp with the cotangent dL/dx

and a device-to-device copy (torch) of the same element type for the "% of memcpy" column.
The cases run in child processes (one per implementation and shape): an out-of-memory is
recorded for its case, and an illegal memory access or any death of the process for the
case it hit, the rest going on in a fresh process; a case that makes no progress for
--case-timeout seconds is killed and recorded as a timeout. a is uniform in [0.5, 1), b and dL/dx
normal (seeded); CUDA events (JAX: block_until_ready) around each run, the median of
--repeat runs after --warmup. Results: a Markdown table on standard output, and
DIR/results.json, DIR/results.md (rewritten after every case, so a run cut short keeps
what it measured) and DIR/logs/ (each case's output). docs/results/linrec-peers/README.md
says what each field means.

--wheel-dir: a folder with the accelerated-scan wheel (and a ninja wheel for the CUDA C++
backend's build where the machine has no ninja), installed with pip --no-index into a
private folder (no network needed). Exit status 0 when every selected case ran or was
recorded as not available, 1 when a case failed (error, crash, out of memory, timeout), 2
for a bad command line.
"""

import argparse
import datetime
import glob
import importlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (short aliases, what it is in the table)
IMPLS = {
    "scanlab": ((), "scanlab-linrec"),
    "accelerated-scan-triton": (("triton", "as-triton"), "accelerated-scan (Triton)"),
    "accelerated-scan-warp": (("warp", "as-warp"), "accelerated-scan (CUDA C++ warp)"),
    "jax": (("jax-associative-scan",), "jax.lax.associative_scan"),
}
MODES = ("fwd", "fwd+bwd")
DTYPES = {"float32": 4, "bfloat16": 2}  # element bytes
FULL_SHAPES = "8x1536x4096,8x1536x65536"
QUICK_SHAPES = "2x32x1024,2x16x65536"
# Elements moved per element of the problem by a perfect implementation: the forward reads
# a and b and writes x; the backward reads a, x and dL/dx and writes dL/da and dL/db
# (primitives/docs/linrec.md; the per-sequence x0 and dL/dx0 are left out).
ARRAYS_MOVED = {"fwd": 3, "fwd+bwd": 8}
# The largest error / S_t (S_t = |a_t| S_{t-1} + |b_t|, the size of the terms) that the
# sanity check accepts: it is there to catch wrong semantics (a direction, swapped
# operands: errors of order 1), not to grade accuracy.
CHECK_LIMIT = {"float32": 1e-3, "bfloat16": 0.25}
CHECK_ROWS = 4
FAILED = ("error", "crashed", "out of memory", "timeout")


def parse_shape(text):
    parts = text.lower().replace("(", "").replace(")", "").replace(",", "x").split("x")
    dims = [int(p) for p in parts if p.strip()]
    if len(dims) != 3 or min(dims) < 1:
        raise ValueError(f"'{text}': expected BxCxT, e.g. 8x1536x4096")
    return tuple(dims)


def shape_label(shape):
    return "({}, {}, {})".format(*shape)


def shape_key(shape):
    return "{}x{}x{}".format(*shape)


def resolve_impl(name):
    for impl, (aliases, _) in IMPLS.items():
        if name == impl or name in aliases:
            return impl
    return None


# ---------------------------------------------------------------------------------------
# The children: told what to do by a JSON file (a list of jobs: shape, dtype, pass), they
# write one JSON line as each job starts and one when it ends to a results file, flushed at
# once, so that what was measured before a crash survives it and the parent knows which
# job the crash hit.
# ---------------------------------------------------------------------------------------


class Emitter:
    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8")

    def __call__(self, record):
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()


def summary(samples):
    return {"median_ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples),
            "mean_ms": statistics.fmean(samples), "runs": len(samples), "samples_ms": samples}


def check_rows(rows_total):
    picked = sorted({0, rows_total // 3, (2 * rows_total) // 3, rows_total - 1})
    return picked[:CHECK_ROWS]


def reference_errors(a, b, x, g=None, da=None, db=None):
    """Errors of x (and dL/da, dL/db) on a few sequences against a float64 sequential solve.
    Arrays are float64 [rows, T]. Each error is over the size of its terms: |x - ref| / S
    with S_t = |a_t| S_{t-1} + |b_t|; dL/db against S_g (the same for the reverse
    recurrence), dL/da against S_g[t] S[t-1]."""
    import numpy as np
    tiny = 1e-300
    at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
    steps, rows = at.shape
    ref_x, size_x = np.empty_like(at), np.empty_like(at)
    state, size = np.zeros(rows), np.zeros(rows)
    for t in range(steps):
        state = at[t] * state + bt[t]
        size = np.abs(at[t]) * size + np.abs(bt[t])
        ref_x[t], size_x[t] = state, size
    errors = {"x": float(np.max(np.abs(x.T - ref_x) / np.maximum(size_x, tiny)))}
    if g is not None:
        gt = np.ascontiguousarray(g.T)
        ref_g, size_g = np.empty_like(gt), np.empty_like(gt)
        state, size = np.zeros(rows), np.zeros(rows)
        for t in range(steps - 1, -1, -1):
            after = at[t + 1] if t + 1 < steps else np.zeros(rows)
            state = gt[t] + after * state
            size = np.abs(gt[t]) + np.abs(after) * size
            ref_g[t], size_g[t] = state, size
        prev_x = np.vstack([np.zeros((1, rows)), ref_x[:-1]])
        prev_size = np.vstack([np.zeros((1, rows)), size_x[:-1]])
        errors["db"] = float(np.max(np.abs(db.T - ref_g) / np.maximum(size_g, tiny)))
        errors["da"] = float(np.max(np.abs(da.T - ref_g * prev_x) / np.maximum(size_g * prev_size, tiny)))
    return errors


def check_record(errors, dtype):
    worst = max(errors.values())
    return {"errors_over_size": errors, "worst": worst, "limit": CHECK_LIMIT[dtype],
            "passed": bool(worst <= CHECK_LIMIT[dtype])}


def module_version(name):
    try:
        return __import__(name).__version__
    except Exception:  # absent or broken: the report says so, the run goes on
        return None


def classify(text):
    low = text.lower()
    if "out of memory" in low or "resource_exhausted" in low or "outofmemory" in low:
        return "out of memory"
    sticky = ("illegal memory access", "cuda error", "misaligned address", "unspecified launch failure",
              "illegal instruction", "cudaerror", "device-side assert", "cuda_error")
    if any(s in low for s in sticky):
        return "crashed"
    return "error"


def short_error(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return " / ".join(lines[:3])[:600]


def job_key(job):
    return f"{shape_key(job['shape'])}|{job['dtype']}|{job['mode']}"


def child_torch(spec, emit):
    """accelerated-scan's jobs ({shape, dtype, mode}) in order, the data of a (shape, dtype)
    generated once for its modes."""
    impl = spec["impl"]
    try:
        import torch
        if impl == "accelerated-scan-triton":
            from accelerated_scan.scalar import scan
        else:
            from accelerated_scan.warp import scan
        import accelerated_scan
    except Exception as exc:  # for the warp backend the import is the build
        for job in spec["jobs"]:
            emit({"job": job_key(job), "status": "error", "error": "import: " + short_error(exc)})
        return
    emit({"versions": {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                       "triton": module_version("triton"),
                       "accelerated_scan": getattr(accelerated_scan, "__version__", "unknown"),
                       "accelerated_scan_path": os.path.dirname(accelerated_scan.__file__)}})

    def time_runs(fn):
        for _ in range(spec["warmup"]):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(spec["repeat"])]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(spec["repeat"])]
        for start, end in zip(starts, ends):
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]

    data = {}
    for job in spec["jobs"]:
        shape, dtype_name, mode = tuple(job["shape"]), job["dtype"], job["mode"]
        dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype_name]
        rows = check_rows(shape[0] * shape[1])
        emit({"started": job_key(job)})

        def rows_of(t):
            return t.detach().reshape(-1, shape[2])[rows].double().cpu().numpy()

        try:
            if data.get("key") != (shape, dtype_name):
                data.clear()
                torch.cuda.empty_cache()
                gen = torch.Generator(device="cuda")
                gen.manual_seed(spec["seed"])
                f32 = dict(generator=gen, device="cuda", dtype=torch.float32)
                data["a"] = torch.rand(shape, **f32).mul_(0.5).add_(0.5).to(dtype)
                data["b"] = torch.randn(shape, **f32).to(dtype)
                data["key"] = (shape, dtype_name)
            a, b = data["a"], data["b"]
            if mode == "fwd":
                with torch.no_grad():
                    samples = time_runs(lambda: scan(a, b))
                    x = scan(a, b)
                errors = reference_errors(rows_of(a), rows_of(b), rows_of(x))
                del x
            else:
                gen = torch.Generator(device="cuda")
                gen.manual_seed(spec["seed"] + 2)
                g = torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
                ag, bg = a.detach().requires_grad_(), b.detach().requires_grad_()

                def forward_backward():
                    out = scan(ag, bg)
                    return out, torch.autograd.grad(out, (ag, bg), g)

                samples = time_runs(forward_backward)
                x, (da, db) = forward_backward()
                errors = reference_errors(rows_of(a), rows_of(b), rows_of(x), rows_of(g), rows_of(da), rows_of(db))
                del x, da, db, g, ag, bg
            emit({"job": job_key(job), "status": "ok", **summary(samples),
                  "check": check_record(errors, dtype_name)})
        except Exception as exc:
            oom = isinstance(exc, torch.cuda.OutOfMemoryError)
            status = "out of memory" if oom else classify(str(exc))
            emit({"job": job_key(job), "status": status, "error": short_error(exc)})
            if status == "crashed":
                os._exit(3)  # the CUDA context is lost: the parent starts a new process for the rest
            data.clear()
        torch.cuda.empty_cache()


def child_jax(spec, emit):
    """jax.lax.associative_scan's jobs, as child_torch."""
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except Exception as exc:
        for job in spec["jobs"]:
            emit({"job": job_key(job), "status": "not available", "error": "import jax: " + short_error(exc)})
        return
    backend = jax.default_backend()
    emit({"versions": {"jax": jax.__version__, "jaxlib": module_version("jaxlib"), "jax_backend": backend,
                       "jax_devices": [str(d) for d in jax.devices()]}})
    if backend != "gpu":
        for job in spec["jobs"]:
            emit({"job": job_key(job), "status": "not available",
                  "error": f"jax has no GPU backend (it runs on {backend})"})
        return

    def combine(earlier, later):  # later after earlier: (a2 a1, a2 b1 + b2)
        a1, b1 = earlier
        a2, b2 = later
        return a2 * a1, a2 * b1 + b2

    def solve(a, b):
        return jax.lax.associative_scan(combine, (a, b), axis=-1)[1]

    def solve_and_grad(a, b, g):
        x, pullback = jax.vjp(solve, a, b)
        da, db = pullback(g)
        return x, da, db

    forward, forward_backward = jax.jit(solve), jax.jit(solve_and_grad)

    def time_runs(fn, *args):
        for _ in range(spec["warmup"]):
            jax.block_until_ready(fn(*args))
        samples = []
        for _ in range(spec["repeat"]):
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            samples.append((time.perf_counter() - start) * 1e3)
        return samples

    key_a, key_b, key_g = jax.random.split(jax.random.PRNGKey(spec["seed"]), 3)
    data = {}
    for job in spec["jobs"]:
        shape, dtype_name, mode = tuple(job["shape"]), job["dtype"], job["mode"]
        dtype = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}[dtype_name]
        rows = jnp.asarray(check_rows(shape[0] * shape[1]))
        emit({"started": job_key(job)})

        def rows_of(t):
            return np.asarray(t.reshape(-1, shape[2])[rows].astype(jnp.float32)).astype(np.float64)

        try:
            if data.get("key") != (shape, dtype_name):
                data.clear()
                data["a"] = jax.random.uniform(key_a, shape, jnp.float32, 0.5, 1.0).astype(dtype)
                data["b"] = jax.random.normal(key_b, shape, jnp.float32).astype(dtype)
                data["key"] = (shape, dtype_name)
            a, b = data["a"], data["b"]
            if mode == "fwd":
                samples = time_runs(forward, a, b)
                x = forward(a, b)
                errors = reference_errors(rows_of(a), rows_of(b), rows_of(x))
                del x
            else:
                g = jax.random.normal(key_g, shape, jnp.float32).astype(dtype)
                samples = time_runs(forward_backward, a, b, g)
                x, da, db = forward_backward(a, b, g)
                errors = reference_errors(rows_of(a), rows_of(b), rows_of(x), rows_of(g), rows_of(da), rows_of(db))
                del x, da, db, g
            emit({"job": job_key(job), "status": "ok", **summary(samples),
                  "check": check_record(errors, dtype_name), "timer": "host clock around block_until_ready"})
        except Exception as exc:
            status = classify(str(exc))
            emit({"job": job_key(job), "status": status, "error": short_error(exc)})
            if status == "crashed":
                os._exit(3)
            data.clear()


def child_memcpy(spec, emit):
    """The device's copy bandwidth (bytes read + written per second) for each (elements, dtype)."""
    import torch
    props = torch.cuda.get_device_properties(0)
    emit({"versions": {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                       "triton": module_version("triton")},
          "device": {"name": props.name, "compute_capability": f"{props.major}.{props.minor}",
                     "sm_count": props.multi_processor_count, "global_bytes": props.total_memory}})
    for item in spec["copies"]:
        dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[item["dtype"]]
        try:
            src = torch.ones(item["n"], dtype=dtype, device="cuda")
            dst = torch.empty_like(src)
            for _ in range(spec["warmup"]):
                dst.copy_(src)
            torch.cuda.synchronize()
            samples = []
            for _ in range(spec["repeat"]):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                dst.copy_(src)
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end))
            median = statistics.median(samples)
            bytes_moved = 2 * item["n"] * DTYPES[item["dtype"]]
            emit({"copy": item, "status": "ok", "median_ms": median, "gbps": bytes_moved / median / 1e6,
                  "bytes_read_and_written": bytes_moved})
            del src, dst
            torch.cuda.empty_cache()
        except Exception as exc:
            emit({"copy": item, "status": classify(str(exc)), "error": short_error(exc)})
            torch.cuda.empty_cache()


def child_build(spec, emit):
    """Imports accelerated_scan.warp: torch builds its CUDA extension (once per
    TORCH_EXTENSIONS_DIR)."""
    start = time.time()
    try:
        importlib.import_module("accelerated_scan.warp")
        emit({"build": "ok", "seconds": time.time() - start})
    except BaseException as exc:  # SystemExit from a failed ninja build included
        emit({"build": "failed", "seconds": time.time() - start, "error": short_error(exc)})


def child_main(spec_path):
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    emit = Emitter(spec["results"])
    kind = spec["kind"]
    if kind == "memcpy":
        child_memcpy(spec, emit)
    elif kind == "build":
        child_build(spec, emit)
    elif kind == "jax":
        child_jax(spec, emit)
    else:
        child_torch(spec, emit)
    return 0


# ---------------------------------------------------------------------------------------
# The parent: installs the wheels, runs the children and the app, writes the report.
# ---------------------------------------------------------------------------------------


class Runner:
    def __init__(self, args):
        self.args = args
        self.out = os.path.abspath(args.out)
        self.work = os.path.abspath(args.work_dir)
        self.logs = os.path.join(self.out, "logs")
        os.makedirs(self.logs, exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="2",
                        TORCH_EXTENSIONS_DIR=os.path.join(self.work, "torch_extensions"),
                        XLA_PYTHON_CLIENT_MEM_FRACTION=args.jax_mem_fraction)
        self.notes = []

    def log_path(self, name):
        return os.path.join(self.logs, name.replace("/", "_").replace(" ", "_") + ".log")

    def start_logged(self, cmd, log_name):
        """Starts cmd in its own process group, its output appended to a log."""
        path = self.log_path(log_name)
        log = open(path, "a", encoding="utf-8", errors="replace")
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=ROOT,
                                start_new_session=True)
        log.close()
        return proc, path

    def wait_logged(self, proc, path, timeout, progress_file=None):
        """Waits for a process started by start_logged; returns (rc, timed_out, log tail).
        With progress_file, the timeout counts from the file's last growth (a child writes a
        line as each job starts and ends), else from now."""
        deadline = time.monotonic() + timeout
        seen = -1
        while proc.poll() is None:
            if progress_file is not None:
                size = os.path.getsize(progress_file) if os.path.exists(progress_file) else 0
                if size != seen:
                    seen, deadline = size, time.monotonic() + timeout
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)  # the child and what it started (nvcc, ninja)
                proc.wait()
                return proc.returncode, True, tail_of(path)
            time.sleep(0.2)
        return proc.returncode, False, tail_of(path)

    def run_logged(self, cmd, log_name, timeout):
        proc, path = self.start_logged(cmd, log_name)
        return self.wait_logged(proc, path, timeout)

    def start_child(self, spec, log_name):
        fd, results = tempfile.mkstemp(prefix="child-", suffix=".jsonl", dir=self.work)
        os.close(fd)
        spec = dict(spec, results=results)
        spec_path = results[:-6] + ".json"
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        proc, log = self.start_logged([self.args.python, os.path.abspath(__file__), "--child", spec_path], log_name)
        return proc, log, results, spec_path

    def finish_child(self, started, timeout, per_job):
        """Waits for a child; returns (its records, rc, timed_out, log tail)."""
        proc, log, results, spec_path = started
        rc, timed_out, tail = self.wait_logged(proc, log, timeout, results if per_job else None)
        records = []
        with open(results, encoding="utf-8") as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass  # a line cut by a kill
        for p in (results, spec_path):
            os.remove(p)
        return records, rc, timed_out, tail

    def run_child(self, spec, log_name, timeout, per_job=False):
        return self.finish_child(self.start_child(spec, log_name), timeout, per_job)

    # -- wheels ------------------------------------------------------------------------
    def install_wheels(self):
        """Installs accelerated-scan (and ninja where the machine lacks it) from --wheel-dir
        into a private folder that the children find first on PYTHONPATH and PATH."""
        info = {"wheel_dir": self.args.wheel_dir, "installed": [], "method": None}
        if not self.args.wheel_dir:
            info["method"] = "none (no --wheel-dir: accelerated_scan must be importable already)"
            return info
        wheels = sorted(glob.glob(os.path.join(self.args.wheel_dir, "*.whl")))
        scan_wheels = [w for w in wheels if os.path.basename(w).startswith("accelerated_scan-")]
        ninja_wheels = [w for w in wheels if os.path.basename(w).startswith("ninja-")]
        if not scan_wheels:
            info["method"] = f"none (no accelerated_scan-*.whl in {self.args.wheel_dir})"
            return info
        target = os.path.join(self.work, "site")
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        want = [scan_wheels[-1]]
        have_ninja = shutil.which("ninja") is not None
        if not have_ninja and ninja_wheels:
            want.append("ninja")
        cmd = [self.args.python, "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check",
               "--target", target, "--find-links", self.args.wheel_dir] + want
        rc, _, tail = self.run_logged(cmd, "pip-install", 300)
        if rc == 0:
            info["method"] = "pip install --no-index --no-deps --target"
        else:
            # No pip: a wheel is a zip; accelerated-scan is pure Python, ninja one binary.
            info["method"] = "unzipped (pip failed: " + tail.strip().splitlines()[-1][:200] + ")" if tail.strip() \
                else "unzipped (pip failed)"
            with zipfile.ZipFile(scan_wheels[-1]) as z:
                z.extractall(target)
            machine = platform.machine()
            fitting = [w for w in ninja_wheels if machine in os.path.basename(w)]
            if not have_ninja and fitting:
                with zipfile.ZipFile(fitting[-1]) as z:
                    for name in z.namelist():
                        if name.endswith("/scripts/ninja"):
                            os.makedirs(os.path.join(target, "bin"), exist_ok=True)
                            dest = os.path.join(target, "bin", "ninja")
                            with z.open(name) as src, open(dest, "wb") as dst:
                                shutil.copyfileobj(src, dst)
                            os.chmod(dest, 0o755)
        info["installed"] = [os.path.basename(scan_wheels[-1])] + (
            ["ninja"] if not have_ninja and os.path.exists(os.path.join(target, "bin", "ninja")) else [])
        info["ninja"] = "on PATH" if have_ninja else (
            "from the wheel" if os.path.exists(os.path.join(target, "bin", "ninja")) else "missing")
        self.env["PYTHONPATH"] = os.pathsep.join([target] + [p for p in [self.env.get("PYTHONPATH")] if p])
        self.env["PATH"] = os.pathsep.join([os.path.join(target, "bin"), self.env.get("PATH", "")])
        return info

    # -- scanlab -------------------------------------------------------------------------
    def run_scanlab(self, shape, dtype, modes):
        """The app's forward benchmark, and with fwd+bwd its backward one (--backward times the
        backward pass alone): fwd+bwd = the forward's median + the backward pass's."""
        batch, length = shape[0] * shape[1], shape[2]
        app, name = self.args.app, self.args.scanlab_dtype(dtype)
        if not os.path.exists(app):
            return {m: {"status": "not available", "error": f"{app} does not exist (build scanlab first)"}
                    for m in modes}, None
        passes, report_doc = {}, None
        for pass_name in ["forward"] + (["backward"] if "fwd+bwd" in modes else []):
            json_path = os.path.join(self.out, "scanlab", f"{shape_key(shape)}-{dtype}-{pass_name}.json")
            os.makedirs(os.path.dirname(json_path), exist_ok=True)
            if os.path.exists(json_path):
                os.remove(json_path)
            cmd = [app, "--batch", str(batch), "--n", str(length), "--dtype", name, "--a-range", "0.5,1",
                   "--seed", str(self.args.seed), "--bench", "--variants", "production",
                   "--repeat", str(self.args.repeat), "--json", json_path, "-q"]
            if self.args.quick:
                cmd.append("--validate")
            if pass_name == "backward":
                cmd.append("--backward")  # last: it takes an optional file name
            rc, timed_out, tail = self.run_logged(cmd, f"scanlab-{shape_key(shape)}-{dtype}-{pass_name}",
                                                  self.args.case_timeout)
            passes[pass_name] = self.read_scanlab(json_path, rc, timed_out, tail, dtype, name)
            if passes[pass_name]["status"] == "ok":
                with open(json_path, encoding="utf-8") as f:
                    report_doc = json.load(f)
            elif passes[pass_name]["status"] == "not available":
                break  # the backward pass would be refused the same way
        fwd, bwd = passes["forward"], passes.get("backward")
        results = {}
        if "fwd" in modes:
            results["fwd"] = fwd
        if "fwd+bwd" in modes:
            if fwd["status"] == "ok" and bwd and bwd["status"] == "ok":
                results["fwd+bwd"] = {
                    "status": "ok", "median_ms": fwd["median_ms"] + bwd["median_ms"],
                    "min_ms": fwd["min_ms"] + bwd["min_ms"], "max_ms": fwd["max_ms"] + bwd["max_ms"],
                    "runs": min(fwd["runs"], bwd["runs"]), "forward": fwd, "backward": bwd,
                    "validated": None if fwd["validated"] is None else bool(fwd["validated"] and bwd["validated"]),
                    "note": "forward + backward medians (two runs of the app)"}
            else:
                results["fwd+bwd"] = dict(fwd if fwd["status"] != "ok" else bwd)
        return results, report_doc

    def read_scanlab(self, json_path, rc, timed_out, tail, dtype, name):
        """One run of the app -> a result record (its "scanlab" row)."""
        if timed_out:
            return {"status": "timeout", "error": f"killed after {self.args.case_timeout} s"}
        last = tail.strip().splitlines()[-1][:300] if tail.strip() else ""
        doc = None
        if os.path.exists(json_path):
            with open(json_path, encoding="utf-8") as f:
                doc = json.load(f)
        if rc != 0 or doc is None or not doc.get("bench"):
            why = f"exit {rc}: {last}" if last else f"exit {rc}"
            if dtype != "float32":
                return {"status": "not available", "error": f"scanlab-linrec --dtype {name} failed ({why})"}
            return {"status": "crashed" if rc < 0 else "error", "error": why}
        ran = doc["result"].get("dtype")
        if ran != name and not (dtype == "bfloat16" and ran in ("bfloat16", "bf16")):
            return {"status": "not available", "error": f"asked for {name}, the app ran {ran}"}
        row = next((r for r in doc["bench"]["rows"] if r["variant"] == "scanlab"), None)
        if row is None:
            return {"status": "error", "error": "no 'scanlab' row in the app's report"}
        checks = doc.get("validation") or []
        return {"status": "ok", "median_ms": row["median_ms"], "min_ms": row["min_ms"], "max_ms": row["max_ms"],
                "mean_ms": row["mean_ms"], "runs": row["runs"], "samples_ms": row["samples_ms"],
                "noise": row.get("noise"), "app_memcpy_gbps": doc["bench"]["ceilings"].get("memcpy_gbps"),
                "cub_ms": row.get("baseline_ms"), "throttled": doc["bench"].get("throttled"),
                "validated": all(c["passed"] for c in checks) if checks else None,
                "report": os.path.relpath(json_path, self.out)}

    # -- torch and jax peers -------------------------------------------------------------
    def run_peer(self, impl, jobs, log_name):
        """Jobs ({shape, dtype, mode}) of one implementation, in as few processes as the
        failures allow: a crash costs its job and the rest run in a fresh process.
        Returns ({job key: result}, versions)."""
        results, versions = {}, {}
        pending = list(jobs)
        kind = "jax" if impl == "jax" else "torch"
        while pending:
            spec = {"kind": kind, "impl": impl, "jobs": pending, "seed": self.args.seed,
                    "warmup": self.args.warmup, "repeat": self.args.repeat}
            records, rc, timed_out, tail = self.run_child(spec, log_name, self.args.case_timeout, per_job=True)
            keys = {job_key(j) for j in pending}
            started = []
            for r in records:
                versions.update(r.get("versions", {}))
                if r.get("started") in keys:
                    started.append(r["started"])
                if r.get("job") in keys:
                    results[r["job"]] = {k: v for k, v in r.items() if k != "job"}
            before = len(pending)
            pending = [j for j in pending if job_key(j) not in results]
            if not pending:
                break
            # The job the process was in when it died or hung: the last one started. None (it
            # ended after recording a lost CUDA context): the rest go to a new process; none
            # and nothing recorded (it died on its way to the first): the next one.
            unfinished = [k for k in started if k not in results]
            if not unfinished and len(pending) < before and not timed_out:
                continue
            running = unfinished[-1] if unfinished else job_key(pending[0])
            last = " / ".join(ln for ln in tail.strip().splitlines() if not ln.startswith("$ "))
            last = last[-600:]
            if timed_out:
                results[running] = {"status": "timeout",
                                    "error": f"killed after {self.args.case_timeout} s without progress"}
            else:
                why = f"signal {-rc}" if rc < 0 else f"exit {rc}"
                results[running] = {"status": "crashed", "error": f"the process died ({why}): {last}"}
            pending = [j for j in pending if job_key(j) != running]
        return results, versions

    def start_warp_build(self):
        """Builds accelerated-scan's CUDA C++ backend in the background (nvcc on the CPU while
        the other cases use the GPU); finish_warp_build waits for it."""
        if self.args.skip_build:
            return None
        # A build killed earlier leaves torch's lock file behind, and the next import would wait on it.
        for lock in glob.glob(os.path.join(self.env["TORCH_EXTENSIONS_DIR"], "*", "lock")):
            os.remove(lock)
        self.build_started = time.monotonic()
        return self.start_child({"kind": "build"}, "accelerated-scan-warp-build")

    def finish_warp_build(self, started):
        if started is None:
            return {"status": "skipped", "error": None}
        left = max(1.0, self.args.build_timeout - (time.monotonic() - self.build_started))
        records, rc, timed_out, tail = self.finish_child(started, left, per_job=False)
        rec = next((r for r in records if "build" in r), None)
        if timed_out:
            return {"status": "timeout", "error": f"killed after {self.args.build_timeout} s"}
        if rec is None:
            last = " / ".join(tail.strip().splitlines()[-3:])[-600:]
            return {"status": "crashed", "error": f"exit {rc}: {last}"}
        return {"status": rec["build"], "seconds": rec["seconds"], "error": rec.get("error")}

    def memcpy(self, items):
        records, rc, timed_out, tail = self.run_child(
            {"kind": "memcpy", "copies": items, "warmup": self.args.warmup, "repeat": self.args.repeat},
            "memcpy", self.args.case_timeout, per_job=True)
        return records, (None if records else f"exit {rc}: " + " / ".join(tail.strip().splitlines()[-3:])[-400:])


def tail_of(path, limit=4000):
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - limit))
        return f.read().decode("utf-8", errors="replace")


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


# ---------------------------------------------------------------------------------------
# The report.
# ---------------------------------------------------------------------------------------


def fill_derived(rows, memcpy_gbps, app_memcpy):
    """Elements/s, GB/s, % of memcpy and scanlab's speed-up for every row that ran."""
    scanlab = {(r["shape_key"], r["dtype"], r["mode"]): r for r in rows
               if r["impl"] == "scanlab" and r["status"] == "ok"}
    for r in rows:
        r["n"] = r["shape"][0] * r["shape"][1] * r["shape"][2]
        r["bytes"] = ARRAYS_MOVED[r["mode"]] * r["n"] * DTYPES[r["dtype"]]
        ceiling = memcpy_gbps.get((r["shape_key"], r["dtype"]))
        source = "torch copy"
        if ceiling is None and app_memcpy.get(r["dtype"]):
            ceiling, source = app_memcpy[r["dtype"]], "scanlab-linrec's cudaMemcpy"
        r["memcpy_gbps"], r["memcpy_source"] = ceiling, (source if ceiling else None)
        if r["status"] != "ok":
            for key in ("gelem_per_s", "gbps", "pct_of_memcpy", "scanlab_speedup"):
                r[key] = None
            continue
        ms = r["median_ms"]
        r["gelem_per_s"] = r["n"] / ms / 1e6
        r["gbps"] = r["bytes"] / ms / 1e6
        r["pct_of_memcpy"] = 100.0 * r["gbps"] / ceiling if ceiling else None
        ref = scanlab.get((r["shape_key"], r["dtype"], r["mode"]))
        r["scanlab_speedup"] = ms / ref["median_ms"] if ref else None


def fmt(value, digits, suffix=""):
    return "" if value is None else f"{value:.{digits}f}{suffix}"


def fmt_ms(ms):
    if ms is None:
        return ""
    return f"{ms:.4f}" if ms < 0.1 else f"{ms:.3f}" if ms < 10 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}"


def check_text(r):
    if r["status"] != "ok":
        return ""
    if r["impl"] == "scanlab":
        v = r.get("validated")
        return "validated" if v else ("FAILED validation" if v is False else "(its tests)")
    c = r.get("check")
    if not c:
        return ""
    return f"{'ok' if c['passed'] else 'WRONG?'} ({c['worst']:.1e})"


def status_text(r):
    if r["status"] == "ok":
        return r.get("note", "")
    text = r["status"]
    if r.get("error"):
        text += ": " + r["error"]
    return text.replace("|", "/").replace("\n", " ")[:240]


def markdown(doc):
    env, lines = doc["environment"], []
    lines.append("# scanlab's linear recurrence against the ML peers" + (" (DRY RUN: fake timings)"
                                                                        if doc["dry_run"] else ""))
    lines.append("")
    lines.append(f"- device: {env.get('device')} (driver {env.get('driver')}), {doc['timestamp']}")
    lines.append(f"- {env.get('scanlab_version') or 'scanlab-linrec (version unknown)'} "
                 f"(commit {env.get('scanlab_commit')}); "
                 f"torch {env.get('torch')} (CUDA {env.get('torch_cuda')}), triton {env.get('triton')}, "
                 f"accelerated-scan {env.get('accelerated_scan')}, jax {env.get('jax')} (jaxlib {env.get('jaxlib')}); "
                 f"nvcc: {env.get('nvcc')}; python {env.get('python')}")
    wb = doc.get("warp_build") or {}
    lines.append(f"- accelerated-scan's CUDA C++ backend build: {wb.get('status')}"
                 + (f" ({wb['seconds']:.0f} s)" if wb.get("seconds") is not None else "")
                 + (f": {wb['error']}" if wb.get("error") else ""))
    s = doc["settings"]
    lines.append(f"- median of {s['repeat']} runs after {s['warmup']} warm-up runs; a uniform in [0.5, 1), "
                 f"b and dL/dx normal, seed {s['seed']} (scanlab-linrec: b and dL/dx uniform in [-1, 1))")
    lines.append(f"- bytes per element: forward {ARRAYS_MOVED['fwd']} arrays (a, b read, x written), "
                 f"forward+backward {ARRAYS_MOVED['fwd+bwd']} (+ a, x, dL/dx read, dL/da, dL/db written); "
                 "% of memcpy against a torch device-to-device copy of the same dtype (bytes read + written)")
    lines.append("- speed-up: the implementation's time over scanlab's (> 1: scanlab is faster); "
                 "check: max error / size of terms on 4 sequences against a float64 sequential solve")
    lines.append("")
    if doc["memcpy"]:
        lines.append("| memcpy | dtype | GB/s |")
        lines.append("|---|---|---|")
        for m in doc["memcpy"]:
            lines.append(f"| {m['shape']} | {m['dtype']} | {fmt(m.get('gbps'), 0)} |")
        lines.append("")
    lines.append("| shape (B, C, T) | dtype | pass | implementation | ms | Gelem/s | GB/s | % of memcpy "
                 "| scanlab speed-up | check | note |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in doc["results"]:
        speedup = "" if r["impl"] == "scanlab" else fmt(r.get("scanlab_speedup"), 2, "x")
        lines.append(f"| {shape_label(r['shape'])} | {r['dtype']} | {r['mode']} | {IMPLS[r['impl']][1]} "
                     f"| {fmt_ms(r.get('median_ms') if r['status'] == 'ok' else None)} "
                     f"| {fmt(r.get('gelem_per_s'), 1)} "
                     f"| {fmt(r.get('gbps'), 0)} | {fmt(r.get('pct_of_memcpy'), 1, ' %')} | {speedup} "
                     f"| {check_text(r)} | {status_text(r)} |")
    lines.append("")
    return "\n".join(lines)


def write_outputs(doc, out):
    if not out:
        return
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
        f.write(markdown(doc))


def fake_results(cases, args):
    """--dry-run: plausible timings from rough bandwidths, and one of each failure kind, to
    exercise the report without a GPU."""
    speed = {"scanlab": 0.9, "accelerated-scan-triton": 0.6, "accelerated-scan-warp": 0.7, "jax": 0.15}
    out = {}
    for impl, shape, dtype, mode in cases:
        n = shape[0] * shape[1] * shape[2]
        ms = ARRAYS_MOVED[mode] * n * DTYPES[dtype] / (3000e9 * speed[impl] * (0.5 if mode == "fwd+bwd" else 1)) * 1e3
        samples = [ms * (1 + 0.01 * k) for k in range(args.repeat)]
        rec = {"status": "ok", **summary(samples),
               "check": check_record({"x": 2e-7 if dtype == "float32" else 2e-3}, dtype)}
        if impl == "scanlab":
            rec = {"status": "ok", **summary(samples), "validated": None}
        if impl == "accelerated-scan-warp" and dtype == "bfloat16" and mode == "fwd+bwd":
            rec = {"status": "crashed", "error": "the process died (signal 6): illegal memory access (dry run)"}
        if impl == "jax" and mode == "fwd+bwd" and n > 1e8:
            rec = {"status": "out of memory", "error": "RESOURCE_EXHAUSTED (dry run)"}
        out[(impl, shape, dtype, mode)] = rec
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "linrec-peers"),
                        help="write results.json, results.md and logs/ here (default: build/linrec-peers)")
    parser.add_argument("--work-dir", default=os.path.join(ROOT, "build", "linrec-peers-work"),
                        help="the private site-packages and torch's extension builds (kept between runs: "
                             "the CUDA C++ backend is built once)")
    parser.add_argument("--wheel-dir", default=None,
                        help="install accelerated-scan (and ninja) from the wheels here, offline "
                             "(default: .devrun/wheels where it exists)")
    parser.add_argument("--quick", action="store_true",
                        help=f"small shapes ({QUICK_SHAPES}), 10 runs, 2 warm-up: a smoke test of seconds; "
                             "scanlab-linrec also --validate")
    parser.add_argument("--cases", default="scanlab,triton,warp,jax",
                        help="implementations to run: scanlab, accelerated-scan-triton (triton), "
                             "accelerated-scan-warp (warp), jax (default: all)")
    parser.add_argument("--modes", default=",".join(MODES), help="fwd, fwd+bwd (default: both)")
    parser.add_argument("--shapes", default=None, help=f"BxCxT,... (default {FULL_SHAPES})")
    parser.add_argument("--dtypes", default="float32,bfloat16", help="float32, bfloat16 (default: both)")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per case (default 20, --quick 10; >= 10)")
    parser.add_argument("--warmup", type=int, default=None, help="warm-up runs per case (default 3, --quick 2)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--app", default=os.path.join(ROOT, "build", "bin", "scanlab-linrec"),
                        help="the scanlab-linrec binary (default build/bin/scanlab-linrec)")
    parser.add_argument("--scanlab-bf16-name", default="bfloat16",
                        help="what scanlab-linrec's --dtype calls bfloat16 (default bfloat16)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the child processes "
                        "(with torch and jax; default this one)")
    parser.add_argument("--case-timeout", type=int, default=240,
                        help="seconds a case may go without progress before its process "
                        "is killed and recorded as a timeout (default 240)")
    parser.add_argument("--build-timeout", type=int, default=420,
                        help="seconds for building accelerated-scan's CUDA C++ backend (default 420)")
    parser.add_argument("--skip-build", action="store_true",
                        help="do not build the CUDA C++ backend up front (its cases then build it, each within "
                             "--case-timeout)")
    parser.add_argument("--jax-mem-fraction", default="0.92", help="XLA_PYTHON_CLIENT_MEM_FRACTION (default 0.92)")
    parser.add_argument("--dry-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.child)

    impls = []
    for name in [c.strip() for c in args.cases.split(",") if c.strip()]:
        impl = resolve_impl(name)
        if impl is None:
            parser.error(f"--cases: unknown implementation '{name}' (known: {', '.join(IMPLS)})")
        if impl not in impls:
            impls.append(impl)
    impls.sort(key=list(IMPLS).index)  # scanlab first: the peers' rows compare with it
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            parser.error(f"--modes: unknown '{m}' (known: {', '.join(MODES)})")
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in dtypes:
        if d not in DTYPES:
            parser.error(f"--dtypes: unknown '{d}' (known: {', '.join(DTYPES)})")
    try:
        shapes = [parse_shape(s) for s in (args.shapes or (QUICK_SHAPES if args.quick else FULL_SHAPES)).split(",")
                  if s.strip()]
    except ValueError as exc:
        parser.error(f"--shapes: {exc}")
    if not (impls and modes and dtypes and shapes):
        parser.error("nothing to run: --cases, --modes, --dtypes and --shapes each need at least one entry")
    args.repeat = args.repeat if args.repeat is not None else (10 if args.quick else 20)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 3)
    if args.repeat < 10:
        parser.error("--repeat: at least 10 runs")
    if args.warmup < 1:
        parser.error("--warmup: at least 1 (the first call compiles)")
    if args.wheel_dir is None and os.path.isdir(os.path.join(ROOT, ".devrun", "wheels")):
        args.wheel_dir = os.path.join(ROOT, ".devrun", "wheels")
    if args.wheel_dir and not os.path.isdir(args.wheel_dir):
        parser.error(f"--wheel-dir {args.wheel_dir}: no such folder")
    args.scanlab_dtype = lambda d: args.scanlab_bf16_name if d == "bfloat16" else d

    # Small shapes first: a run cut short has the whole table of the smaller problem.
    shapes.sort(key=lambda s: s[0] * s[1] * s[2])
    cases = [(impl, shape, dtype, mode) for shape in shapes for dtype in dtypes for impl in impls for mode in modes]
    doc = {"tool": "scripts/linrec-peers.py", "format_version": 1, "dry_run": bool(args.dry_run),
           "command_line": [sys.argv[0]] + (argv if argv is not None else sys.argv[1:]),
           "timestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "settings": {"shapes": [list(s) for s in shapes], "dtypes": dtypes, "modes": modes, "cases": impls,
                        "repeat": args.repeat, "warmup": args.warmup, "seed": args.seed,
                        "a": "uniform [0.5, 1)", "b": "normal (0, 1)", "grad_x": "normal (0, 1)",
                        "arrays_moved": ARRAYS_MOVED, "check_limit": CHECK_LIMIT},
           "environment": {"python": platform.python_version()}, "memcpy": [], "warp_build": None,
           "wheels": None, "results": []}
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    rows = {}

    def publish():
        ordered = []
        for case in cases:
            if case in rows:
                impl, shape, dtype, mode = case
                ordered.append({"impl": impl, "implementation": IMPLS[impl][1], "shape": list(shape),
                                "shape_key": shape_key(shape), "dtype": dtype, "mode": mode, **rows[case]})
        memcpy_gbps = {(m["shape_key"], m["dtype"]): m["gbps"] for m in doc["memcpy"] if m.get("gbps")}
        fill_derived(ordered, memcpy_gbps, doc["environment"].get("app_memcpy_gbps", {}))
        doc["results"] = ordered
        write_outputs(doc, out)

    if args.dry_run:
        doc["environment"].update({"device": "(dry run)", "driver": None})
        doc["memcpy"] = [{"shape": shape_label(s), "shape_key": shape_key(s), "dtype": d, "gbps": 3000.0}
                         for s in shapes for d in dtypes]
        doc["warp_build"] = {"status": "skipped (dry run)"}
        for case, rec in fake_results(cases, args).items():
            rows[case] = rec
        publish()
        print(markdown(doc))
        return 0

    started_at = time.monotonic()
    runner = Runner(args)
    env = doc["environment"]
    smi = command_output(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
    if smi:
        first = smi.splitlines()[0].split(", ")
        env.update({"device": first[0], "driver": first[1] if len(first) > 1 else None,
                    "device_memory": first[2] if len(first) > 2 else None})
    nvcc = command_output(["nvcc", "--version"]) or command_output(["/usr/local/cuda/bin/nvcc", "--version"])
    env["nvcc"] = nvcc.splitlines()[-1] if nvcc else "not found"
    if os.path.exists(args.app):
        env["scanlab_version"] = command_output([args.app, "--version"])
    doc["wheels"] = runner.install_wheels()
    print(f"linrec-peers: wheels: {doc['wheels']['method']}", file=sys.stderr)
    publish()

    def progress(label, key, rec):
        ms = f" {rec['median_ms']:.3f} ms" if rec.get("status") == "ok" else ""
        err = f" ({rec.get('error')})" if rec.get("status") != "ok" and rec.get("error") else ""
        print(f"linrec-peers: {label} {key}: {rec.get('status')}{ms}{err}"[:400], file=sys.stderr, flush=True)

    # accelerated-scan's CUDA C++ backend builds on the CPU while the GPU measures the others.
    warp_started = runner.start_warp_build() if "accelerated-scan-warp" in impls else None
    warp_build = None

    # The copy bandwidth, once per (shape, dtype).
    items = [{"n": s[0] * s[1] * s[2], "dtype": d, "shape": shape_key(s)} for s in shapes for d in dtypes]
    records, why = runner.memcpy(items)
    for r in records:
        env.update(r.get("versions", {}))
        if "device" in r:
            env["device_properties"] = r["device"]
        if "copy" in r:
            c = r["copy"]
            doc["memcpy"].append({"shape": shape_label(parse_shape(c["shape"])), "shape_key": c["shape"],
                                  "dtype": c["dtype"], "n": c["n"], "status": r["status"],
                                  "gbps": r.get("gbps"), "median_ms": r.get("median_ms"), "error": r.get("error")})
    if why:
        runner.notes.append(f"torch copy not measured: {why}")
        print(f"linrec-peers: torch copy not measured: {why}", file=sys.stderr)
    publish()

    # Shape by shape (the smaller first); the peers in one process per shape (all dtypes and
    # passes), the app once per dtype and pass.
    for shape in shapes:
        for impl in impls:
            if impl == "scanlab":
                for dtype in dtypes:
                    recs, report = runner.run_scanlab(shape, dtype, modes)
                    if report:
                        build = report["build"]
                        env["scanlab_commit"] = build["commit"] + ("-dirty" if build["dirty"] else "")
                        env.setdefault("app_memcpy_gbps", {})[dtype] = report["bench"]["ceilings"]["memcpy_gbps"]
                        if not env.get("device"):
                            env["device"] = report["bench"]["device"]["name"]
                            env["driver"] = report["bench"].get("driver_version")
                    for mode in modes:
                        rows[(impl, shape, dtype, mode)] = recs[mode]
                        progress(f"{impl} {shape_label(shape)}", f"{dtype} {mode}", recs[mode])
                    publish()
                continue
            jobs = [{"shape": list(shape), "dtype": d, "mode": m} for d in dtypes for m in modes]
            if impl == "accelerated-scan-warp" and warp_build is None:
                print("linrec-peers: waiting for accelerated-scan's CUDA C++ backend to build", file=sys.stderr,
                      flush=True)
                warp_build = doc["warp_build"] = runner.finish_warp_build(warp_started)
                print(f"linrec-peers: build: {warp_build['status']}"
                      + (f" ({warp_build['error']})" if warp_build.get("error") else ""), file=sys.stderr)
            if impl == "accelerated-scan-warp" and warp_build["status"] not in ("ok", "skipped"):
                recs = {job_key(j): {"status": "not available",
                                     "error": f"its build failed ({warp_build['status']}: {warp_build.get('error')})"}
                        for j in jobs}
            else:
                recs, versions = runner.run_peer(impl, jobs, f"{impl}-{shape_key(shape)}")
                env.update(versions)
            for j in jobs:
                rec = recs.get(job_key(j), {"status": "error", "error": "no result"})
                rows[(impl, shape, j["dtype"], j["mode"])] = rec
                progress(f"{impl} {shape_label(shape)}", f"{j['dtype']} {j['mode']}", rec)
            publish()
    if warp_started is not None and warp_build is None:  # the build was started but no case waited for it
        warp_build = doc["warp_build"] = runner.finish_warp_build(warp_started)
    doc["wall_seconds"] = round(time.monotonic() - started_at, 1)
    doc["notes"] = runner.notes
    publish()
    print(markdown(doc))
    print(f"linrec-peers: wrote {os.path.join(out, 'results.json')} and results.md", file=sys.stderr)
    failed = [r for r in doc["results"] if r["status"] in FAILED]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
