"""Evidence for the planner's two_pass constants: group size (TWO_PASS_L2_SHARE) and threads, timed.

For each shape: a copy baseline, then two_pass planned with each (L2 share,
threads) pair, checked against the float64 reference on sample rows and timed
with bench.median_ms. Prints one line a shape: share / threads / rows a group
x slices: % of copy. Usage: python scripts/sweep_two_pass.py [M N]...
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, planner, reference

SHAPES = [(64, 1048576), (4, 4194304), (16, 1048576)]
SHARES = (2, 3, 4, 6, 12)
THREADS = (256, 512, 1024)


def main(shapes):
    dev = cupy.cuda.Device().id
    plans = planner.Planner(api.planner(dev).device)
    dtype = dtypes.parse("float32")
    pair = (dtype, dtype)
    kernel = loader.function("two_pass", pair, (4,), dev)

    def facts(name, knobs):
        return loader.facts_of(loader.function(name, pair, knobs, dev))

    for m, n in shapes:
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)
        rows = cupy.asarray(numpy.unique(numpy.linspace(0, m - 1, min(m, 4)).astype(int)))
        expected = reference.softmax(cupy.asnumpy(x[rows]), axis=-1)
        copy_ms = bench.median_ms(bench.copy_call(m * n * dtype.itemsize), repeat=20)
        line = f"{m} x {n} float32: copy {copy_ms * 1e3:.0f} us |"
        for share in SHARES:
            for threads in THREADS:
                planner.TWO_PASS_L2_SHARE, planner.TWO_PASS_THREADS = share, threads
                launch = plans.plan("two_pass", m, n, pair, facts)
                y.fill(numpy.nan)
                api.launch_rows(kernel, launch, x, y)
                err = reference.error_ratio(cupy.asnumpy(y[rows]), expected, dtype)
                ms = bench.median_ms(lambda x=x, y=y: api.launch_rows(kernel, launch, x, y), repeat=20)
                slices, group_rows = map(int, launch.args)
                line += f" {share}/{threads}/{group_rows}x{slices}: {100 * copy_ms / ms:.0f}%{'' if err <= 1 else ' WRONG'}"
        print(line, flush=True)
        del x, y
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    args = sys.argv[1:]
    main([(int(args[i]), int(args[i + 1])) for i in range(0, len(args), 2)] if args else SHAPES)
