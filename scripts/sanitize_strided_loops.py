"""strided_smem's clusters looping over items, small enough for compute-sanitizer's slow tools.

auto makes strided_smem's clusters loop over items only where there are at least twice as many items as
clusters held at once (planner.persistent): tens of megabytes, too slow under racecheck. This forces a
grid of 2 clusters on axis 0 of (2048, 512) (C = 4, 17 items; 9 for bfloat16), so each block copies its next
item's lines while it writes this one's, in float32 and bfloat16, aligned and misaligned (partial chunks),
softmax and log_softmax, with a column of -1e4; each result is checked against the float64 reference.

    CUPYSOFTMAX_LINEINFO=1 compute-sanitizer --tool racecheck --error-exitcode 1 \
        python3 scripts/sanitize_strided_loops.py
"""
import dataclasses

import cupy
import numpy

from cupysoftmax import api, dtypes, reference
cupy.cuda.set_allocator(None)
rng = numpy.random.default_rng(7)
bad = 0
for name in ("float32", "bfloat16"):
    dtype = dtypes.parse(name)
    for misaligned in (False, True):
        for op in ("softmax", "log_softmax"):
            host = rng.standard_normal((2048, 528)) * 3
            host[:, 5] -= 1e4
            base = cupy.asarray(host.astype(dtype))
            x = base[:, 1:513] if misaligned else base[:, :512]
            view = api.columns_view(x.shape, x.strides, x.itemsize, (0,))
            kernel, launch = api.plan_columns(x.device.id, "strided_smem", *view[:3], (x.dtype, x.dtype), op,
                                              api.columns_aligned(view, x.itemsize))
            c = launch.knobs[0]
            small = dataclasses.replace(launch, grid=2 * c)
            y = cupy.full(x.shape, numpy.nan, dtype)
            api.run(kernel, small, (x, y, *view, *api.columns_view(y.shape, y.strides, y.itemsize, (0,))[3:]))
            cupy.cuda.Device().synchronize()
            try:
                reference.assert_close(cupy.asnumpy(y), reference.REFERENCES[op](cupy.asnumpy(x), 0), dtype, op)
                ok = "ok"
            except AssertionError as exc:
                ok, bad = f"WRONG {str(exc)[:120]}", bad + 1
            print(name, "misaligned" if misaligned else "aligned", op,
                  f"C={c} items={launch.grid // c} grid=2 clusters:", ok, flush=True)
print("wrong:", bad)
raise SystemExit(1 if bad else 0)
