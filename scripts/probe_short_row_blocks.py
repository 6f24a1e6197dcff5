"""Probe: auto's launch for short rows against the same kernel on other block sizes and split_row's one block a
row, with the Triton tutorial kernel, Liger and torch.compile in the same timing. Every case is checked
against the float64 reference on a NaN-poisoned output first, then all are timed in one interleaved run with a
copy of the same bytes, twice (H100: docs/perf/short-row-blocks-h100.txt).

    PYTHONPATH=$PWD python3 scripts/probe_short_row_blocks.py
"""
import dataclasses
import sys

from cupysoftmax import api, bench, dtypes
from probe_plain_warp_rows import checked, peers, timed  # scripts/: the check-then-time cases of the kernel probes

SHAPES = [(4096, 512, "float32", "softmax"), (4096, 512, "float32", "log_softmax"), (4096, 1024, "bfloat16", "softmax"),
          (4096, 1024, "float16", "softmax"), (4096, 256, "float32", "softmax"), (4096, 1024, "float32", "softmax")]
THREADS = (64, 128, 512, 1024)  # warp_rows blocks besides the planner's


def main() -> int:
    import cupy

    dev = cupy.cuda.Device().id
    bad = 0
    for m, n, name, op in SHAPES:
        pair = (dtypes.parse(name),) * 2
        kernel, launch = api.plan(dev, "auto", m, n, pair, True, op)
        cases = {f"auto {launch.variant}{launch.knobs} b{launch.block}": (kernel, launch)}
        if launch.variant == "warp_rows":
            rows_per_block = launch.block // launch.knobs[0]
            for threads in THREADS:
                rows = rows_per_block * threads // launch.block
                cases[f"b{threads}"] = (kernel, dataclasses.replace(launch, block=threads, grid=-(-m // rows)))
        one_block = api.plan(dev, "split_row", m, n, pair, True, op)
        cases[f"split_row{one_block[1].knobs} b{one_block[1].block}"] = one_block
        x = bench.random_input(m, n, pair[0])
        fns, wrong = checked(x, op, cases)
        bad += wrong
        fns.update(peers(x, op, ("triton", "liger", "torch_compile")))
        for _ in range(2):
            copy, cells = timed(fns, cases, repeat=60, rounds=5)
            print(f"{m} x {n} {name} {op}: copy {copy * 1e3:.2f} us | {cells}", flush=True)
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
