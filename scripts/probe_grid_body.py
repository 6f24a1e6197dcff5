"""Why is split_row's grid launch slower than the gx probe at the same layout? Same shapes, same timing."""
import re
import cupy, numpy
from cupy.cuda import driver
from cupysoftmax import api, bench, dtypes, planner, reference

SRC = re.search(r"SRC = r'''(.*?)'''", open("scripts/probe_grid_exchange.py").read(), re.S).group(1)
mod = cupy.RawModule(code=SRC, options=("-std=c++17",), name_expressions=["gx<8, false, false, false, false>"])
gx = mod.get_function("gx<8, false, false, false, false>")
f32 = dtypes.parse("float32")
dev = cupy.cuda.Device().id
for m, n in [(8, 262144), (32, 262144), (32, 128256)]:
    chunks = n // 4
    x = bench.random_input(m, n, f32); y = cupy.empty_like(x)
    ref = reference.softmax(cupy.asnumpy(x), axis=-1)
    fns = {"copy": bench.copy_call(x.nbytes)}
    planner.SPLIT_GRID_FROM_ROWS = ((planner.INF, planner.INF),); api._launches.clear()  # the clusters
    kc, lc = api.plan(dev, "auto", m, n, (f32, f32))
    fns[f"product cluster {lc.knobs} {lc.block}"] = lambda: api.launch_rows(kc, lc, x, y)
    planner.SPLIT_GRID_FROM_ROWS = ((planner.INF, 1),); api._launches.clear()  # the grid
    kg, lg = api.plan(dev, "auto", m, n, (f32, f32))
    fns[f"product grid {lg.knobs} {lg.block}x{lg.grid}"] = lambda: api.launch_rows(kg, lg, x, y)
    for p, b in ((32, 256), (16, 512)):
        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(gx.kernel.ptr, b, 0)
        grid = min(m, per_sm * 132 // p) * p
        parts = cupy.empty((m * p, 2), numpy.float32); counts = cupy.zeros(2 * m, numpy.uint32)
        def g(p=p, b=b, grid=grid, parts=parts, counts=counts, memset=False):
            if memset:
                counts.data.memset_async(0, 4 * m)
            gx.kernel((grid,), (b,), (x, y, numpy.int32(m), numpy.int32(chunks), numpy.int32(p), parts, counts, numpy.float32(1.0), numpy.int32(n), numpy.int32(0), numpy.int32(0)), enable_cooperative_groups=True)
        fns[f"gx P={p} B={b} self-reset"] = g
        fns[f"gx P={p} B={b} memset_async"] = lambda g=g: g(memset=True)
    for name, fn in fns.items():
        if name == "copy": continue
        y.fill(numpy.nan); fn(); cupy.cuda.Device().synchronize()
        err = float(numpy.max(numpy.abs(cupy.asnumpy(y) - ref) / ref))
        if not err < 1e-5: print(f"  {name}: WRONG {err}")
    res = bench.interleaved_ms(fns, repeat=30, rounds=3)
    cp = res["copy"]
    print(f"{m} x {n} float32, copy {cp*1e3:.1f} us (kernel regs: cluster {kc.num_regs}, grid {kg.num_regs}, gx {gx.num_regs})")
    for name, ms in res.items():
        print(f"   {name:52} {ms*1e3:7.1f} us {cp/ms*100:4.0f}%", flush=True)
