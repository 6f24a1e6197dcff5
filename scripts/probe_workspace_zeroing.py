"""Probe: what zeroing the grid's workspace costs on the device, per call.

split_row's grid launches (C <= 0) take a workspace of tagged slots
(csm::GridBoard): api.run gives each launch a fresh tag and zeroes the
workspace only under stream capture, whose graph replays the tag. This probe
times, on auto's own launch for each shape (rows aligned, no options):
- auto: cupysoftmax.softmax(x, out=y), as the suite times it;
- tagged: api.run (a workspace from the pool, a fresh tag, the kernel);
- zeroed: the same with the tags zeroed by a memset queued just before the
  kernel, as under capture (as every call zeroed a count per row before the
  tags),
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


def zeroed_first(kernel, launch, args):
    """A callable launching as api.run does under capture: the tags zeroed, then the kernel with a fresh tag."""

    def call():
        workspace = cupy.empty(launch.workspace, numpy.uint8)
        workspace.data.memset_async(0, launch.tagged)
        kernel.kernel((launch.grid,), (launch.block,), (*args, workspace, numpy.uint64(next(api._tags))),
                      shared_mem=launch.smem, enable_cooperative_groups=True)

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
        outs = {label: cupy.full(x.shape, numpy.nan, dtype) for label in ("auto", "tagged", "zeroed")}
        args = {label: (x, y, *api.row_args(launch, x, y)) for label, y in outs.items()}
        fns = {
            "copy": bench.copy_call(x.nbytes),
            "auto": lambda y=outs["auto"]: api.softmax(x, axis=-1, out=y),
            "tagged": lambda a=args["tagged"]: api.run(kernel, launch, a),
            "zeroed": zeroed_first(kernel, launch, args["zeroed"]),
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
        print(f"{m:>4} x {n:<7} {name:<8} {launch.variant} {str(launch.knobs):<12} ws {launch.workspace:>7} B  "
              f"copy {copy * 1e3:6.1f} us  {cells}", flush=True)
    print(f"\nwrong: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
