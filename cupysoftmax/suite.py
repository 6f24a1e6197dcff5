"""The peer benchmark suite: cupysoftmax against torch, torch.compile, Triton, Liger, cupyx and JAX.

One process, one GPU, one timing method (bench.median_ms: CUDA events on
CuPy's current stream, L2 flushed before each call) for every provider,
each checked against the float64 reference before it is timed. Importing
needs no GPU; CuPy and the peers are imported inside the functions that use them.

A provider is `make_<name>(x, op)`: given the CuPy (M, N) input and the op
(softmax or log_softmax; for a gradient, x is a Gradient: the forward's
input x, its output y and the gradient dy; for op "axis", an Over: an N-d x
and the middle axis to run over), it prepares its input views and output once and returns a
no-argument function that runs the op over the last axis (or the Over's) and returns the
result. It raises Unsupported, saying why, when the peer is not installed or
cannot serve the op, dtype or shape. The gradient moves 3 * M * N * itemsize
bytes (reads y and dy, writes dx); its copy baseline moves as many.
"""
from __future__ import annotations

import datetime
import functools
import gc
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy

from . import bench, device, dtypes, reference
from . import variants as registry

# The ops a run can time, as records name them ("op"), and the function each is.
FORWARD = "forward"
AXIS = "axis"
OPS = registry.RECORD_OPS
# op "axis": softmax over a middle axis, x read in place (issue 4 part 4); its
# shapes are these, whatever the suite file holds. M counts the softmaxes
# (outer x inner), N is the axis' length.
AXIS_SHAPES = [{"tag": "axis", "shape": [32, 19, 512, 512], "axis": 1, "dtype": "float32"},
               {"tag": "axis", "shape": [8192, 8192], "axis": 0, "dtype": "float32"}]
SWEEP_M = 4096
SWEEP_N = range(256, 65536 + 1, 128)
CLIFF_DROP = 0.15  # a sweep point this far below the better of its two neighbours is a cliff
CHECK_ELEMENTS = 2**24  # at most this many elements (and 64 rows) are compared with the reference
ROUNDS = 5  # each provider of a shape is timed in this many interleaved rounds (bench.interleaved_ms)


class Unsupported(Exception):
    """The provider is not installed here or cannot serve this dtype or shape; the message says which."""


class Over(NamedTuple):
    """An "axis" provider's input: x, the axis its softmax runs over, and the other axis the check samples."""

    x: object
    axis: int
    sample_axis: int


class Gradient(NamedTuple):
    """A gradient provider's input: the forward's x, y = softmax(x) (cupysoftmax's), and dy."""

    x: object
    y: object
    dy: object


# -- the suite file ------------------------------------------------------------------


def load_shapes(path) -> list[dict]:
    """The shapes of a suite JSON file ({"shapes": [{tag, M, N, dtype}, ...]}); ValueError if malformed."""
    with open(path) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("shapes"), list):
        raise ValueError(f"{path}: expected an object with a list under \"shapes\"")
    shapes = []
    for i, s in enumerate(data["shapes"]):
        if not isinstance(s, dict) or not {"M", "N", "dtype"} <= s.keys():
            raise ValueError(f"{path}: shape {i} needs M, N and dtype; got {s!r}")
        for key in ("M", "N"):
            if not isinstance(s[key], int) or isinstance(s[key], bool) or s[key] < 1:
                raise ValueError(f"{path}: shape {i} has {key} = {s[key]!r}; expected a positive integer")
        try:
            dtype = dtypes.name(dtypes.parse(s["dtype"]))
        except TypeError as exc:
            raise ValueError(f"{path}: shape {i}: {exc}") from None
        shapes.append({"tag": str(s.get("tag", "")), "M": s["M"], "N": s["N"], "dtype": dtype})
    return shapes


def op_names(spec: str | None) -> list[str]:
    """Op names from "a,b" (None or empty: forward only), in the order given; ValueError for an unknown one."""
    names = [name.strip() for name in (spec or FORWARD).split(",") if name.strip()] or [FORWARD]
    unknown = [name for name in names if name not in OPS]
    if unknown:
        raise ValueError(f"unknown op {unknown[0]!r}; choose from: {', '.join(OPS)}")
    return names


def provider_names(spec: str | None) -> list[str]:
    """Provider names from "a,b,..." (None or empty: all), in the order given; ValueError for an unknown one."""
    if not spec:
        return list(PROVIDERS)
    names = [name.strip() for name in spec.split(",") if name.strip()]
    unknown = [name for name in names if name not in PROVIDERS]
    if unknown:
        raise ValueError(f"unknown provider {unknown[0]!r}; choose from: {', '.join(PROVIDERS)}")
    return names


# -- providers ---------------------------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise Unsupported(f"torch is not importable ({exc})") from None
    if not torch.cuda.is_available():
        raise Unsupported("torch sees no CUDA device")
    return torch


def _as_torch(torch, x):
    """A torch view of the CuPy array through DLPack (no copy), on CuPy's device."""
    torch.cuda.set_device(x.device.id)
    return torch.from_dlpack(x)


def _on_cupy_stream(torch, fn):
    """`fn`, made to launch on CuPy's current stream, where median_ms flushes L2 and records its events.

    torch follows CuPy here (not the other way round), so the copy baseline,
    cupysoftmax and CuPy's own peers need no switching; Triton and Liger launch
    on torch's current stream, so they follow too. Both libraries start on the
    legacy default stream (pointer 0): then `fn` comes back unchanged and no
    stream context costs host time inside the timed region.
    """
    import cupy

    ptr = cupy.cuda.get_current_stream().ptr
    if torch.cuda.current_stream().cuda_stream == ptr:
        return fn
    stream = torch.cuda.ExternalStream(ptr)

    def on_stream():
        with torch.cuda.stream(stream):
            return fn()

    return on_stream


def _no_gradient(op, why: str) -> None:
    if op in registry.BACKWARD:
        raise Unsupported(why)


def _over(x):
    """(array, axis) of a forward provider's input: an Over's, else x over the last axis."""
    return (x.x, x.axis) if isinstance(x, Over) else (x, -1)


def _last_axis_only(x, who: str) -> None:
    if isinstance(x, Over):
        raise Unsupported(f"{who} computes over the last axis only")


def make_copy(x, op):
    """cudaMemcpyAsync moving the op's bytes (read + write): the ceiling ("% of copy"), whatever the op."""
    if op in registry.BACKWARD:
        return bench.copy_call(3 * x.y.size * x.y.itemsize // 2)
    a, _ = _over(x)
    return bench.copy_call(a.size * a.itemsize)


def make_cupysoftmax(x, op):
    """cupysoftmax's function for op on (x, axis=-1, out=y), y allocated once (NaN first: unwritten elements show)."""
    import cupy

    from . import api, gradients

    if op in registry.BACKWARD:
        dx = cupy.full(x.y.shape, numpy.nan, x.y.dtype)
        function = gradients.GRADIENTS[op]
        return lambda: function(x.y, x.dy, axis=-1, out=dx)
    a, axis = _over(x)
    y = cupy.full(a.shape, numpy.nan, a.dtype)
    function = api.FUNCTIONS[op]
    return lambda: function(a, axis=axis, out=y)


def make_torch(x, op):
    """torch.softmax or log_softmax(t, dim=-1) on a DLPack view of x; torch allocates each output, as users do.

    The gradients: torch._softmax_backward_data / _log_softmax_backward_data(dy, y, -1, dtype),
    the kernels autograd runs.
    """
    torch = _torch()
    if op in registry.BACKWARD:
        y, dy = _as_torch(torch, x.y), _as_torch(torch, x.dy)
        function = torch._softmax_backward_data if op == registry.SOFTMAX_BACKWARD else torch._log_softmax_backward_data
        return _on_cupy_stream(torch, lambda: function(dy, y, -1, y.dtype))
    a, axis = _over(x)
    t = _as_torch(torch, a)
    function = getattr(torch, op)
    return _on_cupy_stream(torch, lambda: function(t, dim=axis))


def _softmax_over(t, dim=-1):
    import torch

    return torch.softmax(t, dim=dim)


def _log_softmax_over(t, dim=-1):
    import torch

    return torch.log_softmax(t, dim=dim)


def _softmax_backward_last(y, dy):
    return y * (dy - (dy * y).sum(dim=-1, keepdim=True))


def _log_softmax_backward_last(y, dy):
    return dy - y.exp() * dy.sum(dim=-1, keepdim=True)


@functools.cache
def _compiled(torch, op):
    """One torch.compile'd function per op for the whole run, static shapes; enough recompiles for every shape."""
    config = torch._dynamo.config
    for limit in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(config, limit):
            setattr(config, limit, max(getattr(config, limit), 1024))
    functions = {registry.SOFTMAX: _softmax_over, registry.LOG_SOFTMAX: _log_softmax_over,
                 registry.SOFTMAX_BACKWARD: _softmax_backward_last,
                 registry.LOG_SOFTMAX_BACKWARD: _log_softmax_backward_last}
    return torch.compile(functions[op], dynamic=False)


def make_torch_compile(x, op):
    """torch.compile (Inductor, dynamic=False) of a function computing the op; compiled here, not timed.

    The gradients are written out (y * (dy - sum(dy * y)), dy - exp(y) * sum(dy)) for Inductor to fuse.
    """
    torch = _torch()
    if op in registry.BACKWARD:
        args = (_as_torch(torch, x.y), _as_torch(torch, x.dy))
    else:
        a, axis = _over(x)
        args = (_as_torch(torch, a), axis)  # dynamo specializes on the int: one graph per axis
    compiled = _compiled(torch, op)
    for _ in range(3):
        compiled(*args)
    return _on_cupy_stream(torch, lambda: compiled(*args))


def make_triton(x, op):
    """Our own Triton kernel on the fused-softmax tutorial's idea (peer_triton): persistent, the row in registers."""
    _no_gradient(op, "the Triton tutorial kernel has no backward")
    _last_axis_only(x, "the Triton tutorial kernel")
    torch = _torch()
    try:
        from . import peer_triton
    except ImportError as exc:
        raise Unsupported(f"triton is not importable ({exc})") from None
    t = _as_torch(torch, x)
    y = torch.full_like(t, float("nan"))
    try:
        run = peer_triton.launcher(t, y, device.facts(x.device.id).sms, log=op == registry.LOG_SOFTMAX)
    except ValueError as exc:  # the row does not fit in registers
        raise Unsupported(f"the row is held in registers: {exc}") from None
    return _on_cupy_stream(torch, run)


def make_liger(x, op):
    """Liger-Kernel's LigerSoftmaxFunction (Triton) on a DLPack view of x.

    softmax's gradient: its backward kernel, run by torch.autograd.grad on a
    graph built once (the forward is not timed).
    """
    if op not in (registry.SOFTMAX, registry.SOFTMAX_BACKWARD):
        raise Unsupported(f"Liger has no {op} of its own (its log-softmax lives inside its cross-entropy loss)")
    _last_axis_only(x, "LigerSoftmaxFunction")
    torch = _torch()
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
    except ImportError as exc:
        raise Unsupported(f"liger_kernel is not importable ({exc})") from None
    if op == registry.SOFTMAX_BACKWARD:
        return _liger_backward(torch, LigerSoftmaxFunction, x.x, x.dy)
    t = _as_torch(torch, x)
    run = _on_cupy_stream(torch, lambda: LigerSoftmaxFunction.apply(t))
    try:
        run()
    except RuntimeError as exc:  # Liger up to 0.8.5 refuses rows longer than one 65536 block
        if "blocksize" not in str(exc):
            raise
        raise Unsupported(str(exc)) from None
    return run


def _liger_backward(torch, function, x, dy):
    """torch.autograd.grad through Liger's softmax of x, on a graph kept for every call (the forward runs once).

    Liger's backward reads the output its forward saved: its own softmax of x,
    within rounding of cupysoftmax's y that the reference's check starts from.
    """
    t = _as_torch(torch, x).detach().requires_grad_()
    out = function.apply(t)
    grad = _as_torch(torch, dy)
    return _on_cupy_stream(torch, lambda: torch.autograd.grad(out, t, grad, retain_graph=True)[0])


def make_cupyx(x, op):
    """cupyx.scipy.special.softmax (or log_softmax)(x, axis=-1, or the Over's axis)."""
    _no_gradient(op, "cupyx.scipy.special has no softmax gradient")
    a, axis = _over(x)
    if a.dtype == dtypes.BFLOAT16:
        raise Unsupported(f"cupyx.scipy.special.{op} has no bfloat16 path")
    import cupyx.scipy.special

    function = getattr(cupyx.scipy.special, op)

    def run():
        return function(a, axis=axis)

    if op == registry.LOG_SOFTMAX:
        # it zeroes non-finite row maxima through a boolean mask, which waits
        # on the device (the gate's watchdog failed every call on the H100)
        run.note = "timed through the host, ungated: cupyx's log_softmax waits on the device (a boolean-mask assignment)"
        run.syncs_host = True
    return run


@functools.cache
def _jax_function(jax, op, axis=-1):
    return jax.jit(functools.partial(getattr(jax.nn, op), axis=axis))


JAX_NOTE = ("timed through the host: CuPy's stream is synchronised before the call (JAX runs on its own "
            "streams) and the call ends with block_until_ready, so host dispatch and wake-up are included")


def make_jax(x, op):
    """jax.jit(jax.nn.<op>) on a JAX array imported from x through DLPack; blocks until the result is ready.

    JAX launches on its own streams, so the event pair median_ms records on
    CuPy's stream only brackets JAX's work because the host waits: first for
    CuPy's stream (the L2 flush and the start event), then for JAX's result.
    """
    _no_gradient(op, "the suite times JAX's forward only")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave the GPU's memory to CuPy and torch
    try:
        import jax
        import jax.dlpack
    except ImportError as exc:
        raise Unsupported(f"jax is not importable ({exc})") from None
    if not any(d.platform == "gpu" for d in jax.devices()):
        raise Unsupported("JAX sees no GPU")
    import cupy

    array, axis = _over(x)
    a = jax.dlpack.from_dlpack(array)
    f = _jax_function(jax, op, axis)
    stream = cupy.cuda.get_current_stream()

    def run():
        stream.synchronize()
        return f(a).block_until_ready()

    run.note = JAX_NOTE
    run.syncs_host = True  # bench.median_ms times it ungated
    return run


PROVIDERS = {
    "copy": make_copy,
    "cupysoftmax": make_cupysoftmax,
    "torch": make_torch,
    "torch_compile": make_torch_compile,
    "triton": make_triton,
    "liger": make_liger,
    "cupyx": make_cupyx,
    "jax": make_jax,
}


# -- checking and timing --------------------------------------------------------------


def _sample_rows(m: int, n: int) -> numpy.ndarray:
    """Rows compared with the reference: evenly spread, first and last included, at most CHECK_ELEMENTS in all."""
    k = max(2, min(64, CHECK_ELEMENTS // n))
    return numpy.unique(numpy.linspace(0, m - 1, min(m, k)).round().astype(numpy.int64))


def _host_rows(out, rows: numpy.ndarray, along: int = 0) -> numpy.ndarray:
    """Indices `rows` along axis `along` of a provider's result (CuPy, torch or JAX array) as a NumPy array."""
    import cupy

    if isinstance(out, cupy.ndarray):
        return cupy.asnumpy(cupy.take(out, cupy.asarray(rows), axis=along))
    if type(out).__module__.startswith("torch"):
        import torch

        return out.index_select(along, torch.as_tensor(rows, device=out.device)).float().cpu().numpy()
    return numpy.take(numpy.asarray(out), rows, axis=along)


def _short(exc: Exception) -> str:
    """The exception's type and the first line of its message, at most 300 characters."""
    lines = str(exc).strip().splitlines()
    return (f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__)[:300]


def _record(shape: dict, provider: str, ms=None, ok=None, note="", op: str = FORWARD) -> dict:
    arrays = 3 if OPS[op] in registry.BACKWARD else 2  # read x, write y; or read y and dy, write dx
    nbytes = arrays * shape["M"] * shape["N"] * dtypes.parse(shape["dtype"]).itemsize
    return {"M": shape["M"], "N": shape["N"], "dtype": shape["dtype"], "provider": provider,
            "median_ms": ms, "GBps": None if ms is None else nbytes / ms / 1e6,
            "op": op, "ok": ok, "note": note, **{key: shape[key] for key in ("shape", "axis") if key in shape}}


def _prepare(name: str, x, op: str, rows, expected, scale=None):
    """(fn, None) for a provider set up and checked on x, or (None, (ok, note)) when it is skipped or fails.

    expected (and the gradients' scale, reference.gradient_scale) are the reference's values on `rows`.
    """
    try:
        fn = PROVIDERS[name](x, OPS[op])
    except Unsupported as exc:
        return None, (None, f"skipped: {exc}")
    except Exception as exc:  # a peer's own failure must not stop the suite
        return None, (False, f"setup failed: {_short(exc)}")
    if name != "copy":
        try:
            along = x.sample_axis if isinstance(x, Over) else 0
            err = reference.error_ratio(_host_rows(fn(), rows, along), expected, _dtype(x), OPS[op], scale)
        except Exception as exc:
            return None, (False, _short(exc))
        if not err <= 1.0:
            return None, (False, f"check failed: max error {err:.3g} x tolerance")
    return fn, None


def _free_gpu_memory() -> None:
    import cupy

    gc.collect()
    cupy.get_default_memory_pool().free_all_blocks()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def run_suite(shapes, providers=None, repeat: int = 50, progress=None, ops=(FORWARD,)) -> list[dict]:
    """One record per (shape, op, provider): checked against the reference, then timed by bench.interleaved_ms.

    Input: standard normal x 3 in the shape's dtype, drawn fresh per shape and op.
    `progress`, if given, is called with each record as it is made.
    """
    names = list(PROVIDERS) if providers is None else list(providers)
    unknown = [n for n in names if n not in PROVIDERS]
    if unknown:
        raise ValueError(f"unknown provider {unknown[0]!r}; choose from: {', '.join(PROVIDERS)}")
    records = []
    runs = [(shape, op) for shape in shapes for op in ops if op != AXIS]
    runs += [(shape, AXIS) for shape in axis_shapes() if AXIS in ops]  # the suite file's shapes are rows
    for shape, op in runs:
        records += _run_shape(shape, op, names, repeat, progress)
        _free_gpu_memory()  # the shape's providers, their outputs and x are gone with _run_shape's frame
    return records


def axis_shapes() -> list[dict]:
    """AXIS_SHAPES with M (the softmaxes: the array's size over the axis' length) and N (that length)."""
    return [{**s, "M": math.prod(s["shape"]) // s["shape"][s["axis"]], "N": s["shape"][s["axis"]]}
            for s in AXIS_SHAPES]


def _run_shape(shape: dict, op: str, names: list[str], repeat: int, progress) -> list[dict]:
    """The records of one shape: every provider set up and checked first, then all timed in interleaved rounds.

    Timing them together lets state drifting in the process (torch.compile's
    first call, say) reach them alike (bench.interleaved_ms).
    """
    x, rows, expected, scale = _inputs(shape, OPS[op])
    prepared = {name: _prepare(name, x, op, rows, expected, scale) for name in names}
    ready = {name: fn for name, (fn, _) in prepared.items() if fn is not None}
    timed = bench.interleaved_ms(ready, repeat=repeat, rounds=ROUNDS)
    records = []
    for name in names:
        fn, failed = prepared[name]
        if fn is None:
            record = _record(shape, name, None, *failed, op=op)
        elif isinstance(timed[name], Exception):
            record = _record(shape, name, None, False, _short(timed[name]), op=op)
        else:
            record = _record(shape, name, timed[name], True, getattr(fn, "note", ""), op=op)
        records.append(record)
        if progress is not None:
            progress(record)
    return records


def _inputs(shape: dict, op: str):
    """(x, rows, expected, scale): the op's input, the rows checked, the reference on them (and its scale).

    The forward reads x, standard normal x 3. A gradient reads a Gradient: such
    an x, y = cupysoftmax's softmax (or log_softmax) of it, dy standard normal x 3.
    """
    import cupy

    from . import api

    dtype = dtypes.parse(shape["dtype"])
    x = bench.random_input(shape["M"], shape["N"], dtype)
    if "axis" in shape:  # softmax over a middle axis: checked on indices spread along another axis
        x = x.reshape(shape["shape"])
        over = Over(x, shape["axis"], 1 if shape["axis"] == 0 else 0)
        length = x.shape[over.sample_axis]
        rows = _sample_rows(length, x.size // length)
        sample = cupy.asnumpy(cupy.take(x, cupy.asarray(rows), axis=over.sample_axis))
        return over, rows, reference.REFERENCES[op](sample, axis=over.axis), None
    rows = _sample_rows(shape["M"], shape["N"])
    picked = cupy.asarray(rows)
    if op not in registry.BACKWARD:
        return x, rows, reference.REFERENCES[op](cupy.asnumpy(x[picked]), axis=-1), None
    y = (api.log_softmax if op == registry.LOG_SOFTMAX_BACKWARD else api.softmax)(x, axis=-1)
    dy = bench.random_input(shape["M"], shape["N"], dtype)
    y_rows, dy_rows = cupy.asnumpy(y[picked]), cupy.asnumpy(dy[picked])
    return (Gradient(x, y, dy), rows, reference.GRADIENTS[op](y_rows, dy_rows),
            reference.gradient_scale(y_rows, dy_rows, op))


def _dtype(x):
    """The element type of a provider's input."""
    return x.y.dtype if isinstance(x, Gradient) else _over(x)[0].dtype


def sweep(m: int = SWEEP_M, n_values=SWEEP_N, dtype="float32", repeat: int = 10) -> list[dict]:
    """cupysoftmax and the copy baseline over many N at one M: the same check and timing, fewer repeats."""
    shapes = [{"M": m, "N": n, "dtype": dtypes.name(dtypes.parse(dtype))} for n in n_values]
    return run_suite(shapes, ["copy", "cupysoftmax"], repeat=repeat)


def cliffs(sweep_records) -> list[int]:
    """N values where cupysoftmax's GB/s is more than CLIFF_DROP below the better of its two neighbours."""
    points = sorted((r["N"], r["GBps"]) for r in sweep_records
                    if r["provider"] == "cupysoftmax" and r.get("GBps") is not None)
    return [n for (_, left), (n, here), (_, right) in zip(points, points[1:], points[2:])
            if here < (1 - CLIFF_DROP) * max(left, right)]


def host_cost(repeat: int = 2000, rounds: int = 5) -> dict:
    """Host microseconds per call: cupysoftmax.softmax on 8 x 1000 float32 against a bare RawKernel launch.

    Also the floor any CuPy function returning a new array pays: allocating the
    result (cupy.ndarray) plus that bare launch. (Until 2026-11-24 the floor
    launched an empty kernel with softmax's six arguments through RawKernel;
    softmax's remembered call, whose arguments are packed once, now costs less
    than that: scripts/probe_host_path.py.) The three loops take turns for
    `rounds` rounds and each keeps its fastest round, so a busy spell of the
    host does not land on one of them only.
    """
    import cupy

    from . import api

    x = cupy.random.standard_normal((8, 1000), dtype=numpy.float32)
    noop = cupy.RawKernel(r'extern "C" __global__ void noop(float* p) {}', "noop")

    loops = {
        "softmax_us": lambda: api.softmax(x, axis=-1),
        "raw_kernel_us": lambda: noop((1,), (1,), (x,)),
        "alloc_and_bare_launch_us": lambda: noop((1,), (1,), (cupy.ndarray(x.shape, x.dtype),)),
    }
    for fn in loops.values():
        fn()  # compile, plan, load
        fn()  # softmax's second call is the remembered one
    best = fastest_us(loops, repeat, rounds)
    return {**best, "ratio": best["softmax_us"] / best["raw_kernel_us"], "repeat": repeat, "rounds": rounds}


def fastest_us(loops: dict, repeat: int, rounds: int) -> dict:
    """{name: host microseconds a call of loops[name]()}: `repeat` calls in a row, the loops taking turns for
    `rounds` rounds, each keeping its fastest round; the stream synchronized around each loop."""
    import cupy

    best = dict.fromkeys(loops, math.inf)
    for _ in range(rounds):
        for name, fn in loops.items():
            cupy.cuda.get_current_stream().synchronize()
            start = time.perf_counter()
            for _ in range(repeat):
                fn()
            cupy.cuda.get_current_stream().synchronize()
            best[name] = min(best[name], (time.perf_counter() - start) / repeat * 1e6)
    return best


# -- reporting ------------------------------------------------------------------------


def _by_shape(records, op: str = FORWARD) -> dict:
    """{(M, N, dtype): {provider: record}} of one op's records, shapes in the order first seen."""
    table: dict = {}
    for r in records:
        if r.get("op", FORWARD) == op:
            table.setdefault((r["M"], r["N"], r["dtype"]), {})[r["provider"]] = r
    return table


def _ops_present(records) -> list[str]:
    return [op for op in OPS if any(r.get("op", FORWARD) == op for r in records)]


def _peers_present(records) -> list[str]:
    present = {r["provider"] for r in records}
    return [p for p in PROVIDERS if p in present and p != "copy"]


def _cell(record) -> str:
    if record is None or (record["median_ms"] is None and record.get("ok") is None):
        return "–"
    if record["median_ms"] is None:
        return "fail" if record["note"].startswith("check failed") else "error"
    return f"{record['GBps']:.0f}"


def _speedup(row) -> float | None:
    """torch's time over cupysoftmax's on one shape, or None unless both ran."""
    ours, theirs = row.get("cupysoftmax"), row.get("torch")
    if ours is None or theirs is None or ours["median_ms"] is None or theirs["median_ms"] is None:
        return None
    return theirs["median_ms"] / ours["median_ms"]


def _pct_copy(row) -> float | None:
    ours, copy = row.get("cupysoftmax"), row.get("copy")
    if ours is None or copy is None or ours["median_ms"] is None or copy["median_ms"] is None:
        return None
    return 100 * copy["median_ms"] / ours["median_ms"]


def geomean_speedup(records, op: str = FORWARD) -> tuple[float | None, int]:
    """(geometric mean of torch time / cupysoftmax time, number of shapes) over one op's shapes where both ran."""
    ratios = [s for s in map(_speedup, _by_shape(records, op).values()) if s is not None]
    if not ratios:
        return None, 0
    return math.exp(sum(map(math.log, ratios)) / len(ratios)), len(ratios)


def markdown_table(records, op: str = FORWARD) -> str:
    """One row per shape of `op`: GB/s of copy and each provider, cupysoftmax's % of copy and speed-up over torch."""
    records = [r for r in records if r.get("op", FORWARD) == op]
    peers = _peers_present(records)
    lines = ["| M | N | dtype | copy | " + " | ".join(peers) + " | cupysoftmax % of copy | × torch |",
             "|---:|---:|---|---:|" + "---:|" * len(peers) + "---:|---:|"]
    for (m, n, dtype), row in _by_shape(records, op).items():
        pct, speedup = _pct_copy(row), _speedup(row)
        cells = [str(m), str(n), dtype, _cell(row.get("copy")), *(_cell(row.get(p)) for p in peers),
                 "–" if pct is None else f"{pct:.0f}%", "–" if speedup is None else f"{speedup:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    mean, count = geomean_speedup(records, op)
    lines.append("")
    if mean is None:
        lines.append(f"Geometric-mean speed-up over torch.{OPS[op]}: no shape where both ran.")
    else:
        lines.append(f"Geometric-mean speed-up over torch.{OPS[op]}: {mean:.2f}× over {count} shapes.")
    return "\n".join(lines)


def summary(records, op: str = FORWARD) -> str:
    """A short plain-text table of one op: per shape, cupysoftmax's GB/s, % of copy, the best peer and × torch."""
    lines = [f"{'M':>7} {'N':>8} {'dtype':<9}{'copy':>6}{'ours':>6}{'%copy':>7}  {'best peer':<20}{'x torch':>8}"]
    for (m, n, dtype), row in _by_shape(records, op).items():
        peers = [r for p, r in row.items() if p not in ("copy", "cupysoftmax") and r["GBps"] is not None]
        best = max(peers, key=lambda r: r["GBps"], default=None)
        pct, speedup = _pct_copy(row), _speedup(row)
        best_text = "-" if best is None else f"{best['provider']} {best['GBps']:.0f}"
        lines.append(f"{m:>7} {n:>8} {dtype:<9}{_cell(row.get('copy')):>6}{_cell(row.get('cupysoftmax')):>6}"
                     f"{'-' if pct is None else f'{pct:.0f}%':>7}  {best_text:<20}"
                     f"{'-' if speedup is None else f'{speedup:.2f}':>8}")
    return "\n".join(lines)


def plot(records, sweep_records, path) -> None:
    """PNG of GB/s against N at M = 4096: float32 and bfloat16 panels, one line per provider."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 5), layout="constrained")
    panels = fig.subplots(1, 2, sharey=True)
    colours = {p: f"C{i}" for i, p in enumerate(PROVIDERS)}
    for ax, dtype in zip(panels, ("float32", "bfloat16")):
        here = [r for r in records if r["M"] == SWEEP_M and r["dtype"] == dtype and r["GBps"] is not None
                and r.get("op", FORWARD) == FORWARD]
        for provider in [p for p in PROVIDERS if any(r["provider"] == p for r in here)]:
            n, gbps = zip(*sorted((r["N"], r["GBps"]) for r in here if r["provider"] == provider))
            ax.plot(n, gbps, marker="o", markersize=4, color=colours[provider], label=provider,
                    linestyle="--" if provider == "copy" else "-")
        if dtype == "float32" and sweep_records:
            points = sorted((r["N"], r["GBps"]) for r in sweep_records
                            if r["provider"] == "cupysoftmax" and r.get("GBps") is not None)
            if points:
                n, gbps = zip(*points)
                ax.plot(n, gbps, linewidth=0.6, color=colours["cupysoftmax"], alpha=0.6, label="cupysoftmax sweep")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("N (row length)")
        ax.set_title(f"softmax forward, M = {SWEEP_M}, {dtype}")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    panels[0].set_ylabel("GB/s (2·M·N·itemsize / median time)")
    fig.savefig(path, dpi=120)


# -- the whole run -----------------------------------------------------------------------


def device_tag(name: str) -> str:
    """A short lower-case tag for file names from a device name: "NVIDIA H100 80GB HBM3" -> "h100"."""
    found = re.search(r"\b([A-Z]{1,2}\d{2,4})\b", name)
    return found.group(1).lower() if found else "gpu"


def commit() -> str:
    """$COMMIT, else the checkout's short HEAD (with -dirty for uncommitted changes), else "unknown"."""
    if os.environ.get("COMMIT"):
        return os.environ["COMMIT"]
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def _versions() -> str:
    from importlib import metadata

    import cupy

    found = [f"cupy {cupy.__version__}"]
    for dist in ("torch", "triton", "jax", "liger-kernel"):
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            found.append(f"{dist} absent")
    return ", ".join(found)


def report(records, sweep_records, host, device_name: str, repeat: int) -> str:
    """The markdown report: header, a table per op (softmax first), the sweep's cliffs and the host cost."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        f"# {' and '.join(map(_title, _ops_present(records)))} against the peers on {device_name}",
        "",
        f"{when}, commit `{commit()}`, {device_name}; {_versions()}.",
        "",
        f"One process, one GPU, one timing method for all: median of {repeat} calls of CUDA-event time on "
        "CuPy's current stream (torch, Triton and Liger launch on it too), L2 flushed before each call "
        "(persisting lines made normal, then L2 written and read over), "
        "each call queued behind a gate kernel that the host opens once the call and its events are queued "
        "(so host launch time stays out), after warm-up. The providers of a shape are each checked against "
        f"the float64 reference first, then timed in {ROUNDS} interleaved rounds. Input standard "
        "normal × 3. Cells are GB/s = 2·M·N·itemsize / median time (3·M·N·itemsize for the gradient, "
        "which reads y and dy; its copy moves as many bytes); \"–\" not run or not supported, "
        "\"fail\" wrong result, \"error\" raised (the JSON records say why). jax is timed through the "
        "host, ungated (block_until_ready), so its small shapes include dispatch.",
        "",
    ]
    for op in _ops_present(records):
        parts += ["", f"## {_title(op)}", "", *_axis_note(op), markdown_table(records, op)]
    if sweep_records is not None:
        ns = sorted({r["N"] for r in sweep_records})
        found = cliffs(sweep_records)
        parts += ["", f"## Sweep: cupysoftmax at M = {SWEEP_M}, float32, N = {ns[0]}..{ns[-1]} ({len(ns)} shapes)",
                  "", f"Cliffs (GB/s more than {CLIFF_DROP:.0%} below the better neighbour): "
                  + (", ".join(f"N = {n}" for n in found) if found else "none")]
    parts += ["", "## Host cost per call", "",
              f"`cupysoftmax.softmax(x, axis=-1)` on 8 × 1000 float32: {host['softmax_us']:.1f} µs; "
              f"a bare `cupy.RawKernel` launch: {host['raw_kernel_us']:.1f} µs; ratio {host['ratio']:.2f}; "
              f"allocating the result plus that bare launch (the floor for a function returning a new "
              f"CuPy array): {host['alloc_and_bare_launch_us']:.1f} µs "
              f"(time.perf_counter, fastest of {host['rounds']} interleaved rounds of {host['repeat']} calls)."]
    return "\n".join(parts) + "\n"


def _title(op: str) -> str:
    return f"{OPS[op]} over a middle axis" if op == AXIS else OPS[op]


def _axis_note(op: str) -> list[str]:
    """The line naming the arrays and axes behind the "axis" table's (M, N)."""
    if op != AXIS:
        return []
    arrays = "; ".join(f"{' × '.join(map(str, s['shape']))} {s['dtype']} over axis {s['axis']}" for s in AXIS_SHAPES)
    return [f"M softmaxes of N elements each, x read as it lies (peers: their own function with that axis): {arrays}.",
            ""]


def _progress_line(r: dict) -> str:
    timing = "-" if r["median_ms"] is None else f"{r['median_ms'] * 1e3:10.1f} us {r['GBps']:7.0f} GB/s"
    return f"{r['M']:>7} x {r['N']:<8} {r['dtype']:<9} {r['op']:<11} {r['provider']:<14} {timing}  {r['note']}".rstrip()


def main(shapes, providers, out_dir, repeat: int = 50, with_sweep: bool = True, with_plot: bool = True,
         echo=print, ops=(FORWARD,)) -> list[dict]:
    """Run the suite (and the sweep and host cost), write <out>/suite-<gpu>.{json,md,png}, echo a summary."""
    import cupy

    name = device.facts(cupy.cuda.Device().id).name
    tag = device_tag(name)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = run_suite(shapes, providers, repeat=repeat, progress=lambda r: echo(_progress_line(r)), ops=ops)
    (out / f"suite-{tag}.json").write_text(json.dumps(records, indent=1) + "\n")
    sweep_records = None
    if with_sweep:
        started = time.perf_counter()
        sweep_records = sweep()
        (out / f"sweep-{tag}.json").write_text(json.dumps(sweep_records, indent=1) + "\n")
        echo(f"sweep: {len(sweep_records) // 2} shapes in {time.perf_counter() - started:.0f} s; "
             f"cliffs at N = {cliffs(sweep_records) or 'none'}")
    host = host_cost()
    (out / f"suite-{tag}.md").write_text(report(records, sweep_records, host, name, repeat))
    if with_plot:
        plot(records, sweep_records, out / f"suite-{tag}.png")
    echo(f"wrote {out}/suite-{tag}.*; host cost {host['softmax_us']:.1f} us per call "
         f"against {host['raw_kernel_us']:.1f} us for a bare launch")
    for op in _ops_present(records):
        echo(f"{_title(op)}:\n{summary(records, op)}")
    return records
