"""Rows longer than a cluster holds: split_row on the grid (auto) against two_pass, and against other row
layouts on the grid (the planner's own _on_grid with other thread counts). First the results against the float64
reference on poisoned outputs, and a row's bits alone and in its batch; then times, interleaved with a copy of
the same bytes (H100: docs/perf/split-row-long-rows-h100.txt).

    PYTHONPATH=$PWD python3 scripts/probe_long_rows.py
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, planner, reference
from cupysoftmax import variants as registry

DEV = cupy.cuda.Device().id
FUNCTIONS = {registry.SOFTMAX: api.softmax, registry.LOG_SOFTMAX: api.log_softmax}


def poisoned(shape, dtype):
    return cupy.full(shape, numpy.nan, dtype)


def check(m, n, dtype, op, misaligned, options):
    """auto against the reference, and row 1 alone against the batch (bits); the number of problems."""
    base = bench.random_input(m, n + misaligned, dtype)
    x = base[:, misaligned:]
    mask = cupy.asarray(numpy.random.default_rng(m).random((m, n)) < 0.8) if options else None
    kw = {"scale": 0.6, "where": mask} if options else {}
    launch = api.plan(DEV, "auto", m, n, (dtype, dtype), api.rows_aligned(x), op, options)[1]
    y = FUNCTIONS[op](x, axis=-1, out=poisoned((m, n), dtype), **kw)
    want = reference.REFERENCES[op](cupy.asnumpy(x), -1, **({"scale": 0.6, "where": cupy.asnumpy(mask)} if options else {}))
    tol = reference.tolerance(dtype, op)
    got = cupy.asnumpy(y).astype(numpy.float64)
    ok = bool(numpy.allclose(got, want, rtol=tol.rtol, atol=tol.atol, equal_nan=False)) and not numpy.isnan(got).any()
    one = FUNCTIONS[op](x[1:2], axis=-1, out=poisoned((1, n), dtype),
                        **({"scale": 0.6, "where": mask[1:2]} if options else {}))
    bits = {2: cupy.uint16, 4: cupy.uint32, 8: cupy.uint64}[dtype.itemsize]
    same = bool((one.view(bits) == y[1:2].view(bits)).all())
    print(f"{m} x {n} {dtype.name} {op}{' misaligned' if misaligned else ''}{' scale+where' if options else ''}: "
          f"{launch.variant} {launch.knobs} {launch.block} x {launch.grid} S={int(launch.args[0])}: "
          f"reference {'ok' if ok else 'WRONG'}, row alone {'same bits' if same else 'DIFFERENT BITS'}", flush=True)
    return (not ok) + (not same)


def grid_layout(m, n, dtype, threads, g, k=None):
    """(kernel, launch) of split_row on the grid with `threads` a row (K chunks a thread in registers, SPLIT_ITEMS'
    unless given, the rest in shared memory), each warp reducing `g` groups of the row's tree, or None."""
    p = api.planner(DEV)
    pair, op = (dtype, dtype), registry.SOFTMAX
    chunks = p._chunks(n, pair, True)
    k = planner.lookup(planner.SPLIT_ITEMS, chunks) if k is None else k
    launch = p._on_grid(registry.get("split_row"), m, (k, g, 0), threads, max(0, -(-chunks // threads) - k), pair,
                        api._facts(DEV, pair, op), op)
    return None if launch is None else (api._loaded(p, launch, DEV, pair, op), launch)


def main() -> int:
    f32, bf16, f16 = (dtypes.parse(t) for t in ("float32", "bfloat16", "float16"))
    bad = 0
    for m, n, dtype, op, misaligned, options in [
            (64, 1048576, f32, registry.SOFTMAX, 0, False), (9, 1048579, f32, registry.LOG_SOFTMAX, 1, False),
            (5, 2097152, f32, registry.SOFTMAX, 0, True), (3, 2097152, bf16, registry.LOG_SOFTMAX, 0, False),
            (4, 1100001, f16, registry.SOFTMAX, 1, True), (4, 4194304, f32, registry.SOFTMAX, 0, False),
            (3, 4194307, f32, registry.LOG_SOFTMAX, 1, True), (2, 8388608, f32, registry.SOFTMAX, 0, False)]:
        bad += check(m, n, dtype, op, misaligned, options)
    print(f"correctness: {bad} problems", flush=True)

    print("\n| M | N | dtype | launch | threads a row | S | rows at once | us | % of copy |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for m, n, dtype in [(1, 1048576, f32), (4, 1048576, f32), (16, 1048576, f32), (64, 1048576, f32),
                        (128, 1048576, f32), (8, 2097152, f32), (64, 2097152, f32), (4, 4194304, f32),
                        (16, 2097152, bf16), (64, 2097152, bf16), (8, 4194304, bf16), (32, 1100001, f32),
                        (16, 4194304, f32), (2, 8388608, f32), (4, 8388608, f32)]:
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)
        fns, launches = {"copy": bench.copy_call(x.nbytes)}, {}
        for name in ("auto", "two_pass"):
            kernel, launch = api.plan(DEV, name, m, n, (dtype, dtype))
            fns[name], launches[name] = (lambda k=kernel, l=launch: api.launch_rows(k, l, x, y)), launch
        for threads in planner.SPLIT_GRID_ROW_THREADS:
            for g in planner.SPLIT_GRID_GROUPS:
                got = grid_layout(m, n, dtype, threads, g)
                if got and got[1] != launches["auto"]:
                    name = f"grid T={threads} G={g}"
                    fns[name], launches[name] = (lambda k=got[0], l=got[1]: api.launch_rows(k, l, x, y)), got[1]
        times = bench.interleaved_ms(fns, repeat=20, rounds=2)
        copy = times.pop("copy")
        for name, ms in times.items():
            launch = launches[name]
            if isinstance(ms, Exception):
                print(f"| {m} | {n} | {dtype.name} | {name} | failed: {ms} |")
                continue
            grid = launch.variant == "split_row" and registry.VARIANTS["split_row"].gridded(launch.knobs)
            per_row = launch.block * launch.unit if grid else "-"
            extra = int(launch.args[0]) if grid else "-"
            at_once = launch.grid // launch.unit if grid else "-"
            label = f"{name}: {launch.variant} {launch.knobs}" if name == "auto" else name
            print(f"| {m} | {n} | {dtype.name} | {label} | {per_row} | {extra} | {at_once} | {ms * 1e3:.1f} "
                  f"| {copy / ms:.0%} |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
