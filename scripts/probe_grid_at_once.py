"""Few long rows on the grid: how many rows a launch holds at once, by the row's threads T, the
chunks K a thread keeps in registers (the rest, S, in shared memory) and the threads a block (256
or 512: the floor probe's best layout for 32 x 262144 float32 held 16 rows in 512-thread blocks).
Fewer threads a row with more shared memory each hold more rows at once: 32 x 262144 in one round
rather than two.

For each shape: auto, then split_row on the grid (the planner's _on_grid) for each T, K and block, and again in
rounds of equal rows where its rows at once do not divide M (32 rows 16 at once rather than 24 then 8), each checked
against the float64 reference on a poisoned output, then timed interleaved with a copy of the same bytes
(bench.interleaved_ms, 20 calls in 2 rounds).
Usage: python scripts/probe_grid_at_once.py [--auto] [M x N x dtype ...]
(--auto: auto alone; shapes as 128x262144xfloat32, default SHAPES)
"""
import dataclasses
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, planner, reference
from cupysoftmax.variants import VARIANTS
from probe_long_rows import DEV, grid_layout

SHAPES = [(8, 262144, "float32"), (16, 262144, "float32"), (32, 262144, "float32"), (64, 262144, "float32"),
          (128, 262144, "float32"), (32, 128256, "float32"), (128, 128256, "float32"), (128, 32000, "float32"),
          (32, 128256, "bfloat16"), (128, 128256, "bfloat16")]
THREADS = (2048, 4096, 8192)
ITEMS = (4, 8)
BLOCKS = (256, 512)  # the least threads a block (planner.SPLIT_GRID_THREADS, which the probe sets for each)


def layouts(m, n, pair, auto_only):
    """(name, kernel, launch) of auto and (unless auto_only) of each grid layout its kernel builds and the GPU
    holds."""
    kernel, launch = api.plan(DEV, "auto", m, n, pair)
    yield "auto", kernel, launch
    if auto_only:
        return
    least = planner.SPLIT_GRID_THREADS
    try:
        for block in BLOCKS:
            planner.SPLIT_GRID_THREADS = block
            for threads in THREADS:
                for k in ITEMS:
                    got = grid_layout(m, n, pair[0], threads, 1, k)
                    if not got or got[1].block != block:  # blocks of the least size that divides the row
                        continue
                    kernel, launch = got
                    name = f"T={threads} K={k} S={int(launch.args[0])}"
                    yield name, kernel, launch
                    # rounds of equal rows (32 rows 16 at once, not 24 then 8), as the floor probe's best held them
                    at_once = launch.grid // launch.unit
                    even = -(-m // -(-m // at_once))
                    if even < at_once:
                        yield f"{name} {even} at once", kernel, dataclasses.replace(launch, grid=even * launch.unit)
    finally:
        planner.SPLIT_GRID_THREADS = least


def main(shapes, auto_only):
    print("| M | N | dtype | launch | block | rows at once | regs | err | us | % of copy |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for m, n, type_name in shapes:
        dtype = dtypes.parse(type_name)
        pair = (dtype, dtype)
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)
        want = reference.softmax(cupy.asnumpy(x), -1)
        fns, rows = {"copy": bench.copy_call(x.nbytes)}, {}
        for name, kernel, launch in layouts(m, n, pair, auto_only):
            y.fill(numpy.nan)
            api.launch_rows(kernel, launch, x, y)
            err = reference.error_ratio(cupy.asnumpy(y), want, dtype)
            fns[name] = lambda k=kernel, l=launch: api.launch_rows(k, l, x, y)
            at_once = launch.grid // launch.unit if VARIANTS["split_row"].gridded(launch.knobs) else "-"
            rows[name] = (launch, at_once, kernel.num_regs, err)
        times = bench.interleaved_ms(fns, repeat=20, rounds=2)
        copy = times.pop("copy")
        for name, ms in times.items():
            launch, at_once, regs, err = rows[name]
            label = f"auto {launch.knobs} T={launch.block * launch.unit}" if name == "auto" else name
            cells = (f"failed: {ms}" if isinstance(ms, Exception)
                     else f"{launch.block} | {at_once} | {regs} | {err:.2f} | {ms * 1e3:.1f} | {copy / ms:.0%}")
            print(f"| {m} | {n} | {type_name} | {label} | {cells} |", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    auto_only = args[:1] == ["--auto"]
    picked = [(int(m), int(n), t) for m, n, t in (a.split("x") for a in args[auto_only:])]
    main(picked or SHAPES, auto_only)
