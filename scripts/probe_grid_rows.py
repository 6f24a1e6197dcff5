"""split_row on the grid (C = 0) against the cluster pick: results against the float64 reference, bits against the
cluster launch (same layout), then times. Toggles the planner's grid rule; api caches cleared between modes."""
import argparse, sys
import cupy, numpy
from cupysoftmax import api, bench, dtypes, planner, reference
from cupysoftmax.variants import VARIANTS

RULE = planner.SPLIT_GRID_FROM_ROWS
ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--n", type=int, nargs="+", default=[262144, 128256, 100003], help="float32 row lengths to time")
ap.add_argument("--m", type=int, nargs="+", default=[1, 2, 8, 12, 16, 24, 32, 64, 128, 256], help="rows to time")
ap.add_argument("--times-only", action="store_true", help="skip the correctness cases")
ARGS = ap.parse_args()


def fresh(grid):
    """Clusters' rows on the grid from one row on (True), never (False), or by the planner's own rule (None)."""
    planner.SPLIT_GRID_FROM_ROWS = RULE if grid is None else ((planner.INF, 1 if grid else planner.INF),)
    api._launches.clear(); api.remembered_calls().clear()

def call(op, x, **kw):
    f = api.softmax if op == "softmax" else api.log_softmax
    return f(x, axis=-1, **kw)

bad = 0
# -- correctness and bits: (m, n, dtype, op, misaligned, masked, scale)
CASES = [(8, 128256, "float32", "softmax", False, False, 1.0), (3, 262144, "float32", "log_softmax", False, False, 1.0),
         (8, 128256, "float32", "softmax", True, False, 1.0), (5, 100003, "float32", "softmax", True, False, 1.0),
         (32, 128256, "bfloat16", "softmax", False, False, 1.0), (7, 128256, "bfloat16", "log_softmax", True, False, 1.0),
         (8, 128256, "float16", "softmax", False, True, 0.5), (4, 50257, "float32", "softmax", False, True, 1.0),
         (2, 65536, "float32", "softmax", False, False, 2.0), (16, 150001, "float64", "softmax", False, False, 1.0),
         (300, 128256, "float32", "softmax", False, False, 1.0), (130, 262144, "float32", "softmax", False, False, 1.0),
         (6, 128256, "bfloat16", "softmax", False, False, 1.0)]
for m, n, dt, op, mis, masked, scale in ([] if ARGS.times_only else CASES):
    d = dtypes.parse(dt)
    base = bench.random_input(m, n + (1 if mis else 0), d)
    x = base[:, 1:] if mis else base
    mask = (cupy.random.random((m, n)) > 0.1) if masked else None
    kw = dict(scale=scale) if scale != 1.0 else {}
    if masked: kw["where"] = mask
    outs = {}
    for mode, grid in (("grid", True), ("cluster", False)):
        fresh(grid)
        key = (m, n, d, d)
        launch = api.plan(cupy.cuda.Device().id, "auto", m, n, (d, d), api.rows_aligned(x), {"softmax": "softmax", "log_softmax": "log_softmax"}[op], scale != 1.0, masked=masked)[1]
        y = cupy.full((m, n), numpy.nan, d)
        call(op, x, out=y, **kw)
        cupy.cuda.Device().synchronize()
        outs[mode] = (launch, y)
    ref = (reference.softmax if op == "softmax" else reference.log_softmax)(
        cupy.asnumpy(x), axis=-1, scale=scale, where=cupy.asnumpy(mask) if masked else None)
    tol = reference.tolerance(d, op)
    (lg, yg), (lc, yc) = outs["grid"], outs["cluster"]
    got = cupy.asnumpy(yg).astype(numpy.float64)
    ok = numpy.allclose(got, ref, rtol=tol.rtol, atol=tol.atol) and not numpy.isnan(got).any()
    bits = {2: cupy.uint16, 4: cupy.uint32, 8: cupy.uint64}[d.itemsize]
    same = bool((yg.view(bits) == yc.view(bits)).all())
    bad += (not ok) + (not same)
    print(f"{m} x {n} {dt} {op}{' misaligned' if mis else ''}{' where' if masked else ''}{' scale' if scale != 1 else ''}: "
          f"grid {lg.knobs} {lg.block}x{lg.grid} | cluster {lc.knobs} {lc.block}x{lc.grid}: reference {'ok' if ok else 'WRONG'}, bits {'same' if same else 'DIFFER'}")
    # the next call after a grid launch works (fresh workspace each call): run twice more, compare bits
    fresh(True)
    y2 = cupy.full((m, n), numpy.nan, d); call(op, x, out=y2, **kw); call(op, x, out=y2, **kw)
    if not bool((y2.view(bits) == yg.view(bits)).all()):
        print("   REPEAT DIFFERS"); bad += 1
print(f"correctness: {bad} problems", flush=True)

# -- times: copy, cluster pick, grid pick
dev = cupy.cuda.Device().id
rows = []
for n, dt in [(n, "float32") for n in ARGS.n]:
    d = dtypes.parse(dt)
    for m in ARGS.m:
        x = bench.random_input(m, n, d); y = cupy.empty_like(x)
        fns = {"copy": bench.copy_call(x.nbytes)}
        picks = {}
        for mode, grid in (("grid", True), ("cluster", False)):
            fresh(grid)
            kernel, launch = api.plan(dev, "auto", m, n, (d, d))
            picks[mode] = launch
            fns[mode] = (lambda kernel=kernel, launch=launch: api.launch_rows(kernel, launch, x, y))
        if not VARIANTS["split_row"].gridded(picks["grid"].knobs):
            continue
        res = bench.interleaved_ms(fns, repeat=20, rounds=2)
        cp = res["copy"]
        g, c = picks["grid"], picks["cluster"]
        print(f"{m:4} x {n} {dt:9} copy {cp*1e3:6.1f} us | cluster {str(c.knobs):11} {c.block:4}: {res['cluster']*1e3:6.1f} us {cp/res['cluster']*100:4.0f}% "
              f"| grid {str(g.knobs):10} {g.block}x{g.grid//g.unit}x{g.unit}: {res['grid']*1e3:6.1f} us {cp/res['grid']*100:4.0f}%", flush=True)
fresh(None)
sys.exit(1 if bad else 0)
