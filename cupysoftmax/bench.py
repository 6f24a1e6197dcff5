"""Timing engine: CUDA events around one call, L2 flushed before each call, median.

One method for every provider (ours, the copy baseline, the peers):
- warm up first (compilation, planning and module load stay out);
- before each timed call, flush L2: write a buffer twice the size of L2, then
  read another as large, so the input is read from HBM, not from cache, and
  L2 holds no dirty lines. A write alone leaves L2 full of the flush's dirty
  lines, and the timed call pays for writing them back: on the H100
  (2026-11-22, scripts/probe_flush.py) a 64 MB copy took 26.5 us after the
  write and 20.7 us after the write and read, Triton's softmax 27.2 against
  21.5, which hides differences between kernels (bfloat16 4096 x 4096:
  28.2 us against Triton's 27.6 after the write, 25.1 against 21.8 after both);
- first, though, return L2's persisting lines to normal
  (cuCtxResetPersistingL2Cache): something torch.compile's kernels leave in
  L2 (Inductor's looped kernel loads x evict-last; one evict-last read of x
  alone did not reproduce it) outlives the write and the read. On the H100
  (2026-11-23, scripts/probe_peer_l2.py, docs/perf/peer-l2-h100.txt) Triton
  and Liger, timed right after torch.compile, read 109-110% of the copy at
  4096 x 4096 float32, above what HBM moves; with the reset 99%, as with
  torch.compile timed last or not at all;
- queue the call behind a gate: a one-thread kernel that holds the stream
  until the host opens it, after the event pair and the call are queued. The
  timed region then holds the device's work only, never a wait for the host
  to launch it (Python launch paths take 6 to 80 us on the H100 host, the
  timed calls 5 to 200 us);
- record an event pair around the call on the current stream, take the median.
A call that must wait on the host itself (JAX's, marked `syncs_host`) is timed
ungated.
The ceiling is a cudaMemcpyAsync device-to-device copy of the same bytes,
timed in the same run: "% of copy".
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

import numpy

from . import api, device, driver, dtypes, reference
from . import variants as registry
from .errors import UnsuitableVariant


GATE_SOURCE = r"""
extern "C" __global__ void gate(const volatile unsigned* open) {
    while (*open == 0) __nanosleep(256);
}
"""
GATE_TIMEOUT_S = 5.0  # a call still blocked this long is waiting on the host: the gate opens and the timing fails


class Gate:
    """Holds the current stream until the host opens it: a kernel spinning on a flag in pinned host memory."""

    def __init__(self):
        import cupy

        self._memory = cupy.cuda.alloc_pinned_memory(4)
        self._flag = numpy.frombuffer(self._memory, numpy.uint32, 1)
        self._kernel = cupy.RawModule(code=GATE_SOURCE).get_function("gate")

    def close(self) -> None:
        """Queue the gate: work queued after it waits until open()."""
        self._flag[0] = 0
        self._kernel((1,), (1,), (numpy.uintp(self._memory.ptr),))

    def open(self) -> None:
        self._flag[0] = 1


class Flush:
    """Evicts L2 and leaves it clean: persisting lines made normal, then a buffer twice its size written and
    another as large read."""

    def __init__(self, l2_bytes: int):
        import cupy

        driver.library()  # no driver library: say so now, not at the first timed call
        self._written = cupy.empty(2 * l2_bytes, numpy.uint8)
        self._read = cupy.random.randint(0, 256, 2 * l2_bytes, dtype=numpy.uint8)
        self._sink = cupy.empty((), numpy.uint8)

    def __call__(self) -> None:
        import cupy

        driver.reset_persisting_l2()  # takes effect on return: the lines then go with the others below
        self._written.fill(1)
        cupy.max(self._read, out=self._sink)


def median_ms(fn, *, repeat: int = 50, warmup: int = 5) -> float:
    """Median milliseconds of `fn()` over `repeat` calls, each after an L2 flush, queued behind a gate."""
    result = interleaved_ms({"fn": fn}, repeat=repeat, warmup=warmup)["fn"]
    if isinstance(result, Exception):
        raise result
    return result


def interleaved_ms(fns: dict, *, repeat: int = 50, warmup: int = 5, rounds: int = 1) -> dict:
    """Median milliseconds of each `fns[name]()` over `repeat` calls, timed in `rounds` round-robin rounds.

    Interleaving lets state that drifts while the process runs reach every
    function alike: on the H100 (2026-11-22) launches timed after the first
    call of a torch.compile'd function ran 6-12% faster than the same launches
    timed before it (scripts/probe_compile_effect.py). A function that raises
    stops being timed; its value is the exception.
    """
    import cupy

    if repeat < 1:
        raise ValueError(f"repeat must be at least 1; got {repeat}")
    flush = Flush(device.facts(cupy.cuda.Device().id).l2_bytes)
    gate = Gate()
    times = {name: [] for name in fns}
    failed = {}
    for name, fn in fns.items():
        try:
            for _ in range(warmup):
                fn()
        except Exception as exc:
            failed[name] = exc
    per_round = [repeat // rounds + (r < repeat % rounds) for r in range(rounds)]
    for count in per_round:
        for name, fn in fns.items():
            if name in failed:
                continue
            try:
                times[name] += _timed_calls(fn, count, flush, None if getattr(fn, "syncs_host", False) else gate)
            except Exception as exc:
                failed[name] = exc
    return {name: failed.get(name) or statistics.median(times[name]) for name in fns}


def _timed_calls(fn, count: int, flush, gate) -> list[float]:
    """Milliseconds of `count` calls of fn, each after an L2 flush; behind the gate unless it is None."""
    import cupy

    times = []
    for _ in range(count):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        flush()
        if gate is None:
            start.record()
            fn()
            end.record()
        else:
            _gated(gate, fn, start, end)
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return times


def _gated(gate: Gate, fn, start, end) -> None:
    """Queue start, fn(), end behind a closed gate, then open it; RuntimeError if fn() waited on the device."""
    import threading

    fired = threading.Event()

    def release():
        fired.set()
        gate.open()

    gate.close()
    watchdog = threading.Timer(GATE_TIMEOUT_S, release)
    watchdog.start()
    try:
        start.record()
        fn()
        end.record()
    finally:
        watchdog.cancel()
        watchdog.join()  # a release already under way must not open the next call's gate
        gate.open()
    if fired.is_set():
        raise RuntimeError(f"the timed call took over {GATE_TIMEOUT_S} s to queue (did it wait on the device?); "
                           "mark it syncs_host to time it ungated")


def copy_call(nbytes: int):
    """A function that copies `nbytes` device to device with cudaMemcpyAsync (random bytes, not zeros)."""
    import cupy

    src = cupy.random.randint(0, 256, nbytes, dtype=numpy.uint8)
    dst = cupy.empty_like(src)
    runtime = cupy.cuda.runtime

    def copy():
        runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, runtime.memcpyDeviceToDevice,
                            cupy.cuda.get_current_stream().ptr)

    return copy


@dataclass
class Row:
    variant: str  # the name asked for ("auto" shows what it picked: "auto:split_row")
    knobs: tuple = ()
    grid: int | None = None
    block: int | None = None
    smem: int | None = None
    regs: int | None = None
    median_us: float | None = None
    GBps: float | None = None
    pct_copy: float | None = None
    max_err: float | None = None  # worst |y - ref| / (atol + rtol |ref|); <= 1 passes
    ok: bool = False
    note: str = ""


def random_input(m: int, n: int, dtype):
    """Standard normal x 3 (the suite's input), in `dtype`; never zeros."""
    import cupy

    return (cupy.random.standard_normal((m, n), dtype=numpy.float32) * 3).astype(dtype)


def _check_rows(m: int) -> numpy.ndarray:
    """Rows the check compares with the float64 reference: all, or 64 spread out (first and last too)."""
    if m <= 4096:
        return numpy.arange(m)
    return numpy.unique(numpy.concatenate([[0, m - 1], numpy.random.default_rng().choice(m, 62, replace=False)]))


def moved_bytes(m: int, n: int, dtype, op: str = registry.SOFTMAX) -> int:
    """The bytes an op must move: read x, write y; the gradients read y and dy and write dx."""
    return (3 if op in registry.BACKWARD else 2) * m * n * numpy.dtype(dtype).itemsize


def time_shape(m: int, n: int, dtype, variants: list[str], repeat: int = 50, op: str = registry.SOFTMAX):
    """Check, then time, each variant on an (m, n) softmax (or `op`) over the last axis.

    Returns (copy_us, rows). The output is poisoned with NaN before the checked
    call, so an element no thread wrote shows as an error. A gradient op runs
    on y = softmax (or log_softmax) of the input, computed by `auto`, and a
    fresh dy; its copy baseline moves the same 3 M N bytes.
    """
    import cupy

    from . import gradients

    dtype = dtypes.parse(dtype)
    x = random_input(m, n, dtype)
    rows_checked = cupy.asarray(_check_rows(m))
    scale = None
    if op in registry.BACKWARD:
        forward = registry.LOG_SOFTMAX if op == registry.LOG_SOFTMAX_BACKWARD else registry.SOFTMAX
        y_in, dy = api.FUNCTIONS[forward](x, axis=-1), random_input(m, n, dtype)
        y_rows, dy_rows = cupy.asnumpy(y_in[rows_checked]), cupy.asnumpy(dy[rows_checked])
        expected = reference.GRADIENTS[op](y_rows, dy_rows)
        scale = reference.gradient_scale(y_rows, dy_rows, op)
        gradient = gradients.GRADIENTS[op]

        def function(a, axis, out, variant):
            return gradient(y_in, dy, axis=axis, out=out, variant=variant)
    else:
        expected = reference.REFERENCES[op](cupy.asnumpy(x[rows_checked]), axis=-1)
        function = api.FUNCTIONS[op]
    nbytes = moved_bytes(m, n, dtype, op)
    copy_ms = median_ms(copy_call(nbytes // 2), repeat=repeat)
    out = []
    for name in variants:
        row = Row(variant=name)
        out.append(row)
        y = cupy.full((m, n), numpy.nan, dtype)
        try:
            kernel, launch = api.plan(x.device.id, name, m, n, (dtype, dtype), api.rows_aligned(x), op,
                                      y_aligned=api.rows_aligned(y))
        except UnsuitableVariant as exc:
            row.note = str(exc)
            continue
        if name == registry.AUTO:
            row.variant = f"auto:{launch.variant}"
        row.grid, row.block, row.smem, row.regs = launch.grid, launch.block, launch.smem, kernel.num_regs
        row.knobs = launch.knobs
        function(x, axis=-1, out=y, variant=name)
        unwritten = int(cupy.count_nonzero(cupy.isnan(y)))
        row.max_err = reference.error_ratio(cupy.asnumpy(y[rows_checked]), expected, dtype, op, scale)
        row.ok = unwritten == 0 and row.max_err <= 1.0
        if unwritten:
            row.note = f"{unwritten} elements not written"
        ms = median_ms(lambda: function(x, axis=-1, out=y, variant=name), repeat=repeat)
        row.median_us = ms * 1e3
        row.GBps = nbytes / ms / 1e6
        row.pct_copy = 100 * copy_ms / ms
    return copy_ms * 1e3, out


def as_records(m, n, dtype, copy_us, rows, op: str = registry.SOFTMAX) -> list[dict]:
    """JSON-ready records: the copy baseline first, then one per variant."""
    nbytes = moved_bytes(m, n, dtypes.parse(dtype), op)
    record_op = next(name for name, function in registry.RECORD_OPS.items() if function == op)
    base = {"M": m, "N": n, "dtype": dtypes.name(dtypes.parse(dtype)), "op": record_op}
    records = [{**base, "variant": "copy", "median_us": copy_us, "GBps": nbytes / copy_us / 1e3, "ok": True}]
    records += [{**base, **asdict(r)} for r in rows]
    return records
