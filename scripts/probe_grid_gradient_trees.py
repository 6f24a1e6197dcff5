"""log_softmax's gradient of long rows (no cluster holds them, or, given as M N dtype, clusters do): split_row's grid
kernel (8, 1, 0) on each T of
planner.SPLIT_GRID_ROW_THREADS that holds the row in registers (the planner's own _on_grid), beside auto's launch
and two_pass by name. Each is first checked against the float64 reference on a poisoned dx (sweep_backward.Case),
then timed interleaved with a copy of the gradient's 3 M N bytes: the evidence behind
planner.SPLIT_GRID_BACKWARD_ROW_THREADS (T = 16384 for rows of 81921-131072 chunks, T = 32768 past them) and, on
rows of 65536 chunks (float32 262144), planner.SPLIT_GRID_BACKWARD_FROM_ROWS.

    PYTHONPATH=$PWD python3 scripts/probe_grid_gradient_trees.py [M N dtype]...
"""
import sys

import cupy

from cupysoftmax import api, bench, dtypes, planner
from cupysoftmax import variants as registry
from sweep_backward import Case  # scripts/, this file's folder: fresh y and dy, the reference, the check

OP = registry.LOG_SOFTMAX_BACKWARD
# rows T = 16384 would serve (float32 about 327681-524288 elements; bfloat16 twice that), then T = 32768's
SHAPES = [(64, 400000, "float32"), (9, 400003, "float32"), (16, 340000, "float32"), (64, 520000, "float32"),
          (32, 800000, "bfloat16"), (64, 1048576, "float32"), (40, 600000, "float32")]


def main(shapes):
    dev = cupy.cuda.Device().id
    p = api.planner(dev)
    v = registry.get("split_row")
    k = planner.SPLIT_GRID_BACKWARD_ITEMS
    for m, n, name in shapes:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        case = Case(m, n, dtype, OP)
        aligned = api.rows_aligned(case.y)
        chunks = p._chunks(n, pair, aligned)
        launches = {label: api.plan(dev, label, m, n, pair, aligned, OP) for label in ("auto", "two_pass")}
        facts = api._facts(dev, pair, OP)
        for threads in planner.SPLIT_GRID_ROW_THREADS:
            launch = p._on_grid(v, m, (k, 1, 0), threads, 0, pair, facts, OP) if threads * k >= chunks else None
            if launch is not None:
                launches[f"grid T={threads}"] = (api._loaded(p, launch, dev, pair, OP), launch)
        print(f"{m} x {n} {name} {OP}: {chunks} chunks a row", flush=True)
        fns = {"copy": bench.copy_call(3 * m * n * dtype.itemsize // 2)}
        for label, (kernel, launch) in launches.items():
            err = case.check(kernel, launch)
            at_once = f", {launch.grid // launch.unit} rows at once" if launch.unit > 1 else ""
            print(f"   {label:<12} {launch.variant} {launch.knobs} block {launch.block} grid {launch.grid}{at_once}: "
                  f"err {err:.2f}{'' if err <= 1 else ' WRONG, not timed'}", flush=True)
            if err <= 1:
                fns[label] = case.call(kernel, launch)
        times = bench.interleaved_ms(fns, repeat=30, rounds=3)
        for label, ms in times.items():
            print(f"   {label:<12} {ms * 1e3:>9.1f} us {100 * times['copy'] / ms:>5.0f}% of copy", flush=True)
        case.close()
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    args = sys.argv[1:]
    main([(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] if args else SHAPES)
