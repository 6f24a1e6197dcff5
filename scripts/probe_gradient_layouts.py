"""Evidence for the gradients' warp_rows launches: every (G, K) that holds a row of y and dy, at 64, 128, 256 and 512
threads, on the kernel of any phase (O = 0) and, where the rows are whole chunks, its twin on whole chunks (O = -1),
against torch's own gradient kernels (torch._softmax_backward_data / _log_softmax_backward_data) and torch.compile's
(the suite's provider: Inductor's fused kernel of the gradient written out).

Each candidate is warp_rows' `_backward` kernel from the registry (loader.function), checked against the float64
reference on sample rows (a NaN-poisoned dx, the gradient tests' scale), then timed interleaved with a copy of the
gradient's 3 M N bytes and torch (bench.interleaved_ms, L2 flushed). The planner's own launch is starred, and timed
beside them where it is another variant. One line a candidate: knobs, threads, registers, us, % of copy, error ratio.
With --grids, the planner's warp_rows launch also runs on grids of P = 1, 2 and 4 times the blocks resident (the
driver's occupancy count), each block looping over row groups (the kernel walks them by gridDim.x): the same rows
a warp, so the same bits.
Usage: python scripts/probe_gradient_layouts.py [--grids] [M:N:dtype:op ...]   (default: SHAPES; op
softmax_backward or log_softmax_backward)
"""
import dataclasses
import sys
from concurrent.futures import ThreadPoolExecutor

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference, suite
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch, _ceil_div

# The suite's gradient shapes on warp_rows where a peer came within a few per cent (docs/PERFORMANCE.md)
SHAPES = [f"{m}:{n}:{dt}:{op}" for m, n, dt in ((262144, 32, "float32"), (262144, 64, "float32"),
                                                (262144, 100, "float32"), (4096, 256, "float32"),
                                                (4096, 256, "bfloat16"), (4096, 1024, "bfloat16"))
          for op in (registry.SOFTMAX_BACKWARD, registry.LOG_SOFTMAX_BACKWARD)]
THREADS = (64, 128, 256, 512)
ROUNDS = (1, 2, 4)  # --grids: P x the blocks resident


def resident_blocks(kernel, launch) -> int:
    """Blocks of the launch the GPU holds at once (the driver's occupancy count, all SMs)."""
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, launch.block, launch.smem)
    return per_sm * cupy.cuda.Device().attributes["MultiProcessorCount"]


def layouts(n, dtype):
    """(G, K) of warp_rows' backward kernels with G * K chunks holding the row, no more than twice its chunks."""
    chunks = _ceil_div(n, 16 // dtype.itemsize)
    return [(g, k) for g, k in registry.WARP_ROWS_LAYOUTS if chunks <= g * k < 2 * chunks]


def main(specs, grids=False):
    import torch

    dev = cupy.cuda.Device().id
    cases = [(int(m), int(n), dtypes.parse(name), op) for m, n, name, op in (s.split(":") for s in specs)]
    jobs = sorted({(dtype, knobs, op) for _, n, dtype, op in cases for g, k in layouts(n, dtype)
                   for knobs in ((g, k, 0), (g, k, -1)) if knobs in registry.VARIANTS["warp_rows"].knob_sets(op)},
                  key=str)
    with ThreadPoolExecutor(8) as pool:  # compiled ahead, together
        kernels = dict(zip(jobs, pool.map(lambda j: loader.function("warp_rows", (j[0], j[0]), j[1], dev, j[2]), jobs)))
    for m, n, dtype, op in cases:
        pair = (dtype, dtype)
        y = getattr(api, registry.FORWARD_OF[op])(bench.random_input(m, n, dtype), axis=-1)
        dy = bench.random_input(m, n, dtype)
        dx = cupy.empty_like(y)
        rows = numpy.unique(numpy.linspace(0, m - 1, 64).astype(int))
        y_host, dy_host = cupy.asnumpy(y[rows]), cupy.asnumpy(dy[rows])
        expected = getattr(reference, op)(y_host, dy_host, -1)
        scale = reference.gradient_scale(y_host, dy_host, op)
        own, picked = api.plan(dev, "auto", m, n, pair, api.rows_aligned(y), op, y_aligned=api.rows_aligned(dx))
        ty, tdy = torch.from_dlpack(y), torch.from_dlpack(dy)  # DLPack: bfloat16 too
        function = torch._softmax_backward_data if op == registry.SOFTMAX_BACKWARD else torch._log_softmax_backward_data
        fns = {"copy": bench.copy_call(3 * y.nbytes // 2), "torch": lambda: function(tdy, ty, -1, ty.dtype),
               "torch_compile": suite.make_torch_compile(suite.Gradient(None, y, dy), op)}
        notes = {}
        candidates = []
        whole = n % (16 // dtype.itemsize) == 0  # the rows here start on 16-byte boundaries: the twin serves
        for g, k in layouts(n, dtype):
            for o in (0, -1) if whole else (0,):
                if (kernel := kernels.get((dtype, (g, k, o), op))) is not None:
                    candidates += [(kernel, Launch("warp_rows", (g, k, o), _ceil_div(m, t // g), t, 0))
                                   for t in THREADS if t <= kernel.max_threads_per_block]
        if picked.variant != "warp_rows":
            candidates.append((own, picked))
        elif grids:
            blocks = resident_blocks(own, picked)
            candidates += [(own, dataclasses.replace(picked, grid=p * blocks)) for p in ROUNDS
                           if p * blocks < picked.grid]
        strides = (n, n, n)
        for kernel, launch in candidates:
            call = lambda kernel=kernel, launch=launch: api.run(kernel, launch, (y, dy, dx, m, n, *strides, *launch.args))  # noqa: E731
            dx.fill(numpy.nan)
            call()
            cupy.cuda.Device().synchronize()
            err = reference.error_ratio(cupy.asnumpy(dx[rows]), expected, dtype, op, scale)
            same = (picked.variant, picked.knobs, picked.block) == (launch.variant, launch.knobs, launch.block)
            looping = same and launch.grid != picked.grid
            named = "" if launch.variant == "warp_rows" else launch.variant + " "
            label = (f"{'*' if same and not looping else ' '} {named}{launch.knobs} {launch.block}"
                     + (f" g{launch.grid}" if looping else ""))
            fns[label] = call
            notes[label] = f"regs {kernel.num_regs:>3}  err {err:.3f}"
        times = bench.interleaved_ms(fns, repeat=30, rounds=3)
        copy = times["copy"]
        print(f"{m} x {n} {dtype.name} {op}: copy {copy * 1e3:.1f} us, planned {picked.variant} {picked.knobs} "
              f"{picked.block}")
        for label, ms in times.items():
            print(f"   {label:<20} {ms * 1e3:>8.1f} us {100 * copy / ms:>5.0f}%  {notes.get(label, '')}", flush=True)
        del y, dy, dx, ty, tdy, fns  # torch.compile's call holds y and dy until its function goes
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    args = sys.argv[1:]
    with_grids = args[:1] == ["--grids"]
    main(args[with_grids:] or SHAPES, with_grids)
