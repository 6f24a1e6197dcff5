"""Evidence for the planner's column rules: every launch of strided ((R, C), TX x TY, a column in registers) and
of strided_smem ((C,), W x TY, a column cached in shared memory) that holds a column, timed. strided_smem on
clusters runs at a cluster an item and at P = 1 up to its CLUSTER_ROUNDS times the clusters the GPU holds at once
(api._active_clusters; the planner's persistent takes one of these), labelled P=p.

For each array and axis: a copy of the same bytes, then each candidate
checked against the float64 reference and timed with bench.median_ms; auto's
own pick is starred. One line a candidate: variant, knobs, TX x TY,
registers, time, % of copy, error ratio.
Usage: python scripts/sweep_strided.py [--variant strided|strided_smem] [case index]...
(default: both variants, every case below)
"""
import dataclasses
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, reference
from cupysoftmax import variants as registry
from cupysoftmax.planner import CLUSTER_ROUNDS, MAX_GRID, Launch, _ceil_div

CASES = [((8192, 8192), 0, "float32"), ((32, 19, 512, 512), 1, "float32"), ((64, 2048, 1024), 1, "float32"),
         ((8192, 8192), 0, "bfloat16"), ((4096, 4096), 0, "float32"), ((16, 512, 4096), 1, "float32"),
         ((2048, 16384), 0, "float32")]
SMEM_ROW_THREADS = (4, 8, 16, 32)


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


def smem_candidates(view, pair, planner):
    outer, n, inner = view[:3]
    v = registry.VARIANTS["strided_smem"]
    limit = planner.device.smem_per_block_optin
    for (c,) in v.knobs:
        for ty in SMEM_ROW_THREADS:
            launch = planner.column_lines_launch(v, c, ty, outer, n, inner, pair)
            if launch.smem <= limit and launch.block_y == ty and launch.block * ty <= 1024:
                yield launch


def rounds(launch, kernel):
    """{label: launch}: the launch itself, and for strided_smem on clusters P x the clusters held, P = 1..ROUNDS,
    where that is fewer clusters than items."""
    c, held = launch.knobs[-1], api._active_clusters(kernel, launch, registry.SOFTMAX)  # 0 for others: none added
    most = CLUSTER_ROUNDS[("strided_smem", registry.SOFTMAX)]
    return {"": launch, **{f"P={p}": dataclasses.replace(launch, grid=p * held * c)
                           for p in range(1, most + 1) if 0 < p * held * c < launch.grid}}


def case_arrays(shape, axis, name):
    """A case's input (standard normal x 3), output, both column views, auto's launch and the float64 reference."""
    dtype = dtypes.parse(name)
    pair = (dtype, dtype)
    x = (cupy.random.standard_normal(shape, dtype=numpy.float32) * 3).astype(dtype)
    y = cupy.empty_like(x)
    view = api.columns_view(x.shape, x.strides, x.itemsize, (axis,))
    y_view = api.columns_view(y.shape, y.strides, y.itemsize, (axis,))
    _, picked = api.plan_columns(x.device.id, "auto", *view[:3], pair, registry.SOFTMAX,
                                 api.columns_aligned(view, x.itemsize))
    return x, y, view, y_view, picked, reference.softmax(cupy.asnumpy(x), axis)


def main(cases, variants):
    for shape, axis, name in cases:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        x, y, view, y_view, picked, expected = case_arrays(shape, axis, name)
        facts = api._facts(x.device.id, pair, registry.SOFTMAX)
        copy_ms = bench.median_ms(bench.copy_call(x.nbytes), repeat=20)
        print(f"{shape} axis {axis} {name}: copy {copy_ms * 1e3:.1f} us")
        p = api.planner(x.device.id)
        launches = [*(candidates(view, pair, facts) if "strided" in variants else ()),
                    *(smem_candidates(view, pair, p) if "strided_smem" in variants else ())]
        for base in launches:
            kernel = api._loaded(p, base, x.device.id, pair, registry.SOFTMAX)
            args = (x, y, *view, *y_view[3:])
            for label, launch in rounds(base, kernel).items():
                tag = f"{launch.variant:<12} {str(launch.knobs):<8} {label:<4} {launch.block:>4} x {launch.block_y:<3}"
                try:
                    y.fill(numpy.nan)
                    api.run(kernel, launch, args)
                    cupy.cuda.Device().synchronize()
                except Exception as exc:  # a cluster shape the GPU cannot place, say
                    print(f"   {tag} launch failed: {exc}")
                    continue
                err = reference.error_ratio(cupy.asnumpy(y), expected, dtype)
                ms = bench.median_ms(lambda: api.run(kernel, launch, args), repeat=20)
                star = "*" if launch == picked else " "
                print(f" {star} {tag} regs {kernel.num_regs:>3} {ms * 1e3:8.1f} us {copy_ms / ms:6.0%} err {err:.2f}")
        print(f"   auto: {picked}")


if __name__ == "__main__":
    args = sys.argv[1:]
    chosen = ("strided", "strided_smem")
    if args[:1] == ["--variant"]:
        chosen, args = (args[1],), args[2:]
    main([CASES[int(i)] for i in args] or CASES, chosen)
