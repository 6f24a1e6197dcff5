"""Evidence for planner.ELEMENT_STRIDED_LAYOUTS: every warp_rows (G, K) that holds a row of N elements, on Slots
(O = 0), on whole chunks (O = -1, rows of N % V == 0) and element-strided (O = -2, float32 and float64), against
torch (rows of N % V != 0, and float64 rows of any N: the rows the strided kernels take; float32 rows of
N % V == 0: whether they should; 2-byte rows: which layout of the chunk kernels).

Each kernel is compiled from kernels/ (loader.compile_source: any G and K, registry or not), checked against the
float64 reference on sample rows (a poisoned output), then timed interleaved with the copy of the same bytes and
torch (bench.interleaved_ms, L2 flushed). The planner's own launch is starred (and timed beside them where it is
another variant). One line a candidate: knobs, registers, us, % of copy, error ratio.
Usage: python scripts/probe_strided_layouts.py [M:N:dtype:op ...]   (default: SHAPES)
"""
import sys
from concurrent.futures import ThreadPoolExecutor

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch, _ceil_div

# Row lengths at the edges of the layouts' chunk counts (f32 V = 4, f64 V = 2), arrays of 512 MiB
EDGES = {"float32": (5, 9, 13, 17, 31, 33, 63, 65, 127, 129, 255),
         "float64": (3, 7, 9, 15, 17, 31, 33, 63, 65, 127, 129, 255, 511)}
SHAPES = [f"{(1 << 29) // (n * (4 if dt == 'float32' else 8))}:{n}:{dt}:{op}" for dt, ns in EDGES.items() for n in ns
          for op in ("softmax", "log_softmax")]
THREADS = 256


def layouts(n, dtype):
    """(G, K) with G * K * V >= N, the fewest chunks a lane first, no more than twice the row's chunks."""
    chunks = _ceil_div(n, 16 // dtype.itemsize)
    return [(g, k) for g in (1, 2, 4, 8, 16, 32) for k in (1, 2, 4, 8) if chunks <= g * k < 2 * chunks]


def orders(n, dtype):
    """The O of the kernels timed: Slots, element-strided (float32 and float64 only: warp_rows.cu), and the twin on
    whole chunks where N % V == 0."""
    strided = (-2,) if dtype.itemsize >= 4 else ()
    return (0, *strided, -1) if n % (16 // dtype.itemsize) == 0 else (0, *strided)


def main(specs):
    import torch

    dev = cupy.cuda.Device().id
    cases = [(int(m), int(n), dtypes.parse(dt), op) for m, n, dt, op in (s.split(":") for s in specs)]
    jobs = sorted({(dtype, (g, k, o), op) for _, n, dtype, op in cases for g, k in layouts(n, dtype)
                   for o in orders(n, dtype)},
                  key=str)
    source = loader.source("warp_rows")
    with ThreadPoolExecutor(8) as pool:
        kernels = dict(zip(jobs, pool.map(
            lambda j: loader.compile_source(source, "warp_rows", (j[0], j[0]), j[1], dev, j[2]), jobs)))
    for m, n, dtype, op in cases:
        pair = (dtype, dtype)
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)
        rows = numpy.unique(numpy.linspace(0, m - 1, 64).astype(int))
        expected = reference.REFERENCES[op](cupy.asnumpy(x[rows]), -1)
        own, picked = api.plan(dev, "auto", m, n, pair, api.rows_aligned(x), op, y_aligned=api.rows_aligned(y))
        fns, notes = {"copy": bench.copy_call(x.nbytes)}, {}
        tx = torch.from_dlpack(x)  # DLPack carries bfloat16, which __cuda_array_interface__ cannot
        fns["torch"] = (lambda tx=tx: torch.softmax(tx, -1)) if op == registry.SOFTMAX else (
            lambda tx=tx: torch.log_softmax(tx, -1))
        candidates = [(kernels[(dtype, (g, k, o), op)],
                       Launch("warp_rows", (g, k, o), min(_ceil_div(m, THREADS // g), 2**31 - 1), THREADS, 0))
                      for g, k in layouts(n, dtype) for o in orders(n, dtype)]
        if picked.variant != "warp_rows":  # the planner's own launch, of another variant, beside the candidates
            candidates.append((own, picked))
        for kernel, launch in candidates:
            y.fill(numpy.nan)
            api.launch_rows(kernel, launch, x, y)
            cupy.cuda.Device().synchronize()
            err = reference.error_ratio(cupy.asnumpy(y[rows]), expected, dtype, op)
            star = "*" if (picked.variant, picked.knobs) == (launch.variant, launch.knobs) else " "
            name = f"{star} {'' if launch.variant == 'warp_rows' else launch.variant + ' '}{launch.knobs}"
            fns[name] = lambda kernel=kernel, launch=launch: api.launch_rows(kernel, launch, x, y)
            notes[name] = f"regs {kernel.num_regs:>3}  err {err:.3f}"
        times = bench.interleaved_ms(fns, repeat=30, rounds=3)
        copy = times["copy"]
        print(f"{m} x {n} {dtype.name} {op}: copy {copy * 1e3:.1f} us, planned {picked.variant} {picked.knobs}")
        for name, ms in times.items():
            print(f"   {name:<14} {ms * 1e3:>8.1f} us {100 * copy / ms:>5.0f}%  {notes.get(name, '')}", flush=True)
        del x, y, tx
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main(sys.argv[1:] or SHAPES)
