"""strided_smem's grid: the planner's (a cluster an item) against k clusters that loop over the items, k from
the clusters the GPU holds at once (cuOccupancyMaxActiveClusters).

For each array: a copy of the same bytes, then each launch checked against the
float64 reference and timed with bench.median_ms; auto's own launch is starred.
Usage: python scripts/probe_column_grid.py [case index]... (sweep_strided.py's cases; default 0 3 4 6)
"""
import dataclasses
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference
from cupysoftmax import variants as registry
from sweep_configs import active_clusters
from sweep_strided import CASES, case_arrays

ROW_THREADS = (4, 8, 16)


def main(cases):
    for shape, axis, name in cases:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        x, y, view, y_view, picked, expected = case_arrays(shape, axis, name)
        copy_ms = bench.median_ms(bench.copy_call(x.nbytes), repeat=20)
        print(f"{shape} axis {axis} {name}: copy {copy_ms * 1e3:.1f} us; auto {picked.knobs} {picked.block} x "
              f"{picked.block_y}, grid {picked.grid}")
        p = api.planner(x.device.id)
        c = picked.knobs[0]
        for ty in ROW_THREADS:
            base = p.column_lines_launch(registry.VARIANTS["strided_smem"], c, ty, *view[:3], pair)
            kernel = api._loaded(p, base, x.device.id, pair, registry.SOFTMAX)
            active = active_clusters(kernel, base, c) if c > 1 else p.blocks_per_sm(
                base.block * base.block_y, loader.facts_of(kernel), base.smem) * p.device.sms
            grids = sorted({base.grid, *(k * c for k in (active, 2 * active, 4 * active) if k * c < base.grid)})
            for grid in grids:
                launch = dataclasses.replace(base, grid=grid)
                args = (x, y, *view, *y_view[3:])
                y.fill(numpy.nan)
                api.run(kernel, launch, args)
                cupy.cuda.Device().synchronize()
                err = reference.error_ratio(cupy.asnumpy(y), expected, dtype)
                ms = bench.median_ms(lambda: api.run(kernel, launch, args), repeat=20)
                star = "*" if launch == picked else " "
                print(f" {star} ({c},) {launch.block:>3} x {ty:<3} active {active:>3} grid {grid // c:>5} clusters "
                      f"{ms * 1e3:8.1f} us {copy_ms / ms:6.0%} err {err:.2f}")


if __name__ == "__main__":
    main([CASES[int(i)] for i in sys.argv[1:] or (0, 3, 4, 6)])
