"""Evidence for planner.BLOCK_THREADS: each block-per-row variant at each block size, by row length.

Runs every candidate through bench.time_shape (checked against the float64
reference, then timed with the L2 flushed), float32, about 256 MB per shape.
Prints one line per (N, variant): median us at 128 / 256 / 512 / 1024 threads.
Usage: python scripts/sweep_block_threads.py [--json FILE]
"""
import json
import math
import sys

from cupysoftmax import api, bench, planner

VARIANTS = ["smem_tree", "block", "online", "smem_cached"]
THREADS = [128, 256, 512, 1024]
ROW_LENGTHS = [256, 1024, 2048, 4096, 8192, 16384, 32768, 50257]


def main():
    records = []
    original = planner.BLOCK_THREADS
    try:
        for n in ROW_LENGTHS:
            m = max(64, 2**26 // n)
            by_variant = {v: {} for v in VARIANTS}
            for threads in THREADS:
                planner.BLOCK_THREADS = ((math.inf, threads),)
                api._launches.clear()
                _, rows = bench.time_shape(m, n, "float32", VARIANTS, repeat=20)
                for row in rows:
                    if not row.ok:
                        raise SystemExit(f"{row.variant} failed its check at N={n}, {threads} threads: {row.note}")
                    by_variant[row.variant][threads] = row.median_us
                    records.append({"M": m, "N": n, "variant": row.variant, "threads": threads,
                                    "median_us": row.median_us, "pct_copy": row.pct_copy})
            for v, times in by_variant.items():
                best = min(times, key=times.get)
                cells = "".join(f"{times[t]:>10.1f}" for t in THREADS)
                print(f"{n:>6} {m:>6} {v:<12}{cells}   best {best}")
    finally:
        planner.BLOCK_THREADS = original
        api._launches.clear()
    if len(sys.argv) == 3 and sys.argv[1] == "--json":
        with open(sys.argv[2], "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    print(f"{'N':>6} {'M':>6} {'variant':<12}" + "".join(f"{t:>10}" for t in THREADS) + "   (median us)")
    main()
