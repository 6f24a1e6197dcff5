"""A fold of 8 on half the threads: split_row's plain one-block fold (8, -4, 1) of 1024 threads against
(8, -8, 1) of 512 threads (the same 4096 logical threads, so the same chunks per logical thread and the same tree)
with two blocks an SM, and the unfolded (8, 1, 1) of 512 threads (another layout) for reference.
Checks each against the float64 reference, the fold of 8's bits against the planner's launch, then times them
interleaved. Usage: python fold8.py M N dtype op [...]"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference
from cupysoftmax.planner import Launch, _ceil_div

dev = cupy.cuda.Device().id
planner = api.planner(dev)
args = sys.argv[1:]
for i in range(0, len(args), 4):
    m, n, dt, op = int(args[i]), int(args[i + 1]), args[i + 2], args[i + 3]
    dtype = dtypes.parse(dt)
    pair = (dtype, dtype)
    x = bench.random_input(m, n, dtype)

    def facts(name, knobs):
        return loader.facts_of(loader.function(name, pair, knobs, dev, op))

    pick = planner.plan("split_row", m, n, pair, facts, aligned=False, op=op)
    chunks = planner._chunks(n, pair, False)
    half = pick.block // 2
    s = _ceil_div(chunks, half) - 8
    launches = {"pick": pick,
                "fold8": Launch("split_row", (8, -8, 1), m, half, s * half * 16, (numpy.int32(s), numpy.int32(0))),
                "unfolded": Launch("split_row", (8, 1, 1), m, half, s * half * 16, (numpy.int32(s), numpy.int32(0)))}
    rows = cupy.asarray(numpy.unique(numpy.linspace(0, m - 1, min(m, 32)).astype(int)))
    ref = (reference.log_softmax if op == "log_softmax" else reference.softmax)(cupy.asnumpy(x[rows]), axis=-1)
    outs, calls = {}, {}
    for tag, launch in launches.items():
        kernel = loader.function("split_row", pair, launch.knobs, dev, op)
        if launch.smem > kernel.max_dynamic_shared_size_bytes:
            kernel.max_dynamic_shared_size_bytes = launch.smem
        y = cupy.full_like(x, numpy.nan)
        api.launch_rows(kernel, launch, x, y)
        cupy.cuda.Device().synchronize()
        err = reference.error_ratio(cupy.asnumpy(y[rows]), ref, dtype, op)
        outs[tag] = y
        calls[tag] = (lambda k=kernel, l=launch, y=y: api.launch_rows(k, l, x, y))
        print(f"{m}x{n} {dt} {op} {tag}: {launch.knobs} b{launch.block} smem {launch.smem} regs {kernel.num_regs}"
              f" err {err:.2f}", flush=True)
    same = bool(cupy.array_equal(outs["pick"].view(cupy.uint16), outs["fold8"].view(cupy.uint16))) \
        if dtype.itemsize == 2 else bool(cupy.array_equal(outs["pick"], outs["fold8"]))
    copy_ms = bench.median_ms(bench.copy_call(m * n * dtype.itemsize), repeat=30)
    best = {}
    for _ in range(3):
        for tag, ms in bench.interleaved_ms(calls, repeat=30).items():
            best[tag] = min(best.get(tag, 1e9), ms)
    line = "  ".join(f"{tag} {ms * 1e3:.1f}us {100 * copy_ms / ms:.0f}%" for tag, ms in best.items())
    print(f"RESULT {m}x{n} {dt} {op}: fold8 bits == pick: {same}  {line}", flush=True)
    del x, outs, calls
    cupy.get_default_memory_pool().free_all_blocks()
