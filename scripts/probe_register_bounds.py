"""Probe: the plain float32 kernels that take 33-40 registers, held to 32 (a full SM of threads), against
themselves as built, on auto's own launch; softmax and log_softmax, with the peers timed alongside.

- warp_rows with two chunks a lane (K = 2: 38-40 registers, six 256-thread blocks an SM) under the
  __launch_bounds__(256, 8) its one-chunk kernels carry (eight blocks): built in since 81aa244
  (kernels/warp_rows.cu, warp_rows_plain_held), so no longer edited here;
- split_row's plain kernel with four chunks a thread (K = 4: 36-39 registers, 25 64-thread blocks an SM)
  under __maxnreg__(32) (32 blocks: every row of 4096 x 1024 resident at once). The softmax kernel spills
  8 bytes there; the log_softmax one does not. (Recorded at 21bb49d, where 4096 x 1024 float32 took K = 2;
  since fd098c0 that K = 2 kernel carries a bound of its own.)
The bounded kernels are compiled here from kernels/*.cu with the bound edited in; each result is checked
against the float64 reference on a NaN-poisoned output before anything is timed.

    PYTHONPATH=$PWD python3 scripts/probe_register_bounds.py
"""
import sys

import cupy

from cupysoftmax import api, bench, dtypes, loader, suite
from cupysoftmax import variants as registry
from probe_plain_warp_rows import compared  # scripts/: the check-then-time cases of the kernel probes

SHAPES = [(262144, 64, "float32"), (262144, 100, "float32"), (4096, 256, "float32"), (4096, 1024, "float32"),
          (4096, 2048, "float32"), (4096, 4096, "float32")]
# (variant, text in its source, the text with the bound, which auto launches the bound applies to)
# (warp_rows' float32 K = 2 plain kernels carry that bound since 81aa244: csm::warp_rows_plain_held)
EDITS = {
    "split_row": ("__launch_bounds__(csm::split_row_threads<Tin, Tout, K, R>, csm::split_row_plain_k2<Tin, Tout, K, R> ? 16 : 0)\n"
                  "    softmax_split_row(",
                  "__maxnreg__(32) softmax_split_row(",  # R = 0, K = 4 alone is compiled here: its bound is none
                  lambda knobs: knobs[0] == 4 and knobs[1] == 0),
}


def bounded(variant, pair, knobs, op):
    old, new, _ = EDITS[variant]
    source = loader.source(variant)
    if old not in source:
        raise SystemExit(f"{variant}: the text to edit is gone ({old!r})")
    return loader.compile_source(source.replace(old, new), variant, pair, knobs, cupy.cuda.Device().id, op)


def main() -> int:
    dev = cupy.cuda.Device()
    bad = 0
    for op in registry.FORWARD:
        print(f"\n## {op}\n", flush=True)
        for m, n, name in SHAPES:
            dtype = dtypes.parse(name)
            pair = (dtype, dtype)
            plain, launch = api.plan(dev.id, "auto", m, n, pair, True, op)
            if launch.variant not in EDITS or not EDITS[launch.variant][2](launch.knobs):
                print(f"{m} x {n} {name}: auto takes {launch.variant} {launch.knobs}, not a bounded kernel")
                continue
            cases = {"built": (plain, launch), "bounded": (bounded(launch.variant, pair, launch.knobs, op), launch)}
            x = bench.random_input(m, n, dtype)
            wrong, copy, cells = compared(x, op, cases, ("torch_compile", "triton", "liger"))
            bad += wrong
            print(f"{m:>6} x {n:<5} {name:<8} {launch.variant} {str(launch.knobs):<10} b{launch.block:<4} "
                  f"copy {copy * 1e3:.1f}us | {cells}", flush=True)
            del x
            suite._free_gpu_memory()
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
