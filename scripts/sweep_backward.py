"""Evidence for the planner's split_row rule on the gradients: every (K, C, threads) that holds y and dy, timed.

For each shape: a copy of the gradient's 3 M N bytes (as 1.5 M N read and
written), then each split_row softmax_backward launch whose cluster holds a
row in registers, on the grid api.plan would give it (the clusters the GPU
holds, where rows are at least twice them: Planner.persistent), checked against the
float64 reference on sample rows and timed with bench.median_ms; the planner's
pick is starred. One line a
candidate: knobs (K, R, C) (R = 1: the gradients fold no rows; R = 2: log_softmax's late-y twin), threads,
registers, time, % of copy, error ratio. Cuts of K > 2 on fewer than 128 threads are left out, except the
planner's own pick (4096 x 2047 float16 runs (4, 1, 1) on 96).
Usage: python scripts/sweep_backward.py [--op log_softmax_backward] [M N dtype]...   (default: softmax_backward on
the shapes below)
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch, _ceil_div, _round_up

SHAPES = [(8192, 50257, "float32"), (8192, 50257, "bfloat16"), (4096, 65536, "bfloat16"), (4096, 65536, "float32"),
          (4096, 32768, "float32"), (128, 128256, "float32"), (32, 128256, "float32")]


class Case:
    """Fresh y (the op's forward of a fresh input), dy and dx of M x N, with the float64 reference on up to 16 sample
    rows."""

    def __init__(self, m, n, dtype, op):
        self.m, self.n, self.dtype, self.op = m, n, dtype, op
        self.y = api.FUNCTIONS[registry.FORWARD_OF[op]](bench.random_input(m, n, dtype), axis=-1)
        self.dy = bench.random_input(m, n, dtype)
        self.dx = cupy.empty_like(self.y)
        self.rows = numpy.unique(numpy.linspace(0, m - 1, min(m, 16)).astype(int))
        y_host, dy_host = cupy.asnumpy(self.y[self.rows]), cupy.asnumpy(self.dy[self.rows])
        self.expected = getattr(reference, op)(y_host, dy_host, -1)
        self.scale = reference.gradient_scale(y_host, dy_host, op)
        self.copy_ms = bench.median_ms(bench.copy_call(3 * m * n * dtype.itemsize // 2), repeat=20)

    def close(self):
        """Drop the arrays (each_case does, once the caller asks for the next shape)."""
        self.y = self.dy = self.dx = None

    def call(self, kernel, launch):
        """A function that runs one launch on the contiguous rows (its own arguments after the rows': the grid's)."""
        args = (self.y, self.dy, self.dx, self.m, self.n, self.n, self.n, self.n, *launch.args)
        return lambda: api.run(kernel, launch, args)

    def check(self, kernel, launch) -> float:
        """The error ratio on the sample rows of one launch, dx poisoned first."""
        self.dx.fill(numpy.nan)
        self.call(kernel, launch)()
        cupy.cuda.Device().synchronize()
        return reference.error_ratio(cupy.asnumpy(self.dx[self.rows]), self.expected, self.dtype, self.op, self.scale)

    def run(self, kernel, launch):
        """(error ratio on the sample rows, median ms) of one launch."""
        return self.check(kernel, launch), bench.median_ms(self.call(kernel, launch), repeat=20)


def each_case(shapes, op):
    """(dtype name, (dtype, dtype), Case) for each (M, N, dtype name); a shape's arrays freed before the next's."""
    for m, n, name in shapes:
        dtype = dtypes.parse(name)
        case = Case(m, n, dtype, op)
        yield name, (dtype, dtype), case
        case.close()
        cupy.get_default_memory_pool().free_all_blocks()


def main(shapes, op):
    dev = cupy.cuda.Device().id
    p = api.planner(dev)
    print(op)
    for name, pair, case in each_case(shapes, op):
        m, n, dtype = case.m, case.n, case.dtype
        aligned = api.rows_aligned(case.y)
        _, picked = api.plan(dev, "auto", m, n, pair, aligned, op)
        print(f"{m} x {n} {name}: copy {case.copy_ms * 1e3:.1f} us, auto picks {picked.variant} {picked.knobs}",
              flush=True)
        chunks = p._chunks(n, pair, aligned)  # a misaligned row spans one chunk more
        for knobs in registry.VARIANTS["split_row"].knob_sets(op):
            k, c = knobs[0], knobs[-1]
            if c < 1:  # the grid's kernels (C = 0: _grid_launch, _row_past_clusters) launch through Planner._on_grid
                continue
            kernel = api._loaded(p, Launch("split_row", knobs, 1, 32, 0), dev, pair, op)
            threads = _round_up(_ceil_div(_ceil_div(chunks, c), k), 32)
            small = k > 2 and threads < 128 and (knobs, threads) != (picked.knobs, picked.block)  # auto's kept
            if threads > min(1024, loader.facts_of(kernel).max_threads // 32 * 32) or small:
                continue
            planned = Launch("split_row", knobs, m * c, threads, 0, unit=c)
            launch = p.persistent(planned, api._active_clusters(kernel, planned, op), op)  # the grid api.plan gives
            try:
                err, ms = case.run(kernel, launch)
            except Exception as exc:  # a cluster shape the GPU cannot place, say
                print(f"   {str(launch.knobs):<8} {threads:>5}  launch failed: {exc}", flush=True)
                continue
            star = "*" if (launch.knobs, launch.block) == (picked.knobs, picked.block) else " "
            print(f" {star} {str(launch.knobs):<8} {threads:>5} {kernel.num_regs:>4} {ms * 1e3:>9.1f} us "
                  f"{100 * case.copy_ms / ms:>5.0f}% err {err:.2f}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    op = registry.SOFTMAX_BACKWARD
    if args[:1] == ["--op"]:
        op, args = args[1], args[2:]
        if op not in registry.BACKWARD:
            sys.exit(f"--op must be one of {', '.join(registry.BACKWARD)}, not {op!r}")
    main([(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] if args else SHAPES, op)
