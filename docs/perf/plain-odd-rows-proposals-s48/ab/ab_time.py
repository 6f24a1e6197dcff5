"""Plain softmax (and log_softmax) of the trees side by side in one process, interleaved with a copy of the same bytes,
torch and the Triton peer (odd_peers.py's idea, with the trees as separate packages).

PKDIR holds one package per tree, csm_<tree> (a copy of the tree's cupysoftmax/ with its kernels/ inside: run_ab.sh
makes them), so that every tree's launches are timed in the same rounds (bench.interleaved_ms of the first tree).
For each shape and op: each tree's launch (variant, knobs, block, grid, registers), the times (median us, % of copy),
and each tree's output against the float64 reference on 64 rows, with the bits compared between trees.

usage: python3 -P ab_time.py PKDIR "head p1 p2" "4194304x63xfloat32 ..." [ops] [repeat] [rounds]
"""
from __future__ import annotations

import concurrent.futures
import importlib
import sys

import cupy
import numpy

pkdir, trees, shapes = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
ops = sys.argv[4].split(",") if len(sys.argv) > 4 else ["softmax"]
repeat = int(sys.argv[5]) if len(sys.argv) > 5 else 30
rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
sys.path.insert(0, pkdir)
pk = {t: importlib.import_module(f"csm_{t}") for t in trees}
api = {t: importlib.import_module(f"csm_{t}.api") for t in trees}
first = trees[0]
bench = importlib.import_module(f"csm_{first}.bench")
suite = importlib.import_module(f"csm_{first}.suite")
dtypes = importlib.import_module(f"csm_{first}.dtypes")
reference = importlib.import_module(f"csm_{first}.reference")
UINT = {2: numpy.uint16, 4: numpy.uint32, 8: numpy.uint64}


def parse(word):
    m, n, name = word.split("x")
    return int(m), int(n), dtypes.parse(name)


def plan_of(t, m, n, pair, op, x, y):
    a = api[t]
    kernel, launch = a.plan(0, "auto", m, n, pair, a.rows_aligned(x), op, False, a.rows_aligned(y))
    return f"{launch.variant} {launch.knobs} block {launch.block} grid {launch.grid} regs {kernel.num_regs}"


# compile every tree's kernels for every shape first, 16 at a time
def warm(job):
    t, word, op = job
    m, n, dt = parse(word)
    v = 16 // dt.itemsize
    try:
        api[t].plan(0, "auto", m, n, (dt, dt), n % v == 0, op, False, n % v == 0)
    except Exception as exc:
        print(f"warm {t} {word} {op}: {type(exc).__name__} {exc}", flush=True)


with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(warm, [(t, w, op) for t in trees for w in shapes for op in ops]))

for word in shapes:
    m, n, dt = parse(word)
    x = bench.random_input(m, n, dt)
    for op in ops:
        outs = {t: cupy.full((m, n), numpy.nan, dt) for t in trees}
        fns = {"copy": suite.make_copy(x, op)}
        for t in trees:
            fns[t] = (lambda f, y: (lambda: f(x, axis=-1, out=y)))(api[t].FUNCTIONS[op], outs[t])
        for label, make in [("torch", suite.make_torch), ("triton", suite.make_triton)]:
            try:
                fns[label] = make(x, op)
            except Exception as exc:
                print(f"   {label}: {type(exc).__name__} {exc}", flush=True)
        times = bench.interleaved_ms(fns, repeat=repeat, rounds=rounds)
        copy = times["copy"]
        print(f"{m} x {n} {dtypes.name(dt)} {op} ({2 * x.nbytes / 1e9:.2f} GB moved)", flush=True)
        rows = cupy.asarray(numpy.unique(numpy.concatenate([[0, 1, m - 2, m - 1],
                                                             numpy.random.default_rng(0).choice(m, 60)])))
        expected = reference.REFERENCES[op](x[rows].get(), axis=-1)
        u = UINT[dt.itemsize]
        for k, ms in times.items():
            if isinstance(ms, Exception):
                print(f"   {k:8} failed: {type(ms).__name__} {ms}", flush=True)
                continue
            line = f"   {k:8} {ms * 1e3:9.1f} us  {copy / ms * 100:5.0f}% of copy"
            if k in api:
                ratio = reference.error_ratio(outs[k][rows].get(), expected, dt, op)
                same = [o for o in trees if o != k and bool(cupy.array_equal(outs[k].view(u), outs[o].view(u)))]
                line += (f"  ratio {ratio:.3g}{'' if ratio <= 1 else ' FAIL'}  bits = {','.join(same) or '-'}"
                         f"  [{plan_of(k, m, n, (dt, dt), op, x, outs[k])}]")
            print(line, flush=True)
        del outs, fns
    del x
    cupy.get_default_memory_pool().free_all_blocks()
