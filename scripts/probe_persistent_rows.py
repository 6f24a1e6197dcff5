"""Probe: split_row's gradient launches on clusters, a cluster a row against a grid of P x the clusters held.

For each shape: auto's launch (a cluster a row as the planner lays it out,
before api.plan's cut: Planner.persistent), then the same kernel on grids of
P = 1..4 times the clusters the GPU holds at once (driver.active_clusters),
each cluster looping over rows; every launch checked against the float64
reference on 16 rows (dx poisoned with NaN first) and timed with
bench.median_ms against a copy of the gradient's bytes.
Usage: python scripts/probe_persistent_rows.py [M N dtype]...   (default: the shapes below)
"""
import sys

import cupy

from cupysoftmax import api, driver
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch, Planner
from sweep_backward import each_case

OP = registry.SOFTMAX_BACKWARD

SHAPES = [(8192, 50257, "bfloat16"), (8192, 50257, "float32"), (4096, 65536, "bfloat16")]


def main(shapes):
    dev = cupy.cuda.Device().id
    p = api.planner(dev)
    for name, pair, case in each_case(shapes, OP):
        m, n = case.m, case.n
        planned = p.plan("auto", m, n, pair, api._facts(dev, pair, OP), api.rows_aligned(case.y), OP)
        kernel = api._loaded(p, planned, dev, pair, OP)
        c = planned.knobs[-1]
        if planned.variant != "split_row" or c <= 1:
            print(f"{m} x {n} {name}: auto plans {planned.variant} {planned.knobs}, no clusters; skipped")
            continue
        held = driver.active_clusters(kernel.kernel.ptr, c, (planned.block, 1), planned.smem)
        print(f"{m} x {n} {name}: {planned.knobs}, {planned.block} threads, {held} clusters held; "
              f"copy {case.copy_ms * 1e3:.1f} us", flush=True)
        picked = Planner.persistent(planned, held, OP).grid
        for label, grid in [("a cluster a row", planned.grid)] + [(f"P = {k}", held * c * k) for k in range(1, 5)]:
            err, ms = case.run(kernel, Launch("split_row", planned.knobs, grid, planned.block, 0, unit=c))
            star = "*" if grid == picked else " "
            print(f" {star} {label:<16} grid {grid:>6} {ms * 1e3:8.1f} us {100 * case.copy_ms / ms:5.1f}% err {err:.2f}",
                  flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    main([(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] if args else SHAPES)
