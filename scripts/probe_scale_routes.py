"""scale= alone through auto beside the plain call and split_row by name, for softmax and log_softmax: the evidence
for planner.AUTO_FIRST_PLAIN_WIDE's scale= rows (float32 rows of whole chunks on warp_rows). Each call is first
checked against the float64 reference on a poisoned output, then all are timed interleaved with a copy of x.

    PYTHONPATH=$PWD python3 scripts/probe_scale_routes.py [--scale S] [MxNxdtype ...]
"""
import argparse

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, reference
from probe_fused import timed  # scripts/, this file's folder

SHAPES = ["4096x1024xfloat32", "4096x768xfloat32", "4096x516xfloat32", "65536x1024xfloat32", "4096x1023xfloat32"]
OPS = {"softmax": (api.softmax, reference.softmax), "log_softmax": (api.log_softmax, reference.log_softmax)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.5)
    ap.add_argument("shapes", nargs="*", default=SHAPES, help="MxNxdtype")
    a = ap.parse_args()
    if a.scale == 1.0:
        ap.error("--scale 1.0 is the plain call: give another scale")
    dev = cupy.cuda.Device().id
    for s in a.shapes:
        m, n, d = s.split("x")
        m, n, dt = int(m), int(n), dtypes.parse(d)
        x = bench.random_input(m, n, dt)
        y = cupy.empty_like(x)
        rows = numpy.unique(numpy.linspace(0, m - 1, min(m, 32)).astype(int))
        host = cupy.asnumpy(x[rows]).astype(numpy.float64)
        fns = {"copy": bench.copy_call(x.nbytes)}
        for op, (call, ref) in OPS.items():
            auto = api.plan(dev, "auto", m, n, (dt, dt), api.rows_aligned(x), op, True, api.rows_aligned(y))[1]
            for label, kw in ((f"{op} plain", {}), (f"{op} auto {auto.variant} {auto.knobs}", {"scale": a.scale}),
                              (f"{op} split_row", {"scale": a.scale, "variant": "split_row"})):
                y.fill(numpy.nan)
                call(x, axis=-1, out=y, **kw)
                want = ref(host, axis=-1, scale=kw.get("scale", 1.0))
                err = reference.error_ratio(cupy.asnumpy(y[rows]), want, dt, op)
                if not err <= 1:
                    raise SystemExit(f"{s} {label}: WRONG, error ratio {err}")
                fns[label] = lambda call=call, kw=kw: call(x, axis=-1, out=y, **kw)
        timed(m, n, d, fns, [])
        del x, y
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
