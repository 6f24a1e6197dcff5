"""Evidence for the planner's strided rule: every (R, C, TY, TX) launch that holds a column, timed.

For each array and axis: a copy of the same bytes, then each candidate
checked against the float64 reference and timed with bench.median_ms; the
planner's own pick is starred. One line a candidate: knobs (R, C), TX x TY,
registers, time, % of copy, error ratio.
Usage: python scripts/sweep_strided.py [case index]...   (default: every case below)
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, reference
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch, MAX_GRID, _ceil_div

CASES = [((8192, 8192), 0, "float32"), ((32, 19, 512, 512), 1, "float32"), ((64, 2048, 1024), 1, "float32")]


def candidates(view, pair, facts):
    outer, n, inner = view[:3]
    knobs = registry.VARIANTS["strided"].knobs
    for r, c in knobs:
        share = _ceil_div(n, c)
        ty = _ceil_div(share, r)
        if r > 8 and _ceil_div(share, r // 2) == ty:
            continue  # a smaller R holds the same share
        kernel = facts("strided", (r, c))
        for tx in (8, 16, 32, 64, 128, 256):  # 8 and 16: 32- and 64-byte rows, several rows a warp
            if tx * ty > min(kernel.max_threads, 1024):
                continue
            accumulator = dtypes.accumulator(pair).itemsize
            smem = (2 * tx * ty + (2 * (2 + c) * tx if c > 1 else 0)) * accumulator
            items = outer * _ceil_div(inner, tx)
            yield Launch("strided", (r, c), min(items, MAX_GRID // c) * c, tx, smem, block_y=ty)


def main(cases):
    for shape, axis, name in cases:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        x = (cupy.random.standard_normal(shape, dtype=numpy.float32) * 3).astype(dtype)
        y = cupy.empty_like(x)
        view = api.columns_view(x.shape, x.strides, x.itemsize, (axis,))
        y_view = api.columns_view(y.shape, y.strides, y.itemsize, (axis,))
        facts = api._facts(x.device.id, pair, registry.SOFTMAX)
        _, picked = api.plan_columns(x.device.id, "auto", *view[:3], pair)
        expected = reference.softmax(cupy.asnumpy(x), axis)
        copy_ms = bench.median_ms(bench.copy_call(x.nbytes), repeat=20)
        print(f"{shape} axis {axis} {name}: copy {copy_ms * 1e3:.1f} us")
        p = api.planner(x.device.id)
        for launch in candidates(view, pair, facts):
            kernel = api._loaded(p, launch, x.device.id, pair, registry.SOFTMAX)
            args = (x, y, *view, *y_view[3:])
            try:
                y.fill(numpy.nan)
                api.run(kernel, launch, args)
                cupy.cuda.Device().synchronize()
            except Exception as exc:  # a cluster shape the GPU cannot place, say
                print(f"   {str(launch.knobs):<8} {launch.block:>4} x {launch.block_y:<3} launch failed: {exc}")
                continue
            err = reference.error_ratio(cupy.asnumpy(y), expected, dtype)
            ms = bench.median_ms(lambda: api.run(kernel, launch, args), repeat=20)
            star = "*" if launch == picked else " "
            print(f" {star} {str(launch.knobs):<8} {launch.block:>4} x {launch.block_y:<3} regs {kernel.num_regs:>3} "
                  f"{ms * 1e3:8.1f} us {copy_ms / ms:6.0%} err {err:.2f}")


if __name__ == "__main__":
    main([CASES[int(i)] for i in sys.argv[1:]] or CASES)
