"""Probe: the write pass' widening of 2-byte values (common.cuh, WidenPass::write) against the read pass'
instructions in both passes, on auto's kernel and launch for calls without options.

Both kernels are built from the source: "write pass" with every kernel's outputs widening in the write pass'
instructions (warp_rows' forward too, which widens alike as built), "alike" with the write pass' branch compiled
out, so both passes widen in the read pass' instructions and ptxas may merge them (more registers). Results are
checked against the float64 reference on poisoned outputs first, then both kernels and a copy of the same bytes
are timed in one interleaved run (H100: docs/perf/widen-pass-h100.txt).

    PYTHONPATH=$PWD python3 scripts/probe_widen_pass.py
"""
import sys

import cupy

from cupysoftmax import api, bench, dtypes, loader
from cupysoftmax import variants as registry
from probe_plain_warp_rows import checked, timed  # scripts/: the check-then-time cases of the kernel probes

# (op, M, N, dtype): auto's warp_rows and split_row kernels in 2-byte types whose outputs widen the row again
SHAPES = [(registry.LOG_SOFTMAX, 4096, 256, "bfloat16"), (registry.LOG_SOFTMAX, 4096, 1024, "bfloat16"),
          (registry.LOG_SOFTMAX, 4096, 1024, "float16"), (registry.LOG_SOFTMAX, 4096, 16384, "bfloat16"),
          (registry.SOFTMAX, 4096, 16384, "bfloat16")]
# (label, what the source says, what the probe builds instead): each must occur in the variant's source
BUILDS = {
    "write pass": ("csm::WidenPass::read, Scale> held", "csm::WidenPass::write, Scale> held"),  # warp_rows.cu's forward
    "alike": ("if constexpr (P == WidenPass::write)", "if constexpr (false)"),  # common.cuh's widen_half_word
}


def built(variant: str, expression: str, label: str, smem: int):
    """The kernel of `expression` built from the source as BUILDS[label] changes it."""
    source = loader.source(variant)
    said, instead = BUILDS[label]
    if said not in source and (label == "alike" or variant == "warp_rows"):
        raise RuntimeError(f"{variant}: the source no longer says {said!r}")
    module = cupy.RawModule(code=source.replace(said, instead), options=loader.OPTIONS, name_expressions=[expression])
    kernel = module.get_function(expression)
    if smem > kernel.max_dynamic_shared_size_bytes:
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel


def main() -> int:
    dev = cupy.cuda.Device()
    bad = 0
    for op, m, n, name in SHAPES:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        _, launch = api.plan(dev.id, "auto", m, n, pair, True, op)
        if launch.workspace:
            print(f"{op} {m} x {n} {name}: auto takes a grid launch {launch.knobs}, skipped")
            continue
        expression = registry.get(launch.variant).name_expression(pair, launch.knobs, op)
        x = bench.random_input(m, n, dtype)
        cases = {label: (built(launch.variant, expression, label, launch.smem), launch) for label in BUILDS}
        fns, wrong = checked(x, op, cases)
        bad += wrong
        copy, cells = timed(fns, cases, repeat=60, rounds=6)
        print(f"{op:<11} {m:>5} x {n:<6} {name:<9} {launch.variant} {str(launch.knobs):<10} b{launch.block:<5} "
              f"copy {copy * 1e3:6.1f} us | {cells}", flush=True)
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
