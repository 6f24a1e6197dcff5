"""gx with split_row's habits one at a time: kept exponentials, its store path, the scale multiply. 32 x 262144 and
8 x 262144 float32, P = 32 blocks of 256 threads, K = 8, self-resetting counters; each without and with
__launch_bounds__(256, 4). The kernel is scripts/probe_grid_exchange.py's."""
import re

import cupy, numpy
from cupy.cuda import driver
from cupysoftmax import api, bench, dtypes, reference

SRC = re.search(r"SRC = r'''(.*?)'''", open("scripts/probe_grid_exchange.py").read(), re.S).group(1)


VARIANTS = {f"{habit}{bound}": (*flags, b) for habit, flags in {"gx": (0, 0, 0), "keep": (1, 0, 0), "store": (0, 1, 0), "scale": (0, 0, 1), "all three": (1, 1, 1)}.items()
            for bound, b in (("", 0), (" bounded", 1))}
names = [f"gx<8, {', '.join('true' if f else 'false' for f in flags)}>" for flags in VARIANTS.values()]
mod = cupy.RawModule(code=SRC, options=("-std=c++17",), name_expressions=names)
f32 = dtypes.parse("float32")
for m, n in [(8, 262144), (32, 262144), (32, 128256)]:
    chunks = n // 4
    x = bench.random_input(m, n, f32); y = cupy.empty_like(x)
    ref = reference.softmax(cupy.asnumpy(x), axis=-1)
    fns = {"copy": bench.copy_call(x.nbytes), "auto": lambda: api.softmax(x, axis=-1, out=y)}
    p, b = (32, 256) if n == 262144 else (16, 256)
    for (label, _), name in zip(VARIANTS.items(), names):
        fn = mod.get_function(name)
        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, b, 0)
        grid = min(m, per_sm * 132 // p) * p
        parts = cupy.empty((m * p, 2), numpy.float32); counts = cupy.zeros(2 * m, numpy.uint32)
        launch = (lambda fn=fn, grid=grid, parts=parts, counts=counts: fn.kernel((grid,), (b,), (x, y, numpy.int32(m), numpy.int32(chunks), numpy.int32(p), parts, counts, numpy.float32(1.0), numpy.int32(n), numpy.int32(0), numpy.int32(0)), enable_cooperative_groups=True))
        y.fill(numpy.nan); launch(); cupy.cuda.Device().synchronize()
        err = float(numpy.max(numpy.abs(cupy.asnumpy(y) - ref) / ref))
        if not err < 1e-5: print("WRONG", label, err); continue
        fns[f"{label} r{fn.num_regs} {per_sm}/SM"] = launch
    res = bench.interleaved_ms(fns, repeat=30, rounds=3)
    cp = res["copy"]
    print(f"{m} x {n} float32: copy {cp * 1e3:.1f} us")
    for k, v in res.items():
        print(f"   {k:28} {v * 1e3:7.2f} us {cp / v * 100:5.1f}%", flush=True)
