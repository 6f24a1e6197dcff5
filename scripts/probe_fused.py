"""What scale= and where= cost: plain softmax, with scale=, with a full mask and with one mask row for all rows,
against copies of the same bytes, interleaved in one process (bench.interleaved_ms: the suite's engine and flush).

The mask's own bytes are M * N (one byte an element), so the bar for where= is
a copy of (2 * itemsize + 1) * M * N bytes. With --plain-only it times plain
softmax alone, so that a checkout of an earlier commit (its package first on
PYTHONPATH) gives the plain path's time before the options existed.
--shapes times other shapes, written MxNxdtype (4096x8192xfloat16).
Usage: python scripts/probe_fused.py [--plain-only] [--shapes "MxNxdtype ..."] [--json FILE]
"""
import argparse
import json

import cupy

from cupysoftmax import api, bench, dtypes

# 4096 x 16384 bfloat16: a 2-byte row held in registers at K = 8, whose mask words ptxas did not keep in flight
# together (docs/perf/where-held-words-h100.txt); the others' misses are in docs/PERFORMANCE.md
SHAPES = [(4096, 1024, "float32"), (4096, 4096, "bfloat16"), (4096, 16384, "bfloat16"), (4096, 32768, "float32"),
          (8192, 50257, "float32"), (262144, 64, "float32"), (32, 128256, "float32"), (64, 1048576, "float32")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plain-only", action="store_true")
    parser.add_argument("--shapes", type=parsed_shapes, default=SHAPES)
    parser.add_argument("--json")
    args = parser.parse_args()
    records = []
    for m, n, name in args.shapes:
        dtype = dtypes.parse(name)
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)
        fns = {"copy": bench.copy_call(x.nbytes), "softmax": lambda: api.softmax(x, axis=-1, out=y)}
        if not args.plain_only:
            full = cupy.random.random((m, n)) < 0.7
            row = cupy.random.random(n) < 0.7
            fns["copy + mask bytes"] = bench.copy_call(x.nbytes + m * n // 2)
            fns["scale=0.5"] = lambda: api.softmax(x, axis=-1, out=y, scale=0.5)
            fns["where=(M, N)"] = lambda: api.softmax(x, axis=-1, out=y, where=full)
            fns["where=(N,)"] = lambda: api.softmax(x, axis=-1, out=y, where=row)
        timed(m, n, name, fns, records)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


def parsed_shapes(text: str) -> list:
    """[(M, N, dtype name)] from "MxNxdtype ..." (dtypes.parse names the dtype)."""
    shapes = []
    for word in text.split():
        m, n, name = word.split("x")
        dtypes.parse(name)
        shapes.append((int(m), int(n), name))
    return shapes


def timed(m, n, name, fns, records):
    """Time `fns` interleaved (bench.interleaved_ms), print each under the shape, append a record of each."""
    times = bench.interleaved_ms(fns, repeat=30, rounds=3)
    print(f"{m} x {n} {name}")
    for label, ms in times.items():
        print(f"   {label:18} {ms * 1e3:9.1f} us")
        records.append({"M": m, "N": n, "dtype": name, "call": label, "median_ms": ms})


if __name__ == "__main__":
    main()
