"""Probe: split_row's plain one-block kernels (R = 0: the fused options and the shared-memory part compiled
out; R = -4, the plain fold: the options) against their twins that read them (R = 1, R = 4) on auto's own
launch for calls without options, softmax and log_softmax; the R = 0 kernel on other block sizes for the same
row, and the Triton tutorial kernel and Liger (softmax) in the same timing where importable. Results are
checked against the float64 reference on poisoned outputs first, then every callable of a shape is timed in
one interleaved run with a copy of the same bytes (H100: docs/perf/plain-split-row-h100.txt,
plain-fold-h100.txt).

    PYTHONPATH=$PWD:$PWD/scripts python3 scripts/probe_plain_split_row.py [M N dtype]...
"""
import dataclasses
import sys

import cupy

from cupysoftmax import api, bench, dtypes, loader, suite
from cupysoftmax import variants as registry
from cupysoftmax.planner import Planner
from probe_kernels_ab import raised  # scripts/
from probe_plain_warp_rows import checked, timed  # scripts/: the check-then-time cases of the kernel probes

SHAPES = [(4096, 1024, "float32"), (4096, 2048, "float32"), (4096, 4096, "float32"), (4096, 8192, "float32"),
          (4096, 12288, "float32"), (4096, 4096, "bfloat16"), (4096, 16384, "bfloat16"), (4096, 16384, "float16"),
          (128, 32000, "float32"), (4096, 1024, "bfloat16"),
          # the plain fold
          (128, 128256, "bfloat16"), (8192, 50257, "float32"), (4096, 65536, "float32"), (128, 65536, "float32")]
# the plain kernel on other blocks for the same row, (K, threads): Liger's layout for 1024 float32 is 128
# threads of 8 values
OTHER = {(4096, 1024, "float32"): [(2, 128), (8, 32)], (4096, 2048, "float32"): [(2, 256), (8, 64)],
         (4096, 4096, "float32"): [(4, 256), (2, 512)], (4096, 4096, "bfloat16"): [(2, 256), (8, 64)]}


def peers(x, op):
    found = {}
    if op != registry.SOFTMAX:
        return found
    for name, make in (("triton", suite.make_triton), ("liger", suite.make_liger)):
        try:
            found[name] = make(x, op)
        except Exception as exc:  # noqa: BLE001 - a peer that cannot run is named and skipped
            print(f"   {name}: {str(exc)[:100]}")
    return found


def main(shapes) -> int:
    dev = cupy.cuda.Device()
    bad = 0
    for op in registry.FORWARD:
        print(f"\n## {op}\n", flush=True)
        for m, n, name in shapes:
            dtype = dtypes.parse(name)
            pair = (dtype, dtype)
            plain, launch = api.plan(dev.id, "auto", m, n, pair, True, op)
            if launch.variant != "split_row" or launch.knobs[1] > 0 or launch.knobs[2] != 1:
                print(f"{m} x {n} {name}: auto takes {launch.variant} {launch.knobs}, skipped")
                continue
            twin = Planner.with_options(registry.VARIANTS["split_row"], launch, True).knobs
            cases = {"plain": (plain, launch),
                     f"R={twin[1]}": (raised(loader.function("split_row", pair, twin, dev.id, op), launch), launch)}
            for k2, threads in OTHER.get((m, n, name), []):
                other = dataclasses.replace(launch, knobs=(k2, 0, 1), block=threads)
                kernel = loader.function("split_row", pair, other.knobs, dev.id, op)
                if threads <= kernel.max_threads_per_block:  # the K = 2 float32 kernel launches 128 at most
                    cases[f"plain K{k2}x{threads}"] = (kernel, other)
            x = bench.random_input(m, n, dtype)
            fns, wrong = checked(x, op, cases)
            bad += wrong
            fns.update(peers(x, op))
            copy, cells = timed(fns, cases)
            print(f"{m:>5} x {n:<6} {name:<8} {str(launch.knobs):<10} b{launch.block:<5} copy {copy * 1e3:.1f}us | "
                  f"{cells}", flush=True)
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main([(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] or SHAPES))
