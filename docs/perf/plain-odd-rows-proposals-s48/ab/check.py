"""Correctness of softmax and log_softmax on rows out of 16-byte phase, for the tree on PYTHONPATH (run with python3 -P
from /work/main). Every case against cupysoftmax.reference (float64), outputs poisoned with NaN first so that unwritten
elements show, and the bytes of an output buffer outside the output view checked untouched (bit for bit). Then a
digest of each output's bits, to compare trees: head and the proposals differ on rows out of phase (another order of
the sums, within tolerance), p1 and p2 should agree with each other everywhere, and every tree with head on the
aligned controls (plain_aligned) and the cases with scale= / where= (kernels the proposals leave as they are).

usage: PYTHONPATH=<tree> python3 -P check.py [quick]
prints 'case ... ok ratio=R digest=D' or 'case ... FAIL ...' per case, then 'summary: N cases, F failed'.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import sys
import traceback

import cupy
import numpy

from cupysoftmax import api, dtypes, reference
from cupysoftmax import variants as registry

F32, BF16, F16, F64 = dtypes.FLOAT32, dtypes.BFLOAT16, dtypes.FLOAT16, dtypes.FLOAT64
QUICK = len(sys.argv) > 1 and sys.argv[1] == "quick"
NS = [1, 2, 3, 5, 7, 9, 15, 17, 31, 33, 63, 65, 100, 127, 129, 255, 257, 511, 1023]
PAIRS = [(F32, F32), (BF16, BF16), (F16, F16), (BF16, F32), (F64, F64)]
OPS = [registry.SOFTMAX, registry.LOG_SOFTMAX]
M = 37  # odd, so rows take every phase and the last warp has idle lanes
UINT = {2: numpy.uint16, 4: numpy.uint32, 8: numpy.uint64}
rng = numpy.random.default_rng(48)


def bits(a) -> numpy.ndarray:
    return cupy.ascontiguousarray(a).view(UINT[a.itemsize]).get()


def digest(a) -> str:
    return hashlib.sha1(bits(a).tobytes()).hexdigest()[:12]


def values(m, n, dtype, special: bool):
    """Normal x 3 in dtype; with `special`, rows whose first or last element is NaN, +inf, -inf or large, and a row
    of only -inf (the edge positions of a row, which out-of-phase rows hold in partial granules)."""
    v = (rng.standard_normal((m, n)) * 3).astype(numpy.float64)
    if special and m >= 9:
        v[1, 0] = numpy.nan
        v[2, n - 1] = numpy.nan
        v[3, 0] = numpy.inf
        v[4, n - 1] = numpy.inf
        v[5, :] = -numpy.inf
        v[6, n - 1] = -numpy.inf
        v[7, 0] = 60.0  # dominates its row: its exponential is the sum
        v[8, n - 1] = 60.0
    return cupy.asarray(v).astype(dtype)


def fill_nan(shape, dtype):
    return cupy.full(shape, numpy.nan, dtype)


def layouts(m, n, dtype):
    """(name, x, out or None, the output's buffer or None, what of it the output covers, a raw pointer to free)"""
    # contiguous, the output fresh (auto allocates) and poisoned (out=)
    x = values(m, n, dtype, special=True)
    yield "contig", x, None, None, None, None
    # x one element into an allocation (its first row out of phase, the array's first granule holds a byte before
    # x); the output one element in too (at x's phase: 16-byte stores), then two in (out of phase: element stores)
    buf = values(1, m * n + 16, dtype, special=False).reshape(-1)
    x = buf[1:1 + m * n].reshape(m, n)
    for lead in (1, 2):
        obuf = fill_nan(m * n + 16, dtype)
        yield f"off1_out{lead}", x, obuf[lead:lead + m * n].reshape(m, n), obuf, (lead, lead + m * n), None
    # a strided view whose gap columns hold NaN: a granule read across the gap must not let them in
    big = fill_nan((m, n + 5), dtype)
    big[:, 2:n + 2] = values(m, n, dtype, special=False)
    x = big[:, 2:n + 2]
    obig = fill_nan((m, n + 5), dtype)
    yield "strided_nan_gaps", x, obig[:, 1:n + 1], obig, "cols", None
    # rows reversed (a negative row stride)
    x = values(m, n, dtype, special=False)[::-1]
    yield "reversed", x, None, None, None, None
    # x ending at the very end of a raw cudaMalloc of its exact size (not a multiple of 16 bytes where m * n is odd)
    nbytes = m * n * numpy.dtype(dtype).itemsize
    ptr = cupy.cuda.runtime.malloc(nbytes)
    mem = cupy.cuda.UnownedMemory(ptr, nbytes, owner=None)
    x = cupy.ndarray((m, n), dtype, cupy.cuda.MemoryPointer(mem, 0))
    x[...] = values(m, n, dtype, special=False)
    yield "exact_alloc", x, None, None, None, ptr


def check(op, x, out, buf, untouched, out_dtype):
    fn = api.FUNCTIONS[op]
    kwargs = {} if out_dtype == x.dtype else {"dtype": out_dtype}
    y = fn(x, axis=-1, out=out, **kwargs) if out is not None else fn(x, axis=-1, **kwargs)
    cupy.cuda.Device().synchronize()
    expected = reference.REFERENCES[op](x.get(), axis=-1, dtype=None if out_dtype == x.dtype else out_dtype)
    ratio = reference.error_ratio(y.get(), expected, out_dtype, op)
    problems = []
    if not ratio <= 1.0:
        problems.append(f"ratio {ratio:.3g}")
    if buf is not None:  # the bytes around the output view stay NaN (bit for bit)
        nan = bits(fill_nan(1, buf.dtype))[0]
        b = bits(buf)
        if untouched == "cols":
            n = x.shape[1]
            keep = numpy.ones(b.shape, bool)
            keep[:, 1:n + 1] = False
        else:
            keep = numpy.ones(b.shape, bool)
            keep[untouched[0]:untouched[1]] = False
        if (b[keep] != nan).any():
            problems.append(f"{int((b[keep] != nan).sum())} elements outside the output view written")
    return y, ratio, problems


def prewarm(cases):
    """Compile the kernels the cases launch, 16 at a time (api.plan compiles what the planner asks about)."""
    def one(args):
        try:
            api.plan(0, "auto", *args)
        except Exception:
            pass
    keys = set()
    for n, pair, op in cases:
        v = 16 // pair[0].itemsize
        for aligned in (False, True):
            keys.add((M, n, pair, aligned, op, False, aligned and n % v == 0))
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(one, sorted(keys, key=str)))


def main():
    cases = [(n, pair, op) for pair in PAIRS for n in NS for op in OPS
             if not (pair[0] == F64 and n not in (3, 63, 255)) and not (QUICK and n not in (7, 63, 255))]
    prewarm(cases)
    total = failed = 0
    for n, pair, op in cases:
        for name, x, out, buf, untouched, raw in layouts(M, n, pair[0]):
            if out is not None and pair[1] != pair[0]:
                out = buf = None  # out= must have the output dtype; the fresh output path covers the pair
            label = f"{op:11} {dtypes.name(pair[0])}->{dtypes.name(pair[1])} n={n:<5} {name:17}"
            total += 1
            try:
                y, ratio, problems = check(op, x, out, buf, untouched, pair[1])
                line = f"{label} {'FAIL ' + '; '.join(problems) if problems else 'ok'} ratio={ratio:.3g} digest={digest(y)}"
                failed += bool(problems)
            except Exception as exc:
                failed += 1
                line = f"{label} FAIL {type(exc).__name__}: {exc}"
                traceback.print_exc(file=sys.stderr)
            finally:
                if raw is not None:
                    cupy.cuda.Device().synchronize()
                    cupy.cuda.runtime.free(raw)
            print(line, flush=True)
    # the options (old layout, O = 1) and an aligned control (O = -1) on a few shapes: same bits as head expected
    for n, pair in [(63, (F32, F32)), (255, (BF16, BF16)), (64, (F32, F32)), (1024, (BF16, BF16))]:
        x = values(M, n, pair[0], special=True)
        mask = cupy.asarray(rng.random((M, n)) < 0.7)
        plain = "plain_aligned" if n * pair[0].itemsize % 16 == 0 else "plain_odd"  # O = -1 / O = 0
        for label, kwargs in [("scale=2", {"scale": 2.0}), ("where", {"where": mask}), (plain, {})]:
            total += 1
            try:
                y = api.softmax(x, axis=-1, **kwargs)
                expected = reference.softmax(x.get(), axis=-1, scale=kwargs.get("scale", 1.0),
                                             where=None if "where" not in kwargs else mask.get())
                ratio = reference.error_ratio(y.get(), expected, pair[1])
                ok = ratio <= 1.0
                failed += not ok
                print(f"softmax     {dtypes.name(pair[0])} n={n:<5} {label:17} {'ok' if ok else 'FAIL'} "
                      f"ratio={ratio:.3g} digest={digest(y)}", flush=True)
            except Exception as exc:
                failed += 1
                print(f"softmax     {dtypes.name(pair[0])} n={n:<5} {label:17} FAIL {type(exc).__name__}: {exc}")
    # the same rows alone and in a batch (batch invariance): row r of a batch against the row by itself
    for n, dtype in [(63, F32), (255, BF16), (127, F16)]:
        total += 1
        x = values(64, n, dtype, special=False)
        batch = api.softmax(x, axis=-1)
        alone = cupy.stack([api.softmax(x[r:r + 1], axis=-1)[0] for r in range(0, 64, 7)])
        same = bool((bits(batch[0:64:7]) == bits(alone)).all())
        failed += not same
        print(f"softmax     {dtypes.name(dtype)} n={n:<5} {'row alone = batch':17} {'ok' if same else 'FAIL'}",
              flush=True)
    print(f"summary: {total} cases, {failed} failed", flush=True)


if __name__ == "__main__":
    main()
