"""Probe: split_row on the grid (C = 0) with larger blocks, fewer of them a row.

The floor probe (scripts/probe_floor.py) held a row in fewer, larger blocks faster than in many small ones at
the same rows at once. split_row's grid cut takes blocks of SPLIT_GRID_THREADS (256) where the row's tree
allows; this cuts auto's own grid layout (the same T, K, S and G, so the same tree and bits) into blocks of 256,
512 and 1024 threads through the planner's _on_grid, checks each against the float64 reference on a poisoned
output, then times them interleaved with a copy of the same bytes.

    PYTHONPATH=$PWD python3 scripts/probe_grid_blocks.py
"""
import dataclasses
import sys

import cupy
from cupy.cuda import driver

from cupysoftmax import api, bench, dtypes, planner
from cupysoftmax import variants as registry
from probe_plain_warp_rows import checked, timed

SHAPES = [(64, 1048576, "float32"), (128, 128256, "float32"), (256, 262144, "float32"), (128, 262144, "float32"),
          (32, 262144, "float32"), (4, 4194304, "float32"), (16, 1048576, "float32")]


def cuts(m, n, dtype, op) -> dict:
    """{label: (kernel, launch)}: auto's grid launch cut into blocks of each size that serves."""
    dev = cupy.cuda.Device().id
    pair = (dtype, dtype)
    p = api.planner(dev)
    _, auto = api.plan(dev, "auto", m, n, pair, True, op)
    if not auto.workspace:
        print(f"{m} x {n} {dtype.name}: auto takes {auto.variant} {auto.knobs} off the grid, skipped")
        return {}
    threads, extra = auto.block * auto.unit, int(auto.args[0])
    found, keep = {}, planner.SPLIT_GRID_THREADS
    try:
        for least in (256, 512, 1024):
            planner.SPLIT_GRID_THREADS = least
            launch = p._on_grid(registry.get(auto.variant), m, (*auto.knobs[:-1], 0), threads, extra, pair,
                                api._facts(dev, pair, op), op)
            if launch is None or launch.block in {l.block for _, l in found.values()}:
                continue
            kernel = api._loaded(p, launch, dev, pair, op)
            # as api.plan does: no more blocks than the GPU holds at once (a cooperative launch)
            per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, launch.block, launch.smem)
            launch = dataclasses.replace(launch, grid=min(launch.grid, per_sm * p.device.sms // launch.unit * launch.unit))
            if launch.grid:
                found[f"{launch.block}x{launch.unit}{'*' if launch == auto else ''}"] = (kernel, launch)
    finally:
        planner.SPLIT_GRID_THREADS = keep
    print(f"{m} x {n} {dtype.name}: T = {threads}, K = {auto.knobs[0]}, S = {extra}; rows at once: "
          + ", ".join(f"{label} {launch.grid // launch.unit}" for label, (_, launch) in found.items()))
    return found


def main() -> int:
    wrong = 0
    for op in (registry.SOFTMAX,):
        for m, n, name in SHAPES:
            dtype = dtypes.parse(name)
            cases = cuts(m, n, dtype, op)
            if not cases:
                continue
            x = bench.random_input(m, n, dtype)
            fns, bad = checked(x, op, cases)
            wrong += bad
            copy, cells = timed(fns, cases, repeat=30, rounds=4)
            print(f"   copy {copy * 1e3:.1f} us  {cells}", flush=True)
    print(f"{wrong} launches missed the reference")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
