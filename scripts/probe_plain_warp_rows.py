"""Probe: warp_rows with the fused options compiled out (O = 0: no mask, scale 1 as constants) against the kernel
that takes them (O = 1), on auto's own launch for short rows and calls without options; softmax and log_softmax.
Results against the float64 reference on poisoned outputs first, then one interleaved timing with a copy of the
same bytes (H100: docs/perf/plain-warp-rows-h100.txt, run before O existed, on the source edited as O = 0 is).

    PYTHONPATH=$PWD python3 scripts/probe_plain_warp_rows.py
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, dtypes, loader, reference
from cupysoftmax import variants as registry

SHAPES = [(262144, 32, "float32"), (262144, 64, "float32"), (262144, 100, "float32"), (4096, 256, "float32"),
          (4096, 512, "float32"), (4096, 256, "bfloat16"), (4096, 1024, "bfloat16"), (4096, 1024, "float16")]


def checked(x, op, cases: dict) -> tuple[dict, int]:
    """{label: (kernel, launch)} -> ({"copy" and each label whose result on a NaN-poisoned output matches the float64
    reference: a callable to time}, how many did not match, each named on a line)."""
    want = reference.REFERENCES[op](cupy.asnumpy(x), -1)
    fns, wrong = {"copy": bench.copy_call(x.nbytes)}, 0
    for label, (kernel, launch) in cases.items():
        y = cupy.full(x.shape, numpy.nan, x.dtype)
        api.launch_rows(kernel, launch, x, y)
        try:
            reference.assert_close(cupy.asnumpy(y), want, x.dtype, op)
        except AssertionError as exc:
            print(f"{x.shape[0]} x {x.shape[1]} {x.dtype} {label}: WRONG {str(exc)[:200]}")
            wrong += 1
            continue
        fns[label] = lambda kernel=kernel, launch=launch, y=y: api.launch_rows(kernel, launch, x, y)
    return fns, wrong


def peers(x, op, names) -> dict:
    """{name: the suite's callable} for each peer of `names` that takes (x, op); the others named on a line."""
    from cupysoftmax import suite

    found = {}
    for name in names:
        try:
            found[name] = suite.PROVIDERS[name](x, op)
        except Exception as exc:  # noqa: BLE001 - a peer that cannot run is named and skipped
            print(f"   {name}: {str(exc)[:100]}")
    return found


def compared(x, op, cases: dict, peer_names, repeat: int = 40, rounds: int = 4) -> tuple[int, float, str]:
    """checked's cases and the peers of `peer_names`, timed together: (how many cases missed the reference, the
    copy's ms, the cells)."""
    fns, wrong = checked(x, op, cases)
    fns.update(peers(x, op, peer_names))
    return (wrong, *timed(fns, cases, repeat=repeat, rounds=rounds))


def timed(fns: dict, cases: dict, repeat: int = 30, rounds: int = 3) -> tuple[float, str]:
    """(the copy's ms, a cell per other callable: its time, % of the copy and, for a label of `cases`, its kernel's
    registers), from one interleaved timing of `fns` (checked's, plus any peers)."""
    times = bench.interleaved_ms(fns, repeat=repeat, rounds=rounds)
    copy = times.pop("copy")
    regs = {label: kernel.num_regs for label, (kernel, _) in cases.items()}
    return copy, "  ".join(f"{label} {ms * 1e3:7.1f} us {copy / ms:4.0%}" + (f" ({regs[label]} regs)" if label in regs else "")
                           for label, ms in times.items())


def warp_rows_launches(shapes, **plan_args):
    """(op, M, N, dtype name, pair, kernel, launch) for softmax and log_softmax on each of `shapes` where auto's
    launch (api.plan with plan_args, rows aligned) is warp_rows'; a heading for each op, a line for each shape
    skipped."""
    dev = cupy.cuda.Device()
    for op in registry.FORWARD:
        print(f"\n## {op}\n")
        for m, n, name in shapes:
            dtype = dtypes.parse(name)
            pair = (dtype, dtype)
            kernel, launch = api.plan(dev.id, "auto", m, n, pair, True, op, **plan_args)
            if launch.variant != "warp_rows":
                print(f"{m} x {n} {name}: auto takes {launch.variant}, skipped")
                continue
            yield op, m, n, name, pair, kernel, launch


def main() -> int:
    bad = 0
    for op, m, n, name, pair, plain, launch in warp_rows_launches(SHAPES):
        kernel = loader.function("warp_rows", pair, (*launch.knobs[:-1], 1), cupy.cuda.Device().id, op)  # O = 1
        x = bench.random_input(m, n, pair[0])
        cases = {"options": (kernel, launch), "plain": (plain, launch)}
        fns, wrong = checked(x, op, cases)
        bad += wrong
        copy, cells = timed(fns, cases)
        print(f"{m:>6} x {n:<5} {name:<9} {str(launch.knobs):<8} copy {copy * 1e3:6.1f} us  {cells}", flush=True)
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
