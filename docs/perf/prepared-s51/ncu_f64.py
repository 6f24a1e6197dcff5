# two launches for ncu: float64 (16, 4, -2) softmax then log_softmax on 528416 x 127
import cupy, numpy
from cupysoftmax import api, bench, dtypes, loader
from cupysoftmax.planner import Launch, _ceil_div
dev = cupy.cuda.Device().id
dt = dtypes.parse("float64"); pair = (dt, dt)
m, n = 528416, 127
x = bench.random_input(m, n, dt); y = cupy.empty_like(x)
src = loader.source("warp_rows")
for op in ("softmax", "log_softmax"):
    k = loader.compile_source(src, "warp_rows", pair, (16, 4, -2), dev, op)
    launch = Launch("warp_rows", (16, 4, -2), _ceil_div(m, 256 // 16), 256, 0)
    api.launch_rows(k, launch, x, y); api.launch_rows(k, launch, x, y)
cupy.cuda.Device().synchronize()
print("done")
