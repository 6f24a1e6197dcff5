"""Evidence for the planner's warp_rows and split_row rules: every launch shape a rule could pick, timed.

For each shape: a copy baseline, then each candidate (knobs, threads, shared
memory) checked against the float64 reference on sample rows and timed with
bench.median_ms. The planner's own pick is starred. Prints one line a candidate:
variant, knobs, threads, shared memory, registers, clusters resident at once
(cuOccupancyMaxActiveClusters; "-" without clusters), time, % of copy, error.
Usage: python scripts/sweep_configs.py [M N dtype]...   (default: the shapes below)
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, driver, dtypes, loader, reference
from cupysoftmax.errors import UnsuitableVariant
from cupysoftmax.planner import Launch, _ceil_div, _round_up
from cupysoftmax.variants import SOFTMAX, VARIANTS

SHAPES = [
    (262144, 32, "float32"), (262144, 100, "float32"), (4096, 256, "float32"), (4096, 384, "float32"),
    (4096, 512, "float32"), (4096, 1024, "float32"), (4096, 2048, "float32"), (4096, 4096, "float32"),
    (4096, 256, "bfloat16"), (4096, 1024, "bfloat16"), (4096, 4096, "bfloat16"), (4096, 4096, "float16"),
    (4096, 8192, "bfloat16"), (4096, 16384, "bfloat16"), (4096, 32768, "float32"), (4096, 65536, "float32"),
    (8192, 50257, "float32"), (8192, 50257, "bfloat16"), (4096, 65536, "bfloat16"), (8, 32000, "float32"),
    (32, 32000, "float32"), (64, 32000, "float32"), (128, 32000, "float32"), (8, 128256, "float32"),
    (32, 128256, "float32"), (128, 128256, "bfloat16"), (128, 262144, "float32"), (64, 1048576, "float32"),
]


def candidates(planner, m, n, pair, facts):
    chunks = planner._chunks(n, pair, True)
    knobs = registry_knobs("warp_rows")
    for g, k, o in knobs:  # each layout once: its plain kernel (O = 0) where compiled, else the options one
        # (the element-strided kernels, O = -2: scripts/probe_strided_layouts.py)
        if g * k >= chunks and (g * k) // 2 < chunks and o != -2 and (o == 0 or (g, k, 0) not in knobs):
            yield Launch("warp_rows", (g, k, o), min(_ceil_div(m, 256 // g), 2**31 - 1), 256, 0)
    v = VARIANTS["split_row"]
    for knobs in registry_knobs("split_row"):
        k, r, c = knobs
        if r != 1 or v.gridded(knobs) or (c > 1 and planner.device.compute_capability < (9, 0)):
            continue  # folds and the grid (C = 0, -1): the planner's own layouts below; R = 0: plain_block
        per = _ceil_div(chunks, c)
        kernel = facts("split_row", knobs)
        threads = _round_up(_ceil_div(per, k), 32)
        most = min(1024, kernel.max_threads // 32 * 32)
        if threads <= most:
            yield planner.plain_block(v, planner._cluster_launch(v, m, knobs, threads, 0), facts, SOFTMAX)
        for block in (most, most // 2) if k == 8 else ():  # most // 2: two blocks an SM, where they fit
            extra = _ceil_div(per, block) - k
            if extra > 0 and extra * block * 16 <= planner.device.smem_per_block_optin - kernel.static_smem:
                yield planner._cluster_launch(v, m, knobs, block, extra)
    # The planner's own layout for the row (its threads, K and S for every number of rows), cut by every C
    # that whole warps allow: the launches it chooses among by the number of rows.
    try:
        layout = planner._split_layout(v, n, chunks, pair, facts, SOFTMAX)
    except UnsuitableVariant:
        return
    for knobs, block, extra, again in planner.split_cuts(v, layout, facts):
        yield planner.plain_block(v, planner._cluster_launch(v, m, knobs, block, extra, again), facts, SOFTMAX)

def active_clusters(kernel, launch, c=None):
    """How many clusters of C blocks of a launch the GPU holds at once (driver.active_clusters); "-" for C = 1.
    C: the launch's last knob (split_row's), unless given."""
    c = launch.knobs[-1] if c is None else c
    if c <= 1:
        return "-"
    try:
        return driver.active_clusters(kernel.kernel.ptr, c, (launch.block, launch.block_y), launch.smem)
    except RuntimeError as exc:
        return f"error ({exc})"


def registry_knobs(name):
    return VARIANTS[name].knobs


def main(shapes):
    dev = cupy.cuda.Device().id
    planner = api.planner(dev)
    for m, n, dt in shapes:
        dtype = dtypes.parse(dt)
        pair = (dtype, dtype)
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)
        rows = cupy.asarray(numpy.unique(numpy.linspace(0, m - 1, min(m, 32)).astype(int)))
        expected = reference.softmax(cupy.asnumpy(x[rows]), axis=-1)

        def facts(name, knobs):
            return loader.facts_of(loader.function(name, pair, knobs, dev))

        picked = planner.plan("auto", m, n, pair, facts)
        copy_ms = bench.median_ms(bench.copy_call(m * n * dtype.itemsize), repeat=20)
        print(f"{m} x {n} {dt}: copy {copy_ms * 1e3:.1f} us", flush=True)
        seen = set()
        for launch in candidates(planner, m, n, pair, facts):
            if (shape := (launch.variant, launch.knobs, launch.block, launch.smem)) in seen:
                continue
            seen.add(shape)
            kernel = loader.function(launch.variant, pair, launch.knobs, dev)
            if launch.smem > kernel.max_dynamic_shared_size_bytes:
                kernel.max_dynamic_shared_size_bytes = launch.smem
            y.fill(numpy.nan)
            try:
                api.launch_rows(kernel, launch, x, y)
                cupy.cuda.Device().synchronize()
            except Exception as exc:  # a cluster shape the GPU cannot place, say
                print(f"   {launch.variant:<10} {str(launch.knobs):<8} {launch.block:>5} {launch.smem:>7}  launch failed: {exc}")
                continue
            err = reference.error_ratio(cupy.asnumpy(y[rows]), expected, dtype)
            ms = bench.median_ms(lambda x=x, y=y: api.launch_rows(kernel, launch, x, y), repeat=20)
            star = "*" if (launch.variant, launch.knobs, launch.block) == (picked.variant, picked.knobs, picked.block) else " "
            print(f" {star} {launch.variant:<10} {str(launch.knobs):<8} {launch.block:>5} {launch.smem:>7} "
                  f"{kernel.num_regs:>4} {active_clusters(kernel, launch)!s:>5} {ms * 1e3:>9.1f} us "
                  f"{100 * copy_ms / ms:>5.0f}% err {err:.2f}", flush=True)
        del x, y
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    args = sys.argv[1:]
    main([(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] if args else SHAPES)
