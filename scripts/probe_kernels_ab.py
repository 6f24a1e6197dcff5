"""Probe: auto's kernels as another tree has them against this tree's, on the same launch, in one process.

For each shape and op, auto plans its launch with this tree; the kernel of that instantiation is compiled from
this tree's kernels/ and from OLD/kernels (e.g. `git archive REV kernels | tar -x -C OLD`), each result is
checked against the float64 reference on a NaN-poisoned output, then both are timed in one interleaved run
with a copy of the same bytes and the peers that take the shape (Triton, Liger, torch.compile). Cells:
microseconds, % of copy, registers (H100: docs/perf/plain-k2-bound-h100.txt, tree-width-h100.txt).

    PYTHONPATH=$PWD:$PWD/scripts python3 scripts/probe_kernels_ab.py OLD [M N dtype op]...
"""
import sys
from pathlib import Path

import cupy

from cupysoftmax import api, bench, dtypes, loader, suite
from probe_plain_warp_rows import compared  # scripts/: the check-then-time cases of the kernel probes

SHAPES = [(4096, 1024, "float32", "softmax"), (4096, 1024, "float32", "log_softmax"),
          (4096, 2048, "float32", "softmax"), (4096, 4096, "float32", "softmax"), (4096, 8192, "float32", "softmax"),
          (4096, 4096, "bfloat16", "softmax"), (4096, 16384, "bfloat16", "softmax"),
          (8192, 50257, "float32", "softmax"), (128, 32000, "float32", "softmax"),
          (32, 128256, "bfloat16", "softmax"), (32, 262144, "float32", "softmax")]


def compiled_from(directory: Path, variant: str, pair, knobs, op):
    """The instantiation compiled from the .cu files in `directory` (the loader's inlining and options)."""
    kept = loader.kernel_dir
    loader.kernel_dir = lambda: directory
    try:
        code = loader.source.__wrapped__(variant)
    finally:
        loader.kernel_dir = kept
    return loader.compile_source(code, variant, pair, knobs, cupy.cuda.Device().id, op)


def raised(kernel, launch):
    """The kernel with its dynamic shared memory limit raised to the launch's, as api.plan does."""
    if launch.smem > kernel.max_dynamic_shared_size_bytes:
        kernel.max_dynamic_shared_size_bytes = launch.smem
    return kernel


def main(folder: str, shapes) -> int:
    dev = cupy.cuda.Device()
    bad = 0
    old, tag = Path(folder) / "kernels", Path(folder).name
    for m, n, name, op in shapes:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        new, launch = api.plan(dev.id, "auto", m, n, pair, True, op)
        kept = raised(compiled_from(old, launch.variant, pair, launch.knobs, op), launch)
        cases = {"new": (new, launch), tag: (kept, launch)}
        x = bench.random_input(m, n, dtype)
        wrong, copy, cells = compared(x, op, cases, ("triton", "liger", "torch_compile"))
        bad += wrong
        print(f"{m:>5} x {n:<6} {name:<8} {op:<11} {launch.variant} {str(launch.knobs):<11} b{launch.block:<4} "
              f"g{launch.grid:<5} copy {copy * 1e3:.1f}us | {cells}", flush=True)
        del x
        suite._free_gpu_memory()
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    args = sys.argv[2:]
    given = [(int(args[i]), int(args[i + 1]), args[i + 2], args[i + 3]) for i in range(0, len(args), 4)]
    sys.exit(main(sys.argv[1], given or SHAPES))
