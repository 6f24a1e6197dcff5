"""Probe: strided_smem's launch on k clusters, k around the clusters the GPU holds at once (driver.active_clusters)
and at twice and four times that, each checked against the float64 reference on a NaN-poisoned output, then timed
interleaved with a copy of the same bytes. Does a grid of fewer clusters than the GPU holds, which evens out the last
round of items, pay? (H200: docs/perf/strided-rounds-h200.txt.)

    PYTHONPATH=$PWD:$PWD/scripts python3 scripts/probe_strided_clusters.py
"""
import dataclasses

import cupy
import numpy

from cupysoftmax import api, bench, reference
from cupysoftmax import variants as registry
from sweep_strided import case_arrays  # scripts/, this file's folder

CASES = [((8192, 8192), "float32"), ((4096, 4096), "float32"), ((2048, 16384), "float32")]


def main():
    for shape, name in CASES:
        x, y, view, y_view, picked, expected = case_arrays(shape, 0, name)
        p = api.planner(x.device.id)
        kernel = api._loaded(p, picked, x.device.id, (x.dtype, x.dtype), registry.SOFTMAX)
        c = picked.knobs[0]
        args = (x, y, *view, *y_view[3:])
        held = api._active_clusters(kernel, picked, registry.SOFTMAX)
        print(shape, name, "auto", picked, "held", held)
        fns = {"copy": bench.copy_call(x.nbytes)}
        for k in sorted({*range(max(1, held - 8), held + 3), 2 * held, 4 * held}):
            launch = dataclasses.replace(picked, grid=k * c)
            y.fill(numpy.nan)
            api.run(kernel, launch, args)
            cupy.cuda.Device().synchronize()
            err = reference.error_ratio(cupy.asnumpy(y), expected, x.dtype)
            if not err <= 1:
                raise SystemExit(f"{shape} {name} on {k} clusters: error ratio {err}")
            fns[f"{k:>3} clusters"] = lambda launch=launch: api.run(kernel, launch, args)
        t = bench.interleaved_ms(fns, repeat=30, rounds=2)
        for label, ms in t.items():
            print(f"  {label:<14} {ms * 1e3:7.1f} us  {t['copy'] / ms:6.1%}", flush=True)


if __name__ == "__main__":
    main()
