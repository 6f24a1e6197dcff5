"""Probe: what zeroing the grid's workspace costs on the device, per call.

split_row's grid launches (C <= 0) take a workspace whose counts must start at
zero; api.run allocates it per call and zeroes the counts with a memset queued
just before the kernel, inside the timed region. This probe times, on auto's
own launch for each shape (rows aligned, no options):
- auto: cupysoftmax.softmax(x, out=y), as the suite times it;
- memset: the workspace allocated, its counts zeroed and the kernel launched
  (api.run);
- kernel: the kernel alone, each call on its own workspace zeroed beforehand,
  outside the timing (a ring of them, one a call),
with a copy of the same bytes, interleaved. Every path is first checked
against the float64 reference on a NaN-poisoned output.

    PYTHONPATH=$PWD python3 scripts/probe_workspace_zeroing.py
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, reference
from cupysoftmax import variants as registry

SHAPES = [(64, 1048576, "float32"), (4, 4194304, "float32"), (8, 262144, "float32"), (32, 128256, "float32"),
          (32, 262144, "float32"), (128, 128256, "float32"), (32, 128256, "bfloat16"), (128, 128256, "bfloat16")]
REPEAT, WARMUP, ROUNDS = 30, 5, 3


def workspaces(launch, count: int) -> list:
    return [cupy.zeros(launch.workspace, numpy.uint8) for _ in range(count)]


def kernel_alone(kernel, launch, args, ring):
    """A callable launching the kernel on the next workspace of `ring` (zeroed beforehand), as api.run would."""
    spare = iter(ring)

    def call():
        kernel.kernel((launch.grid,), (launch.block,), (*args, next(spare)), shared_mem=launch.smem,
                      enable_cooperative_groups=True)

    return call


def main() -> int:
    dev = cupy.cuda.Device()
    wrong = 0
    for m, n, name in SHAPES:
        dtype = dtypes.parse(name)
        pair = (dtype, dtype)
        kernel, launch = api.plan(dev.id, "auto", m, n, pair, True, registry.SOFTMAX, y_aligned=True)
        if not launch.workspace:
            print(f"{m} x {n} {name}: auto takes {launch.variant} {launch.knobs} without a workspace, skipped")
            continue
        x = bench.random_input(m, n, dtype)
        want = reference.REFERENCES[registry.SOFTMAX](cupy.asnumpy(x), -1)
        outs = {label: cupy.full(x.shape, numpy.nan, dtype) for label in ("auto", "memset", "kernel")}
        args = {label: (x, y, *api.row_args(launch, x, y)) for label, y in outs.items()}
        fns = {
            "copy": bench.copy_call(x.nbytes),
            "auto": lambda y=outs["auto"]: api.softmax(x, axis=-1, out=y),
            "memset": lambda a=args["memset"]: api.run(kernel, launch, a),
            "kernel": kernel_alone(kernel, launch, args["kernel"], workspaces(launch, 1 + WARMUP + REPEAT)),
        }
        for label in outs:  # one call each on the poisoned output, then the check
            fns[label]()
        for label, y in outs.items():
            try:
                reference.assert_close(cupy.asnumpy(y), want, dtype, registry.SOFTMAX)
            except AssertionError as exc:
                print(f"{m} x {n} {name} {label}: WRONG {str(exc)[:200]}")
                fns.pop(label)
                wrong += 1
        times = bench.interleaved_ms(fns, repeat=REPEAT, warmup=WARMUP, rounds=ROUNDS)
        copy = times.pop("copy")
        cells = "  ".join(f"{label} {ms * 1e3:7.1f} us {copy / ms:6.1%}" for label, ms in times.items())
        print(f"{m:>4} x {n:<7} {name:<8} {launch.variant} {str(launch.knobs):<12} ws {launch.workspace:>7} B "
              f"zeroed {launch.zeroed:>4} B  copy {copy * 1e3:6.1f} us  {cells}", flush=True)
    print(f"\nwrong: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
