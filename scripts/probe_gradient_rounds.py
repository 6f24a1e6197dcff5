"""Probe: the gradients' one-block rows (split_row C = 1, a block a row: 4096 blocks at 4096 rows) on smaller grids
that loop over rows. The kernel already walks rows by the grid (kernels/split_row.cu, split_row_backward: row +=
gridDim.x / C), so a block's row and its bits do not change with the grid; only how many rows a block takes in turn
does. torch.compile leads these shapes by 0.6-5.5% (docs/PERFORMANCE.md, sixty-seventh); this asks whether blocks
that stay resident and loop over rows recover any of it, before a kernel of its own is written.

For each shape: auto's launch, then the same kernel and block on P times the blocks the GPU holds at once
(the driver's occupancy count), for P in ROUNDS, each checked against the float64 reference on a
poisoned dx (scripts/sweep_backward.py's Case), then all timed interleaved with a copy of the 3 M N bytes
(bench.interleaved_ms, L2 flushed) in three rounds.

    PYTHONPATH=$PWD python3 scripts/probe_gradient_rounds.py [--op log_softmax_backward] [MxNxdtype ...]
"""
import argparse
import dataclasses

import cupy

from cupysoftmax import api, bench, dtypes
from cupysoftmax import variants as registry
from sweep_backward import Case  # scripts/, this file's folder

SHAPES = ["4096x16384xfloat16", "4096x16384xbfloat16", "4096x8192xfloat32", "4096x4096xfloat32",
          "4096x2048xfloat32", "4096x1024xfloat32"]
ROUNDS = (1, 2, 4)  # grids of P x the blocks resident at once


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", default=registry.SOFTMAX_BACKWARD, choices=registry.BACKWARD)
    ap.add_argument("shapes", nargs="*", default=SHAPES, help="MxNxdtype")
    a = ap.parse_args()
    dev = cupy.cuda.Device().id
    p = api.planner(dev)
    print(a.op)
    for shape in a.shapes:
        m, n, name = shape.split("x")
        m, n, dtype = int(m), int(n), dtypes.parse(name)
        pair = (dtype, dtype)
        case = Case(m, n, dtype, a.op)
        kernel, auto = api.plan(dev, "auto", m, n, pair, api.rows_aligned(case.y), a.op)
        print(f"{m} x {n} {name}: copy {case.copy_ms * 1e3:.1f} us, auto {auto.variant} {auto.knobs} grid {auto.grid} "
              f"block {auto.block} r{kernel.num_regs}", flush=True)
        if auto.variant != "split_row" or auto.knobs[-1] != 1 or auto.workspace:
            print("   not a one-block launch: skipped")
            continue
        # the driver's count, as api.plan takes it for cooperative grids
        per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, auto.block, auto.smem)
        resident = per_sm * p.device.sms
        launches = {f"auto grid {auto.grid}": auto}
        for rounds in ROUNDS:
            if rounds * resident < m:
                launches[f"P={rounds} grid {rounds * resident}"] = dataclasses.replace(auto, grid=rounds * resident)
        calls = {}
        for label, launch in launches.items():
            err = case.check(kernel, launch)
            if bool(cupy.isnan(case.dx).any()):  # the sample rows aside, a row the grid's loop left unwritten
                err = float("inf")
            print(f"   {label:<22} err {err:.2f}{'' if err <= 1 else '  FAILED'}", flush=True)
            if err <= 1:
                calls[label] = case.call(kernel, launch)
        calls["copy"] = bench.copy_call(3 * m * n * dtype.itemsize // 2)
        times = bench.interleaved_ms(calls, repeat=60, rounds=3)
        for label, ms in times.items():
            if isinstance(ms, Exception):
                print(f"   {label:<22} failed: {ms}")
            else:
                print(f"   {label:<22} {ms * 1e3:8.1f} us  {100 * times['copy'] / ms:5.0f}% of copy", flush=True)
        case.close()
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
