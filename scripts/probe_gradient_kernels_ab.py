"""Probe: the gradients' auto kernels as another tree has them against this tree's, on the same launch, in one
process (scripts/probe_kernels_ab.py does the forward's; `cupysoftmax time` in each tree, as ab_trees.py runs it,
compiles every kernel afresh in each call, minutes for a handful of shapes).

For each shape and op, auto plans its launch with this tree (a kernel change that moves a plan shows in
plan_offline.py, before device time is spent); the instantiation is compiled from this tree's kernels/ and from
OLD/kernels (e.g. `git archive REV | tar -x -C OLD`). Each is checked against the float64 reference on sample
rows of a NaN-poisoned dx, and every row for NaN (sweep_backward.py's Case), then both are timed interleaved with
a copy of the 3 M N bytes and the peers (torch, torch.compile) in three rounds.

    PYTHONPATH=$PWD:$PWD/scripts python3 scripts/probe_gradient_kernels_ab.py OLD MxNxdtype:op ...
"""
import sys
from pathlib import Path

import cupy

from cupysoftmax import api, bench, dtypes, suite
from probe_kernels_ab import compiled_from, raised  # scripts/, this file's folder
from sweep_backward import Case

PEERS = ("torch", "torch_compile")


def main(folder: str, words) -> int:
    dev = cupy.cuda.Device().id
    old, tag = Path(folder) / "kernels", Path(folder).name
    bad = 0
    for word in words:
        shape, _, op = word.partition(":")
        m, n, name = shape.split("x")
        m, n, dtype = int(m), int(n), dtypes.parse(name)
        pair = (dtype, dtype)
        case = Case(m, n, dtype, op)
        # dx's rows' alignment too, as gradients.py passes it: it lets warp_rows take its whole-chunk twin (O = -1)
        new, launch = api.plan(dev, "auto", m, n, pair, api.rows_aligned(case.y), op,
                               y_aligned=api.rows_aligned(case.dx))
        kernels = {"new": new, tag: raised(compiled_from(old, launch.variant, pair, launch.knobs, op), launch)}
        calls = {"copy": bench.copy_call(3 * m * n * dtype.itemsize // 2)}
        for label, kernel in kernels.items():
            err = case.check(kernel, launch)
            if bool(cupy.isnan(case.dx).any()):
                err = float("inf")
            if err <= 1:
                calls[label] = case.call(kernel, launch)
            else:
                print(f"   {label}: WRONG (error ratio {err:.2f})")
                bad += 1
        gradient = suite.Gradient(None, case.y, case.dy)
        for peer in PEERS:
            calls[peer] = suite.PROVIDERS[peer](gradient, op)
        times = bench.interleaved_ms(calls, repeat=40, rounds=3)
        copy = times.pop("copy")
        cells = "  ".join(f"{label} failed ({str(ms)[:60]})" if isinstance(ms, Exception) else
                          f"{label} {ms * 1e3:7.1f} us {copy / ms:4.0%}"
                          + (f" ({kernels[label].num_regs} regs)" if label in kernels else "")
                          for label, ms in times.items())
        print(f"{m:>5} x {n:<6} {name:<8} {op:<20} {launch.variant} {str(launch.knobs):<10} b{launch.block:<4} "
              f"g{launch.grid:<5} copy {copy * 1e3:.1f}us | {cells}", flush=True)
        case.close()
        cupy.get_default_memory_pool().free_all_blocks()
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
