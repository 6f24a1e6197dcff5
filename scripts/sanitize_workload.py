"""The workload that scripts/sanitize.py runs under compute-sanitizer (runs on its own too).

Every variant of the registry (cupysoftmax/variants.py), for every op it serves -- softmax,
log_softmax, both gradients, softmax with scale= and where=, softmax over a middle axis --
over small shapes that reach every planner path: rows shorter than a chunk, rows that
several share a warp, a warp, a block, a block plus shared memory, a cluster; two_pass;
N not a multiple of the 16-byte vector width; rows misaligned against 16 bytes (x[:, 1:]);
strided columns in one block and over a cluster, strided_smem's. A variant that refuses a shape
(UnsuitableVariant) is counted and skipped. Every result is checked against the float64
reference, so a clean sanitizer run also proves the results right.

CuPy's memory pools are turned off before anything is allocated: every array is its own
cudaMalloc, so a read past an array's end is not hidden in a pool block's slack.
`--rows-most R` caps the rows of every row shape at R (few clusters at once: scripts/sanitize.py
runs synccheck on the kernels of clusters of 16 so). `--part K/N` runs the K-th of N shares (every N-th (variant, dtype) pair from the K-th), so that
scripts/sanitize.py can run the set as N sanitized processes side by side.
Prints one line per failure, a `launched: NAME` line per kernel it launched (name expressions), then
`launches N refused N failures N unchecked N`; exits 1 on a failure.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cupy

cupy.cuda.set_allocator(None)
cupy.cuda.set_pinned_memory_allocator(None)

import numpy  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cupysoftmax import UnsuitableVariant, api, dtypes, gradients, loader, reference  # noqa: E402
from cupysoftmax import variants as registry  # noqa: E402

MASKED = "softmax_scale_where"
LAUNCHED: set[int] = set()  # id() of every kernel api.run launched (the planner also compiles kernels it only weighs)


def _run_and_record(kernel, launch, args, _run=api.run):
    LAUNCHED.add(id(kernel))
    _run(kernel, launch, args)


api.run = _run_and_record  # every launch goes through api.run (a remembered call replays a kernel it launched)

# (name of the path on the H100, M, N, in --quick): rows over the last axis, float32 chunk counts
ROW_SHAPES = [
    ("n1_one_element", 5, 1, True),
    ("n7_less_than_a_chunk", 37, 7, True),
    ("n33_rows_sharing_a_warp_tail", 9, 33, True),
    ("n1000_a_warp_or_a_block", 5, 1000, True),
    ("n4097_block_tail", 3, 4097, False),
    ("n32000_split_row_clusters", 2, 32000, True),
    ("m132_n50257_split_row_shared_memory_part", 132, 50257, False),  # a block folding four logical threads
    ("m106_n50257_split_row_fold", 106, 50257, True),  # the same from SPLIT_BLOCK_ROWS_PER_SM, quick (plain: R = -4)
    ("m64_n50257_split_row_few_rows_clusters", 64, 50257, False),  # fewer rows: that row over clusters (C = 8, 16)
    ("n50257_split_row_fold_on_clusters", 2, 50257, True),  # the same layout on clusters, `again`
    ("m32_n128256_split_row_grid", 32, 128256, True),  # float32: blocks anywhere on the grid (C = -1, 0), a workspace
    ("m34_n128256_split_row_grid_fold", 34, 128256, False),  # float32 past 33 rows: two logical threads a thread
    ("n150001_clusters_of_16", 2, 150_001, False),  # a row no block holds: K = 8 clusters in one pass (R = -1)
    # past a cluster: split_row on the grid with a shared-memory part (forward, not float64); two_pass
    ("n524291_past_a_cluster", 2, 2**19 + 3, True),
    ("n4194304_grid_of_65536_threads", 1, 2**22, False),  # float32: 128 blocks of 512, RowTree's 64 groups
]
# (name, shape, axis, in --quick, inner elements skipped at the start): softmax over a middle axis (strided,
# strided_smem where rows keep one 16-byte phase, and the row variants through a copy). Skipping 1 of 56
# keeps the rows 16-byte multiples apart in every dtype but starts them off a boundary (strided_smem's
# partial first and last chunks).
COLUMN_SHAPES = [
    ("n19_one_row_thread", (4, 19, 130), 1, True, 0),
    ("n1000_row_threads", (2, 1000, 33), 1, False, 0),
    ("n2500_cluster_rows_164_bytes_apart", (2, 2500, 41), 1, True, 0),
    ("n3000_strided_smem_cluster_of_8", (2, 3000, 48), 1, True, 0),
    ("n3000_strided_smem_misaligned_start", (2, 3000, 56), 1, True, 1),
    ("n8192_strided_smem_cluster_of_16", (1, 8192, 64), 1, False, 0),
]
LAYOUTS = ["contiguous", "misaligned_view"]


class Tally:
    def __init__(self):
        self.launches = self.refused = self.failures = self.unchecked = 0

    def run(self, variant: str, what: str, compute, expected, dtype, op, scale=None) -> None:
        """compute() -> the result; checked against expected() (float64) within dtype's tolerance.

        naive on rows past reference.SEQUENTIAL_SUM_MOST_N runs (for the sanitizer) unchecked.
        """
        try:
            got = compute()
        except UnsuitableVariant:
            self.refused += 1
            return
        self.launches += 1
        if variant == "naive" and got.shape[-1] > reference.SEQUENTIAL_SUM_MOST_N:
            self.unchecked += 1
            return
        try:
            reference.assert_close(cupy.asnumpy(got), expected(), dtype, op, scale)
        except AssertionError as exc:
            self.failures += 1
            print(f"FAIL {what}: {exc}", flush=True)


def draw(rng, shape, dtype, layout="contiguous", scale=3.0):
    """Fresh standard normal x scale; misaligned_view: a view one element into each row."""
    if layout == "misaligned_view":
        wide = (*shape[:-1], shape[-1] + 1)
        return cupy.asarray((rng.standard_normal(wide) * scale).astype(dtype))[..., 1:]
    return cupy.asarray((rng.standard_normal(shape) * scale).astype(dtype))


def rows(tally, rng, variant, dtype, name, m, n, layout):
    v = registry.VARIANTS[variant]
    for op in v.ops:
        what = f"{variant} {op} {dtypes.name(dtype)} {name} {layout}"
        if op in registry.BACKWARD:
            y = api.FUNCTIONS[registry.FORWARD_OF[op]](draw(rng, (m, n), dtype, layout), axis=-1)
            dy = draw(rng, (m, n), dtype, layout, scale=1.0)
            host = (cupy.asnumpy(y), cupy.asnumpy(dy))
            tally.run(variant, what, lambda: gradients.GRADIENTS[op](y, dy, variant=variant),
                      lambda: reference.GRADIENTS[op](*host), dtype, op, reference.gradient_scale(*host, op))
            continue
        x = draw(rng, (m, n), dtype, layout)
        tally.run(variant, what, lambda: api.FUNCTIONS[op](x, axis=-1, variant=variant),
                  lambda: reference.REFERENCES[op](cupy.asnumpy(x), -1), dtype, op)
        if v.fused and op == registry.SOFTMAX:
            mask = cupy.asarray(rng.random((m, n)) < 0.7)
            tally.run(variant, f"{variant} {MASKED} {dtypes.name(dtype)} {name} {layout}",
                      lambda: api.softmax(x, axis=-1, variant=variant, scale=1.7, where=mask),
                      lambda: reference.softmax(cupy.asnumpy(x), -1, scale=1.7, where=cupy.asnumpy(mask)), dtype, op)


def columns(tally, rng, variant, dtype, name, shape, axis, skipped):
    for op in (o for o in registry.VARIANTS[variant].ops if o in api.FUNCTIONS):
        x = draw(rng, shape, dtype)[..., skipped:]
        tally.run(variant, f"{variant} {op} {dtypes.name(dtype)} {name} axis={axis}",
                  lambda: api.FUNCTIONS[op](x, axis=axis, variant=variant),
                  lambda: reference.REFERENCES[op](cupy.asnumpy(x), axis), dtype, op)


def part(text: str) -> tuple[int, int]:
    """"K/N" -> (K, N) with 0 <= K < N; argparse's error otherwise."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected K/N, got {text!r}") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"K/N needs 0 <= K < N, got {text!r}")
    return k, n


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="float32 and bfloat16, the shapes marked quick")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part", type=part, default=(0, 1), help="K/N: the K-th of N shares of the set")
    parser.add_argument("--rows-most", type=int, default=None, help="at most this many rows a row shape")
    parser.add_argument("--shape", nargs="+", default=[], help="only these shapes (by name), quick or not")
    args = parser.parse_args(argv)
    if args.rows_most is not None and args.rows_most < 1:
        parser.error("--rows-most needs at least 1")
    unknown = set(args.shape) - {shape[0] for shape in (*ROW_SHAPES, *COLUMN_SHAPES)}
    if unknown:
        parser.error(f"no such shape: {', '.join(sorted(unknown))}")

    def chosen(name: str, quick: bool) -> bool:
        return name in args.shape if args.shape else quick or not args.quick

    rng = numpy.random.default_rng(args.seed)
    types = [dtypes.BFLOAT16, dtypes.FLOAT32] if args.quick else list(dtypes.SUPPORTED)
    pairs = [(variant, v, dtype) for variant, v in registry.VARIANTS.items() for dtype in types]
    share, shares = args.part
    tally = Tally()
    for variant, v, dtype in pairs[share::shares]:
        if v.layout == registry.ROWS:
            for name, m, n, quick in ROW_SHAPES:
                for layout in LAYOUTS if chosen(name, quick) else ():
                    rows(tally, rng, variant, dtype, name, min(m, args.rows_most or m), n, layout)
        for name, shape, axis, quick, skipped in COLUMN_SHAPES:  # row variants too: a middle axis through a copy
            if chosen(name, quick):
                columns(tally, rng, variant, dtype, name, shape, axis, skipped)
    cupy.cuda.Device().synchronize()
    names = loader.loaded()
    for expression in sorted({names[k] for k in LAUNCHED}):
        print(f"launched: {expression}")
    print(f"launches {tally.launches} refused {tally.refused} failures {tally.failures} "
          f"unchecked {tally.unchecked}", flush=True)
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
