"""Probe: rows fewer than the SMs that one block holds (Planner.few_rows_cuts: one block a row from
SPLIT_BLOCK_ROWS_PER_SM rows an SM, clusters below; Planner._cluster_rank). Times auto's launch against the same
row's layout cut over every cluster size C its kernels take (Planner.split_cuts: the same logical threads, so
the same bits), for softmax, log_softmax and scale= (the options twin of each cut), each checked against the
float64 reference on a poisoned output, then timed in interleaved rounds with a copy of the same bytes. a: the
clusters the GPU holds at once (the driver's count; 0 where the launch does not loop, C = 1).

    PYTHONPATH=$PWD python3 scripts/probe_few_rows_clusters.py [--rounds R] [--json F] [--calls softmax,...] \
        MxNxdtype ...
"""
import argparse
import json

import cupy
import numpy

from cupysoftmax import api, bench, fused, reference
from cupysoftmax import variants as registry
from probe_where_launches import sampled_case  # scripts/, this file's folder

CALLS = {  # label: (op, scale); scale None: the plain call
    "softmax": (registry.SOFTMAX, None),
    "log_softmax": (registry.LOG_SOFTMAX, None),
    "scale=0.5": (registry.SOFTMAX, 0.5),
}


def cuts(p, m, n, pair, op, options: bool, aligned: bool):
    """(label, kernel, launch) for each C the row's split_row layout is cut by, as api.plan finishes a launch
    (the options twin for calls with options, rounds of the clusters the GPU holds at once). aligned: x's rows
    start on 16-byte boundaries (a plain call lays out rows of any phase as such: Planner.plain_slots)."""
    dev = cupy.cuda.Device().id
    v = registry.VARIANTS["split_row"]
    facts = api._facts(dev, pair, op)
    layout = p._split_layout(v, n, p._chunks(n, pair, aligned or not options), pair, facts, op)
    for knobs, block, extra, again in p.split_cuts(v, layout, facts):
        launch = p.with_options(v, p._cluster_launch(v, m, knobs, block, extra, again), options)
        kernel = api._loaded(p, launch, dev, pair, op)
        active = api._active_clusters(kernel, launch, op)
        launch = p.persistent(launch, active, op)
        yield (f"C={knobs[-1]} {launch.knobs} b{launch.block} g{launch.grid} r{kernel.num_regs} a{active}", kernel,
               launch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--calls", default=",".join(CALLS), help=f"a comma-separated subset of {', '.join(CALLS)}")
    ap.add_argument("shapes", nargs="+", help="MxNxdtype")
    a = ap.parse_args()
    records, dev = [], cupy.cuda.Device().id
    for m, n, dt, x, y, rows, host in map(sampled_case, a.shapes):
        d, pair, p = dt.name, (dt, dt), api.planner(dev)
        for label in a.calls.split(","):
            op, scale = CALLS[label]
            ref = reference.log_softmax if op == registry.LOG_SOFTMAX else reference.softmax
            want = ref(host, axis=-1, scale=1.0 if scale is None else scale)
            opts = fused.PLAIN if scale is None else fused.kernel_args(scale, None)
            aligned = api.rows_aligned(x)  # y, empty_like(x), alike
            kernel, auto = api.plan(dev, "auto", m, n, pair, aligned, op, scale is not None, aligned)
            fns = {"copy": bench.copy_call(x.nbytes)}
            launches = [(f"auto {auto.knobs} b{auto.block} g{auto.grid} r{kernel.num_regs}", kernel, auto),
                        *cuts(p, m, n, pair, op, scale is not None, aligned)]
            for name, kern, launch in launches:
                y.fill(numpy.nan)
                api.launch_rows(kern, launch, x, y, opts)
                cupy.cuda.Device().synchronize()
                err = reference.error_ratio(cupy.asnumpy(y[rows]), want, dt, op)
                if not err <= 1:
                    print(f"{m} x {n} {d}", label, name, "WRONG", err)
                    continue
                fns[name] = lambda kern=kern, launch=launch: api.launch_rows(kern, launch, x, y, opts)
            times = bench.interleaved_ms(fns, rounds=a.rounds)
            print(f"{m} x {n} {d} {label}", flush=True)
            for name, ms in times.items():
                shown = f"{ms * 1e3:8.1f} us {100 * times['copy'] / ms:4.0f}%" if isinstance(ms, float) else repr(ms)
                print(f"   {name:<44} {shown}", flush=True)
                records.append({"M": m, "N": n, "dtype": d, "call": label, "launch": name,
                                "median_ms": ms if isinstance(ms, float) else None})
        del x, y
        cupy.get_default_memory_pool().free_all_blocks()
    if a.json:
        json.dump(records, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
