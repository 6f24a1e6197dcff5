"""Evidence for the planner's split_row rule on the gradients: every (K, C, threads) that holds y and dy, timed.

For each shape: a copy of the gradient's 3 M N bytes (as 1.5 M N read and
written), then each split_row softmax_backward launch whose cluster holds a
row in registers, checked against the float64 reference on sample rows and
timed with bench.median_ms; the planner's pick is starred. One line a
candidate: knobs (K, R, C) (R = 1: the gradients fold no rows), threads, registers, time, % of copy, error ratio.
Usage: python scripts/sweep_backward.py [M N dtype]...   (default: the shapes below)
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch, _ceil_div, _round_up

SHAPES = [(8192, 50257, "float32"), (8192, 50257, "bfloat16"), (4096, 65536, "bfloat16"), (4096, 65536, "float32"),
          (4096, 32768, "float32"), (128, 128256, "float32"), (32, 128256, "float32")]
OP = registry.SOFTMAX_BACKWARD


def main(shapes):
    dev = cupy.cuda.Device().id
    p = api.planner(dev)
    for m, n, name in shapes:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        y = api.softmax(bench.random_input(m, n, dtype), axis=-1)
        dy = bench.random_input(m, n, dtype)
        dx = cupy.empty_like(y)
        rows = numpy.unique(numpy.linspace(0, m - 1, min(m, 16)).astype(int))
        y_host, dy_host = cupy.asnumpy(y[rows]), cupy.asnumpy(dy[rows])
        expected = reference.softmax_backward(y_host, dy_host)
        scale = reference.gradient_scale(y_host, dy_host, OP)
        _, picked = api.plan(dev, "auto", m, n, pair, True, OP)
        copy_ms = bench.median_ms(bench.copy_call(3 * m * n * dtype.itemsize // 2), repeat=20)
        print(f"{m} x {n} {name}: copy {copy_ms * 1e3:.1f} us, auto picks {picked.variant} {picked.knobs}", flush=True)
        chunks = _ceil_div(n, 16 // dtype.itemsize)
        for knobs in registry.VARIANTS["split_row"].knob_sets(OP):
            k, c = knobs[0], knobs[-1]
            kernel = api._loaded(p, Launch("split_row", knobs, 1, 32, 0), dev, pair, OP)
            threads = _round_up(_ceil_div(_ceil_div(chunks, c), k), 32)
            if threads > min(1024, loader.facts_of(kernel).max_threads // 32 * 32) or (k > 2 and threads < 128):
                continue
            launch = Launch("split_row", knobs, m * c, threads, 0)
            args = (y, dy, dx, m, n, n, n, n)
            dx.fill(numpy.nan)
            try:
                api.run(kernel, launch, args)
                cupy.cuda.Device().synchronize()
            except Exception as exc:  # a cluster shape the GPU cannot place, say
                print(f"   {str(launch.knobs):<8} {threads:>5}  launch failed: {exc}", flush=True)
                continue
            err = reference.error_ratio(cupy.asnumpy(dx[rows]), expected, dtype, OP, scale)
            ms = bench.median_ms(lambda: api.run(kernel, launch, args), repeat=20)
            star = "*" if (launch.knobs, launch.block) == (picked.knobs, picked.block) else " "
            print(f" {star} {str(launch.knobs):<8} {threads:>5} {kernel.num_regs:>4} {ms * 1e3:>9.1f} us "
                  f"{100 * copy_ms / ms:>5.0f}% err {err:.2f}", flush=True)
        del y, dy, dx
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    args = sys.argv[1:]
    main([(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] if args else SHAPES)
