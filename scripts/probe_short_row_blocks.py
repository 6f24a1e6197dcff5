"""Short rows (one warp or less a row): warp_rows' block size and split_row's block a row against the Triton
tutorial kernel's layout (peer_triton: one row a program of N / 256 warps), timed interleaved with the copy.

Every candidate is checked against the float64 reference on sample rows first (poisoned output).
Usage: python scripts/probe_short_row_blocks.py [M N dtype]...
"""
import dataclasses
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference, suite
from cupysoftmax.planner import Launch, _ceil_div

SHAPES = [(4096, 512, "float32"), (4096, 256, "float32"), (4096, 1024, "float32"), (4096, 256, "bfloat16")]


def main(shapes):
    dev = cupy.cuda.Device().id
    for m, n, dt in shapes:
        d = dtypes.parse(dt)
        pair = (d, d)
        x = bench.random_input(m, n, d)
        y = cupy.empty_like(x)
        rows = cupy.asarray(numpy.unique(numpy.linspace(0, m - 1, 32).astype(int)))
        expected = reference.softmax(cupy.asnumpy(x[rows]), axis=-1)
        auto_kernel, auto = api.plan(dev, "auto", m, n, pair)
        g, k, _ = auto.knobs if auto.variant == "warp_rows" else (None, None, None)
        launches = {"auto": (auto_kernel, auto)}
        if g is not None:
            for threads in (32, 64, 128, 256, 512):
                if threads >= g:
                    launch = Launch("warp_rows", auto.knobs, _ceil_div(m, threads // g), threads, 0)
                    launches[f"warp_rows {auto.knobs} x{threads}"] = (auto_kernel, launch)
        chunks = _ceil_div(n * d.itemsize, 16)
        split = api.plan(dev, "split_row", m, n, pair)[1]  # a block a row, K by SPLIT_ITEMS
        for kk in (2, 4, 8):
            threads = _ceil_div(chunks, kk)
            knobs = (kk, 0, 1)
            kernel = loader.function("split_row", pair, knobs, dev)
            if threads % 32 == 0 and threads <= kernel.max_threads_per_block and split.knobs[1:] == (0, 1):
                launches[f"split_row {knobs} x{threads}"] = (kernel, dataclasses.replace(split, knobs=knobs, block=threads))
        fns = {"copy": bench.copy_call(x.nbytes), "triton": suite.make_triton(x, "softmax")}
        for name, (kernel, launch) in launches.items():
            y.fill(numpy.nan)
            api.launch_rows(kernel, launch, x, y)
            cupy.cuda.Device().synchronize()
            err = reference.error_ratio(cupy.asnumpy(y[rows]), expected, d)
            if not err <= 1:
                print(f"   {name}: WRONG (error ratio {err})")
                continue
            fns[name] = (lambda kernel=kernel, launch=launch: api.launch_rows(kernel, launch, x, y))
        res = bench.interleaved_ms(fns, repeat=50, rounds=3)
        cp = res["copy"]
        print(f"{m} x {n} {dt}: auto {auto.variant} {auto.knobs} x{auto.block}")
        for name, ms in res.items():
            print(f"   {name:<28} {ms * 1e3:6.2f} us {100 * cp / ms:5.1f}% of copy", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    main([(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] if args else SHAPES)
