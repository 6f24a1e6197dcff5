"""Probe: does a callable's place in bench.interleaved_ms's round order change its time?

One callable (auto's softmax of a shape into a preallocated output) is timed under three names, A, B and C,
after a copy of the same bytes, as the probes and the suite time their cases: rounds in a fixed order (copy, A,
B, C every round), then rounds whose order turns by one place each round (copy first in round 0, A in round 1,
...). The calls are the same, so any spread between A, B and C is the order's. Prints medians in microseconds.

    PYTHONPATH=$PWD python3 scripts/probe_timing_order.py
"""
import statistics
import sys

import cupy

from cupysoftmax import api, bench, device, dtypes, suite

SHAPES = [(262144, 64, "float32"), (4096, 256, "float32"), (4096, 4096, "float32"), (128, 128256, "bfloat16")]
REPEAT, ROUNDS = 30, 6


def medians(fns: dict, turn: bool) -> dict:
    """Median ms of each callable over REPEAT calls in ROUNDS rounds; the order turns by a place a round if asked."""
    flush = bench.Flush(device.facts(cupy.cuda.Device().id).l2_bytes)
    gate = bench.Gate()
    names = list(fns)
    times = {name: [] for name in names}
    for name in names:
        for _ in range(5):
            fns[name]()
    for r in range(ROUNDS):
        order = names[r % len(names):] + names[:r % len(names)] if turn else names
        for name in order:
            times[name] += bench._timed_calls(fns[name], REPEAT // ROUNDS, flush, gate)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    for m, n, name in SHAPES:
        dtype = dtypes.parse(name)
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)

        def ours():
            api.softmax(x, axis=-1, out=y)

        fns = {"copy": bench.copy_call(x.nbytes), "A": ours, "B": ours, "C": ours}
        for turn in (False, True, False, True):
            got = medians(fns, turn)
            cells = "  ".join(f"{label} {ms * 1e3:7.2f}" for label, ms in got.items())
            print(f"{m:>6} x {n:<6} {name:<8} {'turned' if turn else 'fixed ':<6} | {cells}", flush=True)
        suite._free_gpu_memory()
    return 0


if __name__ == "__main__":
    sys.exit(main())
