"""where=(M, N) (or, with --scale, scale= alone) on explicit launches against auto's, each checked against the
reference on a poisoned output first.
Usage: PYTHONPATH=$PWD python3 scripts/probe_where_launches.py [--scale S] --json F  MxNxdtype ..."""
import argparse
import json

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, fused, loader, reference
from cupysoftmax.planner import Launch, _ceil_div, _round_up
from cupysoftmax.variants import VARIANTS
from probe_fused import timed  # scripts/, this file's folder

def candidates(planner, m, n, pair, chunks, orders=(1,)):
    """warp_rows' kernels that read the options (O in `orders`: 1, and 2 on whole chunks) whose warp layout
    holds the row in at most four times its chunks, and split_row's one-block and cluster kernels of 64 to 1024
    threads."""
    for g, k, o in VARIANTS["warp_rows"].knobs:
        if o in orders and g * k >= chunks and (g * k) // 4 < chunks:
            yield Launch("warp_rows", (g, k, o), _ceil_div(m, 256 // g), 256, 0)
    v = VARIANTS["split_row"]
    for k in (2, 4, 8):
        for c in (1, 2, 4, 8):
            if (k, 1, c) not in v.knobs or chunks < 64 * c:
                continue
            threads = _round_up(_ceil_div(_ceil_div(chunks, c), k), 32)
            if threads <= 1024 and threads >= 64:
                yield planner._cluster_launch(v, m, (k, 1, c), threads, 0)


def sampled_case(shape: str):
    """(M, N, dtype, x, y, rows, host) for "MxNxdtype": a fresh random x, an output like it, up to 32 rows spread
    over the batch and their float64 values for the reference."""
    m, n, d = shape.split("x")
    m, n, dt = int(m), int(n), dtypes.parse(d)
    x = bench.random_input(m, n, dt)
    rows = numpy.unique(numpy.linspace(0, m - 1, min(m, 32)).astype(int))
    return m, n, dt, x, cupy.empty_like(x), rows, cupy.asnumpy(x[rows]).astype(numpy.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--auto-only", action="store_true", help="time auto's where= alone, no other launch")
    ap.add_argument("--scale", type=float,
                    help="time scale= at this scale alone (no mask) in place of where=; not 1.0 (the plain path)")
    ap.add_argument("shapes", nargs="+", help="MxNxdtype")
    a = ap.parse_args()
    if a.scale == 1.0:
        ap.error("--scale 1.0 is the plain call: give another scale")
    dev = cupy.cuda.Device().id
    planner = api.planner(dev)
    records = []
    for s in a.shapes:
        m, n, dt, x, y, rows, host = sampled_case(s)
        d, pair = dt.name, (dt, dt)
        chunks = _ceil_div(n, 16 // dt.itemsize)
        if a.scale is None:
            full = cupy.random.random((m, n)) < 0.7
            label, options = "where", {"where": full}
            want = reference.softmax(host, axis=-1, where=cupy.asnumpy(full[rows]))
            opts = fused.kernel_args(1.0, (full, m))
            # the launch auto plans for the call (a contiguous mask of x's shape: read row for row, fused.direct)
            direct = fused.direct((full, m), m, dt.itemsize)
            auto = api.plan(dev, "auto", m, n, pair, True, "softmax", False, True, True, direct)[1]
            # O = 2 too where the mask's rows lie at x's phase on whole chunks (Planner.on_whole_chunks)
            orders = (1, 2) if direct and n % (16 // dt.itemsize) == 0 else (1,)
        else:
            label, options = f"scale={a.scale}", {"scale": a.scale}
            want = reference.softmax(host, axis=-1, scale=a.scale)
            opts = fused.kernel_args(a.scale, None)
            aligned = api.rows_aligned(x)
            auto = api.plan(dev, "auto", m, n, pair, aligned, "softmax", True, aligned)[1]
            orders = (1, 2) if n % (16 // dt.itemsize) == 0 else (1,)  # x's rows on whole chunks: contiguous
        y.fill(numpy.nan)
        api.softmax(x, axis=-1, out=y, **options)
        err = reference.error_ratio(cupy.asnumpy(y[rows]), want, dt)
        assert err <= 1, (s, f"auto {label} WRONG", err)
        fns = {"copy": bench.copy_call(x.nbytes),
               **({"copy + mask bytes": bench.copy_call(x.nbytes + m * n // 2)} if a.scale is None else {}),
               "softmax": lambda: api.softmax(x, axis=-1, out=y),
               f"{label} auto {auto.variant} {auto.knobs} {auto.block}": lambda: api.softmax(x, axis=-1, out=y,
                                                                                          **options)}
        for launch in ([] if a.auto_only else candidates(planner, m, n, pair, chunks, orders)):
            kernel = loader.function(launch.variant, pair, launch.knobs, dev)
            y.fill(numpy.nan)
            try:
                api.launch_rows(kernel, launch, x, y, opts); cupy.cuda.Device().synchronize()
            except Exception as exc:
                print(s, launch, "failed", exc); continue
            err = reference.error_ratio(cupy.asnumpy(y[rows]), want, dt)
            if not err <= 1:
                print(s, launch, "WRONG", err); continue
            fns[f"{label} {launch.variant} {launch.knobs} {launch.block} r{kernel.num_regs}"] = (
                lambda kernel=kernel, launch=launch: api.launch_rows(kernel, launch, x, y, opts))
        timed(m, n, d, fns, records)
        del x, y; cupy.get_default_memory_pool().free_all_blocks()
    if a.json:
        json.dump(records, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
