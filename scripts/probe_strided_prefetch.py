"""Probe: strided_smem with and without the next item's copies during the writes, at a cluster an item and at
P x the clusters the GPU holds at once (clusters looping over items), in one process.

For each case: auto's column launch with this tree; its kernel compiled from this tree's kernels/ ("new") and
from OLD/kernels ("old"; e.g. `git archive REV kernels | tar -x -C OLD`); grids of a cluster an item and of
P = 1..4 rounds of the clusters held (driver.active_clusters). Each launch is checked against the float64
reference on a NaN-poisoned output (and the new kernel's bits against the old's on the same grid), then all are
timed interleaved with a copy of the same bytes. auto's pick is
starred (H100: docs/perf/strided-prefetch-h100.txt).

    PYTHONPATH=$PWD:$PWD/scripts python3 scripts/probe_strided_prefetch.py OLD
"""
import dataclasses
import sys
from pathlib import Path

import cupy
import numpy

from cupysoftmax import api, bench, driver, dtypes, reference
from probe_kernels_ab import compiled_from, raised

CASES = [((8192, 8192), "float32", "softmax"), ((8192, 8192), "float32", "log_softmax"),
         ((4096, 4096), "float32", "softmax"), ((2048, 16384), "float32", "softmax"),
         ((8192, 8192), "bfloat16", "softmax"), ((5000, 3, 40), "float16", "log_softmax")]


def launches(kernels: dict, auto, items: int, active: int) -> dict:
    """{label: (kernel, launch)}: each kernel at a cluster an item and at P x `active` clusters, P = 1..4."""
    c = auto.knobs[0]
    grids = {"a cluster an item": items}
    grids.update({f"P={p} ({p * active})": p * active for p in range(1, 5) if 0 < p * active < items})
    return {f"{tag} {name}{'*' if clusters * c == auto.grid else ''}":
            (kernel, dataclasses.replace(auto, grid=clusters * c))
            for name, clusters in grids.items() for tag, kernel in kernels.items()}


def main(folder: str) -> int:
    dev = cupy.cuda.Device().id
    old = Path(folder) / "kernels"
    wrong = 0
    for shape, name, op in CASES:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        x = (cupy.random.standard_normal(shape, dtype=numpy.float32) * 3).astype(dtype)
        view = api.columns_view(x.shape, x.strides, x.itemsize, (0,))
        aligned = api.columns_aligned(view, x.itemsize)
        new, auto = api.plan_columns(dev, "auto", *view[:3], pair, op, aligned)
        uncut = api.planner(dev).plan_columns("auto", *view[:3], pair, api._facts(dev, pair, op), op, aligned=aligned)
        c = auto.knobs[0]
        if auto.variant != "strided_smem" or c <= 1:
            print(f"{shape} {name}: auto takes {auto.variant} {auto.knobs}, skipped")
            continue
        active = driver.active_clusters(new.kernel.ptr, c, (auto.block, auto.block_y), auto.smem)
        kernels = {"new": new, "old": raised(compiled_from(old, auto.variant, pair, auto.knobs, op), auto)}
        want = reference.REFERENCES[op](cupy.asnumpy(x).astype(numpy.float64), 0)
        fns, outputs = {"copy": bench.copy_call(x.nbytes)}, {}
        for label, (kernel, launch) in launches(kernels, auto, uncut.grid // c, active).items():
            y = cupy.full(shape, numpy.nan, dtype)
            args = (x, y, *view, *api.columns_view(y.shape, y.strides, y.itemsize, (0,))[3:])
            api.run(kernel, launch, args)
            try:
                reference.assert_close(cupy.asnumpy(y), want, dtype, op)
            except AssertionError as exc:
                print(f"{shape} {name} {op} {label}: WRONG {str(exc)[:200]}")
                wrong += 1
                continue
            fns[label], outputs[label] = lambda kernel=kernel, launch=launch, args=args: api.run(kernel, launch, args), y
        for label, y in outputs.items():  # the old and new kernels on the same grid: the same bits, or say so
            twin = outputs.get("old" + label[3:]) if label.startswith("new") else None
            if twin is not None and not bool((y.view(numpy.uint8) == twin.view(numpy.uint8)).all()):
                print(f"{shape} {name} {op} {label[4:]}: new and old bits differ")
                wrong += 1
        times = bench.interleaved_ms(fns, repeat=30, rounds=4)
        copy = times.pop("copy")
        print(f"{shape} axis 0 {name} {op}: C = {c}, {active} clusters held, copy {copy * 1e3:.1f} us", flush=True)
        for label, ms in times.items():
            print(f"   {label:28} {ms * 1e3:7.1f} us {copy / ms:6.1%}")
    print(f"{wrong} launches missed the reference or the old kernel's bits")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
